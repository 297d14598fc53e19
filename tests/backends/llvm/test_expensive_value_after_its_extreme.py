"""A value computed with a math function, reduced to its max or min and then used again
(`mag = np.hypot(gx, gy); (mag - mag.min()) / (mag.max() - mag.min())`): one kernel computes the
value once, keeps it in the output row for the last pass (lower/peephole.py output_as_scratch),
and must keep it from a pass that always runs, never from the zero-sign pass of the max, which
runs only when the extreme is a zero (a wrong answer from uninitialised memory before)."""
import numpy as np
import pytest

import frametrace as ft

rng = np.random.default_rng(23)


def edge_strength(img):
    """An image pipeline: a gradient magnitude scaled to [0, 1]."""
    gx = img[1:-1, 2:] - img[1:-1, :-2]
    gy = img[2:, 1:-1] - img[:-2, 1:-1]
    mag = np.hypot(gx, gy)
    return (mag - mag.min()) / (mag.max() - mag.min())


class Normaliser:
    """Per-row normalisation after a math function, as a model's method."""

    def __init__(self, fn, reduce):
        self.fn, self.reduce = fn, reduce

    def __call__(self, x):
        y = self.fn(x)
        return y - self.reduce(y, axis=-1, keepdims=True)


def ratio_to_peak(x):
    e = np.exp(x)
    return e / e.max()


def shifted_by_min(x):
    r = np.sqrt(x)                      # zeros in x: the minimum is a zero, the sign pass runs
    return r - r.min(axis=0)


@pytest.mark.parametrize("n", [3, 16, 40, 257])
def test_gradient_magnitude_scaled_by_its_range(n):
    img = rng.random((n, n))
    f = ft.compile(edge_strength)
    for v in (img, img[::-1], np.asfortranarray(img), img[:, ::-1]):
        np.testing.assert_allclose(f(v), edge_strength(v), rtol=1e-12, atol=1e-15)
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("fn", [np.exp, np.tanh, np.log1p, np.sin, lambda x: np.arctan2(x, 0.5)],
                         ids=["exp", "tanh", "log1p", "sin", "arctan2"])
@pytest.mark.parametrize("reduce", [np.max, np.min])
@pytest.mark.parametrize("shape", [(0, 5), (1, 1), (7, 33), (64, 64)])
def test_row_normalisation_after_a_math_function(fn, reduce, shape):
    x = rng.standard_normal(shape)
    norm = Normaliser(fn, reduce)
    f = ft.compile(norm.__call__)
    for v in (x, x.T.copy().T, x[::-1]):
        np.testing.assert_allclose(f(v), norm(v), rtol=1e-12, atol=1e-15)


def test_whole_array_peak():
    x = rng.standard_normal((50, 30))
    np.testing.assert_allclose(ft.compile(ratio_to_peak)(x), ratio_to_peak(x), rtol=1e-13)


@pytest.mark.parametrize("zero", [0.0, -0.0])
def test_minimum_that_is_a_zero_runs_the_sign_pass(zero):
    x = rng.random((20, 9))
    x[3, :] = zero
    x[:, 4] = zero
    got, want = ft.compile(shifted_by_min)(x), shifted_by_min(x)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert (np.signbit(got) == np.signbit(want)).all()
