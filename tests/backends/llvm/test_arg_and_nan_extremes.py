"""argmax/argmin (per-block extremes, then the winning block searched: lower/arg_reductions.py),
max/min and nanmax/nanmin
(a NaN-propagating max over NaN-masked elements) equal NumPy exactly: first index of ties,
first NaN wins, -0.0 == 0.0 ties, all-NaN slices (NaN and NumPy's RuntimeWarning), signed
zeros of the result; sizes 1 and past a few vector widths, non-contiguous, negative strides,
Fortran order; both backends; one compile per layout."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from tracing import A, Traced

rng = np.random.default_rng(14)


@pytest.fixture(params=["llvm", "numpy"])
def backend(request):
    return request.param


def _data(dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.round(rng.standard_normal(shape) * 3).astype(dt)     # many ties
    if dt.kind == "b":
        return rng.random(shape) < 0.3
    info = np.iinfo(dt)
    x = rng.integers(-5 if info.min else 0, 6, size=shape).astype(dt)
    x.flat[rng.integers(0, x.size)] = info.max                           # extremes of the type
    x.flat[rng.integers(0, x.size)] = info.min
    return x


def _float_specials(x):
    """Variants of a float array with NaN (several, so the first must win), signed zeros,
    infinities and all -inf."""
    out = [x]
    y = x.copy()
    y.flat[[y.size // 2, y.size - 1, 0 if y.size > 2 else -1]] = np.nan
    out.append(y)
    y = x.copy()
    y[y == 0] = -0.0
    y.flat[::3] = 0.0
    out.append(y)
    z = -np.abs(x)
    z[z == 0] = -0.0
    out.append(z.copy())                                  # max -0.0: only negative zeros
    z.flat[::4] = 0.0
    out.append(z)                                         # max 0 of both signs: NumPy's order decides
    out.append(np.where(x > 0, np.inf, -np.inf).astype(x.dtype))
    out.append(np.full(x.shape, -np.inf, x.dtype))
    return out


def _layouts(x):
    yield x
    yield np.asfortranarray(x)
    yield x[::-1, ::-1]
    yield x.T
    if x.shape[1] > 2:
        yield x[:, ::2]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=want.dtype.kind == "f"), (got, want)
    if want.dtype.kind == "f":
        assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want)


def args(x):
    return (x.argmax(), x.argmin(), x.argmax(axis=1), x.argmin(axis=1), x.argmax(axis=0),
            np.argmin(x, axis=0, keepdims=True), (x * 2).argmax(axis=-1),
            x.max(), x.min(axis=1), np.max(x, axis=0, keepdims=True), (x * 2).min())


@pytest.mark.parametrize("dtype", ("float64", "float32", "int64", "int8", "uint16", "bool"))
@pytest.mark.parametrize("shape", ((1, 1), (3, 7), (5, 300), (2, 4099)))
def test_argmax_argmin_match_numpy(dtype, shape, backend):
    x0 = _data(dtype, shape)
    variants = _float_specials(x0) if np.dtype(dtype).kind == "f" else [x0]
    for layout in range(5):
        ft.reset()
        f = ft.compile(args, backend=backend, fullgraph=True)
        for v in variants:
            xs = list(_layouts(v))
            if layout < len(xs):
                for got, want in zip(f(xs[layout]), args(xs[layout])):
                    _same(got, want)
        assert ft.stats().frames_compiled <= 1 and ft.stats().graph_breaks == 0


def nan_extremes(x):
    return (np.nanmax(x), np.nanmin(x), np.nanmax(x, axis=1), np.nanmin(x, axis=0),
            np.nanmin(x, axis=1, keepdims=True), np.nanmax(x * 1.0, axis=-1, keepdims=True))


@pytest.mark.parametrize("dtype", ("float64", "float32"))
@pytest.mark.parametrize("shape", ((1, 1), (4, 9), (3, 1030)))
def test_nanmax_nanmin_match_numpy_with_warnings(dtype, shape, backend):
    x = _data(dtype, shape)
    nan_rows = x.copy()
    nan_rows[0] = np.nan                                  # an all-NaN row: NaN and a warning
    nan_rows[:, 0] = np.nan
    only_nan = np.full(shape, np.nan, dtype)
    one = only_nan.copy()
    one.flat[-1] = -np.inf
    zeros = np.where(x > 0, 0.0, -0.0).astype(dtype)      # both signs: NumPy's order decides
    neg_zeros = np.where(x > 0, np.nan, -0.0).astype(dtype)
    f = ft.compile(nan_extremes, backend=backend, fullgraph=True)
    for v in (x, nan_rows, only_nan, one, zeros, neg_zeros, *_float_specials(x)):
        for lay in _layouts(v):
            with warnings.catch_warnings(record=True) as want_w:
                warnings.simplefilter("always")
                want = nan_extremes(lay)
            with warnings.catch_warnings(record=True) as got_w:
                warnings.simplefilter("always")
                got = f(lay)
            for g, w in zip(got, want):
                _same(g, w)
            assert sorted({str(w.message) for w in got_w}) == sorted({str(w.message) for w in want_w})
    assert ft.stats().graph_breaks == 0


def test_max_tracks_nan_apart_from_a_vectorised_max():
    """max/min: a `nnan` max (vmaxpd) and a NaN flag (the sign of a NaN result NumPy itself
    does not keep consistently: not compared)."""
    t = Traced(lambda x: (x.max(axis=1), x.min(), np.max(x, axis=0)), A(("n", "m")))
    assert "red_max_nonan(" in t.run.loop_ir and "red_min_nonan(" in t.run.loop_ir
    x = np.array([[1.0, -np.nan, 3.0, np.nan], [-0.0, -0.0, -1.0, -2.0], [np.inf, 1.0, -np.inf, 0.5]])
    t.check(x)
    got = ft.compile(lambda x: x.max(axis=1), backend="llvm")(x)
    assert np.isnan(got[0]) and got[1] == 0.0 and np.signbit(got[1]) and got[2] == np.inf


def test_argmax_is_a_blocked_pass_then_one_block():
    """Per-block extremes (vectorised), then the first index equal to the extreme in the winning
    block only (lower/arg_reductions.py): no (best, index) select chain."""
    t = Traced(lambda x: x.argmax(axis=1), A(("n", "m")))
    ir = t.run.loop_ir
    assert "red_peak_max" in ir and "minimum(first" in ir and "argbetter" not in ir and "kb" in ir
    t.check(np.array([[1.0, 3.0, 3.0, np.nan, np.nan], [-0.0, 0.0, -1.0, 0.0, -0.0]]))


def test_nanmax_lowers_to_a_nan_propagating_max():
    """llvm.maxnum reductions stay scalar; a `nnan` max over NaN-masked elements vectorises."""
    t = Traced(lambda x: np.nanmax(x, axis=1), A(("n", "m")))
    assert "red_fmax" not in t.run.loop_ir and "red_max_nonan(" in t.run.loop_ir
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        t.check(np.array([[np.nan, np.nan], [np.nan, -np.inf], [-0.0, np.nan]]))
