"""A math-library value that several reductions read (`mag = np.hypot(gx, gy)`, then its mean,
its standard deviation and its maximum) is computed once and stored, as NumPy's evaluation
computes it once; left lazy, every pass of every reduction called the math function again
(lower/schedule.py `recomputed_math`: an image pipeline ran at 0.45x NumPy)."""
import numpy as np
import pytest

import frametrace as ft

rng = np.random.default_rng(41)


class EdgeStats:
    """Gradient statistics of an image, as a detector's method computes them."""

    def __init__(self, k):
        self.k = k

    def __call__(self, img):
        gx = img[1:-1, 2:] - img[1:-1, :-2]
        gy = img[2:, 1:-1] - img[:-2, 1:-1]
        mag = np.hypot(gx, gy)
        threshold = mag.mean() + self.k * mag.std()
        return mag > threshold, mag.max(), threshold


def log_energy(x):
    e = np.exp(-x * x)
    return e.sum(axis=1), e.std(axis=1), e.min(axis=1)


@pytest.mark.parametrize("n", [3, 16, 131])
def test_gradient_statistics_compute_the_magnitude_once(compiled_graphs, n):
    stats = EdgeStats(1.5)
    f = ft.compile(stats.__call__)
    for img in (rng.random((n, n)), rng.random((n, n))[::-1], np.asfortranarray(rng.random((n, n)))):
        got, want = f(img), stats(img)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_allclose(got[1:], want[1:], rtol=1e-12)
    assert compiled_graphs[0].loop_ir.count("hypot(") == 1, compiled_graphs[0].loop_ir


@pytest.mark.parametrize("shape", [(0, 4), (1, 1), (5, 17), (64, 300)])
def test_row_statistics_of_an_exponential(compiled_graphs, shape):
    x = rng.standard_normal(shape)
    f = ft.compile(log_energy)
    for g, w in zip(f(x), log_energy(x)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)
    assert compiled_graphs[0].loop_ir.count("exp(") == 1
