"""Rewrites of a kernel's phases before it is assembled: a table of (name, rule) pairs.

Each rule takes the list of phases (see reductions.Phase) and rewrites it in place.
"""
from __future__ import annotations

from ..ir import ops as _registered  # noqa: F401  (registers every op the query below reads)
from ..ir.registry import ops_where
from .loop_ir import Load, Op, Store, Var, walk_exprs

# ops of cost class "expensive" (registry): their loop bodies call the vectorised math library
EXPENSIVE = ops_where(lambda op: op.cost == "expensive")


def _expensive(e) -> bool:
    return any(isinstance(x, Op) and x.op in EXPENSIVE for x in walk_exprs(e))


def _exprs(stmts):
    for s in stmts:
        v = getattr(s, "value", None)
        if v is not None:
            yield from walk_exprs(v)


def _replace(e, old, new):
    if e == old:
        return new
    if isinstance(e, Op):
        args = tuple(_replace(a, old, new) for a in e.args)
        return e if args == e.args else Op(e.op, e.dtype, args)
    return e


def _buffers(stmts) -> set:
    out = {s.buf for s in stmts if isinstance(s, Store)}
    out |= {e.buf for e in _exprs(stmts) if isinstance(e, Load)}
    return out


def output_as_scratch(phases: list):
    """softmax: phase A sums exp(x - m), phase C stores exp(x - m) / s. Let A also store
    exp(x - m) into C's output row, and C read it back instead of recomputing it. A guarded
    phase (the zero-sign pass of a max, which runs only when the maximum is a zero) may not
    run: it never stores for C, and the search goes on to the phases before it."""
    for c, C in enumerate(phases):
        for k, st in enumerate(C.body):
            if not isinstance(st, Store):
                continue
            out_dt = st.value.dtype                  # values are cast to the buffer's dtype
            for a in range(c - 1, -1, -1):
                A = phases[a]
                if A.extents != C.extents or A.guard is not None \
                        or st.buf in _buffers(sum((p.body for p in phases[a:c]), [])):
                    continue
                computed = set(_exprs(A.body))
                later_lets = {n for p in phases[a:] for n in p.defines}
                for e in walk_exprs(st.value):       # outermost first
                    if e in computed and isinstance(e, Op) and _expensive(e) and e is not st.value \
                            and e.dtype == out_dt \
                            and not any(isinstance(v, Var) and v.name in later_lets for v in walk_exprs(e)):
                        A.body.append(Store(st.buf, st.index, e))
                        C.body[k] = Store(st.buf, st.index, _replace(st.value, e, Load(st.buf, st.index, e.dtype)))
                        break
                break


# name -> rule; applied in order
RULES = (
    ("output_as_scratch", output_as_scratch),    # recompute nothing expensive twice per row
)


def optimize(phases: list) -> list:
    for _, rule in RULES:
        rule(phases)
    return phases


__all__ = ["optimize", "RULES"]
