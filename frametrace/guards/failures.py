"""Why an entry's guards reject some frame values, and what annotation would have avoided it.

Both come from the records: a failing guard is found by evaluating each record's generated
Python condition alone; the advice reads the failing record's kind and `Source` (never text)."""
from __future__ import annotations

import numpy as np
import sympy

from ..sources import GetItemSource, LocalSource, ShapeSource
from .kinds import GuardKind as K
from .python_check import guard_code
from .text import qualname


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
    if g.kind is K.EQUALS_MATCH and isinstance(src, GetItemSource) and type(src.index) is int and \
            type(g.payload) is int:
        return ("item", src.base.name)
    if g.kind is K.SHAPE_ENV and g.payload.kind == "specialization":
        expr = g.payload.expr
        if isinstance(expr, sympy.Eq) and isinstance(expr.lhs, sympy.Symbol) and expr.rhs.is_Integer:
            src = g.sources.get(expr.lhs) if g.sources else None
            if isinstance(src, ShapeSource) and isinstance(src.base, LocalSource):
                return ("size", src.base.local, src.dim)
            if isinstance(src, LocalSource):
                return ("int", src.local)
    return None


REPEATS = 3          # recompiles for one cause before the advice names its line and the fix


def recompile_advice(failed, counts: dict | None = None) -> str:
    """What would have avoided a recompile (empty if nothing applies): `failed` are the failing
    records of the newest entry. With `counts` (the frame's tally of causes, updated here),
    a cause seen at REPEATS recompiles gets advice naming its source, the user line that made
    it a guard and the fix (`repeated_advice`)."""
    first = _first_change_advice(failed)
    if counts is None:
        return first
    repeated = []
    for key, g in {reason_key(g): g for g in failed}.items():
        counts[key] = counts.get(key, 0) + 1
        if counts[key] >= REPEATS:
            repeated.append(repeated_advice(g, counts[key]))
    return "\n".join(repeated) if repeated else first


def reason_key(g) -> tuple:
    """A failing guard's cause without its value: (kind, what it reads). The same source failing
    with another value at the next recompile is the same cause."""
    if g.kind is K.SHAPE_ENV:
        return (g.kind.value, g.payload.kind, tuple(sorted(src.name for src in (g.sources or {}).values())))
    return (g.kind.value, g.source.name if g.source is not None else "")


def _read(g) -> str:
    if g.kind is K.SHAPE_ENV:
        return ", ".join(dict.fromkeys(src.name for src in (g.sources or {}).values())) or "a size"
    return g.source.name if g.source is not None else "a value"


def _line(g) -> str:
    loc = g.location
    if loc is None:
        return "(no user line recorded)"
    text = f"{loc.filename}:{loc.lineno} in {loc.funcname}"
    line = (getattr(loc, "source_line", "") or "").strip()
    return f"{text}:  {line}" if line else text


def _branched(g) -> bool:
    """A fact the trace decided by branching on a value (`if n > 3`, `if x.shape[0] == 33`)."""
    return g.kind is K.SHAPE_ENV and g.payload.kind in ("guard", "specialization") and not _changed_input(g)


def repeated_advice(g, times: int) -> str:
    """Advice for a cause seen at `times` recompiles: its source, the line that made it a guard, the fix."""
    return (f"    {_read(g)} changed at {times} recompiles of this frame (now `{g.name}` failed); it became a "
            f"guard at {_line(g)}\n    fix: {_fix(g)}")


def _expr(src) -> str:
    """How the user writes a source in their code (`ids`, `self.ids`), else its name."""
    code = src.code
    return src.name if "___" in code else code


def _fix(g) -> str:
    src = g.source
    what = _changed_input(g)
    if _branched(g):
        return ("the code branches on this value there, so each outcome is its own graph and no annotation "
                "avoids it: compute both outcomes with np.where, or take the decision outside the compiled function")
    if g.kind is K.LEN:
        return (f"{src.name} is used whole there (iterated, sliced, unpacked or a tuple), which fixes its length: "
                "read its items by index (lst[i], lst[-1]) and its length with len(), or pass an array (np.asarray)")
    if g.kind is K.TYPE_MATCH:
        return (f"{src.name} changes type between calls (it was {qualname(g.payload)} when traced): pass one type "
                "every call (float(t), np.float64(t))")
    if what is not None and what[0] == "size":
        local, dim = what[1], what[2]
        return (f"ft.mark_dynamic({local}, {dim}) before the call, ft.compile(fn, dynamic=True), or "
                f'FRAMETRACE_DYNAMIC_SOURCES="L[{local!r}]"')
    if g.kind is K.SIZE and isinstance(src, ShapeSource):
        return (f"arrays reached through attributes and globals start static: FRAMETRACE_DYNAMIC_SOURCES="
                f'"{src.base.name}", or ft.config.force_attribute_static_shapes = False')
    if g.kind is K.EQUALS_MATCH and type(g.payload) is int:
        if isinstance(src, GetItemSource):
            return (f"pass the items as an array (np.asarray({_expr(src.base)})), compile with dynamic=True, or "
                    f'FRAMETRACE_DYNAMIC_SOURCES="{src.base.name}[*]"')
        return f'compile with dynamic=True, or FRAMETRACE_DYNAMIC_SOURCES="{src.name}"'
    if g.kind in (K.ID_MATCH, K.CODE_MATCH, K.EQUALS_MATCH):
        return (f"{_read(g)} is a different object or value at each call and the code uses it as a constant: "
                "pass the same object, or pass what changes as an argument (an array or a number)")
    return "see FRAMETRACE_LOGS=guards for what the trace assumed"


def _first_change_advice(failed) -> str:
    """Which annotation would have avoided a size-related recompile (empty if none applies)."""
    dims, ints, lists, items = [], [], [], []
    for g in failed:
        if g.kind is K.LEN and g.source is not None and g.source.name not in lists:
            lists.append(g.source.name)         # a list used whole, or a tuple
            continue
        what = _changed_input(g)
        if what is None:
            continue
        if what[0] == "size" and what[1:] not in dims:
            dims.append(what[1:])
        elif what[0] == "int" and what[1] not in ints:
            ints.append(what[1])
        elif what[0] == "item" and what[1] not in items:
            items.append(what[1])
    if lists:
        return ("    " + ", ".join(lists) + " changed length; its length is fixed where the code uses the whole "
                "sequence (iterates, slices or unpacks it): read items by index and the length with len(), or "
                "pass an array (np.asarray) to let its length vary")
    branches = [g for g in failed if _branched(g)]
    if not dims and not ints and not items and branches:
        g = branches[0]
        return (f"    {_read(g)} is specialised where the code branches on it ({_line(g)}): "
                "each outcome is its own graph")
    if not dims and not ints and not items:
        return ""
    sources = [f"L[{n!r}]" for n, _ in dims] + [f"L[{n!r}]" for n in ints] + [f"{n}[*]" for n in items]
    marks = ", ".join(f"ft.mark_dynamic({n}, {d})" for n, d in dims)
    text = "    To compile these sizes dynamically from the start: "
    if marks:
        text += f"{marks} before the call, or "
    unique = ",".join(dict.fromkeys(sources))
    return text + f'set FRAMETRACE_DYNAMIC_SOURCES="{unique}"'
