"""Min/Max kept flat as they are built (shapes/minmax.py) and the ordering facts intervals
miss (value_ranges.provably_le): each rewrite is checked against plain Python on the hints."""
import operator

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.ir.ops.indexing import normalize_slice, slice_length
from frametrace.shapes import ShapeEnv, SymInt, sym_max, sym_min
from frametrace.shapes.functions import FloorDiv
from frametrace.shapes.minmax import distribute, make_max, make_min, start_if_nonempty
from frametrace.shapes.value_ranges import ValueRanges, bound_expr, provably_le

from shape_sources import X

a, b = sympy.symbols("a b", integer=True)


def _ranges(s):
    return ValueRanges(2, float("inf"))


def _bound(e):
    return bound_expr(e, _ranges)


def test_sums_are_pushed_into_one_min_or_max():
    assert distribute(sympy.Max(0, a) - 1) == sympy.Max(-1, a - 1)
    assert distribute(a - sympy.Min(1, a)) == sympy.Max(a - 1, 0)
    assert distribute(-sympy.Max(0, a)) == sympy.Min(0, -a)
    assert distribute(2 * sympy.Min(a, b)) == sympy.Min(2 * a, 2 * b)
    assert distribute(sympy.Max(0, a) - 1, _bound) == a - 1          # with a >= 2 known


def test_nested_and_dominated_arguments_are_dropped():
    assert make_max([0, make_max([-1, a - 1])]) == sympy.Max(0, a - 1)
    assert make_max([a - 1, 0], _bound) == a - 1              # a >= 2
    assert make_min([a, FloorDiv(a, 2)], _bound) == FloorDiv(a, 2)
    assert make_min([FloorDiv(a, 2), FloorDiv(a, 4)], _bound) == FloorDiv(a, 4)
    assert make_max([a, b]) == make_max([b, a])              # one canonical order


def test_provably_le_is_sound_on_samples():
    cases = [(FloorDiv(a, 3), a), (FloorDiv(a, 4), FloorDiv(a, 2)), (sympy.Min(a, b), sympy.Max(a, b)),
             (a - 1, sympy.Max(a - 1, b)), (sympy.Min(FloorDiv(a, 2), b), a)]
    for lo, hi in cases:
        assert provably_le(lo, hi, _bound)
        for av in range(2, 30):
            for bv in range(2, 9):
                assert int(lo.subs({a: av, b: bv})) <= int(hi.subs({a: av, b: bv}))
    assert not provably_le(a, FloorDiv(a, 2), _bound)
    assert not provably_le(a, b, _bound)


def test_start_of_a_nonempty_slice_is_read_unclamped():
    n = sympy.Max(0, a - 4)
    assert start_if_nonempty(sympy.Min(1, n), n, 1) == 1
    assert start_if_nonempty(sympy.Min(1, n), n, -1) == sympy.Min(1, n)     # x[k::-1] is not empty
    assert start_if_nonempty(sympy.Min(1, a), n, 1) == sympy.Min(1, a)      # not clamped to this size


@pytest.mark.parametrize("levels", [12, 40])
def test_a_chain_of_slices_keeps_one_linear_size(levels):
    env = ShapeEnv()
    n = env.create_symbol(500, X())
    for _ in range(levels):
        s1, s2 = normalize_slice(slice(1, None), n), normalize_slice(slice(None, -1), n)
        l1, l2 = slice_length(s1.start, s1.stop, s1.step), slice_length(s2.start, s2.stop, s2.step)
        assert sympy.simplify(l1.expr - l2.expr) == 0 if isinstance(l1, SymInt) else l1 == l2
        n = l1
    s0 = next(iter(env.var_to_range))
    assert n.expr == sympy.Max(0, s0 - levels)
    assert n.hint == 500 - levels


OPS = [operator.add, operator.sub]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(2, 40), min_size=2, max_size=2),
       st.lists(st.tuples(st.sampled_from(["max", "min", "add", "sub", "neg", "floordiv"]),
                          st.integers(0, 3), st.integers(-5, 5)), min_size=1, max_size=10))
def test_min_max_arithmetic_matches_python(hints, program):
    """Whatever the rewrites do, every value equals Python's on the hints, and no guard."""
    env = ShapeEnv(duck_shape=False)
    vals = [env.create_symbol(h, X(i)) for i, h in enumerate(hints)]
    concrete = list(hints)
    for op, i, k in program:
        j = i % len(vals)
        x, xc = vals[j], concrete[j]
        y, yc = vals[(j + 1) % len(vals)], concrete[(j + 1) % len(vals)]
        if op == "max":
            v, c = sym_max(x, y + k), max(xc, yc + k)
        elif op == "min":
            v, c = sym_min(x, y - k), min(xc, yc - k)
        elif op == "add":
            v, c = x + y + k, xc + yc + k
        elif op == "sub":
            v, c = x - y - k, xc - yc - k
        elif op == "neg":
            v, c = -x, -xc
        else:
            v, c = x // (abs(k) + 1), xc // (abs(k) + 1)
        vals.append(v)
        concrete.append(c)
        got = v.hint if isinstance(v, SymInt) else v
        assert got == c, (op, x, y, k)
    assert env.guards == []
