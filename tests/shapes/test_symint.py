"""SymInt / SymFloat / SymBool behave like int / float / bool on their hints."""
import math
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.shapes import (ShapeEnv, SymBool, SymFloat, SymInt, guard_int, is_symbolic,
                               sym_eq, sym_max, sym_min, sym_not)

from shape_sources import X

OPS = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod]
CMPS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def value(x):
    return x.hint if isinstance(x, (SymInt, SymFloat)) else x


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(2, 50), min_size=1, max_size=3),
       st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 5), st.integers(-20, 20),
                          st.booleans()), min_size=1, max_size=8))
def test_arithmetic_matches_int_arithmetic(hints, program):
    env = ShapeEnv(duck_shape=False)
    syms = [env.create_symbol(h, X(i)) for i, h in enumerate(hints)]
    vals, concrete = list(syms), list(hints)
    for op, i, k, use_sym in program:
        j = i % len(vals)
        other, other_c = (vals[(j + 1) % len(vals)], concrete[(j + 1) % len(vals)]) if use_sym \
            else (k, k)
        if op in (operator.floordiv, operator.mod) and other_c == 0:
            continue
        vals.append(op(vals[j], other))
        concrete.append(op(concrete[j], other_c))
        assert value(vals[-1]) == concrete[-1], (op, vals[j], other)
    assert env.guards == []                    # arithmetic alone never guards


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 40), st.integers(2, 40), st.sampled_from(CMPS), st.integers(-3, 3),
       st.integers(-40, 40))
def test_comparisons_match_and_guards_hold(h0, h1, cmp, k, c):
    env = ShapeEnv()
    a, b = env.create_symbol(h0, X(0)), env.create_symbol(h1, X(1))
    lhs, lhs_c = a * k + c, h0 * k + c
    assert bool(cmp(lhs, b)) == cmp(lhs_c, h1)
    assert bool(cmp(lhs, b)) == cmp(lhs_c, h1)   # again: from facts/replacements
    class A:  # noqa: E306
        def __init__(self, n):
            self.shape = (n, n)
    ns = {"L": {"x": A(0)}}
    ns["L"]["x"].shape = (h0, h1)
    for g in env.produce_guards():
        assert eval(g.code, ns), g.code


def test_truediv_gives_symfloat(env):
    s = env.create_symbol(7, X(0))
    f = s / 2
    assert isinstance(f, SymFloat) and f.hint == 3.5
    assert isinstance(f * 2.0 + 1, SymFloat) and (f * 2.0 + 1).hint == 8.0
    assert math.floor(f).hint == 3 and math.ceil(f).hint == 4
    assert env.guards == []
    assert float(f) == 3.5 and len(env.guards) == 1
    assert isinstance(s * 0.5, SymFloat) and isinstance(s ** -1, SymFloat)
    assert (s ** -1).hint == 1 / 7


def test_pow_neg_abs_divmod(env):
    s = env.create_symbol(5, X(0))
    assert (s ** 2).hint == 25 and (2 ** s).hint == 32 and (-s).hint == -5
    assert abs(s - 9).hint == 4 and [x.hint for x in divmod(s, 3)] == [1, 2]
    assert (s << 2).hint == 20 and (s >> 1).hint == 2


def test_bool_int_index_and_hash(env):
    s = env.create_symbol(3, X(0))
    assert bool(s) is True and env.guards == []       # s != 0 from the range
    with pytest.raises(TypeError, match="unhashable"):
        hash(s)
    with pytest.raises(TypeError, match="unhashable"):
        _ = {s: 1}
    assert ["a", "b", "c", "d"][s] == "d"
    assert str(env.guards[0].expr) == "Eq(s0, 3)" and repr(s) == "3"


def test_float_and_format_specialise(env):
    s = env.create_symbol(12, X(0))
    assert f"{s}" == "s0" and env.guards == []
    assert f"{s:>4}" == "  12" and len(env.guards) == 1


def test_symbool_logic(env):
    a, b = env.create_symbol(4, X(0)), env.create_symbol(9, X(1))
    both = (a < b) & (b < 20)
    assert isinstance(both, SymBool)
    assert bool(both) is True
    assert isinstance(sym_not(a == b), SymBool) and bool(~(a == 100)) is True
    assert sym_not(True) is False
    either = (a > 100) | True
    assert either is True


def test_helpers_on_plain_and_symbolic_values(env):
    s = env.create_symbol(10, X(0))
    t = env.create_symbol(20, X(1))
    assert sym_max(3, 4) == 4 and sym_min(3, 4) == 3
    assert sym_max(s, 1) is s and sym_min(s, 2) == 2      # decided by ranges, no guard
    m = sym_max(s, t)
    assert str(m) == "Max(s0, s1)" and m.hint == 20 and env.guards == []
    assert sym_eq((2, s), (2, s)) is True
    assert isinstance(sym_eq((s, 3), (t, 3)), SymBool)
    assert sym_eq((1, 2), (1,)) is False
    assert is_symbolic(s) and not is_symbolic(5)
    assert guard_int(7) == 7 and guard_int(s) == 10
    assert not is_symbolic(s)                              # specialised now


def test_numpy_scalars_mix(env):
    import numpy as np
    s = env.create_symbol(6, X(0))
    assert (np.int64(2) * s).hint == 12 and (s + np.int32(1)).hint == 7
    assert isinstance(s * np.float64(0.5), SymFloat)


def test_mixing_environments_is_an_error():
    a = ShapeEnv().create_symbol(5, X(0))
    b = ShapeEnv().create_symbol(6, X(0))
    with pytest.raises(ValueError):
        a + b


def test_copies_share_the_env(env):
    import copy
    s = env.create_symbol(5, X(0))
    assert copy.deepcopy((s, 1))[0] is s and copy.copy(s) is s


def test_backed_symfloat_guards_on_its_value(env):
    f = env.create_symfloat(0.25, "L['lr']")
    assert str(f) == "f0" and (f * 4).hint == 1.0
    assert bool(f > 0.2) and not bool(f > 1)
    assert float(f) == 0.25
    codes = [g.code for g in env.produce_guards()]
    assert codes == ["L['lr'] > 0.2", "L['lr'] <= 1", "L['lr'] == 0.25"]
    assert all(eval(c, {"L": {"lr": 0.25}}) for c in codes)
