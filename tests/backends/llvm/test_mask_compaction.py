"""x[mask] with mask.shape == x.shape: a count kernel + a compaction kernel (lower/compact.py)."""
import numpy as np
import pytest

import frametrace as ft
import frametrace.backends.llvm as backend
from tracing import assert_same as _same


def assert_same(got, want):
    assert type(got) is type(want) and len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w, rtol=1e-4 if np.asarray(w).dtype == np.float32 else None)

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.bool_]
SIZES = [0, 1, 7, 1000, 100003]


@pytest.fixture
def runs(monkeypatch):
    """The run objects compiled during the test."""
    out, compile_ = [], backend._compile

    def spy(graph):
        run = compile_(graph)
        out.append(run)
        return run
    monkeypatch.setattr(backend, "_compile", spy)
    return out


def assert_native(runs):
    assert runs
    for run in runs:
        assert "_op_mask_select" not in run.source, run.source
        assert any("if " in line and "++" in line for line in run.loop_ir.splitlines()), run.loop_ir
        assert len(run.kernels) >= 2


def consumers(y):
    return y.sum() + np.sqrt(np.abs(y)).sum(), y * 2


def positive(x):
    y = x[x > 0]
    return (y,) + consumers(y)


def masked(x, m):
    y = x[m]
    return (y,) + consumers(y)


def data(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * 5).astype(dtype), rng.random(n) > 0.5


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_fused_mask_all_sizes(dtype, runs):
    c = ft.compile(positive, dynamic=True)
    for n in SIZES:
        x, _ = data(n, dtype)
        if dtype == np.bool_:
            x = x.astype(np.int64).astype(np.bool_)
        assert_same(c(x), positive(x))
    assert_native(runs)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_mask_argument(dtype, runs):
    c = ft.compile(masked, dynamic=True)
    for n in SIZES:
        x, m = data(n, dtype, seed=n)
        assert_same(c(x, m), masked(x, m))
        assert_same(c(x, np.ones(n, bool)), masked(x, np.ones(n, bool)))
        assert_same(c(x, np.zeros(n, bool)), masked(x, np.zeros(n, bool)))
    assert_native(runs)


def test_strided_and_reversed_layouts(runs):
    c = ft.compile(masked, dynamic=True)
    for n in (7, 1000, 100003):
        x, m = data(2 * n, np.float64, seed=n)
        for xs, ms in ((x[::2], m[::2]), (x[::-1][:n], m[1::2]), (x[::2], m[::-1][:n]), (x[-n:][::-1], m[:n])):
            assert_same(c(xs, ms), masked(xs, ms))
    assert_native(runs)


def test_two_dimensional_mask(runs):
    def f(x, m):
        y = x[m]
        return (y, x[x > 0.5]) + consumers(y)
    c = ft.compile(f, dynamic=True)
    rng = np.random.default_rng(3)
    for shape in ((3, 4), (5, 9), (0, 3), (40, 31)):
        x = rng.standard_normal(shape)
        m = rng.random(shape) > 0.3
        assert_same(c(x, m), f(x, m))
        assert_same(c(x.T, m.T), f(x.T, m.T))
        assert_same(c(x[::-1, ::2], m[:, ::-2]), f(x[::-1, ::2], m[:, ::-2]))
    assert_native(runs)


def test_one_graph_serves_every_count(runs):
    c = ft.compile(positive, dynamic=True)
    rng = np.random.default_rng(4)
    x = rng.standard_normal(5000)
    c(x)
    before = ft.stats().frames_compiled
    for shift in np.linspace(-4, 4, 25):
        xs = x + shift                       # from all selected to none selected
        assert_same(c(xs), positive(xs))
    assert ft.stats().frames_compiled == before
    assert len(runs) == 1
    assert_native(runs)


def test_leading_dims_mask_stays_numpy(runs):
    def f(x):
        return x[x[:, 0] > 0] * 2.0
    c = ft.compile(f, dynamic=True)
    x = np.random.default_rng(5).standard_normal((6, 3))
    assert_same(c(x), f(x))
    assert all("_op_mask_select" in run.source for run in runs)


def three_selections(x, y, z, m):
    return x[m], y[m], z[m] * 2.0


def selections_around_a_write(x, m):
    a = x[m]
    m[:2] = True                             # the mask changes: its count again
    return a, x[m]


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_selections_by_one_mask_count_it_once(runs, n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n), rng.integers(0, 9, n)
    z = (x + 1j * y).astype(np.complex128)
    m = rng.random(n) < 0.6
    assert_same(ft.compile(three_selections)(x, y, z, m), three_selections(x, y, z, m))
    assert sum(run.source.count("_cnt = _empty") for run in runs) == 1, [r.source for r in runs]
    runs.clear()
    ft.reset()
    m1, m2 = m.copy(), m.copy()
    assert_same(ft.compile(selections_around_a_write)(x, m1), selections_around_a_write(x, m2))
    np.testing.assert_array_equal(m1, m2)
    assert sum(run.source.count("_cnt = _empty") for run in runs) == 2, [r.source for r in runs]
