"""What generated wrappers call at run time: data pointers, the kernel call, the thread pool.

The kernel call lives in one function (`call`) so a faster native entry point can replace
it later. Kernels are ctypes CFUNCTYPE functions `(lo, hi, packed_args)`: ctypes releases
the GIL during the call, so chunks of one kernel run in parallel on a small thread pool.
The caller takes chunks too, from the first, and runs every chunk no helper has started
(`_Split`); only kernels with much more work than a hand-off (~15-25 us, LLVM_FINDINGS.md §4,
benchmarks/README.md "Temporaries and the heap; the pool's split") are split.
"""
from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..numpy_backend import compile_graph as numpy_compile

KERNEL_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p)

# work units (elements x op weight) below which a kernel runs on the calling thread only
PARALLEL_THRESHOLD = 1 << 20
# smallest chunk of the split loop handed to one thread
MIN_CHUNK_WORK = 1 << 18


def _check_layout() -> bool:
    """PyArrayObject.data at +16, .nd at +24, .strides at +40 (CPython 3.11, NumPy 2,
    64-bit): verify on a few arrays, don't assume. Kernels read arrays through these."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    try:
        for a in (np.zeros(3), np.arange(12.0).reshape(3, 4)[1:, ::-2], np.zeros(0), np.zeros(()),
                  np.ones((2, 3, 4), np.float32).transpose(2, 0, 1)):
            if (ctypes.c_void_p.from_address(id(a) + 16).value or 0) != a.ctypes.data:
                return False
            if ctypes.c_int.from_address(id(a) + 24).value != a.ndim:
                return False
            sp = ctypes.c_void_p.from_address(id(a) + 40).value
            if a.ndim and tuple((ctypes.c_int64 * a.ndim).from_address(sp)) != a.strides:
                return False
        return True
    except Exception:
        return False


ARRAY_LAYOUT_OK = _check_layout()

if ARRAY_LAYOUT_OK:
    _from_address = ctypes.c_void_p.from_address

    def data_ptr(a) -> int:
        """The data pointer of an ndarray (160 ns; `a.ctypes.data` costs ~1 us)."""
        return _from_address(id(a) + 16).value or 0
else:                                           # another NumPy/CPython layout: the slow way
    def data_ptr(a) -> int:
        return a.ctypes.data


def num_threads() -> int:
    try:
        from ...config import config
        n = int(getattr(config, "num_threads", 0) or 0)
    except Exception:
        n = 0
    return n if n > 0 else (os.cpu_count() or 1)


_pool = None
_pool_lock = threading.Lock()


def _get_pool(n: int):
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < n:
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="frametrace")
        return _pool


def call(kernel, n: int, work: int, args: bytes):
    """Run `kernel` over its split loop [0, n), in chunks on threads when worth it."""
    if work < PARALLEL_THRESHOLD or n < 2:
        kernel(0, n, args)
        return
    chunks = min(n, max(1, work // MIN_CHUNK_WORK))
    nt = min(num_threads(), chunks)
    if nt < 2:
        kernel(0, n, args)
        return
    split = _Split(kernel, n, min(chunks, nt * CHUNKS_PER_THREAD), args)
    pool = _get_pool(nt - 1)
    for _ in range(nt - 1):
        pool.submit(split.run)
    split.run()                              # the caller takes chunks too, from the first
    split.wait()


# chunks per thread of a split call: a helper that starts late (its CPU busy: the machine is
# shared) finds fewer left, and the caller runs the rest itself instead of waiting for it
CHUNKS_PER_THREAD = 4


class _Split:
    """One kernel call split in `chunks` pieces of its loop, taken in order by whichever
    thread asks next: the caller never waits for a piece no thread has started (a helper
    still asleep when the caller ran out of pieces finds none and returns), only for those
    running. Each piece is a kernel call over [lo, hi): the same values in any split."""

    def __init__(self, kernel, n, chunks, args):
        self.kernel, self.n, self.chunks, self.args = kernel, n, chunks, args
        self.next = 0
        self.done = 0
        self.lock = threading.Lock()
        self.finished = threading.Event()

    def run(self):
        n, chunks = self.n, self.chunks
        while True:
            with self.lock:
                i = self.next
                if i >= chunks:
                    return
                self.next = i + 1
            try:
                self.kernel(n * i // chunks, n * (i + 1) // chunks, self.args)
            finally:
                with self.lock:
                    self.done += 1
                    if self.done == chunks:
                        self.finished.set()

    def wait(self):
        self.finished.wait()


_cast_buffers = threading.local()
CAST_BUFFER_BYTES = 1 << 27       # per thread: more than this and the kept buffers are dropped


def matmul_cast(fn, a, b, dtype, out=None):
    """fn(a, b) (np.matmul or np.dot, into `out` if given) with each operand first cast to
    the result dtype: into a buffer kept for the next call of this thread with that shape,
    so a float32 weight meeting float64 activations is cast without an allocation (and its
    page faults) per call. The values are NumPy's: the same casts, the same BLAS call."""
    kept = getattr(_cast_buffers, "d", None)
    if kept is None:
        kept = _cast_buffers.d = {}
    ops = []
    for slot, x in enumerate((a, b)):
        if x.dtype != dtype:
            key = (slot, x.shape, dtype)
            buf = kept.get(key)
            if buf is None:
                if sum(v.nbytes for v in kept.values()) + x.size * dtype.itemsize > CAST_BUFFER_BYTES:
                    kept.clear()
                buf = kept[key] = np.empty(x.shape, dtype)
            np.copyto(buf, x, casting="unsafe")
            x = buf
        ops.append(x)
    return fn(ops[0], ops[1]) if out is None else fn(ops[0], ops[1], out=out)


def may_share(a, b) -> bool:
    return np.may_share_memory(a, b)


def empty_reduction(name: str):
    """NumPy's error for max/min/argmax/argmin over an empty axis."""
    if name in ("argmax", "argmin"):
        raise ValueError(f"attempt to get {name} of an empty sequence")
    raise ValueError(f"zero-size array to reduction operation "
                     f"{'maximum' if name == 'max' else 'minimum'} which has no identity")


def read_only(message: str):
    """NumPy's error for a write into a read-only array (ir/ops/mutation.py READ_ONLY)."""
    raise ValueError(message)


class LazyReference:
    """The NumPy-backend version of a graph, compiled on its first call: what a wrapper runs
    for a call its kernels cannot take (wrapper.int64_escape)."""

    def __init__(self, graph):
        self.graph, self.run = graph, None

    def __call__(self, inputs, symbol_values):
        if self.run is None:
            self.run = numpy_compile(self.graph)
        return self.run(inputs, symbol_values)
