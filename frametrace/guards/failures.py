"""Why an entry's guards reject some frame values, and what annotation would have avoided it.

Both come from the records: a failing guard is found by evaluating each record's generated
Python condition alone; the advice reads the failing record's kind and `Source` (never text)."""
from __future__ import annotations

import numpy as np
import sympy

from ..sources import LocalSource, ShapeSource
from .kinds import GuardKind as K
from .python_check import guard_code


class Reason(str):
    """One recompile reason as users read it (`0/1: L['x'].shape[0] == 10`), carrying the
    failing guard record (`.guard`) it was made from."""
    guard = None

    @classmethod
    def of(cls, compile_id: str, guard) -> "Reason":
        r = cls(f"{compile_id}: {guard.name}")
        r.guard = guard
        return r


def failing_guards(guards, namespace: dict, argnames, values) -> list:
    """The records among `guards` whose condition is false for these frame values. A guard
    re-evaluated alone can see a value its earlier type guard would have rejected (`L['y'] == 5`
    on an array): raising or a non-bool result is a failure."""
    ns = dict(namespace)
    ns.update(zip(argnames, values))
    failing = []
    for g in guards:
        try:
            ok = eval(guard_code(g), ns)  # noqa: S307 - generated from our own records
            ok = isinstance(ok, (bool, np.bool_)) and bool(ok)
        except Exception:
            ok = False
        if not ok:
            failing.append(g)
    return failing


def _changed_input(g):
    """('size', local, dim) or ('int', local) when failing guard `g` says a static size or a
    specialised int argument changed; None for anything no annotation avoids (a branch)."""
    src = g.source
    if g.kind is K.SIZE and isinstance(src, ShapeSource) and isinstance(src.base, LocalSource):
        return ("size", src.base.local, src.dim)
    if g.kind is K.EQUALS_MATCH and isinstance(src, LocalSource) and type(g.payload) is int:
        return ("int", src.local)
    if g.kind is K.SHAPE_ENV and g.payload.kind == "specialization":
        expr = g.payload.expr
        if isinstance(expr, sympy.Eq) and isinstance(expr.lhs, sympy.Symbol) and expr.rhs.is_Integer:
            src = g.sources.get(expr.lhs) if g.sources else None
            if isinstance(src, ShapeSource) and isinstance(src.base, LocalSource):
                return ("size", src.base.local, src.dim)
            if isinstance(src, LocalSource):
                return ("int", src.local)
    return None


def recompile_advice(failed) -> str:
    """Which annotation would have avoided a size-related recompile (empty if none applies):
    `failed` are the failing records of the newest entry."""
    dims, ints, lists = [], [], []
    for g in failed:
        if g.kind is K.LEN and g.source is not None and g.source.name not in lists:
            lists.append(g.source.name)         # a list or tuple read item by item
            continue
        what = _changed_input(g)
        if what is None:
            continue
        if what[0] == "size" and what[1:] not in dims:
            dims.append(what[1:])
        elif what[0] == "int" and what[1] not in ints:
            ints.append(what[1])
    if lists:
        return ("    " + ", ".join(lists) + " changed length; a sequence whose items the code reads one by one "
                "has a static length: pass an array (np.asarray) to let its length vary")
    if not dims and not ints:
        return ""
    sources = [f"L[{n!r}]" for n, _ in dims] + [f"L[{n!r}]" for n in ints]
    marks = ", ".join(f"ft.mark_dynamic({n}, {d})" for n, d in dims)
    text = "    To compile these sizes dynamically from the start: "
    if marks:
        text += f"{marks} before the call, or "
    unique = ",".join(dict.fromkeys(sources))
    return text + f'set FRAMETRACE_DYNAMIC_SOURCES="{unique}"'
