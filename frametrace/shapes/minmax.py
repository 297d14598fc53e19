"""Min/Max of sizes kept flat as they are built, so chains of slices stay linear in size.

Slicing a symbolic size clamps its bounds (`x[1:]` on a size m starts at `Min(1, m)`; its
length is `Max(0, m - Min(1, m))`); left alone, sympy nests these per level and every later
comparison walks the whole tree (exponential in the number of chained slices). Here:

    distribute(Max(0, a) - 1)        ->  Max(-1, a - 1)     (a sum with one Min/Max term)
    distribute(a - Min(1, a))        ->  Max(a - 1, 0)      (negation flips Min and Max)
    make_max([0, Max(-1, a - 1)])    ->  Max(0, a - 1)      (nested Max flattened)
    make_max([s0 - 1, 0], bound)     ->  s0 - 1             (when ranges say s0 >= 1)

`make_max`/`make_min` build without sympy's own pairwise evaluation (the costly part), keep
arguments sorted and deduplicated, and drop an argument another one provably dominates: their
difference a number, or bounded by `bound(expr) -> ValueRanges` (the ShapeEnv's ranges).
"""
from __future__ import annotations

import sympy

from .value_ranges import provably_le

_MINMAX = (sympy.Max, sympy.Min)
_FLIP = {sympy.Max: sympy.Min, sympy.Min: sympy.Max}


def _dominates(cls, a, b, bound) -> bool:
    """Whether a makes b redundant in cls(a, b): a >= b for Max, a <= b for Min."""
    lo, hi = (b, a) if cls is sympy.Max else (a, b)
    if bound is None:
        d = hi - lo
        return bool(d.is_number and d >= 0)
    return provably_le(lo, hi, bound)


def _make(cls, args, bound):
    flat = []
    for a in args:
        a = sympy.sympify(a)
        flat.extend(a.args if isinstance(a, cls) else (a,))
    nums = [a for a in flat if a.is_number]
    rest = list(dict.fromkeys(a for a in flat if not a.is_number))
    if nums:
        rest.append((max if cls is sympy.Max else min)(nums))
    kept = []
    for a in rest:
        if any(_dominates(cls, b, a, bound) for b in kept):
            continue
        kept = [b for b in kept if not _dominates(cls, a, b, bound)] + [a]
    if len(kept) == 1:
        return kept[0]
    return cls(*kept, evaluate=False)


def make_max(args, bound=None):
    return _make(sympy.Max, args, bound)


def make_min(args, bound=None):
    return _make(sympy.Min, args, bound)


def _size(e) -> int:
    return sum(1 for _ in sympy.preorder_traversal(e))


def _minmax_term(t):
    """(coefficient, Min/Max) when t is a number times one Min/Max, else None."""
    if isinstance(t, _MINMAX):
        return sympy.Integer(1), t
    if isinstance(t, sympy.Mul):
        coeff, rest = t.as_coeff_Mul()
        if coeff.is_number and coeff.is_nonzero and isinstance(rest, _MINMAX):
            return coeff, rest
    return None


def _into(coeff, mm, others, bound, depth):
    """coeff * mm + others with coeff and others moved inside mm (others kept whole, so that a
    term equal to mm's argument cancels: `X - Min(1, X)` is `Max(X - 1, 0)`)."""
    cls = type(mm) if coeff > 0 else _FLIP[type(mm)]
    return _make(cls, [distribute(coeff * a + others, bound, depth - 1) for a in mm.args], bound)


def distribute(expr, bound=None, depth: int = 3):
    """A sum or multiple of Min/Max terms as one Min/Max of sums (the smallest such form),
    or expr unchanged when that does not keep it small."""
    if depth <= 0 or not isinstance(expr, (sympy.Add, sympy.Mul)):
        return expr
    if isinstance(expr, sympy.Mul):
        part = _minmax_term(expr)
        return expr if part is None else _into(part[0], part[1], sympy.Integer(0), bound, depth)
    terms = expr.args
    best, best_size = expr, None
    limit = 2 * _size(expr) + 4
    for i, t in enumerate(terms):
        part = _minmax_term(t)
        if part is None:
            continue
        out = _into(part[0], part[1], sympy.Add(*(u for j, u in enumerate(terms) if j != i)), bound, depth)
        n = _size(out)
        if n <= limit and (best_size is None or n < best_size):
            best, best_size = out, n
    return best


def start_if_nonempty(start, n, step):
    """The start of a slice of a size-n dimension, as every *read* element sees it.

    Normalising `x[v:]` clamps the start to `Min(v, n)`; the clamp only acts when v >= n,
    and then (step > 0) the slice is empty and nothing is read. Code that indexes through the
    slice may use v instead, which keeps index offsets of chained slices simple.
    Negative steps keep their clamp (`x[10::-1]` on 5 elements starts at 4 and is not empty).
    """
    if not isinstance(step, int) or step <= 0 or not isinstance(start, sympy.Min):
        return start
    n = sympy.sympify(n)
    rest = [a for a in start.args if a != n]
    if len(rest) == len(start.args) or not rest:
        return start
    return make_min(rest)
