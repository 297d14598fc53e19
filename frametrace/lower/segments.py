"""Piecewise values and index-set splitting: how concatenate, roll and pad fuse.

A value made of pieces along an axis (np.concatenate, and so np.roll, np.pad, np.append,
np.hstack) is read inside kernels through `segment` expressions:

    Op("segment", dt, (Op("affine", "int64", (A,)), bound, a, b))  =  a if A < bound else b

where `A` is the index along the axis (an Affine of loop variables) and `bound` a loop-
invariant int64 (Const or Arg). Only the chosen branch is evaluated: `a` may load out of
bounds where `A >= bound` and `b` where `A < bound` (the code generator branches; it never
speculates a load).

A branch in an innermost loop does not vectorise, so `split(body)` removes segments by
index-set splitting: a loop over `v` whose body has a segment whose condition moves with
`v` alone (`A = ±v + invariant`) runs as two loops, `[start, m)` where the condition holds
and `[m, stop)` where it does not (`m`: the threshold clamped into the range), each with the
segment replaced by its branch; repeated until no segment depends on the loop. Conditions
whose threshold differs from a known bound of the piece by a constant are decided without
a split, so `np.pad(u, 1)` read at `i-1, i, i+1` gives three row ranges, not eight. The
loops of one range keep their `split` mark (each clamps itself to the thread's chunk).
"""
from __future__ import annotations

from .loop_ir import Affine, Arg, Const, If, Loop, Op, walk_exprs

SEGMENT = "segment"
MAX_SPLITS = 32          # loop splits per kernel (each copies a loop body); beyond, branches stay


def segment(index: Affine, bound, a, b, dtype: str):
    """`a` where `index < bound`, else `b` (module doc); folded when both are constants.
    `bound` may also be an Affine of arguments (`n + 2`): all but one argument move to the
    index, so conditions on `n + 1` and `n + 2` stay a constant apart (decided without a split)."""
    if isinstance(bound, Affine):              # index - (bound - arg) < arg
        main = next((a for a, c in bound.syms if c == 1), None)
        moved = bound + (Affine(syms=((main, -1),)) if main is not None else Affine())
        index = index + moved.scale(-1)
        bound = main if main is not None else Const(0, "int64")
    if not index.terms and not index.syms and isinstance(bound, Const):
        return a if index.const < int(bound.value) else b
    return Op(SEGMENT, dtype, (Op("affine", "int64", (index,)), bound, a, b))


def _as_affine(bound) -> Affine | None:
    if isinstance(bound, Const):
        return Affine(const=int(bound.value))
    if isinstance(bound, Arg):
        return Affine(syms=((bound, 1),))
    return None


def _condition(e: Op, var: str):
    """(threshold T, below) when e's condition is `var < T` (below) or `var >= T` (not
    below), T an Affine of run-time arguments; None when it does not move with var alone."""
    index, bound = e.args[0].args[0], _as_affine(e.args[1])
    c = index.coef(var)
    if bound is None or c not in (1, -1) or len(index.terms) != 1:
        return None
    rest = index.without(var)
    if c == 1:                                   # v + rest < bound  <=>  v < bound - rest
        return bound + rest.scale(-1), True
    return rest + bound.scale(-1) + Affine(const=1), False    # rest - v < bound <=> v >= rest - bound + 1


def _const_diff(a: Affine, b: Affine):
    """a - b when it is a constant, else None."""
    d = a + b.scale(-1)
    return d.const if not d.terms and not d.syms else None


class _Range:
    """What is known of the loop variable in one piece: v >= each lo, v < each hi."""

    def __init__(self, lo: list, hi: list):
        self.lo, self.hi = lo, hi

    def decide(self, t: Affine):
        """True: v < t everywhere here; False: v >= t everywhere; None: unknown."""
        if any((d := _const_diff(t, h)) is not None and d >= 0 for h in self.hi):
            return True
        if any((d := _const_diff(t, lo)) is not None and d <= 0 for lo in self.lo):
            return False
        return None


def _resolve(e, var: str, rng: _Range):
    """e with every segment decided by `rng` replaced by its branch."""
    if not isinstance(e, Op):
        return e
    args = tuple(_resolve(a, var, rng) for a in e.args)
    if e.op == SEGMENT:
        cond = _condition(e, var)
        if cond is not None:
            below = rng.decide(cond[0])
            if below is not None:
                return args[2] if below == cond[1] else args[3]
    return e if args == e.args else Op(e.op, e.dtype, args)


def _map_stmt(s, fn):
    """A copy of statement s with fn applied to its expressions (and nested loops' bodies)."""
    if isinstance(s, Loop):
        return Loop(s.var, fn(s.stop), [_map_stmt(x, fn) for x in s.body], fn(s.start), s.split)
    out = type(s).__new__(type(s))
    out.__dict__.update(s.__dict__)
    for attr in ("value", "init", "cond", "cap"):
        if getattr(s, attr, None) is not None:
            setattr(out, attr, fn(getattr(s, attr)))
    return out


def _stmt_exprs(s):
    if isinstance(s, (Loop, If)):
        for x in s.body + getattr(s, "orelse", []):
            yield from _stmt_exprs(x)
        if isinstance(s, Loop):
            return
    for attr in ("value", "init", "cond"):
        e = getattr(s, attr, None)
        if e is not None:
            yield from walk_exprs(e)


def _first_condition(body, var: str):
    for s in body:
        for e in _stmt_exprs(s):
            if isinstance(e, Op) and e.op == SEGMENT and (c := _condition(e, var)) is not None:
                return c
    return None


def _bound_expr(a: Affine):
    if not a.syms and not a.terms:
        return Const(a.const, "int64")
    if not a.terms and a.const == 0 and len(a.syms) == 1 and a.syms[0][1] == 1:
        return a.syms[0][0]
    return Op("affine", "int64", (a,))


def _clamp(t: Affine, start, stop):
    return Op("minimum", "int64", (Op("maximum", "int64", (_bound_expr(t), start)), stop))


def _split_loop(lp: Loop, rng: _Range, budget: list) -> list:
    body = [_map_stmt(s, lambda e: _resolve(e, lp.var, rng)) for s in lp.body]
    cond = _first_condition(body, lp.var) if budget[0] > 0 else None
    if cond is None:
        return [Loop(lp.var, lp.stop, split_body(body, budget), lp.start, lp.split)]
    t, _ = cond
    budget[0] -= 1
    m = _clamp(t, lp.start, lp.stop)
    first = Loop(lp.var, m, body, lp.start, lp.split)
    second = Loop(lp.var, lp.stop, body, m, lp.split)
    return (_split_loop(first, _Range(rng.lo, rng.hi + [t]), budget)
            + _split_loop(second, _Range(rng.lo + [t], rng.hi), budget))


def _known(e):
    a = _as_affine(e)
    return [a] if a is not None else []


def split_body(body: list, budget: list | None = None) -> list:
    """The statements with every loop split where its segments change branch (module doc);
    `budget`: splits left for the whole kernel (a list, shared by the recursion)."""
    budget = [MAX_SPLITS] if budget is None else budget
    out = []
    for s in body:
        if isinstance(s, Loop):
            out += _split_loop(s, _Range(_known(s.start), _known(s.stop)), budget)
        else:
            out.append(s)
    return out


def has_segments(body: list) -> bool:
    return any(isinstance(e, Op) and e.op == SEGMENT for s in body for e in _stmt_exprs(s))


__all__ = ["SEGMENT", "segment", "split_body", "has_segments"]
