"""Data-dependent sizes: one graph serves every mask; ft.check facts are asserted at run time."""
import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_mask_select_all_dtypes_one_graph(dtype):
    def f(x, m):
        y = x[m]
        return y, y.shape[0] * 0 + 1
    c = ft.compile(f)
    rng = np.random.default_rng(0)
    for n in (0, 1, 7, 7, 7):
        x = (rng.standard_normal(n) * 5).astype(dtype)
        m = rng.random(n) > 0.5
        got, want = c(x, m), f(x, m)
        assert_same(got[0], want[0])


def test_mask_on_leading_dims_and_2d():
    def f(x):
        return x[x[:, 0] > 0] * 2.0, x[x > 0].sum()
    c = ft.compile(f)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((6, 3))
        assert_same(c(x), f(x))
    assert ft.stats().unique_graphs == 1


def test_nonzero_argwhere_flatnonzero_unique_where():
    def f(x):
        return (np.nonzero(x > 0), np.argwhere(x > 1), np.flatnonzero(x), np.unique(np.floor(x)),
                np.where(x < 0))
    c = ft.compile(f)
    rng = np.random.default_rng(2)
    for _ in range(3):
        x = rng.standard_normal((4, 5))
        assert_same(c(x), f(x))
    assert ft.stats().unique_graphs == 1


def test_integer_gather_and_out_of_bounds_error():
    def f(w, idx):
        return w[idx] + 1
    c = ft.compile(f)
    w = np.arange(10.0)
    assert_same(c(w, np.array([0, 3, 9])), f(w, np.array([0, 3, 9])))
    with pytest.raises(IndexError):
        c(w, np.array([10]))


def test_mask_shape_mismatch_raises_like_numpy():
    def f(x, m):
        return x[m]
    c = ft.compile(f)
    with pytest.raises(IndexError):
        c(np.ones(4), np.ones(3, dtype=bool))


def test_check_becomes_a_runtime_assert_for_unbacked_sizes():
    def keep(x):
        y = x[x > 0]
        ft.check(y.shape[0] >= 1, "need one positive")
        if y.shape[0] >= 1:
            return y / y.shape[0]
        return y
    c = ft.compile(keep, fullgraph=True)
    x = np.array([1.0, -2.0, 3.0])
    assert_same(c(x), keep(x))
    with pytest.raises(AssertionError):
        c(-np.ones(3))
