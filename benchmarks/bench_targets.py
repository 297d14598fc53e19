"""Every performance target of issue 3 in one table: frametrace (LLVM backend), NumPy eager and,
when installed, Numba, measured in one run (steady-state rows interleave the three).

Run: python benchmarks/bench_targets.py [--quick] [--json FILE]
Rows: the seed sin loop (fresh process, fresh cache dir: compiles included), ten `sin` at
n=1e3 and 1e7, the GELU chain (f32 / f64), a memory-bound chain with its fraction of the
copy bandwidth measured in the same run, row softmax, layernorm, maximum(x @ w + b, 0) over
several batch sizes, a boolean-mask reduction, the whole call of `x + 1` at n=8 and the
compile latency of a 10-op graph (cold cache / disk cache). Medians everywhere.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil

import numpy as np

from common import copy_bandwidth, fresh_cache_dir, numba_njit, per_call, rounds_for, run_script, timed
from workloads import gelu, layernorm, mask_sum, mm_relu, relu_fma, sin_ten_times, softmax

import frametrace as ft
from frametrace.backends.llvm import runtime


# ---------------------------------------------------------------------------- workloads

def add_one(x):
    return x + 1


# ---------------------------------------------------------------------------- helpers

class Table:
    def __init__(self):
        self.rows = []

    def add(self, name, target, ours, numpy=None, numba=None, ratio=None, met=None, note=""):
        self.rows.append(dict(workload=name, target=target, ours=ours, numpy=numpy or "", numba=numba or "",
                              ratio=ratio or "", met={True: "yes", False: "NO", None: ""}[met], note=note))

    def text(self) -> str:
        cols = [("workload", "workload"), ("target", "target"), ("ours", "frametrace"), ("numpy", "NumPy"),
                ("numba", "Numba"), ("ratio", "speed-up"), ("met", "met"), ("note", "note")]
        widths = {k: max(len(h), *(len(str(r[k])) for r in self.rows)) for k, h in cols}
        head = " | ".join(h.ljust(widths[k]) for k, h in cols)
        sep = "-|-".join("-" * widths[k] for k, _ in cols)
        lines = [f"| {head} |", f"|-{sep}-|"]
        for r in self.rows:
            lines.append("| " + " | ".join(str(r[k]).ljust(widths[k]) for k, _ in cols) + " |")
        return "\n".join(lines)


def fmt_t(seconds) -> str:
    if seconds is None:
        return ""
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e9:.0f} ns"


def compiled(fn):
    return ft.compile(fn, backend="llvm", dynamic=True)


def numba_version(fn):
    """A warmed-up callable, "fails" (Numba cannot compile it) or None (not installed)."""
    njit = numba_njit()
    if njit is None:
        return None
    return njit(fn)


def check(want, got, rtol):
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5 if rtol > 1e-7 else 1e-9)


def steady(fn, args, rtol=1e-9, budget=2.0, max_rounds=200):
    """Median seconds of NumPy, frametrace, Numba (None / "fails") on the same arguments."""
    ours = compiled(fn)
    nb = numba_version(fn)
    with np.errstate(all="ignore"):
        want = fn(*args)
        check(want, ours(*args), rtol)
        if nb is not None:
            try:
                nb(*args)
            except Exception:
                nb = "fails"
        ours(*args)
        t_np = timed([fn], args, 1)[0]
        rounds = rounds_for(t_np, budget, hi=max_rounds)
        t = timed([fn, ours, nb if callable(nb) else None], args, rounds, budget=3 * budget)
    return t[0], t[1], (t[2] if callable(nb) else nb)


def nb_text(t):
    return "" if t is None else ("fails" if t == "fails" else fmt_t(t))


# ---------------------------------------------------------------------------- rows

SEED = """
import time, json
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
{imp}
t2 = time.perf_counter()
def sin_ten_times(x):
    for _ in range(10):
        x = np.sin(x)
    return x
xs = [np.random.default_rng(i).standard_normal(i) for i in range(2, 100)]
f = {wrap}
t3 = time.perf_counter()
for x in xs:
    f(x)
t4 = time.perf_counter()
print(json.dumps({{"numpy_import": t1 - t0, "import": t2 - t1, "loop": t4 - t3, "compiles": {compiles}}}))
"""


def seed_loop(table, repeats):
    d = fresh_cache_dir()                     # warm-up: writes the modules' .pyc files, not measured
    try:
        run_script(SEED.format(imp="import frametrace as ft", wrap="ft.compile(sin_ten_times)",
                               compiles="ft.stats().frames_compiled"), env={"FRAMETRACE_CACHE_DIR": d})
    finally:
        shutil.rmtree(d, ignore_errors=True)
    runs = []
    for _ in range(repeats):
        d = fresh_cache_dir()
        try:
            runs.append(run_script(SEED.format(imp="import frametrace as ft", wrap="ft.compile(sin_ten_times)",
                                               compiles="ft.stats().frames_compiled"),
                                   env={"FRAMETRACE_CACHE_DIR": d}))
        finally:
            shutil.rmtree(d, ignore_errors=True)
    runs.sort(key=lambda r: r["loop"])
    r = runs[len(runs) // 2]
    xs = [np.random.default_rng(i).standard_normal(i) for i in range(2, 100)]
    eager = timed([lambda: [sin_ten_times(x) for x in xs]], (), 9)[0]
    nb = None
    if numba_njit() is not None:
        nb = run_script(SEED.format(imp="import numba", wrap="numba.njit(sin_ten_times)",
                                    compiles="len(f.signatures)"))
    table.add("seed sin loop 2..99, cold process", "< 0.3 s, <= 2 compiles",
              f"{fmt_t(r['loop'])}, {r['compiles']} compiles", fmt_t(eager),
              f"{fmt_t(nb['loop'])}, {nb['compiles']} compile" if nb else "", None,
              r["loop"] < 0.3 and r["compiles"] <= 2,
              f"median of {repeats} fresh processes (loop {', '.join(fmt_t(x['loop']) for x in runs)}); "
              f"import frametrace {fmt_t(r['import'])} + numpy {fmt_t(r['numpy_import'])} not included")
    return r


def ten_sin(table, quick):
    rng = np.random.default_rng(0)
    for n, budget in ((1000, 1.0), (1_000_000 if quick else 10_000_000, 8.0)):
        t_np, t_ft, t_nb = steady(sin_ten_times, (rng.standard_normal(n),), budget=budget)
        big = n >= 10_000_000
        table.add(f"ten sin, n={n:.0e} f64", ">= 15x NumPy" if big else "(report)", fmt_t(t_ft), fmt_t(t_np),
                  nb_text(t_nb), f"{t_np / t_ft:.1f}x", (t_np / t_ft >= 15) if big else None)


def gelu_rows(table, quick):
    rng = np.random.default_rng(0)
    shape = (512 if quick else 4096, 1024)
    for dt in (np.float32, np.float64):
        x = rng.standard_normal(shape).astype(dt)
        t_np, t_ft, t_nb = steady(gelu, (x,), rtol=1e-4 if dt == np.float32 else 1e-9, budget=3.0)
        f32 = dt == np.float32
        table.add(f"GELU {shape[0]}x{shape[1]} {np.dtype(dt).name}", ">= 40x NumPy" if f32 else "(report)",
                  fmt_t(t_ft), fmt_t(t_np), nb_text(t_nb), f"{t_np / t_ft:.1f}x",
                  (t_np / t_ft >= 40) if f32 else None, "as written (x**3)")


def memory_bound(table, quick, bw):
    n = 1_000_000 if quick else 10_000_000
    rng = np.random.default_rng(0)
    abc = tuple(rng.standard_normal(n) for _ in range(3))
    t_np, t_ft, t_nb = steady(relu_fma, abc, budget=3.0)
    moved = 4 * 8 * n
    frac = moved / t_ft / 1e9 / bw
    table.add(f"maximum(a*b+c, 0), n={n:.0e} f64", ">= 80% of copy bandwidth",
              f"{fmt_t(t_ft)} = {moved / t_ft / 1e9:.1f} GB/s = {frac:.0%}",
              f"{fmt_t(t_np)} = {moved / t_np / 1e9 / bw:.0%}", nb_text(t_nb), f"{t_np / t_ft:.1f}x",
              frac >= 0.8, f"np.copyto {bw:.1f} GB/s in this run; 4 x 8 B moved per element")


def rows_2d(table, quick, bw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512 if quick else 4096, 1024))
    for name, fn, need in (("row softmax", softmax, 3), ("layernorm", layernorm, 5)):
        t_np, t_ft, t_nb = steady(fn, (x,), budget=3.0)
        frac = 2 * x.nbytes / t_ft / 1e9 / bw
        table.add(f"{name} {x.shape[0]}x{x.shape[1]} f64", f">= {need}x NumPy", fmt_t(t_ft), fmt_t(t_np),
                  nb_text(t_nb), f"{t_np / t_ft:.1f}x", t_np / t_ft >= need,
                  f"{frac:.0%} of copy bandwidth (read x + write out once)")


def matmul_rows(table, quick):
    rng = np.random.default_rng(0)
    k = n = 256 if quick else 1024
    w, b = rng.standard_normal((k, n)), rng.standard_normal(n)
    ratios = []
    for batch in ((64, 256) if quick else (128, 512, 2048)):
        x = rng.standard_normal((batch, k))
        t_np, t_ft, t_nb = steady(mm_relu, (x, w, b), rtol=1e-7, budget=2.0)
        ratios.append(t_np / t_ft)
        table.add(f"maximum(x @ w + b, 0) {batch}x{k}x{n} f64", ">= 1.2x NumPy", fmt_t(t_ft), fmt_t(t_np),
                  nb_text(t_nb), f"{t_np / t_ft:.2f}x", t_np / t_ft >= 1.2,
                  "np.matmul (OpenBLAS) + fused in-place epilogue kernel; one dynamic graph")


def mask_row(table, quick):
    x = np.random.default_rng(0).standard_normal(100_000 if quick else 1_000_000)
    t_np, t_ft, t_nb = steady(mask_sum, (x,), rtol=1e-9, budget=2.0)
    table.add(f"y = x[x > 0]; y.sum() + sqrt(y).sum(), n={x.size:.0e}", "(report)", fmt_t(t_ft), fmt_t(t_np),
              nb_text(t_nb), f"{t_np / t_ft:.1f}x", None, "data-dependent size (unbacked symbol)")


def overhead_row(table):
    x = np.ones(8)
    ours = compiled(add_one)
    ours(x)
    nb = numba_version(add_one)
    if nb is not None:
        nb(x)
    t_np, t_ft = per_call(add_one, (x,)), per_call(ours, (x,))
    t_nb = per_call(nb, (x,)) if nb is not None else None
    table.add("x + 1, n=8, whole call", "<= Numba (0.6 us)", fmt_t(t_ft), fmt_t(t_np), nb_text(t_nb),
              f"{t_np / t_ft:.2f}x", t_ft <= (t_nb if t_nb is not None else 0.6e-6),
              "native METH_FASTCALL entry: guards + allocation + kernel launch in LLVM IR")


TEN_OPS = """
import time, json
import numpy as np
import frametrace as ft
from frametrace.backends.llvm import jit
def ten_ops(x):                                # 10 elementwise ops, one graph, one kernel
    y = x * 1.5 + 2.0
    y = np.maximum(y, 0.0) - x
    y = y * y + np.exp(-x)
    return y / (1.0 + np.abs(x)) - 0.25
def ten_ops_b(x):                              # the same with other constants: another kernel
    y = x * 2.5 + 3.0
    y = np.maximum(y, 0.5) - x
    y = y * y + np.exp(-x)
    return y / (2.0 + np.abs(x)) - 0.75
x = np.random.default_rng(0).standard_normal(1000)
out = {}
for name, fn in (("first", ten_ops), ("warm", ten_ops_b)):
    f = ft.compile(fn)
    t = time.perf_counter()
    f(x)
    out[name] = time.perf_counter() - t
out["hits"] = jit.stats["hits"]
print(json.dumps(out))
"""


def compile_latency(table):
    d = fresh_cache_dir()
    try:
        cold = run_script(TEN_OPS, env={"FRAMETRACE_CACHE_DIR": d})
        disk = run_script(TEN_OPS, env={"FRAMETRACE_CACHE_DIR": d})
    finally:
        shutil.rmtree(d, ignore_errors=True)
    table.add("compile 10-op graph, empty cache", "< 100 ms", fmt_t(cold["warm"]), "", "", "",
              cold["warm"] < 0.1, f"first call of a fresh process (compiler modules imported lazily): "
                                  f"{fmt_t(cold['first'])}")
    table.add("compile 10-op graph, disk cache", "< 10 ms", fmt_t(disk["warm"]), "", "", "",
              disk["warm"] < 0.01 and disk["hits"] >= 2,
              f"first call of a fresh process: {fmt_t(disk['first'])}; cache hits {disk['hits']}")


def machine() -> str:
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import llvmlite.binding as llvm
    nb = numba_njit()
    import sys
    nbv = sys.modules["numba"].__version__ if nb is not None else "not installed"
    return (f"{model} ({llvm.get_host_cpu_name()}), {os.cpu_count()} cores, frametrace threads "
            f"{runtime.num_threads()}; Python {platform.python_version()}, NumPy {np.__version__}, "
            f"llvmlite {__import__('llvmlite').__version__}, Numba {nbv}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats (smoke run)")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    table = Table()
    print(machine(), flush=True)
    seed_loop(table, 1 if args.quick else 3)
    compile_latency(table)
    bw = copy_bandwidth(1_000_000 if args.quick else 10_000_000)
    overhead_row(table)
    ten_sin(table, args.quick)
    gelu_rows(table, args.quick)
    memory_bound(table, args.quick, bw)
    rows_2d(table, args.quick, bw)
    matmul_rows(table, args.quick)
    mask_row(table, args.quick)
    print(table.text())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "rows": table.rows}, f, indent=1)


if __name__ == "__main__":
    main()
