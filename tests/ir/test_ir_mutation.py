# ruff: noqa: B023  (the lambdas built in loops are called within the same iteration)
"""assign / setitem / in-place operators / out=: writes land in the caller's arrays as in NumPy."""
import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.errors import NumpyError, Unsupported
from frametrace.ir.numpy_api import (binary_op, getitem, inplace_op, lookup_function, lookup_method,
                                     setitem)
from ir_helpers import Rt, check, check_mutation, run

INPLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
           "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "&": operator.iand,
           "|": operator.ior, "^": operator.ixor, "<<": operator.ilshift, ">>": operator.irshift}


def eager_inplace(op):
    def f(x, y):
        return INPLACE[op](x, y)
    return f


@pytest.mark.parametrize("op", sorted(INPLACE))
def test_inplace_operators(op, rng):
    for dx in (np.float32, np.float64, np.int32, np.int64, np.bool_):
        for y in (2, 1.5, True, Rt(3), np.ones(3, np.float64), np.arange(3, dtype=np.int8),
                  np.ones((2, 3), np.float32), np.float32(2)):
            x = (np.abs(rng.standard_normal((2, 3))) * 3 + 1).astype(dx)
            try:
                with np.errstate(all="ignore"):
                    eager_inplace(op)(x.copy(), y.value if isinstance(y, Rt) else y)
            except Exception as exc:
                with pytest.raises(NumpyError) as info:
                    run(lambda b, x, y: inplace_op(b, op, x, y), x, y)
                assert isinstance(info.value.error, type(exc))
                continue
            with np.errstate(all="ignore"):
                b = check_mutation(lambda b, x, y: inplace_op(b, op, x, y), eager_inplace(op), x, y)
            assert b.graph.nodes[-1].op == "assign"


def test_inplace_on_scalars_rebinds():
    got = check(lambda b, x: inplace_op(b, "+", x, 1), lambda x: operator.iadd(x, 1), np.float32(2))
    assert isinstance(got, np.float32)
    got = check(lambda b, x: inplace_op(b, "*", x, 2.0), lambda x: operator.imul(x, 2.0), Rt(1.5))
    assert type(got) is float


def test_inplace_broadcast_into_smaller_target_raises():
    with pytest.raises(NumpyError) as info:
        run(lambda b, x, y: inplace_op(b, "+", x, y), np.ones(3), np.ones((2, 3)))
    assert isinstance(info.value.error, ValueError)


def test_inplace_on_a_view_writes_through():
    def eager(x):
        v = x[1:, ::2]
        v += 1.0
        return x * 1.0

    def traced(b, x):
        v = getitem(b, x, (slice(1, None), slice(None, None, 2)))
        inplace_op(b, "+", v, 1.0)
        return binary_op(b, "*", x, 1.0)
    check_mutation(traced, eager, np.zeros((3, 4)))


setitem_index = st.one_of(
    st.integers(-3, 2), st.slices(3), st.just(Ellipsis), st.just(()),
    st.tuples(st.integers(-3, 2), st.slices(4)), st.tuples(st.slices(3), st.integers(-4, 3)),
    st.tuples(st.integers(-3, 2), st.integers(-4, 3)), st.tuples(st.none(), st.slices(3)))


@settings(max_examples=150, deadline=None)
@given(setitem_index, st.sampled_from(["scalar", "row", "np", "rt", "col"]), st.booleans())
def test_setitem_matches_numpy(index, kind, reverse):
    x = np.arange(12.0).reshape(3, 4)
    if reverse:
        x = x[::-1, ::-1]
    value = {"scalar": -1, "row": np.full(4, -2.0, np.float32), "np": np.int8(-3),
             "rt": Rt(-4.5), "col": np.full((3, 1), -5.0)}[kind]

    def eager(x, v):
        x[index] = v

    try:
        eager(x.copy(), value.value if isinstance(value, Rt) else value)
    except Exception as exc:
        with pytest.raises(NumpyError) as info:
            run(lambda b, x, v: setitem(b, x, index, v), x, value)
        assert isinstance(info.value.error, type(exc))
        return
    check_mutation(lambda b, x, v: setitem(b, x, index, v), eager, x, value)


def test_setitem_errors_and_casts():
    def sets(index):
        def eager(x, value):
            x[index] = value
        return eager
    for x, index, value in [(np.zeros(3, np.int8), 0, 300), (np.zeros(3, np.int64), slice(None), np.nan),
                            (np.zeros(3), 0, np.ones(1)), (np.zeros(3), slice(None), np.ones(4)),
                            (np.zeros(3, np.int32), 1, 2.7), (np.zeros(3), 5, 1.0),
                            (np.zeros(3), slice(None), np.ones((1, 3))), (np.array(1.0), (), 2.0),
                            (np.array(1.0), Ellipsis, 2.0), (np.zeros(3), 0, np.array(2.0))]:
        try:
            sets(index)(x.copy(), value)
        except Exception as exc:
            with pytest.raises(NumpyError) as info:
                run(lambda b, x, v: setitem(b, x, index, v), x, value)
            assert isinstance(info.value.error, type(exc))
            continue
        check_mutation(lambda b, x, v: setitem(b, x, index, v), sets(index), x, value)
    with pytest.raises(NumpyError):
        run(lambda b, x: setitem(b, x, 0, 1.0), np.float64(1))
    with pytest.raises(Unsupported):
        run(lambda b, x: setitem(b, x, x, 1.0), np.ones(3))


def test_fill_and_ufunc_out(rng):
    def eager_fill(x):
        x.fill(7)
    check_mutation(lambda b, x: lookup_method("fill")(b, x, 7), eager_fill, np.zeros((2, 2)))
    a, c = rng.standard_normal(3), rng.standard_normal(3)
    for out in (np.zeros(3), np.zeros((2, 3)), np.zeros(3, np.float32), np.zeros(3, np.int64),
                np.zeros(4), np.zeros((1, 3))):
        check(lambda b, x, y, o: lookup_function(np.add)(b, x, y, out=o),
              lambda x, y, o: np.add(x, y, out=o), a, c, out)
        check(lambda b, x, y, o: lookup_function(np.add)(b, x, y, o),
              lambda x, y, o: np.add(x, y, o), a, c, out)
    check(lambda b, x, o: lookup_function(np.sin)(b, x, out=(o,)), lambda x, o: np.sin(x, out=(o,)),
          a, np.zeros(3))
    i8 = np.array([100, 100], np.int8)
    check(lambda b, x, o: lookup_function(np.add)(b, x, x, out=o), lambda x, o: np.add(x, x, out=o),
          i8, np.zeros(2))
    check(lambda b, x, o: lookup_function(np.clip)(b, x, 0, 1, out=o),
          lambda x, o: np.clip(x, 0, 1, out=o), a, np.zeros(3))

    def eager_alias(x, y):
        np.multiply(x, y, out=x)
        return x
    check_mutation(lambda b, x, y: lookup_function(np.multiply)(b, x, y, out=x), eager_alias, a, c)


def test_ufunc_dtype_argument(rng):
    a = rng.standard_normal(4)
    for dt in (np.float32, np.float64, np.int64):
        check(lambda b, x: lookup_function(np.add)(b, x, 1, dtype=dt), lambda x: np.add(x, 1, dtype=dt), a)
        check(lambda b, x: lookup_function(np.sqrt)(b, x, dtype=dt), lambda x: np.sqrt(x, dtype=dt),
              np.arange(4, dtype=np.int32))
    with pytest.raises(Unsupported, match="where"):
        run(lambda b, x: lookup_function(np.add)(b, x, 1, where=x), a > 0)


def test_inplace_matmul(rng):
    a, c = rng.standard_normal((3, 3)), rng.standard_normal((3, 3)).astype(np.float32)
    check_mutation(lambda b, x, y: inplace_op(b, "@", x, y), eager_inplace_matmul, a, c)
    with pytest.raises(NumpyError) as info:
        run(lambda b, x, y: inplace_op(b, "@", x, y), np.ones((3, 2)), np.ones((2, 3)))
    assert isinstance(info.value.error, ValueError)


def eager_inplace_matmul(x, y):
    x @= y
    return x
