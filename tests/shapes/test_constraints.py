"""mark_dynamic (strict=True): specialising or narrowing the size is a ConstraintViolationError
that names the source, the fix and the user code."""
import pytest

from frametrace.errors import ConstraintViolationError
from frametrace.shapes import ShapeEnv, ValueRanges

from shape_sources import X


def violation(env) -> str:
    with pytest.raises(ConstraintViolationError) as info:
        env.check_constraints()
    return str(info.value)


def test_specialised_strict_symbol(env):
    s = env.create_symbol(10, X(0), strict=True)
    assert bool(s == 10)
    msg = violation(env)
    assert msg.startswith("Constraints violated (L['x'].shape[0])!")
    assert ("- You marked L['x'].shape[0] as dynamic but your code specialized it to be a "
            "constant (10). If you're using mark_dynamic, either remove it or use "
            "maybe_mark_dynamic.") in msg
    assert 'User stack:\n  File "user.py", line 7, in f\n    if x.shape[0] == 10:' in msg


def test_int_of_strict_symbol(env):
    s = env.create_symbol(6, X(0), strict=True)
    list(range(s))
    assert "specialized it to be a constant (6)" in violation(env)


def test_narrowing_below_declared_range(env):
    s = env.create_symbol(10, X(0), strict=True, min=2, max=64)
    assert env.var_to_range[s.expr] == ValueRanges(2, 64)
    assert bool(s <= 64) and bool(s < 100)          # implied by the declared range: fine
    env.check_constraints()
    assert bool(s <= 30)
    msg = violation(env)
    assert "Not all values of L['x'].shape[0] in the specified range 2 <= L['x'].shape[0] <= 64" \
        in msg and "L['x'].shape[0] <= 30" in msg and "maybe_mark_dynamic" in msg


def test_equality_with_another_size(env):
    a = env.create_symbol(10, X(0, "x"), strict=True)
    b = env.create_symbol(10, X(0, "y"))
    assert a.expr != b.expr                         # strict symbols are never duck sized
    assert bool(a == b)
    assert "L['x'].shape[0]" in violation(env)


def test_unconstrained_symbols_may_specialise(env):
    s = env.create_symbol(10, X(0))
    t = env.create_symbol(11, X(1), strict=True)
    bool(s == 10)
    bool(t >= 2)
    env.check_constraints()


def test_zero_one_hint_of_a_strict_dim():
    env = ShapeEnv()
    assert env.create_symbol(1, X(0), strict=True) == 1
    assert "constant (1)" in violation(env)


def test_hint_outside_declared_range():
    env = ShapeEnv()
    env.create_symbol(100, X(0), strict=True, max=64)
    assert "L['x'].shape[0]" in violation(env)
