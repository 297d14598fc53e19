"""The wrapper drops each temporary after the last step that reads it (backends/llvm/
dead_values.py), as NumPy's own evaluation does: a long chain of NumPy calls (an unrolled
Stockham FFT on complex data, whose steps run through NumPy) peaks at about NumPy's memory,
not at the sum of every stage's temporaries; views of dropped temporaries and outputs stay
alive and correct."""
import tracemalloc

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same


@pytest.fixture(autouse=True)
def _clean():
    ft.reset()
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


class Stockham:
    """A radix-R Stockham FFT written with reshapes, transposes and a DFT matrix (npbench's)."""

    def __init__(self, R, K):
        self.R, self.K, self.N = R, K, R ** K

    def twiddles(self, ii, jj, i):
        R = self.R
        return np.exp(-2.0j * np.pi * ii[:, :R ** i] * jj[:, :R ** i] / R ** (i + 1))

    def __call__(self, x, y):
        R, K, N = self.R, self.K, self.N
        i_coord, j_coord = np.mgrid[0:R, 0:R]
        dft_mat = np.exp(-2.0j * np.pi * i_coord * j_coord / R)
        y[:] = x[:]
        ii, jj = np.mgrid[0:R, 0:R ** K]
        for i in range(K):
            yv = np.reshape(y, (R ** i, R, R ** (K - i - 1)))
            perm = np.transpose(yv, axes=(1, 0, 2))
            D = np.empty((R, R ** i, R ** (K - i - 1)), dtype=np.complex128)
            D[:] = np.repeat(np.reshape(self.twiddles(ii, jj, i), (R, R ** i, 1)), R ** (K - i - 1), axis=2)
            twid = np.reshape(perm, (N,)) * np.reshape(D, (N,))
            y[:] = np.reshape(dft_mat @ np.reshape(twid, (R, R ** (K - 1))), (N,))
        return y


def peak(fn, *args):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = fn(*args)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("R,K", [(2, 10), (4, 5)])
def test_a_long_chain_of_numpy_steps_peaks_near_numpys_memory(R, K):
    fft = Stockham(R, K)
    rng = np.random.default_rng(R)
    x = rng.random(fft.N) + 1j * rng.random(fft.N)
    compiled = ft.compile(fft)
    compiled(x, np.zeros_like(x))                   # compile outside the measurement
    want, numpy_peak = peak(fft, x, np.zeros_like(x))
    got, our_peak = peak(compiled, x, np.zeros_like(x))
    assert_same(got, want, 1e-12)
    # every stage's temporaries alive at once would be K x (several N-element complex arrays)
    assert our_peak < 2.5 * numpy_peak, (our_peak, numpy_peak)
    assert ft.stats().graph_breaks == 0


def test_views_of_dropped_temporaries_and_outputs_stay_valid():
    def spectra(x):
        t = np.exp(x * 1j)                      # a NumPy step (complex): its array outlives its name
        u = np.conj(t) @ np.ones((x.shape[0], 2))
        head = t[::2]                           # a view of t, returned
        return head, u * 2, np.abs(t).sum()
    rng = np.random.default_rng(1)
    compiled = ft.compile(spectra)
    for n in (0, 1, 7, 64):
        x = rng.standard_normal(n)
        for g, w in zip(compiled(x), spectra(x)):
            assert_same(g, w, 1e-12)
