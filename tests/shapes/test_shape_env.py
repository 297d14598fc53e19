"""ShapeEnv: symbol creation policy, evaluate_expr, replacements, range refinement, guards."""
import logging

import sympy

from frametrace.shapes import (ShapeEnv, SymInt, ValueRanges, int_oo, statically_known_true)

from shape_sources import LOC, X


def codes(env):
    return [g.code for g in env.produce_guards()]


# ---- creation policy -----------------------------------------------------------------------

def test_new_symbols_are_sequential_with_size_range(env):
    a = env.create_symbol(10, X(0))
    b = env.create_symbol(20, X(1))
    assert isinstance(a, SymInt) and str(a) == "s0" and str(b) == "s1"
    assert env.var_to_range[a.expr] == ValueRanges(2, int_oo)
    assert env.hints == {a.expr: 10, b.expr: 20}
    assert env.symbol_sources == {a.expr: [X(0)], b.expr: [X(1)]}


def test_static_returns_the_int(env):
    assert env.create_symbol(10, X(0), dynamic="static") == 10
    assert env.hints == {}


def test_zero_one_specialisation(env):
    assert env.create_symbol(0, X(0)) == 0
    assert env.create_symbol(1, X(1)) == 1
    assert type(env.create_symbol(1, X(2))) is int
    no_spec = ShapeEnv(specialize_zero_one=False)
    s = no_spec.create_symbol(1, X(0))
    assert isinstance(s, SymInt) and no_spec.var_to_range[s.expr] == ValueRanges(0, int_oo)
    oblivious = ShapeEnv(backed_size_oblivious=True)
    assert isinstance(oblivious.create_symbol(1, X(0)), SymInt)


def test_duck_sizing_shares_a_symbol_and_guards_equality(env):
    a = env.create_symbol(10, X(0, "x"))
    b = env.create_symbol(10, X(0, "y"))
    c = env.create_symbol(11, X(0, "z"))
    assert a.expr == b.expr and c.expr != a.expr
    assert env.symbol_sources[a.expr] == [X(0, "x"), X(0, "y")]
    assert "L['x'].shape[0] == L['y'].shape[0]" in codes(env)
    no_duck = ShapeEnv(duck_shape=False)
    assert no_duck.create_symbol(10, X(0, "x")).expr != no_duck.create_symbol(10, X(0, "y")).expr


def test_min_max_narrow_the_range(env):
    s = env.create_symbol(10, X(0), min=4, max=64)
    assert env.var_to_range[s.expr] == ValueRanges(4, 64)
    assert "4 <= L['x'].shape[0]" in codes(env) and "L['x'].shape[0] <= 64" in codes(env)
    assert statically_known_true(s <= 64) and not statically_known_true(s <= 63)


def test_negative_int_argument_is_unbounded(env):
    n = env.create_symbol(-5, "L['n']")
    assert env.var_to_range[n.expr] == ValueRanges(-int_oo, int_oo)
    assert codes(env) == []
    assert bool(n < 0) and codes(env) == ["L['n'] <= -1"]


# ---- evaluate_expr -----------------------------------------------------------------------------

def test_statically_known_facts_add_no_guard(env):
    s = env.create_symbol(10, X(0))
    for cond in (s >= 2, s + 1 > s, s != 0, s != 1, 2 * s >= s + 2, s // 2 >= 1, s * s >= 4):
        assert bool(cond)
    for cond in (s == 1, s == 0, s < 2):
        assert not bool(cond)
    assert env.guards == []


def test_eq_guard_replaces_the_symbol(env):
    s = env.create_symbol(10, X(0))
    t = s * 2 + 1
    assert bool(s == 10)
    assert str(s) == "10" and str(t) == "21" and s.expr == 10
    assert s * 3 == 30 and type(s * 3) is int
    assert [str(g.expr) for g in env.guards] == ["Eq(s0, 10)"]
    assert codes(env) == ["L['x'].shape[0] == 10"]
    assert env.specializations[0].value == 10 and env.specializations[0].sources == (X(0),)


def test_ne_guard_is_recorded(env):
    s = env.create_symbol(20, X(0))
    assert not bool(s == 10)
    assert [str(g.expr) for g in env.guards] == ["Ne(s0, 10)"]
    assert "L['x'].shape[0] != 10" in codes(env)
    assert not bool(s == 10) and len(env.guards) == 1          # answered from the fact


def test_range_refinement_decides_later_questions(env):
    s = env.create_symbol(20, X(0))
    assert bool(s <= 30)
    assert env.var_to_range[s.expr] == ValueRanges(2, 30)
    n = len(env.guards)
    assert bool(s <= 40) and bool(s < 31) and not bool(s > 30)
    assert len(env.guards) == n
    assert bool(s > 5)
    assert env.var_to_range[s.expr] == ValueRanges(6, 30)
    assert codes(env) == ["6 <= L['x'].shape[0]", "L['x'].shape[0] <= 30"]


def test_branch_sequence_from_the_manual(env):
    # if n == 10 / elif n <= 30 / else, on a size of 20: two guards, range [2, 30] minus 10
    s = env.create_symbol(20, X(0))
    assert not bool(s == 10)
    assert bool(s <= 30)
    assert codes(env) == ["2 <= L['x'].shape[0]", "L['x'].shape[0] <= 30", "L['x'].shape[0] != 10"]


def test_equality_of_two_symbols_replaces_the_newer(env):
    a = env.create_symbol(10, X(0, "x"), duck=False)
    b = env.create_symbol(10, X(0, "y"), duck=False)
    sa, sb = a.expr, b.expr
    assert bool(a == b)
    assert env.replacements == {sb: sa} and str(b) == "s0"
    assert "L['y'].shape[0] == L['x'].shape[0]" in codes(env)


def test_linear_equality_is_solved_for_the_newest_symbol(env):
    a = env.create_symbol(10, X(0, "x"))
    b = env.create_symbol(13, X(0, "y"))
    assert bool(b == a + 3)
    assert str(b) == "s0 + 3"
    assert "L['y'].shape[0] == L['x'].shape[0] + 3" in codes(env)


def test_identical_guards_are_deduplicated(env):
    s = env.create_symbol(10, X(0))
    for _ in range(3):
        assert bool(s % 2 == 0)
    assert len(env.guards) == 1


def test_int_and_range_specialise_with_an_eq_guard(env):
    s = env.create_symbol(4, X(0))
    assert list(range(s)) == [0, 1, 2, 3]
    assert [str(g.expr) for g in env.guards] == ["Eq(s0, 4)"]
    assert env.specializations[-1].reason == "__index__"
    t = env.create_symbol(7, X(1))
    assert int(t + 1) == 8 and str(env.guards[-1].expr) == "Eq(s1 + 1, 8)"
    assert str(t) == "7"


def test_size_hint_and_simplify(env):
    a = env.create_symbol(10, X(0))
    b = env.create_symbol(6, X(1))
    assert env.size_hint(((a - b) // 3).expr) == 1
    assert env.size_hint((a / b).expr) == 10 / 6
    assert env.size_hint(sympy.floor(a.expr / 3 - b.expr / 3)) == 1
    bool(b == 6)
    assert env.simplify(a.expr + b.expr) == a.expr + 6


def test_location_is_recorded_on_guards(env):
    s = env.create_symbol(10, X(0))
    bool(s > 4)
    bool(s != 7)
    gs = env.produce_guards()
    assert all(g.location == LOC for g in gs)
    assert str(gs[-1]) == "L['x'].shape[0] != 7  if x.shape[0] == 10:  # user.py:7 in f"


def test_guard_code_round_trips_through_python(env):
    # eval each produced guard with the sources bound to the hints: all True
    a = env.create_symbol(12, X(0, "x"))
    b = env.create_symbol(12, X(0, "y"))
    c = env.create_symbol(5, X(0, "z"))
    for cond in (a * c > 50, (a + c) // 4 == 4, a % c != 0, a - c * 3 < 0, a == b):
        bool(cond)
    ns = {"L": {"x": sympy.zeros(1), "y": None, "z": None}}
    class A:   # noqa: E306 - a stand-in array with a shape
        def __init__(self, n):
            self.shape = (n,)
    ns = {"L": {"x": A(12), "y": A(12), "z": A(5)}}
    for g in env.produce_guards():
        assert eval(g.code, ns) is True, g.code
    ns = {"L": {"x": A(13), "y": A(12), "z": A(5)}}
    assert not all(eval(g.code, ns) for g in env.produce_guards())


def test_log_lines(env, caplog):
    caplog.set_level(logging.DEBUG, logger="frametrace.dynamic")
    s = env.create_symbol(10, X(0, "x"))
    env.create_symbol(10, X(0, "y"))
    bool(s >= 2)
    bool(s == 10)
    text = caplog.text
    assert ("create_symbol s0 = 10 for L['x'].shape[0] [2, int_oo] "
            "if x.shape[0] == 10:  # user.py:7 in f") in text
    assert "create_symbol s0 duck sized L['y'].shape[0]" in text
    assert "[statically known]" in text
    assert "eval Eq(s0, 10) [guard added] if x.shape[0] == 10:  # user.py:7 in f" in text
    assert "set_replacement s0 = 10 (range_refined_to_singleton) VR[10, 10]" in text
    info = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert not any("[statically known]" in m for m in info)
