"""Loops whose body reads views that move with the loop index (issue 15): a sliding window
`x[i:i + k]`, a 2-d window `x[i:i + k, j:j + k]` (two nested loops) and a recurrence through
row views `h[t] = np.tanh(W @ h[t - 1])`, against the Python loop as written.

    python benchmarks/bench_loop_views.py           # min of 5 calls each, after a warm-up call

The figure is the minimum of 5 timed calls (steady state: compiled once, `dynamic=True`), with
which path ran the loop (array_loops.runs: native driver or the body's wrapper per iteration).
"""
from __future__ import annotations

import sys
import time

import numpy as np

import frametrace as ft
from frametrace.backends.llvm import array_loops


def window(x, w):
    k = w.shape[0]
    out = np.zeros(x.shape[0] - k + 1)
    for i in range(x.shape[0] - k + 1):
        out[i] = (x[i:i + k] * w).sum()
    return out


def window_2d(x, w):
    k = w.shape[0]
    out = np.zeros((x.shape[0] - k + 1, x.shape[1] - k + 1))
    for i in range(x.shape[0] - k + 1):
        for j in range(x.shape[1] - k + 1):
            out[i, j] = (x[i:i + k, j:j + k] * w).sum()
    return out


def rnn(w, h):
    for t in range(1, h.shape[0]):
        h[t] = np.tanh(w @ h[t - 1])
    return h


def best(fn, args, rounds=5):
    times = []
    for _ in range(rounds):
        fresh = [a.copy() for a in args]
        t = time.perf_counter()
        fn(*fresh)
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv):
    rng = np.random.default_rng(0)
    cases = [("window x=20000 k=8", window, (rng.standard_normal(20000), rng.standard_normal(8))),
             ("window_2d x=200x200 k=5", window_2d, (rng.standard_normal((200, 200)), rng.standard_normal((5, 5)))),
             ("rnn 2000 steps x 16", rnn, (rng.standard_normal((16, 16)) * 0.3, rng.standard_normal((2000, 16))))]
    print(f"{'program':28s} {'python':>10s} {'frametrace':>11s} {'speed-up':>9s}  path")
    for name, fn, args in cases:
        compiled = ft.compile(fn, dynamic=True)
        want, got = fn(*[a.copy() for a in args]), compiled(*[a.copy() for a in args])
        assert np.allclose(got, want, rtol=1e-10, atol=1e-12), name
        array_loops.runs.clear()
        py, jit = best(fn, args), best(compiled, args)
        path = "native" if array_loops.runs["native"] else "wrapper per iteration"
        print(f"{name:28s} {py * 1e3:8.2f}ms {jit * 1e3:9.2f}ms {py / jit:8.1f}x  {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
