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


def _loads_of(stmts, buf) -> list:
    return [e for e in _exprs(stmts) if isinstance(e, Load) and e.buf == buf]


def _scratch_ok(phases, a, c, st) -> bool:
    """May phase a store into C's output element st.index (C = phases[c])? Yes if no phase
    from a to C reads or writes that buffer; or (C written in place over its input, `x /= ...`
    fused: the softmax of scores computed into their own array) if only phase a reads it,
    each read at st.index itself, in the same iteration that then stores there last."""
    A, between = phases[a], phases[a + 1:c]
    if A.guard is not None:                      # A's loops may not run: C would read nothing
        return False
    if st.buf not in _buffers(sum((p.body for p in phases[a:c]), [])):
        return True
    if A.vars != phases[c].vars or any(isinstance(s, Store) and s.buf == st.buf for s in A.body) or \
            any(hasattr(s, "body") for p in phases[a:c + 1] for s in p.body):
        return False
    if any(_loads_of(p.pre + p.body + p.post, st.buf) for p in between) or \
            _loads_of(A.pre + A.post, st.buf) or _loads_of(phases[c].pre, st.buf):
        return False
    return all(ld.index == st.index for ld in _loads_of(A.body, st.buf))


def output_as_scratch(phases: list):
    """softmax: phase A sums exp(x - m), phase C stores exp(x - m) / s. Let A also store
    exp(x - m) into C's output row, and C read it back instead of recomputing it (also where
    that row is A's input row, read element by element: each is read, then overwritten). A
    guarded phase (the zero-sign pass of a max, which runs only when the maximum is a zero) may
    not run: it never stores for C, and the search goes on to the phases before it."""
    for c, C in enumerate(phases):
        for k, st in enumerate(C.body):
            if not isinstance(st, Store):
                continue
            out_dt = st.value.dtype                  # values are cast to the buffer's dtype
            for a in range(c - 1, -1, -1):
                A = phases[a]
                if A.extents != C.extents or not _scratch_ok(phases, a, c, st):
                    continue
                in_place = st.buf in _buffers(sum((p.body for p in phases[a:c]), []))
                computed = set(_exprs(A.body))
                later_lets = {n for p in phases[a:] for n in p.defines}
                for e in walk_exprs(st.value):       # outermost first
                    if e in computed and isinstance(e, Op) and _expensive(e) and e is not st.value \
                            and e.dtype == out_dt \
                            and not any(isinstance(v, Var) and v.name in later_lets for v in walk_exprs(e)):
                        if in_place:             # C must read nothing else of its input there
                            marked = _replace(st.value, e, Var("__scratch", e.dtype))
                            rest = C.body[:k] + [Store(st.buf, st.index, marked)] + C.body[k + 1:]
                            if _loads_of(rest + C.post, st.buf):
                                continue
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
