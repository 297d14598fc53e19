"""The thread pool's split call (runtime.call): which path a kernel of a given work takes, every
piece of its loop run exactly once, a helper that never starts, results equal to NumPy threaded
or not; and a loop node's body of NumPy steps (mandelbrot) dropping its temporaries after their
last use (backends/llvm/dead_values.py), which is what made it slower than NumPy."""
import threading
import tracemalloc

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import runtime
from frametrace.config import config

rng = np.random.default_rng(11)


class Escape:
    """Mandelbrot escape counts, written as a user would: a class, a helper, a time loop whose
    body NumPy runs on shrinking masked sets (complex128: no kernel of ours)."""

    def __init__(self, horizon=2.0):
        self.horizon = horizon

    def grid(self, xn, yn):
        x = np.linspace(-1.75, 0.25, xn)
        y = np.linspace(-1.0, 1.0, yn)
        return x + y[:, None] * 1j

    def __call__(self, xn, yn, maxiter):
        c = self.grid(xn, yn)
        n = np.zeros(c.shape, dtype=np.int64)
        z = np.zeros(c.shape, dtype=np.complex128)
        for it in range(maxiter):
            inside = np.less(abs(z), self.horizon)
            n[inside] = it
            z[inside] = z[inside] ** 2 + c[inside]
        n[n == maxiter - 1] = 0
        return z, n


def same(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.fixture
def set_threads():
    """config.num_threads for the test (restored after it)."""
    before = config.num_threads

    def set_(n):
        config.num_threads = n
    yield set_
    config.num_threads = before


@pytest.fixture
def pool_calls(monkeypatch):
    """How many split calls reached the pool."""
    calls = []
    get = runtime._get_pool

    def counting(n):
        calls.append(n)
        return get(n)
    monkeypatch.setattr(runtime, "_get_pool", counting)
    return calls


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("xn,yn,maxiter", [(0, 3, 4), (1, 1, 3), (7, 5, 12), (40, 33, 30)])
def test_loop_of_small_kernels_stays_on_the_calling_thread(set_threads, pool_calls, threads, xn, yn, maxiter):
    set_threads(threads)
    e = Escape()
    f = ft.compile(e.__call__)
    for _ in range(2):
        same(f(xn, yn, maxiter), e(xn, yn, maxiter))
    assert pool_calls == []                   # small kernels: no hand-off per iteration


def test_large_kernel_splits_over_the_pool(set_threads, pool_calls):
    set_threads(2)
    x = rng.standard_normal((runtime.PARALLEL_THRESHOLD // 512 + 3, 512))

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    f = ft.compile(softmax)
    np.testing.assert_allclose(f(x), softmax(x), rtol=1e-13, atol=0)
    assert pool_calls                         # work >= PARALLEL_THRESHOLD: threaded
    set_threads(1)
    del pool_calls[:]
    np.testing.assert_allclose(f(x), softmax(x), rtol=1e-13, atol=0)
    assert pool_calls == []                   # one thread: never the pool


class Pieces:
    """A stand-in kernel: records each [lo, hi) and the thread that ran it."""

    def __init__(self):
        self.lock, self.seen = threading.Lock(), []

    def __call__(self, lo, hi, args):
        with self.lock:
            self.seen.append((lo, hi, threading.get_ident()))


@pytest.mark.parametrize("n", [2, 3, 7, 64, 1000])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("work", [0, runtime.PARALLEL_THRESHOLD - 1, runtime.PARALLEL_THRESHOLD,
                                  runtime.PARALLEL_THRESHOLD * 64])
def test_split_call_runs_every_piece_once(set_threads, n, threads, work):
    set_threads(threads)
    k = Pieces()
    runtime.call(k, n, work, b"")
    covered = sorted((lo, hi) for lo, hi, _ in k.seen)
    assert covered[0][0] == 0 and covered[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))      # no gap, no overlap
    chunks = min(n, work // runtime.MIN_CHUNK_WORK)
    if work < runtime.PARALLEL_THRESHOLD or threads == 1 or chunks < 2:
        assert k.seen == [(0, n, threading.get_ident())]                  # one call, this thread
    else:
        assert len(k.seen) == min(chunks, min(threads, chunks) * runtime.CHUNKS_PER_THREAD)


def test_caller_does_not_wait_for_a_helper_that_never_starts(monkeypatch, set_threads):
    """A helper with no CPU (here: a pool whose worker is blocked) leaves its pieces to the
    caller, which returns once they are done."""
    set_threads(2)
    gate = threading.Event()

    class Stuck:
        def submit(self, fn):
            threading.Thread(target=lambda: (gate.wait(), fn()), daemon=True).start()
    monkeypatch.setattr(runtime, "_get_pool", lambda n: Stuck())
    k = Pieces()
    runtime.call(k, 100, runtime.PARALLEL_THRESHOLD * 8, b"")
    assert {t for _, _, t in k.seen} == {threading.get_ident()}
    assert sum(hi - lo for lo, hi, _ in k.seen) == 100
    gate.set()                                # the late helper finds nothing left


def masked_chain(z, c, mask):
    a = z[mask]
    b = a * a
    d = c[mask]
    e = b + d
    g = e * 2
    return g + a                              # `a` read again at the end: kept until then


def peak_bytes(fn, *args):
    fn(*args)
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_temporaries_die_at_their_last_use():
    n = 1 << 14
    z, c = rng.standard_normal(n) + 1j * rng.standard_normal(n), rng.standard_normal(n) * 1j
    mask = rng.random(n) < 0.9
    f = ft.compile(masked_chain)
    np.testing.assert_array_equal(f(z, c, mask), masked_chain(z, c, mask))
    for size in (0, 1):
        np.testing.assert_array_equal(f(z[:size], c[:size], mask[:size]), masked_chain(z[:size], c[:size], mask[:size]))
    zs, cs, ms = z[::-2], c[::-2], mask[::-2]      # non-contiguous, negative strides
    np.testing.assert_array_equal(f(zs, cs, ms), masked_chain(zs, cs, ms))
    one = int(mask.sum()) * 16                # bytes of one masked complex temporary
    # eager NumPy holds at most four at a time (a, the result, and two operands of one
    # operation); holding all six until the return was the bug
    assert peak_bytes(f, z, c, mask) <= 4.5 * one
