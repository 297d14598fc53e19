"""Fused row reductions against NumPy: the workloads of `../shared/perf/smoke.py` plus the row
reductions that softmax, log-softmax, layernorm and attention are made of (issue 25).

    python benchmarks/bench_row_reductions.py                    # every workload, a table
    python benchmarks/bench_row_reductions.py --only softmax,rowmax --clock cpu --json out.json

Each workload is compiled once (`ft.compile`, static shapes as in smoke.py), warmed up, then
NumPy and the compiled function are timed round-robin; the figure is the median speed-up.
`--clock cpu` times process CPU time instead of wall time: on a loaded machine a process that
waits for a core is not charged for it (use it with `--threads 1`, where CPU time is the
kernel's own work). The file uses only the public API (`ft.compile`), so it runs unchanged
against any commit: `bisect_slowdown.py` runs this very file inside old trees.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def sin10(x):
    for _ in range(10):
        x = np.sin(x)
    return x


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x ** 3)))


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def layernorm(x, w):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * w


def layernorm_var(x):
    return (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)


def attention(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[1])
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


def rowmax(x):
    return x.max(axis=1)


def rowmin(x):
    return x.min(axis=1)


def argmax_rows(x):
    return x.argmax(axis=1)


def relu_rowmax(x):
    return np.maximum(x, 0.0).max(axis=1)


def range_rows(x):
    return x.max(axis=1) - x.min(axis=1)


def nanmax_rows(x):
    return np.nanmax(x, axis=1)


def masked(x):
    return x[x > 0.5].sum()


def _negative_half(shape, seed=0):
    """Rows with a positive maximum, and every other row all negative (its ReLU max is a zero:
    the zero-sign pass runs there)."""
    x = np.random.default_rng(seed).standard_normal(shape)
    x[::2] = -np.abs(x[::2]) - 0.5
    return x


def _rng(seed=0):
    return np.random.default_rng(seed)


# name -> (function, argument maker)
WORKLOADS = {
    "sin10": (sin10, lambda: (_rng().standard_normal(1_000_000),)),
    "gelu_f32": (gelu, lambda: (_rng().standard_normal((2048, 1024)).astype(np.float32),)),
    "softmax": (softmax, lambda: (_rng().standard_normal((4096, 1024)),)),
    "log_softmax": (log_softmax, lambda: (_rng().standard_normal((4096, 1024)),)),
    "layernorm": (layernorm, lambda: (_rng().standard_normal((4096, 1024)), _rng(1).standard_normal(1024))),
    "layernorm_var": (layernorm_var, lambda: (_rng().standard_normal((4096, 1024)),)),
    "attention": (attention, lambda: tuple(_rng(i).standard_normal(s) for i, s in
                                           enumerate([(512, 64), (2048, 64), (2048, 64)]))),
    "rowmax": (rowmax, lambda: (_rng().standard_normal((4096, 1024)),)),
    "rowmin": (rowmin, lambda: (_rng().standard_normal((4096, 1024)),)),
    "argmax_rows": (argmax_rows, lambda: (_rng().standard_normal((4096, 1024)),)),
    "relu_rowmax": (relu_rowmax, lambda: (_negative_half((4096, 1024)),)),
    "range_rows": (range_rows, lambda: (_rng().standard_normal((4096, 1024)),)),
    "nanmax_rows": (nanmax_rows, lambda: (_rng().standard_normal((4096, 1024)),)),
    "masked_sum": (masked, lambda: (_rng().standard_normal(1_000_000),)),
}


def measure(name, clock, rounds=15, warm=1.5) -> dict:
    import frametrace as ft
    fn, make = WORKLOADS[name]
    args = make()
    compiled = ft.compile(fn)
    got, want = compiled(*args), fn(*args)
    tol = 1e-4 if np.asarray(want).dtype == np.float32 else 1e-9
    if not np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True):
        raise AssertionError(f"{name}: compiled result differs from NumPy's")
    t_end = time.perf_counter() + warm          # warm up; background tier-ups land
    while time.perf_counter() < t_end:
        compiled(*args)
    tick = time.process_time if clock == "cpu" else time.perf_counter
    ts_np, ts_ft = [], []
    for _ in range(rounds):
        t0 = tick()
        fn(*args)
        ts_np.append(tick() - t0)
        t0 = tick()
        compiled(*args)
        ts_ft.append(tick() - t0)
    a, b = statistics.median(ts_np), statistics.median(ts_ft)
    return {"workload": name, "numpy_ms": a * 1e3, "frametrace_ms": b * 1e3, "speedup": a / b, "clock": clock}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated workload names (default: all)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--threads", type=int, help="FRAMETRACE_NUM_THREADS for the kernels")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--list", action="store_true", help="print the workload names")
    opts = ap.parse_args(argv)
    if opts.list:
        print("\n".join(WORKLOADS))
        return 0
    if opts.threads:
        os.environ["FRAMETRACE_NUM_THREADS"] = str(opts.threads)
    names = opts.only.split(",") if opts.only else list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; --list names them")
    rows, failed = [], 0
    for name in names:
        try:
            row = measure(name, opts.clock, opts.rounds)
        except Exception as exc:        # an old tree (bisect_slowdown.py) may not run every workload
            print(f"{name:14s} failed: {type(exc).__name__}: {exc}", flush=True)
            failed += 1
            continue
        rows.append(row)
        print(f"{name:14s} numpy {row['numpy_ms']:9.3f} ms   frametrace {row['frametrace_ms']:9.3f} ms   "
              f"{row['speedup']:6.2f}x", flush=True)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
