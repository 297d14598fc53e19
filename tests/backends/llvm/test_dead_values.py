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


def flatten_and_mark(x):
    v = x.flatten()
    v[0] = 5                  # an assign kernel writing through the flat view into its 2-d base
    return x, v


@pytest.mark.parametrize("layout", [lambda a: a, lambda a: a[:1], lambda a: a[:, :1], lambda a: a.T,
                                    lambda a: a[::-1, ::2], np.asfortranarray])
def test_a_kernel_writing_through_a_view_keeps_its_base_alive(layout):
    """A kernel may address a view's base by the base's name (here the flat copy's 2-d buffer):
    a read of the view is a read of the base, so the base is not dropped before that kernel
    (it was, and the kernel wrote into freed memory: a crash or a wrong value)."""
    f = ft.compile(flatten_and_mark, backend="llvm")
    for shape in [(4, 6), (1, 5), (3, 1), (1, 1)]:
        base = np.arange(float(np.prod(shape))).reshape(shape)
        for _ in range(3):
            assert_same(f(layout(base.copy())), flatten_and_mark(layout(base.copy())))


class ComplexSignal:
    """A chain of NumPy calls on complex data (no kernel computes complex values), ending in a
    float kernel: the calls may warn, so the wrapper keeps NumPy's order of reports, and a
    redo of the whole call by NumPy stays possible after every step."""

    def __init__(self, gain):
        self.gain = gain

    def __call__(self, z, x):
        power = z * np.conj(z)
        mixed = power + 1j * z
        shifted = mixed * np.exp(1j * self.gain)
        level = np.abs(shifted) + np.angle(z)
        return level + (x * self.gain * 1e300).sum()


def _run_with_warnings(fn, *args):
    import warnings
    with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [str(x.message) for x in w]


def test_numpy_steps_that_may_warn_drop_their_temporaries():
    """The temporaries of NumPy steps that may warn are dropped once no redo can read them
    (reports.redo_reads): they were all kept to the end (2.2x NumPy's peak here)."""
    model = ComplexSignal(0.5)
    rng = np.random.default_rng(5)
    z = rng.random(200_000) * (1 - 2j)
    x = rng.random(8)
    compiled = ft.compile(model.__call__)
    compiled(z, x)
    want, numpy_peak = peak(model, z, x)
    got, our_peak = peak(compiled, z, x)
    assert_same(got, want, 1e-12)
    assert our_peak < 1.5 * numpy_peak, (our_peak, numpy_peak)


@pytest.mark.parametrize("case", ["clean", "kernel overflows", "numpy step overflows", "both"])
def test_a_redo_after_dropped_temporaries_reports_as_numpy(case):
    """A kernel's FP flag after the NumPy steps makes NumPy redo the call, given the values of
    the committed steps (dropped ones are read by no step the redo computes): the same values
    and each warning once, in NumPy's order."""
    model = ComplexSignal(0.5)
    rng = np.random.default_rng(6)
    z = rng.random(1000) * (1 - 2j)
    x = rng.random(8)
    if case in ("kernel overflows", "both"):
        x[3] = 1e300
    if case in ("numpy step overflows", "both"):
        z[7] = 1e200 + 1e200j
    compiled = ft.compile(model.__call__)
    for _ in range(2):
        (got, got_w), (want, want_w) = _run_with_warnings(compiled, z, x), _run_with_warnings(model, z, x)
        assert_same(got, want, 1e-12)
        assert got_w == want_w


def edge_report(img):
    """An image pipeline: a blurred copy (stored), edges and their scaled strength, each a
    kernel that recomputes the gradient magnitude from the blurred copy, with a NumPy step
    (np.bincount) between them."""
    g = 0.299 * img[..., 0] + 0.587 * img[..., 1] + 0.114 * img[..., 2]
    b = g.copy()
    b[1:-1, 1:-1] = (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:] + g[1:-1, 1:-1]) / 5.0
    mag = np.hypot(b[1:-1, 2:] - b[1:-1, :-2], b[2:, 1:-1] - b[:-2, 1:-1])
    edges = mag > mag.mean() + mag.std()
    hist = np.bincount((g * 255).astype(np.int64).ravel(), minlength=256)
    return edges, hist, (mag - mag.min()) / (mag.max() - mag.min())


@pytest.mark.parametrize("n", [4, 33, 128])
def test_an_array_two_kernels_read_lives_until_the_second(n):
    """The blurred copy is read by two kernels that each recompute the magnitude from it: it was
    dropped after the first (the second read freed memory: a crash)."""
    img = np.random.default_rng(n).random((n, n, 3))
    f = ft.compile(edge_report)
    for _ in range(3):
        for g, w in zip(f(img), edge_report(img)):
            assert_same(g, w, 1e-12)
