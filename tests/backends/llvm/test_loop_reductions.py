"""Reductions in native loop nests (backends/llvm/loop_reductions.py): `x[mask].mean()` /
`.sum()` / `.prod()` with the mask computed in the body, and `mean` of a slice, lowered to one
accumulating inner loop (no mask array, no gather). Against NumPy on random inputs: float64,
float32, integer and bool data, NaN/inf, sizes 0 and 1, reversed views; an empty selection's
mean (NumPy's nan and warnings) from the generic path the checked count hands over to."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import loops
from helpers import assert_same


LOOP_CONFIG = {"loop_unroll_budget": 0}   # short loops too
pytestmark = pytest.mark.usefixtures("fresh_loops")


class RadialProfile:
    """Azimuthal integration as pyFAI's naive version writes it: one masked mean per bin."""

    def __init__(self, npt):
        self.npt = npt

    def bounds(self, rmax, i):
        return rmax * i / self.npt, rmax * (i + 1) / self.npt

    def __call__(self, data, radius):
        rmax = radius.max()
        res = np.zeros(self.npt, dtype=np.float64)
        for i in range(self.npt):
            r1, r2 = self.bounds(rmax, i)
            mask = np.logical_and((r1 <= radius), (radius < r2))
            res[i] = data[mask].mean()
        return res


def masked_totals(x, edges, out_sum, out_prod):
    for i in range(edges.shape[0] - 1):
        sel = (x >= edges[i]) & (x < edges[i + 1])
        out_sum[i] = x[sel].sum()
        out_prod[i] = np.prod(x[sel])
    return out_sum, out_prod


def row_means(A, out):
    for i in range(A.shape[0]):
        out[i] = A[i, :i + 1].mean() + np.mean(A[:i + 1, i] * 2)
    return out


def both(fn, *args, compiled=None):
    """(NumPy's result and warnings, ours): the arguments copied for each."""
    out = []
    for f in (fn, compiled or ft.compile(fn)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        out.append((got, [str(m.message) for m in w]))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8, np.int64])
def test_masked_means_per_bin_are_one_native_nest(dtype, loop_log):
    rng = np.random.default_rng(0)
    prof = RadialProfile(7)
    compiled = ft.compile(prof)
    for n in (200, 1000):
        data = (rng.random(n) * 100).astype(dtype)
        radius = rng.random(n)
        radius[:7] = np.arange(7) / 7 + 0.01            # no bin empty
        (want, w_want), (got, w_got) = both(prof, data, radius, compiled=compiled)
        assert_same(got, want, 1e-5 if dtype == np.float32 else 1e-12)     # float32: summed in float64
        assert w_got == w_want == []
    assert loops.runs["native"] == 2 and not loops.runs["generic"] and not loops.runs["resumed"], loops.runs
    assert any("native loop nest" in line for line in loop_log), loop_log
    assert ft.stats().graph_breaks == 0 and ft.stats().eager_fallbacks == 0


@pytest.mark.parametrize("n", [1, 2, 50])
def test_an_empty_selection_gives_numpys_nan_and_warnings(n):
    rng = np.random.default_rng(n)
    data, radius = rng.random(n), rng.random(n) * 0.5
    radius[0] = 1.0                                   # bins between 0.5 and 0.9 are empty
    (want, w_want), (got, w_got) = both(RadialProfile(9), data, radius)
    assert_same(got, want, 1e-12)
    assert np.isnan(want).any()
    assert w_got == w_want and "Mean of empty slice" in w_want, (w_got, w_want)


def test_a_late_empty_bin_keeps_the_earlier_bins_native():
    data = np.arange(10.0)
    radius = np.array([0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.99])
    radius[9] = 0.86                         # bin 9 ([0.9 * rmax, rmax)) ... stays non-empty: rmax
    radius[8] = 0.86                         # bin 8 empty
    (want, w_want), (got, w_got) = both(RadialProfile(10), data, radius)
    assert_same(got, want, 1e-12)
    assert w_got == w_want and w_want
    assert loops.runs["resumed"] == 1


def test_nan_and_inf_selected_or_not():
    data = np.array([1.0, np.nan, np.inf, -np.inf, 2.0, 3.0, np.inf, 4.0])
    radius = np.array([0.1, 0.3, 0.6, 0.65, 0.1, 0.9, 0.95, 0.99])
    (want, w_want), (got, w_got) = both(RadialProfile(4), data, radius)
    assert_same(got, want, 1e-12)
    assert w_got == w_want, (w_got, w_want)           # inf + -inf: "invalid value" as NumPy's reduce


def test_reversed_and_strided_operands():
    rng = np.random.default_rng(3)
    data, radius = rng.random(300), rng.random(300)
    radius[:5] = [0.1, 0.3, 0.5, 0.7, 0.9]
    (want, _), (got, _) = both(RadialProfile(5), data[::-2], radius[::-2])
    assert_same(got, want, 1e-12)
    assert loops.runs["native"] == 1


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64, np.float32, np.float64])
def test_masked_sums_and_products_wrap_as_numpy(dtype):
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    hi = min(int(info.max), 200) if info is not None else 50
    lo = max(int(info.min), -200) if info is not None else -50
    x = rng.integers(lo, hi, 64).astype(dtype)
    edges = np.array([lo, lo // 2, 0, hi // 2, hi], dtype)
    acc = np.result_type(dtype, np.int64) if info is not None and info.min < 0 else \
        np.uint64 if info is not None else dtype
    args = (x, edges, np.zeros(4, acc), np.zeros(4, acc))
    (want, w_want), (got, w_got) = both(masked_totals, *args)
    assert_same(got, want, 1e-5 if dtype == np.float32 else 1e-12)
    assert w_got == w_want
    assert loops.runs["native"] == 1 and not loops.runs["generic"], loops.runs


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.bool_])
def test_means_of_slices(dtype):
    rng = np.random.default_rng(6)
    compiled = ft.compile(row_means, dynamic=True)
    for n in (5, 12, 1, 0):
        A = (rng.random((n, n)) * 10).astype(dtype)
        out = np.zeros(n, np.float32 if dtype == np.float32 else np.float64)
        (want, w_want), (got, w_got) = both(row_means, A, out, compiled=compiled)
        assert_same(got, want, 1e-5 if dtype == np.float32 else 1e-12)
        assert w_got == w_want
    assert loops.runs["native"] >= 2 and not loops.runs["resumed"], loops.runs


def test_a_mask_of_leading_dimensions_keeps_numpy(loop_log):
    def rows_mean(X, lim):
        out = np.zeros(lim.shape[0])
        for i in range(lim.shape[0]):
            out[i] = X[X[:, 0] < lim[i]].mean()
        return out
    rng = np.random.default_rng(7)
    X, lim = rng.random((20, 3)), np.array([0.5, 0.9, 1.0])
    (want, w_want), (got, w_got) = both(rows_mean, X, lim)
    assert_same(got, want, 1e-12)
    assert w_got == w_want
    assert not any("native loop nest" in line for line in loop_log)
