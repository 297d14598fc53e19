"""Compile time against graph size (issue 20, item 4): straight-line programs of 100, 1,000 and
10,000 graph nodes (graph_programs.py), each compiled cold in a fresh process with an empty kernel
cache. Reported: CPU seconds of the first call (this process: the machine is shared, so CPU time
is the steadier figure), wall seconds, seconds per 1,000 nodes (flat = linear growth), the phase
that took longest (compile_times.py) and how many kernels LLVM built or shared.

    python benchmarks/bench_compile_time.py                 # every family at 100, 1000, 10000
    python benchmarks/bench_compile_time.py --sizes=100,1000 --only=chain,kernels
"""
from __future__ import annotations

import json
import os
import sys

from common import fresh_cache_dir, run_script
from graph_programs import FAMILIES

COLD = """
import json, sys, time
sys.path.insert(0, {bench!r})
from graph_programs import program
import numpy as np
import frametrace as ft
from frametrace.backends.llvm import kernel_cache
fn, args = program({family!r}, {nodes})
f = ft.compile(fn)
np.ones(3).sum()
c0, w0 = time.process_time(), time.perf_counter()
out = f(*args)
cpu, wall = time.process_time() - c0, time.perf_counter() - w0
np.testing.assert_allclose(out, fn(*args), rtol=1e-9)
info = f._frametrace_cache.entries[0].info
times = info.phase_times
print(json.dumps({{"cpu": cpu, "wall": wall, "nodes": info.graph_nodes, "phases": times.seconds,
                  "total": times.total, "kernels": dict(kernel_cache.stats)}}))
"""


def cold(family: str, nodes: int) -> dict:
    bench = os.path.dirname(os.path.abspath(__file__))
    return run_script(COLD.format(bench=bench, family=family, nodes=nodes), timeout=1800,
                      env={"FRAMETRACE_CACHE_DIR": fresh_cache_dir(), "FRAMETRACE_STRICT_BACKEND": "1"})


def main(argv):
    sizes = [100, 1000, 10000]
    only = list(FAMILIES)
    for a in argv:
        if a.startswith("--sizes="):
            sizes = [int(s) for s in a.split("=", 1)[1].split(",")]
        if a.startswith("--only="):
            only = a.split("=", 1)[1].split(",")
    rows = []
    print(f"{'family':9s} {'nodes':>6s} {'cpu s':>7s} {'wall s':>7s} {'cpu s/1k nodes':>14s} "
          f"{'LLVM built/shared':>17s}  longest phase (share of the compile)")
    for family in only:
        for n in sizes:
            r = cold(family, n)
            r.update(family=family, size=n)
            rows.append(r)
            phase, spent = max(r["phases"].items(), key=lambda kv: kv[1])
            k = r["kernels"]
            print(f"{family:9s} {r['nodes']:6d} {r['cpu']:7.2f} {r['wall']:7.2f} {r['cpu'] / r['nodes'] * 1e3:14.3f} "
                  f"{k['compiled']:8d}/{k['shared']:<8d}  {phase} ({spent / r['total']:.0%})", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
