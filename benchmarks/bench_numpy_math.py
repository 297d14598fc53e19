"""NumPy's own ufunc loops in kernels (codegen/llvm_kernels/numpy_loops.py) against our own
vectorised math and against NumPy eager, in one process.

    python benchmarks/bench_numpy_math.py [--threads 1] [--rounds 15] [name-substring ...]

Each workload is compiled twice (`ft.config.numpy_math` True, then False: two function copies,
two cache entries); rounds interleave the two compiled versions and NumPy. With one thread the
figure is the calling thread's CPU time (time.thread_time: kernels run on the calling thread, and
a loaded machine's preemption does not count), otherwise wall time; medians.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import frametrace as ft  # noqa: E402


def _clone(f):
    return types.FunctionType(f.__code__.replace(), f.__globals__, f.__name__, f.__defaults__, f.__closure__)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x ** 3)))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def lone_exp(x):
    return np.exp(x)


def exp_chain(x, y):
    return np.exp(x * y) * 2.0 + y


def lone_log(x):
    return np.log(x)


def inv_r3(x):
    return x ** -1.5


def lone_tanh(x):
    return np.tanh(x)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def workloads():
    rng = np.random.default_rng(0)
    x6, y6 = rng.standard_normal(1_000_000), rng.standard_normal(1_000_000)
    f32 = x6.astype(np.float32)
    return [("gelu f32 2048x1024", gelu, (rng.standard_normal((2048, 1024)).astype(np.float32),)),
            ("softmax f64 4096x1024", softmax, (rng.standard_normal((4096, 1024)),)),
            ("exp f64 1e6", lone_exp, (x6,)), ("exp f32 1e6", lone_exp, (f32,)),
            ("exp(x*y)*2+y f64 1e6", exp_chain, (x6, y6)),
            ("log f64 1e6", lone_log, (np.abs(x6),)), ("x**-1.5 f64 1e6", inv_r3, (np.abs(x6),)),
            ("tanh f32 1e6", lone_tanh, (f32,)), ("tanh f64 1e6", lone_tanh, (x6,)),
            ("sigmoid f32 1e6", sigmoid, (f32,)), ("sigmoid f64 1e6", sigmoid, (x6,))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    ft.config.num_threads = args.threads
    clock = time.thread_time if args.threads == 1 else time.perf_counter
    print(f"threads={args.threads}  ({'thread CPU time' if args.threads == 1 else 'wall time'}, medians, ms)")
    print(f"{'workload':24s} {'numpy loops':>11s} {'own math':>9s} {'NumPy':>9s} {'loops/own':>9s} "
          f"{'loops vs NumPy':>14s} {'own vs NumPy':>12s}")
    for name, fn, xs in workloads():
        if args.names and not any(k in name for k in args.names):
            continue
        with ft.config.patch(numpy_math=True):
            a = ft.compile(_clone(fn))
            a(*xs)
        with ft.config.patch(numpy_math=False):
            b = ft.compile(_clone(fn))
            b(*xs)
        end = time.perf_counter() + 1.0               # warm up; background tier-ups land
        while time.perf_counter() < end:
            a(*xs)
            b(*xs)
        samples = ([], [], [])
        for _ in range(args.rounds):
            for f, out in zip((a, b, fn), samples):
                t = clock()
                f(*xs)
                out.append(clock() - t)
        ta, tb, tn = (statistics.median(s) * 1e3 for s in samples)
        print(f"{name:24s} {ta:11.3f} {tb:9.3f} {tn:9.3f} {ta / tb:9.2f} {tn / ta:13.2f}x {tn / tb:11.2f}x",
              flush=True)


if __name__ == "__main__":
    main()
