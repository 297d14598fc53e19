"""Unbacked (data-dependent) sizes: no hint, branching raises, guard_or_* and size-oblivious
reasoning decide without guards, ft.check facts become runtime asserts."""
import pytest

from frametrace.errors import DataDependentError
from frametrace.shapes import (ShapeEnv, SymInt, ValueRanges, expect_true, guard_or_false,
                               guard_or_true, guard_size_oblivious, int_oo, statically_known_true)

from shape_sources import X


def test_unbacked_symbols_have_no_hint(env):
    u = env.create_unbacked_symint()
    v = env.create_unbacked_symint(lower=-int_oo)
    assert isinstance(u, SymInt) and str(u) == "u0" and str(v) == "u1"
    assert u.hint is None and (u + 1).hint is None
    assert env.var_to_range[u.expr] == ValueRanges(0, int_oo)
    assert env.is_unbacked(u.expr) and u.expr not in env.hints


def test_branching_on_unbacked_raises_with_location(env):
    u = env.create_unbacked_symint()
    with pytest.raises(DataDependentError) as info:
        bool(u > 3)
    msg = str(info.value)
    assert "Could not guard on data-dependent expression u0 > 3" in msg
    assert info.value.location == "user.py:7 in f"
    assert env.guards == []


def test_statically_decidable_unbacked_questions_need_no_hint(env):
    u = env.create_unbacked_symint()
    assert bool(u >= 0) and not bool(u < 0) and bool(u + 1 > u)


def test_guard_or_defaults(env):
    u = env.create_unbacked_symint()
    s = env.create_symbol(10, X(0))
    assert guard_or_false(u == 5) is False and guard_or_true(u == 5) is True
    assert env.guards == []
    assert guard_or_false(s == 10) is True and len(env.guards) == 1    # backed: a real guard
    assert guard_or_false(u >= 0) is True                              # static
    assert guard_or_false(True) is True and guard_or_true(False) is False


def test_size_oblivious_broadcast_check(env):
    u = env.create_unbacked_symint()
    assert guard_size_oblivious(u == 1) is False
    assert guard_size_oblivious(u == 0) is False
    assert guard_size_oblivious(u >= 2) is True
    assert env.guards == []
    with pytest.raises(DataDependentError):
        bool(u == 1)                     # without the size-oblivious view it is undecidable
    s = env.create_symbol(10, X(0))
    assert guard_size_oblivious(s == 10) is True and len(env.guards) == 1


def test_backed_size_oblivious():
    env = ShapeEnv(backed_size_oblivious=True)
    s = env.create_symbol(5, X(0))
    assert env.var_to_range[s.expr] == ValueRanges(0, int_oo)
    assert guard_size_oblivious(s == 1) is False and env.guards == []
    one = env.create_symbol(1, X(1))
    assert isinstance(one, SymInt)
    assert guard_size_oblivious(one == 1) is True        # the hint disagrees: a real guard
    assert len(env.guards) == 1


def test_check_facts_refine_unbacked_ranges(env):
    u = env.create_unbacked_symint()
    assert not statically_known_true(u >= 1)
    expect_true(u >= 1)
    assert statically_known_true(u >= 1) and bool(u >= 1) and bool(u != 0)
    assert env.var_to_range[u.expr] == ValueRanges(1, int_oo)
    assert [str(a.expr) for a in env.runtime_asserts] == ["u0 >= 1"]
    assert env.produce_guards() == []
    v = env.create_unbacked_symint()
    expect_true(v % 4 == 0)
    assert bool(v % 4 == 0) and env.guards == []          # answered from the recorded fact


def test_check_equality_replaces_the_unbacked_symbol(env):
    s = env.create_symbol(10, X(0))
    u = env.create_unbacked_symint()
    expect_true(u == s)
    assert str(u) == "s0" and u.hint == 10


def test_check_on_backed_sizes_guards(env):
    s = env.create_symbol(10, X(0))
    expect_true(s > 3)
    assert env.runtime_asserts == [] and len(env.guards) == 1
    with pytest.raises(AssertionError):
        expect_true(s > 30, "too small")


def test_unbacked_float(env):
    f = env.create_unbacked_symfloat()
    with pytest.raises(DataDependentError):
        bool(f > 1.0)
    assert (f * 2).hint is None


def test_mark_unbacked_input_dim(env):
    u = env.create_symbol(1, X(0), dynamic="unbacked")
    assert isinstance(u, SymInt) and u.hint is None and guard_size_oblivious(u == 1) is False
    assert env.symbol_sources[u.expr] == [X(0)] and env.produce_guards() == []
