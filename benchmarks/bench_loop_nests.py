"""Loop bodies as native loop nests (issue 20, item 2): the programs of loop_nest_programs.py
(loops over rows with moving slices and dot products, a byte loop with bit operations), the
Python loop as written (NumPy eager), ft.compile (default settings, steady state after two
calls) and numba.njit on the same source, in one process.

    python benchmarks/bench_loop_nests.py             # full sizes
    python benchmarks/bench_loop_nests.py --quick     # 1/4 of the sizes
    python benchmarks/bench_loop_nests.py --only=lu,crc16

Timing: rounds interleave the three runners (machine noise hits all alike), each call on fresh
copies of the inputs made outside the timed region; medians. Cold: the first call in a fresh
process with an empty kernel cache (trace + LLVM + run). Numba needs SciPy for np.dot / `@`;
without it those programs say "n/a".
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

import numpy as np

import frametrace as ft
from common import fresh_cache_dir, numba_njit, run_script
from loop_nest_programs import PROGRAMS, inputs

COLD = """
import json, time, sys
sys.path.insert(0, {bench!r})
import numpy as np
import frametrace as ft
from loop_nest_programs import PROGRAMS, inputs
fn, args = PROGRAMS[{name!r}], inputs({name!r}, {scale})
f = ft.compile(fn)
t1 = time.perf_counter()
f(*args)
print(json.dumps({{"first_call": time.perf_counter() - t1, "stats": ft.stats().__dict__}}))
"""


def fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def timed_fresh(fns, args, budget=3.0, lo=5, hi=30):
    """Median seconds per call of each fn (None: skipped), interleaved, inputs copied untimed."""
    samples = [[] for _ in fns]
    start = time.perf_counter()
    for r in range(hi):
        for i, fn in enumerate(fns):
            if fn is None:
                continue
            a = fresh(args)
            t0 = time.perf_counter()
            fn(*a)
            samples[i].append(time.perf_counter() - t0)
        if r + 1 >= lo and time.perf_counter() - start > budget:
            break
    return [statistics.median(s) if s else None for s in samples]


def main(argv):
    scale = 0.25 if "--quick" in argv else 1.0
    only = [a.split("=", 1)[1].split(",") for a in argv if a.startswith("--only=")]
    njit = numba_njit()
    rows = []
    for name, fn in PROGRAMS.items():
        if only and name not in only[0]:
            continue
        args = inputs(name, scale)
        ft.reset()
        compiled = ft.compile(fn)
        compiled(*fresh(args))
        compiled(*fresh(args))
        jitted = None
        if njit is not None:
            try:
                jitted = njit(fn)
                jitted(*fresh(args))
            except Exception as exc:            # Numba cannot compile it (np.dot without SciPy, ...)
                print(f"numba: {name}: {type(exc).__name__}: {str(exc).splitlines()[0]}", file=sys.stderr)
                jitted = None
        py, ours, nb = timed_fresh([fn, compiled, jitted], args)
        st = ft.stats()
        cold = run_script(COLD.format(bench=os.path.dirname(os.path.abspath(__file__)), name=name, scale=scale),
                          env={"FRAMETRACE_CACHE_DIR": fresh_cache_dir()})
        rows.append(dict(program=name, numpy_s=py, frametrace_s=ours, numba_s=nb, vs_numpy=py / ours,
                         vs_numba=nb / ours if nb else None, cold_s=cold["first_call"],
                         graphs=st.unique_graphs, breaks=st.graph_breaks, fallbacks=st.eager_fallbacks))
    print(f"{'program':22s} {'NumPy':>10s} {'frametrace':>11s} {'Numba':>10s} {'x NumPy':>8s} {'x Numba':>8s} "
          f"{'cold':>7s} {'g/b/f':>6s}")
    for r in rows:
        nb = f"{r['numba_s'] * 1e3:8.3f}ms" if r["numba_s"] else "       n/a"
        xnb = f"{r['vs_numba']:8.2f}" if r["vs_numba"] else "     n/a"
        print(f"{r['program']:22s} {r['numpy_s'] * 1e3:8.3f}ms {r['frametrace_s'] * 1e3:9.3f}ms {nb} "
              f"{r['vs_numpy']:8.1f} {xnb} {r['cold_s']:6.2f}s {r['graphs']}/{r['breaks']}/{r['fallbacks']:>2d}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
