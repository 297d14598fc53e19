"""Small in-place graphs (issue 11's last target): one write of a row or a corner of a 64x64
array, compiled (the native entry: backends/llvm/native_views.py) against NumPy's own
statements, plus `x += y` and a row write into a 1 MB cache (the FP re-run snapshot:
backends/llvm/fp_errors.py). Medians of
batched calls, variants interleaved, error mode "warn" (NumPy's default).

    python benchmarks/bench_small_inplace.py

Figures (2026-11-24, shared 2-vCPU VM, medians; "before" is main at 254112a, same script):

    statement          numpy    before    after
    a[3] = r           0.14us   6.5-6.9us  0.06us   (before: no native entry, Python path)
    a[:2, :2] = r      0.27us   9.8-11us   0.06us
    a[3] += 1.0        0.7us    12.5us     0.08us
    x += y (64x64)     0.6us    1.07us     0.83-0.90us  (min of 5x2000; the whole x is still saved)
    x += y (8)         0.23us   0.37us     0.07us   (the snapshot is on the stack, no call into Python)
    kv[p] = (x@w)*2    6.6us    70us       16us     (Python path: one row saved, not the 1 MB cache)
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import frametrace as ft  # noqa: E402


def row(a, r):
    a[3] = r
    return a


def corner(a, r):
    a[:2, :2] = r
    return a


def row_plus(a):
    a[3] += 1.0
    return a


def update(x, y):
    x += y
    return x


def kv_write(cache, x, w, p):
    cache[p] = (x @ w) * 2.0          # matmul: the Python wrapper path; the snapshot is one row
    return cache


CASES = [   # (name, fn, args)
    ("a[3] = r", row, (np.zeros((64, 64)), np.ones(64))),
    ("a[:2, :2] = r", corner, (np.zeros((64, 64)), np.ones((2, 2)))),
    ("a[3] += 1.0", row_plus, (np.zeros((64, 64)),)),
    ("x += y  (64x64)", update, (np.zeros((64, 64)), np.ones((64, 64)))),
    ("x += y  (8)", update, (np.zeros(8), np.ones(8))),
    ("kv[p] = (x@w)*2", kv_write, (np.zeros((512, 256)), np.ones(64), np.ones((64, 256)), 7)),
]


def batches(fns, args, number=2000, repeat=15):
    """Median seconds per call of each fn, batches interleaved round-robin."""
    out = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(number):
                fn(*args)
            out[i].append((time.perf_counter() - t0) / number)
    return [statistics.median(s) for s in out]


def main():
    with ft.config.patch(native_dispatch=True):
        print(f"{'statement':18s} {'numpy':>9s} {'compiled':>9s} {'ratio':>6s}  native hits")
        for name, fn, args in CASES:
            c = ft.compile(fn, backend="llvm")
            for _ in range(3):
                c(*args)
            np_t, ft_t = batches([fn, c], args)
            hits = sum(e.native.hits for e in c._frametrace_cache.entries if e.native is not None)
            print(f"{name:18s} {np_t * 1e6:7.2f}us {ft_t * 1e6:7.2f}us {ft_t / np_t:6.2f}  {hits}")


if __name__ == "__main__":
    main()
