# ruff: noqa: B023  (the lambdas built in loops are called within the same iteration)
"""Advanced indexing: lists, ranges and integer arrays as indices (alone and mixed with slices,
None, ints and Ellipsis), x[idx] = v, x[idx] += v with repeated indices, x[mask] = v and
np.add.at, against NumPy on contiguous, reversed, transposed and strided inputs."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.errors import Unsupported
from frametrace.ir.numpy_api import getitem, lookup_function, setitem
from frametrace.ir.numpy_api.operators import inplace_op
from ir_helpers import check, check_mutation, views

DTYPES = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_, np.complex128]


def _base(shape, dtype, rng):
    x = rng.standard_normal(shape) * 5
    return x.astype(dtype) if dtype is not np.complex128 else (x + 1j * x[::-1]).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_list_range_and_array_indices(dtype, rng):
    for x in views(_base((4, 5), dtype, rng)):
        for idx in ([0, 2, 1], [-1], [], range(2), (slice(None), [-1]), ([0, 1, 2], [4, 3, 2]),
                    (Ellipsis, [1, 1]), (None, [3, 0], slice(1, 3)), ([1], None, 2), (2, [0, 4]),
                    ([[0, 1], [2, 3]],), ([True, False, True, False],), ([True, False],),
                    (slice(None, None, -1), [0, -5])):
            check(lambda b, x: getitem(b, x, idx), lambda x: x[idx], x)


@pytest.mark.parametrize("n", [0, 1, 7])
def test_integer_array_index_in_every_position(n, rng):
    i0, i1, i2 = rng.integers(-3, 3, n), rng.integers(0, 4, n), rng.integers(-5, 5, n)
    patterns = [lambda a, b_, c: (a,), lambda a, b_, c: (slice(None), b_),
                lambda a, b_, c: (Ellipsis, c), lambda a, b_, c: (a, slice(1, 3), c),
                lambda a, b_, c: (None, a, None), lambda a, b_, c: (0, slice(None), c),
                lambda a, b_, c: (a, b_, c), lambda a, b_, c: (slice(None, None, -1), b_, 1)]
    for x in views(rng.standard_normal((3, 4, 5))):
        for p in patterns:
            check(lambda b, x, a, b_, c: getitem(b, x, p(a, b_, c)), lambda x, a, b_, c: x[p(a, b_, c)],
                  x, i0, i1, i2)


def test_integer_array_index_with_computed_indices(rng):
    x = rng.standard_normal((6, 3))
    i = rng.integers(0, 6, 4)

    def build(b, x, i):
        return getitem(b, x, (lookup_function(np.add)(b, i, 0), slice(None, None, -1)))
    check(build, lambda x, i: x[i + 0, ::-1], x, i)


def test_out_of_bounds_array_index_raises_like_numpy(rng):
    x = rng.standard_normal(5)
    with pytest.raises(IndexError):
        check(lambda b, x, i: getitem(b, x, (i, )), lambda x, i: x[(i,)], x, np.array([0, 5]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-4, 3), min_size=0, max_size=6), st.integers(0, 2))
def test_setitem_and_iadd_with_repeated_indices(ids, axis):
    x = np.arange(24.0).reshape(4, 6)[:, ::-1] if axis else np.arange(4.0)
    idx = ids if not axis else (slice(None), [i % 6 for i in ids])

    def put(b, x):
        setitem(b, x, idx, -1.5)

    def eager_put(x):
        x[idx] = -1.5
    check_mutation(put, eager_put, x)

    def iadd(b, x):
        g = getitem(b, x, idx)
        setitem(b, x, idx, inplace_op(b, "+", g, 2.0))

    def eager_iadd(x):
        x[idx] += 2.0
    check_mutation(iadd, eager_iadd, x)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.float32])
def test_ufunc_at_is_unbuffered(dtype, rng):
    x = np.zeros(5, dtype)
    ids = np.array([0, 1, 1, 4, 1, 0])
    vals = rng.integers(1, 5, 6).astype(dtype)
    for uf in (np.add, np.multiply, np.maximum, np.subtract):
        def build(b, x, i, v):
            lookup_function(uf.at)(b, x, i, v)

        def eager(x, i, v):
            uf.at(x, i, v)
        check_mutation(build, eager, x + 1, ids, vals)


def test_mask_setitem_scalar_and_array(rng):
    for x in views(rng.standard_normal((4, 3))):
        def build(b, x):
            setitem(b, x, lookup_function(np.greater)(b, x, 0), 0.0)

        def eager(x):
            x[x > 0] = 0.0
        check_mutation(build, eager, x.copy())


def test_run_time_values_inside_an_index_list_are_unsupported(rng):
    x = rng.standard_normal(4)
    with pytest.raises(Unsupported):
        check(lambda b, x, i: getitem(b, x, [getitem(b, i, 0), 1]), lambda x, i: x[[i[0], 1]], x,
              np.array([1, 2]))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2), st.integers(0, 4), st.integers(1, 3), st.booleans(), st.data())
def test_put_along_axis_matches_numpy(axis, k, ndim, scalar_value, data):
    """NumPy's buffered assignment: repeated and negative indices, every view of the target."""
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    axis = axis % ndim
    shape = tuple(rng.integers(1, 5, ndim))
    ishape = tuple(k if d == axis else (s if rng.random() < 0.7 else 1) for d, s in enumerate(shape))
    ids = rng.integers(-shape[axis], shape[axis], ishape)
    vals = np.float64(2.5) if scalar_value else rng.standard_normal(ishape)
    for x in views(rng.standard_normal(shape)):
        def build(b, x, i, v):
            lookup_function(np.put_along_axis)(b, x, i, v, axis)

        def eager(x, i, v):
            np.put_along_axis(x, i, v, axis)
        check_mutation(build, eager, x, ids, vals)


def test_put_along_axis_errors_are_numpys(rng):
    x = rng.standard_normal((3, 4))
    for ids, axis, exc in ((np.zeros((3, 1)), 1, IndexError), (np.zeros(3, np.int64), 1, ValueError),
                           (np.zeros((3, 1), np.int64), 2, np.exceptions.AxisError),
                           (np.full((3, 1), 4), 1, IndexError)):
        with pytest.raises(exc):
            np.put_along_axis(x.copy(), ids, 1.0, axis)
        with pytest.raises(exc):
            check_mutation(lambda b, x, i: lookup_function(np.put_along_axis)(b, x, i, 1.0, axis),
                           lambda x, i: np.put_along_axis(x, i, 1.0, axis), x, ids)
