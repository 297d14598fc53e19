# ruff: noqa: E731
"""np.nanmax / nanmin / nanmean / nanargmax / nanargmin as native reductions (ir/ops/
nan_reductions.py, ir/numpy_api/nan_reductions.py), end to end through ft.compile(fullgraph=True)
on both backends: no, some, most and only NaNs per slice; +-0.0 and +-inf; float64 / float32 /
int / bool; sizes 0, 1 and larger; reversed, strided and Fortran-ordered inputs. Type, dtype,
shape, values and the NaN's sign bit equal NumPy's; so do the RuntimeWarnings ("All-NaN slice
encountered", "Mean of empty slice", once each, and no FP warning NumPy's errstate(ignore)
hides) and the errors (ValueError of an all-NaN nanargmax, of an empty nanmax)."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}

CASES = {
    "nanmax": lambda x: np.nanmax(x),
    "nanmax_axis0": lambda x: np.nanmax(x, axis=0),
    "nanmax_axis1_keepdims": lambda x: np.nanmax(x, 1, keepdims=True),
    "nanmin_axis1": lambda x: np.nanmin(x, axis=-1),
    "nanmin_axis0": lambda x: np.nanmin(x, 0),
    "nanmax_scalar": lambda x: np.nanmax(x[0, 0]) if x.size else np.nanmax(np.float64(np.nan)),
    "nanmax_fused": lambda x: np.nanmax(x * 2.0, axis=1) + x.sum(),
    "nanmean": lambda x: np.nanmean(x),
    "nanmean_axis0": lambda x: np.nanmean(x, axis=0),
    "nanmean_axis1_keepdims": lambda x: np.nanmean(x, 1, keepdims=True),
    "nanmean_dtype": lambda x: np.nanmean(x, axis=1, dtype=np.float32),
    "nanargmax": lambda x: np.nanargmax(x),
    "nanargmax_axis1": lambda x: np.nanargmax(x, axis=1),
    "nanargmin_axis0_keepdims": lambda x: np.nanargmin(x, axis=0, keepdims=True),
}


def _values(rng, shape, dtype, nan_fraction):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(-5, 6, shape).astype(dt)
    x = rng.standard_normal(shape).astype(dt)
    pick = rng.random(shape)
    x[pick < 0.2] = 0.0
    x[(pick >= 0.2) & (pick < 0.35)] = -0.0
    x[(pick >= 0.35) & (pick < 0.4)] = np.inf
    x[rng.random(shape) < nan_fraction] = np.nan
    return x


def _inputs(rng, dtype):
    out = []
    for shape in ((0, 3), (3, 0), (1, 1), (4, 5), (9, 7), (64, 33)):
        for frac in (0.0, 0.3, 0.8, 1.0) if np.dtype(dtype).kind == "f" else (0.0,):
            x = _values(rng, shape, dtype, frac)
            out += [x, x[::-1], np.asfortranarray(x), np.repeat(x, 2, 1)[:, ::-2]]
    return out


def _run(fn, x):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            value = fn(x)
        except Exception as exc:
            value = exc
    return value, sorted(str(w.message) for w in ws if w.category is RuntimeWarning)


def _check(fn, compiled, x):
    want, want_w = _run(fn, x)            # x itself: NumPy's zero pick depends on the layout
    got, got_w = _run(compiled, x)
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want), (got, want)
        return
    assert_same(got, want, 1e-5 if np.asarray(want).dtype == np.float32 else 1e-12)
    if np.asarray(want).dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want))      # -0.0 and NaN's sign
    assert got_w == want_w


@ft.config.patch(cache_size_limit=64)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_reduction_matches_numpy(name, dtype, backend, rng):
    fn = CASES[name]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for x in _inputs(rng, dtype):
        _check(fn, compiled, x)
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_size_sweep_compiles_twice(name, backend, rng):
    fn = CASES[name]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (5, 8, 13, 40):
        _check(fn, compiled, _values(rng, (n, n + 2), np.float64, 0.3))
    assert ft.stats().unique_graphs == 2 and ft.stats().graph_breaks == 0


def test_zero_signs_follow_fmax(backend, rng):
    """nanmax is np.fmax.reduce, whose pick between 0.0 and -0.0 differs from np.max's."""
    fn = lambda x: (np.nanmax(x, axis=1), np.nanmin(x, axis=0), np.nanmax(x))
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (3, 17, 70):
        x = np.where(rng.random((n, n)) < 0.5, 0.0, -0.0)
        x[rng.random((n, n)) < 0.1] = np.nan
        got, want = compiled(x), fn(x)
        for g, w in zip(got, want):
            assert_same(g, w)
            assert np.array_equal(np.signbit(g), np.signbit(w))


def test_errstate_raise_sees_no_fp_error(backend):
    """np.nanmean divides under errstate(ignore): an all-NaN slice warns only "Mean of empty
    slice", even when the caller raises on invalid operations."""
    fn = lambda x: np.nanmean(x, axis=1)
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    x = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with np.errstate(all="raise"), pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        got = compiled(x)
    assert_same(got, np.array([np.nan, 1.0]))


def test_nan_reductions_are_graph_ops(rng):
    fn = lambda x: (np.nanmax(x, axis=1), np.nanmean(x), np.nanargmin(x, axis=0))
    text = "\n".join(str(g) for g in ft.explain(fn, _values(rng, (5, 4), np.float64, 0.3)).graphs)
    for op in ("nanmax(", "divide_quiet(", "report_if(", "argmin("):
        assert op in text, text
