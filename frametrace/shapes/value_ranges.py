"""Integer intervals and interval arithmetic over sympy size expressions.

A `ValueRanges(lower, upper)` holds Python ints or the infinities `-int_oo` / `int_oo`
(floats, so comparisons with ints are plain Python). `bound_expr` computes a sound interval for
an integer expression from the intervals of its symbols; `decide` turns a relational into
True / False / None (unknown) from such intervals. Anything it does not understand (floats,
rationals, unknown functions) gets the unbounded interval, so the answers are sound.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import sympy

from .functions import FloorDiv, PythonMod


class _IntInfinity(float):
    """Integer infinity: a float inf that prints as `int_oo`."""

    def __repr__(self):
        return "int_oo"

    __str__ = __repr__


int_oo = _IntInfinity("inf")
_INF = math.inf


def fmt_bound(b) -> str:
    if b == _INF:
        return "int_oo"
    if b == -_INF:
        return "-int_oo"
    return str(b)


def _norm(b):
    """A bound as a Python int or +-inf (accepts sympy numbers, sympy.oo, None is not allowed)."""
    if isinstance(b, float):
        if math.isinf(b):
            return _INF if b > 0 else -_INF
        if not b.is_integer():
            raise TypeError(f"non-integer bound {b!r}")
        return int(b)
    if isinstance(b, sympy.Basic):
        if b in (sympy.oo,):
            return _INF
        if b in (-sympy.oo,):
            return -_INF
        return int(b)
    return int(b)


@dataclass(frozen=True)
class ValueRanges:
    """Closed integer interval [lower, upper]; bounds may be -int_oo / int_oo."""
    lower: object
    upper: object

    def __post_init__(self):
        object.__setattr__(self, "lower", _norm(self.lower))
        object.__setattr__(self, "upper", _norm(self.upper))

    @classmethod
    def unknown(cls) -> "ValueRanges":
        return cls(-_INF, _INF)

    @classmethod
    def point(cls, v) -> "ValueRanges":
        return cls(v, v)

    @property
    def is_singleton(self) -> bool:
        return self.lower == self.upper

    @property
    def is_empty(self) -> bool:
        return self.lower > self.upper

    def __contains__(self, v) -> bool:
        return self.lower <= v <= self.upper

    def issubset(self, other: "ValueRanges") -> bool:
        return other.lower <= self.lower and self.upper <= other.upper

    def __and__(self, other: "ValueRanges") -> "ValueRanges":
        return ValueRanges(max(self.lower, other.lower), min(self.upper, other.upper))

    def __or__(self, other: "ValueRanges") -> "ValueRanges":
        return ValueRanges(min(self.lower, other.lower), max(self.upper, other.upper))

    def __str__(self):
        return f"[{fmt_bound(self.lower)}, {fmt_bound(self.upper)}]"

    def vr_str(self) -> str:
        """`VR[2, int_oo]`, the form of PyTorch's set_replacement log lines."""
        return "VR" + str(self)


UNKNOWN = ValueRanges.unknown()


# ---- interval arithmetic on bounds (ints or +-inf) ------------------------------------------

def _mul(a, b):
    if a == 0 or b == 0:          # 0 * anything finite-or-not is 0 on integer ranges
        return 0
    return a * b


def _fdiv(a, b):
    """floor(a / b) for b != 0, extended to infinities (limits, rounded outwards)."""
    if math.isinf(a):
        return a if b > 0 else -a
    if math.isinf(b):
        return 0 if (a >= 0) == (b > 0) else -1
    return a // b


def _corners(f, x: ValueRanges, y: ValueRanges) -> ValueRanges:
    vals = [f(a, b) for a in (x.lower, x.upper) for b in (y.lower, y.upper)]
    return ValueRanges(min(vals), max(vals))


def vr_add(x, y):
    return ValueRanges(x.lower + y.lower, x.upper + y.upper)


def vr_mul(x, y):
    return _corners(_mul, x, y)


def vr_floordiv(x, y):
    if y.lower > 0 or y.upper < 0:
        return _corners(_fdiv, x, y)
    # the divisor may be 0: division by zero raises, so only the non-zero parts matter
    parts = []
    if y.upper >= 1:
        parts.append(_corners(_fdiv, x, ValueRanges(max(y.lower, 1), y.upper)))
    if y.lower <= -1:
        parts.append(_corners(_fdiv, x, ValueRanges(y.lower, min(y.upper, -1))))
    if not parts:
        return UNKNOWN
    out = parts[0]
    for p in parts[1:]:
        out = out | p
    return out


def vr_mod(x, y):
    if y.lower > 0:
        if x.lower >= 0 and x.upper < y.lower:      # x % y == x
            return x
        return ValueRanges(0, y.upper - 1 if not math.isinf(y.upper) else _INF)
    if y.upper < 0:
        return ValueRanges(y.lower + 1 if not math.isinf(y.lower) else -_INF, 0)
    return ValueRanges(min(0, y.lower + 1), max(0, y.upper - 1))


def vr_pow(x, n: int):
    if n == 0:
        return ValueRanges.point(1)
    lo, hi = x.lower ** n, x.upper ** n
    if n % 2 == 1:
        return ValueRanges(lo, hi)
    if x.lower >= 0:
        return ValueRanges(lo, hi)
    if x.upper <= 0:
        return ValueRanges(hi, lo)
    return ValueRanges(0, max(lo, hi))


def vr_abs(x):
    if x.lower >= 0:
        return x
    if x.upper <= 0:
        return ValueRanges(-x.upper, -x.lower)
    return ValueRanges(0, max(-x.lower, x.upper))


def bound_expr(expr, ranges, memo: dict | None = None) -> ValueRanges:
    """A sound integer interval for `expr`; `ranges(symbol)` gives each symbol's interval.
    Each distinct subexpression is bounded once (`memo`): sizes of chained slices share
    subtrees, and walking them as a tree is exponential in the chain's length."""
    if expr.is_Integer:
        return ValueRanges.point(int(expr))
    if memo is None:
        memo = {}
    out = memo.get(expr)
    if out is None:
        out = memo[expr] = _bound(expr, ranges, memo)
    return out


def _bound(expr, ranges, memo) -> ValueRanges:
    if expr.is_Symbol:
        if not expr.is_integer:
            return UNKNOWN
        return ranges(expr)
    if expr.is_Add:
        out = ValueRanges.point(0)
        for a in expr.args:
            out = vr_add(out, bound_expr(a, ranges, memo))
        return out
    if expr.is_Mul:
        out = ValueRanges.point(1)
        for a in expr.args:
            out = vr_mul(out, bound_expr(a, ranges, memo))
        return out
    if expr.is_Pow:
        base, e = expr.args
        if e.is_Integer and int(e) >= 0:
            return vr_pow(bound_expr(base, ranges, memo), int(e))
        return UNKNOWN
    if isinstance(expr, FloorDiv):
        return vr_floordiv(bound_expr(expr.args[0], ranges, memo), bound_expr(expr.args[1], ranges, memo))
    if isinstance(expr, PythonMod):
        return vr_mod(bound_expr(expr.args[0], ranges, memo), bound_expr(expr.args[1], ranges, memo))
    if isinstance(expr, (sympy.Max, sympy.Min)):
        parts = [bound_expr(a, ranges, memo) for a in expr.args]
        pick = max if isinstance(expr, sympy.Max) else min
        return ValueRanges(pick(p.lower for p in parts), pick(p.upper for p in parts))
    if isinstance(expr, sympy.Abs):
        return vr_abs(bound_expr(expr.args[0], ranges, memo))
    return UNKNOWN


def provably_le(a, b, bound, depth: int = 3) -> bool:
    """a <= b for every value of the symbols, from intervals (`bound(expr)`) and the few facts
    intervals of a difference cannot see: `x // k <= x` and `x // k <= x // j` (j <= k) for
    x >= 0, and Min/Max of the two sides taken apart."""
    d = b - a
    if d.is_number:
        return bool(d >= 0)
    if bound(d).lower >= 0:
        return True
    if depth <= 0:
        return False
    if isinstance(a, FloorDiv) and a.args[1].is_Integer and int(a.args[1]) >= 1:
        x = a.args[0]
        if bound(x).lower >= 0:
            if x == b or provably_le(x, b, bound, depth - 1):
                return True
            if isinstance(b, FloorDiv) and b.args[0] == x and b.args[1].is_Integer and \
                    1 <= int(b.args[1]) <= int(a.args[1]):
                return True
    if isinstance(b, sympy.Max) and any(provably_le(a, y, bound, depth - 1) for y in b.args):
        return True
    if isinstance(a, sympy.Min) and any(provably_le(y, b, bound, depth - 1) for y in a.args):
        return True
    if isinstance(b, sympy.Min) and all(provably_le(a, y, bound, depth - 1) for y in b.args):
        return True
    if isinstance(a, sympy.Max) and all(provably_le(y, b, bound, depth - 1) for y in a.args):
        return True
    return False


def _decide_order(expr, bound):
    """Le/Lt/Ge/Gt decided by provably_le, or None."""
    lhs, rhs = expr.args
    if isinstance(expr, (sympy.Ge, sympy.Gt)):
        lhs, rhs = rhs, lhs                    # as lhs <= rhs / lhs < rhs
    strict = isinstance(expr, (sympy.Lt, sympy.Gt))
    one = sympy.Integer(1)
    if provably_le(lhs + one if strict else lhs, rhs, bound):
        return True
    if provably_le(rhs if strict else rhs + one, lhs, bound):
        return False
    return None


# ---- relationals ------------------------------------------------------------------------------

def _decide_diff(rel_type, d: ValueRanges):
    """Truth of `d REL 0` for every value of d in the interval, or None."""
    lo, hi = d.lower, d.upper
    if rel_type is sympy.Eq:
        return True if lo == hi == 0 else (False if lo > 0 or hi < 0 else None)
    if rel_type is sympy.Ne:
        return False if lo == hi == 0 else (True if lo > 0 or hi < 0 else None)
    if rel_type is sympy.Lt:
        return True if hi < 0 else (False if lo >= 0 else None)
    if rel_type is sympy.Le:
        return True if hi <= 0 else (False if lo > 0 else None)
    if rel_type is sympy.Gt:
        return True if lo > 0 else (False if hi <= 0 else None)
    if rel_type is sympy.Ge:
        return True if lo >= 0 else (False if hi < 0 else None)
    return None


def _is_integer_expr(e) -> bool:
    return bool(e.is_integer)


def decide(expr, ranges, facts=None):
    """Truth value of a boolean expression for every value in the ranges: True/False/None.
    `facts` maps sub-expressions already known (recorded guards) to their truth value."""
    if facts:
        known = facts.get(expr)
        if known is not None:
            return known
    if expr is sympy.true or expr is True:
        return True
    if expr is sympy.false or expr is False:
        return False
    if isinstance(expr, sympy.Not):
        r = decide(expr.args[0], ranges, facts)
        return None if r is None else not r
    if isinstance(expr, sympy.And):
        rs = [decide(a, ranges, facts) for a in expr.args]
        return False if False in rs else (True if all(r is True for r in rs) else None)
    if isinstance(expr, sympy.Or):
        rs = [decide(a, ranges, facts) for a in expr.args]
        return True if True in rs else (False if all(r is False for r in rs) else None)
    if isinstance(expr, sympy.core.relational.Relational):
        lhs, rhs = expr.args
        if not (_is_integer_expr(lhs) and _is_integer_expr(rhs)):
            return None           # float / rational arithmetic: not reasoned about
        diff = lhs - rhs
        memo: dict = {}
        r = _decide_diff(type(expr), bound_expr(diff, ranges, memo))
        if r is None and isinstance(expr, (sympy.Le, sympy.Lt, sympy.Ge, sympy.Gt)):
            r = _decide_order(expr, lambda e: bound_expr(e, ranges, memo))
        if r is None:
            expanded = sympy.expand(diff)
            if expanded != diff:
                r = _decide_diff(type(expr), bound_expr(expanded, ranges))
        return r
    return None
