"""Cold compile of loops at two trip counts (issue 20): what is compiled must not grow with the
trip count, so the first call costs the same at both.

    python benchmarks/bench_loop_cold.py              # 5 fresh processes per case (interleaved)
    python benchmarks/bench_loop_cold.py --rounds=3

Each case is run in a fresh process with an empty kernel cache (tracing + LLVM compile + the
run itself), small and large trip counts alternating so machine noise hits both alike;
medians. Sizes are static on a first call (the default policy), so before loop nodes a
constant trip count unrolled: rows of a 24x24 elimination printed a graph of 5,414 lines
against 329 at 6x6. Also printed: the graph's size in lines (ft.explain).
"""
from __future__ import annotations

import statistics
import sys

from common import fresh_cache_dir, run_script

CASES = {
    # name: (program source, setup of the call's arguments from `n`, the two values of n)
    "row elimination (n x n rows)": ("""
def prog(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A
""", "rng.standard_normal((n, n)) + n * np.eye(n),", (6, 24)),
    "time loop calling a helper (trips)": ("""
def set_bnd(b, x):
    if b == 1:
        x[0, 1:-1] = -x[1, 1:-1]
        x[-1, 1:-1] = -x[-2, 1:-1]
    else:
        x[0, 1:-1] = x[1, 1:-1]
        x[-1, 1:-1] = x[-2, 1:-1]
    x[1:-1, 0] = x[1:-1, 1]
    x[1:-1, -1] = x[1:-1, -2]

def prog(b, x, x0, a, c, trips):
    for k in range(trips):
        x[1:-1, 1:-1] = (x0[1:-1, 1:-1] + a * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:])) / c
        set_bnd(b, x)
    return x
""", "1, np.zeros((34, 34)), rng.standard_normal((34, 34)), 0.2, 1.8, n,", (20, 60)),
    "crc16 over bytes (bytes)": ("""
def prog(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur = b
        for _ in range(8):
            if (crc & 0x0001) ^ (cur & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur >>= 1
    crc = ~crc & 0xFFFF
    return (crc << 8) | ((crc >> 8) & 0xFF)
""", "rng.integers(0, 256, n, dtype=np.uint8),", (10, 1000)),
}

COLD = """
import json, time, textwrap
import numpy as np
t0 = time.perf_counter()
import frametrace as ft
exec(textwrap.dedent({source!r}))
rng = np.random.default_rng(0)
n = {n}
args = ({setup})
f = ft.compile(prog)
t1 = time.perf_counter()
f(*args)
t2 = time.perf_counter()
rng = np.random.default_rng(0)
out = ft.explain(prog, *({setup}))
lines = sum(len(str(g).splitlines()) for g in out.graphs)
print(json.dumps({{"first_call": t2 - t1, "lines": lines, "graphs": out.graph_count,
                  "breaks": out.graph_break_count}}))
"""


def main(argv):
    rounds = int(next((a.split("=", 1)[1] for a in argv if a.startswith("--rounds=")), 5))
    print(f"{'case':38s} {'n':>6s} {'cold first call':>16s} {'graph lines':>12s} {'graphs':>7s} {'breaks':>7s}")
    for name, (source, setup, sizes) in CASES.items():
        samples = {n: [] for n in sizes}
        info = {}
        for _ in range(rounds):
            for n in sizes:
                out = run_script(COLD.format(source=source, setup=setup, n=n),
                                 env={"FRAMETRACE_CACHE_DIR": fresh_cache_dir(), "FRAMETRACE_PGO": "0"})
                samples[n].append(out["first_call"])
                info[n] = out
        for n in sizes:
            print(f"{name:38s} {n:6d} {statistics.median(samples[n]):15.2f}s {info[n]['lines']:12d} "
                  f"{info[n]['graphs']:7d} {info[n]['breaks']:7d}")


if __name__ == "__main__":
    main(sys.argv[1:])
