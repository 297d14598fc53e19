# ruff: noqa: B023  (the lambdas built in loops are called within the same iteration)
"""concatenate / stack / copy, creation ops, matmul / dot."""
import numpy as np
import pytest

from frametrace.errors import NumpyError, Unsupported
from frametrace.ir.numpy_api import binary_op, lookup_function, lookup_method
from ir_helpers import Rt, check, run, views

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]


def f(np_fn):
    impl = lookup_function(np_fn)
    return lambda b, *a, **k: impl(b, *a, **k)


def test_concatenate(rng):
    for da in DTYPES:
        for db in DTYPES:
            a = rng.standard_normal((2, 3)).astype(da)
            c = rng.standard_normal((4, 3)).astype(db)
            check(lambda b, x, y: f(np.concatenate)(b, [x, y]), lambda x, y: np.concatenate([x, y]), a, c)
    a, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 5))
    for av in views(a):
        check(lambda b, x, y: f(np.concatenate)(b, (x, y, x), axis=-1),
              lambda x, y: np.concatenate((x, y, x), axis=-1), av, c)
    check(lambda b, x, y: f(np.concatenate)(b, [x, y], axis=None),
          lambda x, y: np.concatenate([x, y], axis=None), a, c)
    check(lambda b, x, y: f(np.concatenate)(b, [x, y]), lambda x, y: np.concatenate([x, y]), a, c)
    check(lambda b, x, y: f(np.concatenate)(b, [x, y]), lambda x, y: np.concatenate([x, y]),
          a, np.ones(3))
    check(lambda b, x, y: f(np.concatenate)(b, [x, y]), lambda x, y: np.concatenate([x, y]),
          np.array(1.0), np.array(2.0))
    check(lambda b, x: f(np.concatenate)(b, [x], axis=2), lambda x: np.concatenate([x], axis=2), a)
    with pytest.raises(Unsupported):
        run(lambda b, x: f(np.concatenate)(b, [x], dtype=np.float32), a)


def test_stack(rng):
    a = rng.standard_normal((2, 3))
    for axis in (0, 1, 2, -1, -3, 3):
        check(lambda b, x, y: f(np.stack)(b, [x, y], axis=axis),
              lambda x, y: np.stack([x, y], axis=axis), a, a[::-1].astype(np.float32))
    check(lambda b, x, y: f(np.stack)(b, [x, y]), lambda x, y: np.stack([x, y]), a, np.ones((3, 2)))
    check(lambda b, x, y: f(np.stack)(b, [x, y, 1.0]), lambda x, y: np.stack([x, y, 1.0]),
          np.float32(1), np.array(2, np.float32))
    check(lambda b, x, y: f(np.stack)(b, [x, y]), lambda x, y: np.stack([x, y]), Rt(1.5), Rt(2))


def test_copy(rng):
    for dtype in DTYPES:
        x = rng.standard_normal((3, 2)).astype(dtype)
        for v in views(x):
            got = check(f(np.copy), np.copy, v)
            assert not np.shares_memory(got, v)
        check(lambda b, x: lookup_method("copy")(b, x), lambda x: x.copy(), x.T)
        check(f(np.copy), np.copy, np.dtype(dtype).type(1))
        check(lambda b, x: lookup_method("copy")(b, x), lambda x: x.copy(), np.dtype(dtype).type(1))
    check(f(np.asarray), np.asarray, np.float64(2))
    check(lambda b, x: f(np.asarray)(b, x, np.float32), lambda x: np.asarray(x, np.float32), np.ones(2))
    check(f(np.array), np.array, np.ones((2, 2)))
    check(lambda b, x: f(np.array)(b, x, np.int8), lambda x: np.array(x, np.int8), np.float64(3.5))
    got = run(lambda b, x: (x, f(np.asarray)(b, x)), np.ones(3))[0]
    assert got[0] is got[1]


@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_zeros_ones_empty(name):
    impl, eager = lookup_function(getattr(np, name)), getattr(np, name)
    for shape in [3, (), (2, 0), (2, 3), [4]]:
        for dtype in [None, np.float32, np.int8, bool, "complex64"]:
            check(lambda b: impl(b, shape, dtype=dtype), lambda: eager(shape, dtype=dtype),
                  values=name != "empty")
    check(lambda b: impl(b, -1), lambda: eager(-1))
    like = lookup_function(getattr(np, name + "_like"))
    eager_like = getattr(np, name + "_like")
    for proto in [np.ones((2, 3), np.float32), np.float64(1), np.array(3, np.int8), Rt(2.5), Rt(True)]:
        check(lambda b, p: like(b, p), eager_like, proto, values=name != "empty")
        check(lambda b, p: like(b, p, dtype=np.int32, shape=(4,)),
              lambda p: eager_like(p, dtype=np.int32, shape=(4,)), proto, values=name != "empty")
    with pytest.raises(Unsupported, match="order"):
        run(lambda b: impl(b, 3, order="F"))


def test_full(rng):
    for fill in [1.5, 2, True, np.float32(0.5), Rt(2.5), Rt(3), np.ones(3, np.int8), 300]:
        for dtype in [None, np.float32, np.int8, np.int64]:
            check(lambda b, v: f(np.full)(b, (2, 3), v, dtype=dtype),
                  lambda v: np.full((2, 3), v, dtype=dtype), fill)
    check(lambda b, v: f(np.full)(b, (2, 3), v), lambda v: np.full((2, 3), v), np.ones(4))
    check(lambda b, p: f(np.full_like)(b, p, 2.5), lambda p: np.full_like(p, 2.5), np.ones(3, int))
    check(lambda b, p: f(np.full_like)(b, p, np.nan), lambda p: np.full_like(p, np.nan),
          np.ones(3, np.float32))


def test_arange():
    for args in [(5,), (0,), (2, 7), (7, 2), (1, 10, 3), (10, 1, -3), (-4, 4, 2), (3, 3), (0, 5, 0)]:
        for dtype in [None, np.float32, np.int8]:
            check(lambda b: f(np.arange)(b, *args, dtype=dtype), lambda: np.arange(*args, dtype=dtype))
    for args in [(0.5, 3), (0.1, 1.0, 0.1), (3.0,), (1, 0.0, -0.25), (2.5, 2.5)]:
        for dtype in [None, np.float32, np.int64]:
            check(lambda b: f(np.arange)(b, *args, dtype=dtype), lambda: np.arange(*args, dtype=dtype))
    with pytest.raises(Unsupported):
        run(lambda b, n: f(np.arange)(b, n), Rt(3))


SHAPE_PAIRS = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
               ((5, 2, 3), (1, 3, 4)), ((2, 3), (4,)), ((2, 3), (2, 3)), ((), (3,)), ((0, 3), (3, 2)),
               ((2, 0), (0, 4)), ((4, 1, 2, 3), (5, 3, 2))]


@pytest.mark.parametrize("name", ["matmul", "dot"])
def test_matmul_dot(name, rng):
    impl, eager = lookup_function(getattr(np, name)), getattr(np, name)
    for sa, sb in SHAPE_PAIRS:
        for da, db in [(np.float64, np.float64), (np.float32, np.float64), (np.int32, np.int64),
                       (np.bool_, np.bool_), (np.float32, np.float32)]:
            a = rng.standard_normal(sa).astype(da)
            c = rng.standard_normal(sb).astype(db)
            check(lambda b, x, y: impl(b, x, y), eager, a, c)
    a = rng.standard_normal((3, 3)).astype(np.float32)
    check(lambda b, x, y: impl(b, x, y), eager, a, 2.0)
    check(lambda b, x, y: impl(b, x, y), eager, a.T, np.float64(2.0))
    check(lambda b, x, y: binary_op(b, "@", x, y), lambda x, y: x @ y, a, a[::-1])


def test_matmul_out():
    a = np.arange(6.0).reshape(2, 3)
    c = np.ones((3, 2))
    check(lambda b, x, y, o: lookup_function(np.matmul)(b, x, y, out=o),
          lambda x, y, o: np.matmul(x, y, out=o), a, c, np.zeros((2, 2)))
    check(lambda b, x, y, o: lookup_function(np.matmul)(b, x, y, out=o),
          lambda x, y, o: np.matmul(x, y, out=o), a, c, np.zeros((2, 2), np.int64))
    with pytest.raises(NumpyError):
        run(lambda b, x, y, o: lookup_function(np.matmul)(b, x, y, out=o), a, c, np.zeros((3, 3)))
