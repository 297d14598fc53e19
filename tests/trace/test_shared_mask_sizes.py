"""Gathers by the same boolean mask have the same length (ir/numpy_api/data_dependent.py mask_count).

`Z[I] ** 2 + C[I]` adds two gathers by one mask: their sizes are one unbacked symbol, so the
sum needs no run-time comparison of two data-dependent lengths (it broke the graph: NPBench
mandelbrot1's time loop ran in Python). A mask written in place between two gathers (or anything
written in place: it may alias the mask) gives the second gather a size of its own.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import BACKENDS, assert_same


class Escape:
    """The escape-time fractal as users write it with masks, its step a method."""

    def __init__(self, horizon=2.0):
        self.horizon = horizon

    def step(self, Z, C, N, n):
        inside = np.less(abs(Z), self.horizon)
        N[inside] = n
        Z[inside] = Z[inside] ** 2 + C[inside]

    def run(self, re, im, maxiter):
        C = re + im[:, None] * 1j
        N = np.zeros(C.shape, dtype=np.int64)
        Z = np.zeros(C.shape, dtype=np.complex128)
        for n in range(maxiter):
            self.step(Z, C, N, n)
        N[N == maxiter - 1] = 0
        return Z, N


@pytest.mark.parametrize("backend", BACKENDS)
def test_escape_time_loop_is_one_graph_without_breaks(backend):
    model = Escape()
    rng = np.random.default_rng(0)
    ft.reset()
    f = ft.compile(model.run, backend=backend)
    for nx, ny, it in ((9, 7, 12), (13, 11, 20), (6, 5, 3), (1, 1, 4), (0, 3, 5), (4, 4, 0), (3, 2, 1)):
        re, im = rng.uniform(-2, 0.5, nx), rng.uniform(-1.2, 1.2, ny)
        with np.errstate(over="ignore", invalid="ignore"):
            got, want = f(re, im, it), model.run(re, im, it)
        assert_same(got, want)
    assert ft.stats().graph_breaks == 0, ft.stats()
    out = ft.explain(ft.compile(model.run, backend=backend), rng.uniform(-2, 0.5, 8), rng.uniform(-1, 1, 6), 9)
    assert out.graph_break_count == 0 and out.graph_count == 1


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 12), seed=st.integers(0, 2 ** 16))
def test_a_mask_written_in_place_between_gathers(backend, n, seed):
    """The second gather reads the changed mask: its length is its own (NumPy raises when the
    two lengths differ, as here)."""
    def f(x, y):
        m = x > 0
        a = x[m]
        m[::2] = True
        return a.sum(), (y[m] * 2.0).sum(), y[m].shape[0] - a.shape[0]

    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    assert_same(ft.compile(f, backend=backend)(x, y), f(x, y))


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_mask_different_lengths_still_raises(backend):
    """Gathers by one mask from arrays of different shapes: NumPy's IndexError, not a shared size."""
    def f(x, y):
        m = x > 0
        return x[m] + y[m[: y.shape[0]]]

    x, y = np.array([1.0, -1.0, 2.0, 3.0]), np.array([1.0, 2.0, 5.0])     # 3 and 2 elements
    with pytest.raises(ValueError):
        f(x, y)
    with pytest.raises(ValueError):
        ft.compile(f, backend=backend)(x, y)
