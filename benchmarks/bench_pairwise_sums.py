"""Float sums in NumPy's pairwise order (codegen/llvm_kernels/pairwise.py): compiled against NumPy,
one thread, each call's CPU time (time.thread_time: less sensitive to a loaded machine than the
wall clock), the least of 15 batches of 20 calls, and whether the result has NumPy's bits.

    FRAMETRACE_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_pairwise_sums.py

To compare with a tree before the change: `git archive <commit> frametrace csrc_free_runtime | tar
-x -C /tmp/base` and run this file again with PYTHONPATH=/tmp/base (benchmarks/README.md).
"""
import time

import numpy as np

import frametrace as ft


def total(x):
    return x.sum()


def row_sums(x):
    return x.sum(axis=-1)


def average(x):
    return x.mean()


def layernorm(x):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cpu_time(fn, a, batches=15, calls=20):
    best = float("inf")
    for _ in range(batches):
        t = time.thread_time()
        for _ in range(calls):
            fn(a)
        best = min(best, (time.thread_time() - t) / calls)
    return best


def main():
    rng = np.random.default_rng(0)
    cases = [("sum 1e6 float64", total, rng.standard_normal(10**6)),
             ("sum 1e6 float32", total, rng.standard_normal(10**6).astype(np.float32)),
             ("sum 4096 float64", total, rng.standard_normal(4096)),
             ("row sums 1000x1000", row_sums, rng.standard_normal((1000, 1000))),
             ("row sums 4000x64", row_sums, rng.standard_normal((4000, 64))),
             ("row sums f32 1000x1000", row_sums, rng.standard_normal((1000, 1000)).astype(np.float32)),
             ("mean 1e5", average, rng.standard_normal(10**5)),
             ("layernorm 512x768", layernorm, rng.standard_normal((512, 768))),
             ("softmax 512x1024", softmax, rng.standard_normal((512, 1024)))]
    print(f"{'case':24s} {'compiled us':>12s} {'NumPy us':>10s} {'speed-up':>9s}  NumPy's bits")
    for name, fn, a in cases:
        f = ft.compile(fn)
        for _ in range(3):
            f(a)
        time.sleep(1)                      # the full tier, built in the background
        t_ft, t_np = cpu_time(f, a), cpu_time(fn, a)
        same = np.asarray(f(a)).tobytes() == np.asarray(fn(a)).tobytes()
        print(f"{name:24s} {t_ft * 1e6:12.1f} {t_np * 1e6:10.1f} {t_np / t_ft:8.2f}x  {same}")


if __name__ == "__main__":
    main()
