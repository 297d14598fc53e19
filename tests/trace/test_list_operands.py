"""Lists and tuples where a NumPy function takes an array (`np.concatenate(([0.0], x))`,
`np.where(m, [1, 2, 3], x)`, `np.add(x, (1, 2, 3))`): NumPy converts them with np.asarray, and
so does the trace (literals.array_like): one graph, no graph break, NumPy's dtypes."""
import numpy as np
import pytest

import frametrace as ft

rng = np.random.default_rng(31)


def moving_average(x, w):
    """A running mean through a cumulative sum with a leading zero."""
    c = np.cumsum(np.concatenate(([0.0], x)))
    return (c[w:] - c[:-w]) / w


def pad_with_edges(x):
    """The first and last sample repeated once, values read from the array itself."""
    return np.concatenate(([x[0]], x, [x[-1]]))


class Thresholds:
    """Per-channel limits given as Python lists, as configuration usually is."""

    def __init__(self, lo, hi, gain):
        self.lo, self.hi, self.gain = lo, hi, gain

    def __call__(self, img):
        scaled = np.multiply(img, self.gain)
        return np.clip(scaled, self.lo, self.hi), np.where(img > 0.5, self.gain, [0, 0, 0])


def mixed_calls(x):
    return (np.add(x, (1, 2, 3)), np.maximum(x, [2, -1, 0.5]), np.hypot(x, [3, 4, 5]),
            np.stack(([1, 2, 3], x)), np.dot([1, 2, 3], x), np.stack([x, [7, 8, 9]], axis=1),
            np.concatenate([[True, False], x > 0]))


def _same(got, want):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)


@pytest.mark.parametrize("n", [1, 2, 17, 1000])
def test_running_mean_of_a_padded_cumsum(n):
    x = rng.standard_normal(n)
    f = ft.compile(moving_average)
    for w in {1, min(n, 3), n}:
        _same(f(x, w), moving_average(x, w))
    _same(f(x[::-2], 1), moving_average(x[::-2], 1))
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float64])
def test_traced_items_in_a_list(dtype):
    x = (rng.standard_normal(9) * 10).astype(dtype)
    f = ft.compile(pad_with_edges)
    _same(f(x), pad_with_edges(x))
    assert ft.stats().graph_breaks == 0


def test_configuration_lists_of_a_model():
    img = rng.random((4, 5, 3))
    model = Thresholds([0.1, 0.2, 0.0], [0.5, 0.9, 1.0], [1, 2, 3])
    _same(ft.compile(model.__call__)(img), model(img))
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float64])
def test_numpy_functions_convert_sequences(dtype):
    x = np.array([0.5, -1.5, 2.0]).astype(dtype)
    _same(ft.compile(mixed_calls)(x), mixed_calls(x))
    assert ft.stats().graph_breaks == 0


def test_a_ragged_list_raises_numpys_error():
    def bad(x):
        return np.concatenate(([[1.0], [2.0, 3.0]], x))
    with pytest.raises(ValueError) as want:
        bad(np.zeros((2, 2)))
    with pytest.raises(ValueError) as got:
        ft.compile(bad)(np.zeros((2, 2)))
    assert str(got.value) == str(want.value)


def test_list_repetition_is_not_a_numpy_call():
    def repeat(x, n):
        return np.asarray([1.0, 2.0] * n) + x
    x = np.zeros(6)
    np.testing.assert_array_equal(ft.compile(repeat)(x, 3), repeat(x, 3))
