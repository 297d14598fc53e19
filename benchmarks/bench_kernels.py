"""LLVM-backend kernels against NumPy eager, in one process: medians, interleaved rounds.

Run: python benchmarks/bench_kernels.py [--quick]
Each workload is compiled once with ft.compile(backend="llvm", dynamic=True), warmed up,
then timed round-robin with NumPy (the VM is noisy: see shared/reference/LLVM_FINDINGS.md).
Bandwidth rows report bytes moved / time and the fraction of np.copyto's bandwidth.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import frametrace as ft
from frametrace.backends.llvm import runtime
from workloads import sin_ten_times, gelu, relu_fma, softmax, layernorm, mm_relu  # noqa: E402


def timed(fns, args, rounds):
    """Median seconds per call of each fn, interleaved round-robin."""
    samples = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn(*args)
            samples[i].append(time.perf_counter() - t0)
    return [statistics.median(s) for s in samples]


def rounds_for(seconds):
    return max(5, min(200, int(0.6 / max(seconds, 1e-6))))


def bench(name, fn, args, rows, moved_bytes=None, copy_bw=None):
    compiled = ft.compile(fn, backend="llvm", dynamic=True)
    with np.errstate(all="ignore"):
        want, got = fn(*args), compiled(*args)
        np.testing.assert_allclose(got, want, rtol=1e-4 if want.dtype == np.float32 else 1e-9,
                                   atol=1e-5)
        for _ in range(2):
            compiled(*args)
        t_np = timed([fn], args, 3)[0]
        t_np, t_ft = timed([fn, compiled], args, rounds_for(t_np))
    extra = ""
    if moved_bytes:
        bw = moved_bytes / t_ft / 1e9
        extra = f"{bw:6.1f} GB/s" + (f" = {bw / copy_bw:4.0%} of copyto" if copy_bw else "")
    rows.append((name, t_np * 1e3, t_ft * 1e3, t_np / t_ft, extra))


def copy_bandwidth(n=10_000_000):
    a, b = np.random.rand(n), np.empty(n)
    np.copyto(b, a)
    t = timed([lambda: np.copyto(b, a)], (), 30)[0]
    return 2 * a.nbytes / t / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = ap.parse_args()
    q = 8 if args.quick else 1
    rng = np.random.default_rng(0)
    rows = []
    n2 = (4096 // q, 1024)
    for dt in (np.float32, np.float64):
        bench(f"GELU {n2[0]}x{n2[1]} {np.dtype(dt).name}", gelu, (rng.standard_normal(n2).astype(dt),), rows)
    n = 10_000_000 // q
    bw = copy_bandwidth(n)
    abc = tuple(rng.standard_normal(n) for _ in range(3))
    bench(f"maximum(a*b+c,0) {n:.0e} f64", relu_fma, abc, rows, moved_bytes=4 * 8 * n, copy_bw=bw)
    x = rng.standard_normal(n2)
    bench(f"softmax rows {n2[0]}x{n2[1]} f64", softmax, (x,), rows, moved_bytes=2 * x.nbytes, copy_bw=bw)
    bench(f"layernorm {n2[0]}x{n2[1]} f64", layernorm, (x,), rows, moved_bytes=2 * x.nbytes, copy_bw=bw)
    m = 1024 // q
    bench(f"maximum(x@w+b,0) {m}x{m}x{m} f64", mm_relu,
          (rng.standard_normal((m, m)), rng.standard_normal((m, m)), rng.standard_normal(m)), rows)
    for size in (1000, 10_000_000 // q):
        bench(f"ten sin n={size:.0e} f64", sin_ten_times, (rng.standard_normal(size),), rows)
    print(f"np.copyto bandwidth: {bw:.1f} GB/s; threads: {runtime.num_threads()}")
    print(f"{'workload':34s} {'numpy ms':>10s} {'llvm ms':>10s} {'speedup':>8s}  bandwidth")
    for name, a, b, s, extra in rows:
        print(f"{name:34s} {a:10.3f} {b:10.3f} {s:7.2f}x  {extra}")


if __name__ == "__main__":
    main()
