"""Core benchmarks: compile latency, cache-hit overhead and the seed size sweep.

Each figure is a median; NumPy eager (and Numba when installed) run in the same process.
Run: python benchmarks/bench_core.py [--backend numpy|llvm]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
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
    with tempfile.TemporaryDirectory(prefix="frametrace-bench-") as cache:   # cold: an empty kernel cache
        env = dict(os.environ, FRAMETRACE_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                             env=env).stdout
    seconds, graphs = out.split()
    return float(seconds), int(graphs)


def interleaved_ns(calls: dict, rounds=7, number=20000, repeat=3) -> dict:
    """Median ns per call of each `name: (fn, args)`, timed round-robin (noise hits all alike)."""
    samples = {name: [] for name in calls}
    for _ in range(rounds):
        for name, (fn, args) in calls.items():
            samples[name].append(median_call_ns(fn, *args, number=number, repeat=repeat))
    return {name: statistics.median(v) for name, v in samples.items()}


def native_dispatch_ns():
    """x + 1 at n=8 through the native entry vs the Python path (native_dispatch off) vs NumPy.

    cache-hit overhead (native) = trampoline (whole call - the builtin's own hit) + the
    native guards (the builtin on an input that fails only the last guard, the size)."""
    ft.reset()
    fn_native = ft.compile(add_one, dynamic=False)
    x, x9 = np.ones(8), np.ones(9)
    with ft.config.patch(native_dispatch=False):        # read when the first call compiles
        fn_python = ft.compile(lambda x: x + 1, dynamic=False)
        fn_python(x)
    fn_native(x)
    native = fn_native._frametrace_cache.entries[0].native
    if native is None:
        return None
    run = fn_python._frametrace_cache.entries[0].info.namespace["___graph"]
    calls = {"numpy": (add_one, (x,)), "native": (fn_native, (x,)), "python": (fn_python, (x,)),
             "hit": (native.fn, (x,)), "miss_last_guard": (native.fn, (x9,)), "wrapper": (run, ([x], []))}
    try:
        import numba
        jitted = numba.njit(add_one)
        jitted(x)
        calls["numba"] = (jitted, (x,))
    except ImportError:
        pass
    t = interleaved_ns(calls)
    t["native_overhead"] = t["native"] - t["hit"] + t["miss_last_guard"]
    t["python_overhead"] = t["python"] - t["wrapper"]
    return t


def dispatch_overhead_ns(backend):
    """Per-call cost on a cache hit with one small array, minus the graph's own work (Python path)."""
    ft.reset()
    x = np.ones(8)
    with ft.config.patch(native_dispatch=False):        # read when the first call compiles
        f = ft.compile(add_one, backend=backend)
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
    rows.append(("cache-hit overhead (guards + dispatch)", f"{overhead:.0f} ns", f"graph run {kernel:.0f} ns",
                 "Python path"))
    nat = native_dispatch_ns() if b == "llvm" else None
    if nat is not None:
        numba_ns = f", Numba {nat['numba']:.0f} ns" if "numba" in nat else ""
        rows.append(("x + 1, n=8, native entry (interleaved)", f"{nat['native']:.0f} ns",
                     f"NumPy {nat['numpy']:.0f} ns", f"Python path {nat['python']:.0f} ns{numba_ns}"))
        rows.append(("cache-hit overhead, native entry", f"{nat['native_overhead']:.0f} ns",
                     f"builtin {nat['hit']:.0f} ns", f"Python path {nat['python_overhead']:.0f} ns"))
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
