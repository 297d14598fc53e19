"""np.fft's one-axis transforms inside the graph (issue 23 part 5): NumPy's values, dtypes and
shapes (n, axis, norm), one graph across sizes, NumPy's errors."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS


def spectrum(x, m):
    """A signal program's spectra, written as users write them."""
    power = np.abs(np.fft.rfft(x - x.mean())) ** 2
    return (power, np.fft.fft(x, n=8), np.fft.irfft(np.fft.rfft(x), n=len(x)), np.fft.ifft(m, axis=0),
            np.fft.rfft(x.astype(np.float32)), np.fft.fft(m, norm="ortho"), np.fft.hfft(x[:4]), np.fft.ihfft(x))


def check(got, want):
    for g, w in zip(got, want, strict=True):
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w, equal_nan=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_spectra_one_graph_across_sizes(backend):
    f = ft.compile(spectrum, backend=backend, fullgraph=True)
    m = np.arange(12.0).reshape(3, 4)
    for n in (7, 5, 16, 9):
        x = np.sin(np.linspace(0, 6, n))
        check(f(x, m), spectrum(x, m))
    assert ft.stats().unique_graphs <= 2 and ft.stats().graph_breaks == 0


def test_errors_as_numpy():
    x = np.ones(4)
    for fn in (lambda x: np.fft.fft(x, n=0), lambda x: np.fft.rfft(x, axis=3), lambda x: np.fft.fft(x, norm="bad")):
        with pytest.raises(Exception) as want:
            fn(x)
        with pytest.raises(type(want.value), match=None) as got:
            ft.compile(fn)(x)
        assert str(got.value) == str(want.value)


def peak(m, idx):
    """Where the maximum is, as image and data programs find it."""
    i, j = np.unravel_index(np.argmax(m), m.shape)
    return i, j, m[i, j], np.unravel_index(idx, (3, 4)), np.unravel_index(5, m.shape, order="F")


def test_unravel_index():
    f = ft.compile(peak, fullgraph=True)
    rng = np.random.default_rng(0)
    for shape in ((3, 4), (5, 2), (1, 7)):
        m, idx = rng.random(shape), np.array([0, 5, 11])
        got, want = f(m, idx), peak(m, idx)
        assert repr(got) == repr(want)
    with pytest.raises(ValueError, match="out of bounds"):
        ft.compile(lambda m: np.unravel_index(np.argmax(m) + 100, m.shape))(np.ones((2, 2)))
