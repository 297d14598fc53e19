"""Core benchmarks: compile latency, cache-hit overhead and the seed size sweep.

Each figure is a median; NumPy eager (and Numba when installed) run in the same process.
Run: python benchmarks/bench_core.py [--backend numpy|llvm]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import textwrap
import time
import timeit

import numpy as np

import frametrace as ft


def sin_ten_times(x):
    for _ in range(10):
        x = np.sin(x)
    return x


def add_one(x):
    return x + 1


def median_call_ns(fn, *args, number=20000, repeat=15):
    times = timeit.repeat(lambda: fn(*args), number=number, repeat=repeat)
    return statistics.median(times) / number * 1e9


def compile_latency_ms(backend, repeat=7):
    samples = []
    for i in range(repeat):
        ft.reset()
        f = ft.compile(sin_ten_times, backend=backend)
        x = np.random.default_rng(i).standard_normal(16)
        start = time.perf_counter()
        f(x)
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def cold_sweep_s(backend):
    """The seed loop over sizes 2..99 in a fresh process, imports excluded, compiles included."""
    script = textwrap.dedent(f"""
        import time, numpy as np, frametrace as ft
        def sin_ten_times(x):
            for _ in range(10):
                x = np.sin(x)
            return x
        xs = [np.random.default_rng(i).standard_normal(i) for i in range(2, 100)]
        f = ft.compile(sin_ten_times, backend={backend!r})
        t = time.perf_counter()
        with ft.config.patch(pgo=False):
            for x in xs:
                f(x)
        print(time.perf_counter() - t, ft.stats().unique_graphs)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    seconds, graphs = out.split()
    return float(seconds), int(graphs)


def dispatch_overhead_ns(backend):
    """Per-call cost on a cache hit with one small array, minus the graph's own work."""
    ft.reset()
    f = ft.compile(add_one, backend=backend)
    x = np.ones(8)
    f(x)
    cache = f._frametrace_cache
    entry = cache.entries[0]
    run = entry.info.namespace.get("___graph")
    whole = median_call_ns(f, x)
    kernel = median_call_ns(run, [x], []) if run is not None else 0.0
    return whole, kernel, whole - kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default=ft.config.backend)
    args = ap.parse_args()
    b = args.backend
    rows = []
    x8 = np.ones(8)
    numpy_ns = median_call_ns(add_one, x8)
    whole, kernel, overhead = dispatch_overhead_ns(b)
    rows.append(("x + 1, n=8, whole call", f"{whole:.0f} ns", f"NumPy {numpy_ns:.0f} ns",
                 f"{whole / numpy_ns:.2f}x NumPy time"))
    rows.append(("cache-hit overhead (guards + dispatch)", f"{overhead:.0f} ns", f"graph run {kernel:.0f} ns", ""))
    lat = compile_latency_ms(b)
    rows.append(("compile latency, seed fn (10 sin)", f"{lat:.1f} ms", "", ""))
    seconds, graphs = cold_sweep_s(b)
    xs = [np.random.default_rng(i).standard_normal(i) for i in range(2, 100)]
    t = time.perf_counter()
    for x in xs:
        sin_ten_times(x)
    eager = time.perf_counter() - t
    rows.append(("seed sweep 2..99, cold process", f"{seconds * 1e3:.1f} ms", f"NumPy {eager * 1e3:.2f} ms",
                 f"{graphs} graphs"))
    try:
        import numba  # noqa: F401
        rows.append(("numba", "installed", "", ""))
    except ImportError:
        rows.append(("numba", "not installed", "", ""))
    print(f"backend: {b}")
    width = max(len(r[0]) for r in rows)
    for r in rows:
        print(f"{r[0]:<{width}}  {r[1]:>12}  {r[2]:>22}  {r[3]}")


if __name__ == "__main__":
    main()
