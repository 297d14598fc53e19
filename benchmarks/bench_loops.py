"""Python loops compiled as loops (issue 15): the seven programs of loop_programs.py at
realistic sizes, steady state and cold first call, against the Python loop as written (NumPy
eager) and numba.njit on the same source (when Numba is installed).

    python benchmarks/bench_loops.py            # full sizes (the Python loops take ~30 s)
    python benchmarks/bench_loops.py --quick    # 1/10 of the sizes
    python benchmarks/bench_loops.py --only=viterbi,jacobi     # some of the programs

Steady state: interleaved medians (common.timed), inputs copied outside the timing for the
programs that write into their argument (jacobi). Cold: a fresh process with an empty kernel
cache times the first call (tracing + LLVM compile + run); Numba's cold time is its first call
(compile + run), also in a fresh process. Also: whether a second trip count recompiles.
"""
from __future__ import annotations

import json
import sys

import numpy as np

import frametrace as ft
from common import fresh_cache_dir, numba_njit, rounds_for, run_script, timed
from loop_programs import PROGRAMS, inputs

COLD = """
import json, time, sys
sys.path.insert(0, {bench!r})
import numpy as np
t0 = time.perf_counter()
import frametrace as ft
from loop_programs import PROGRAMS, inputs
fn, args = PROGRAMS[{name!r}], inputs({name!r}, {scale})
mode = {mode!r}
if mode == "numba":
    import numba
    f = numba.njit(fn)
else:
    f = ft.compile(fn)
t1 = time.perf_counter()
f(*args)
t2 = time.perf_counter()
print(json.dumps({{"first_call": t2 - t1}}))
"""


def cold(name, scale, mode):
    import os
    out = run_script(COLD.format(bench=os.path.dirname(os.path.abspath(__file__)), name=name, scale=scale,
                                 mode=mode), env={"FRAMETRACE_CACHE_DIR": fresh_cache_dir()})
    return out["first_call"]


def main(argv):
    scale = 0.1 if "--quick" in argv else 1.0
    njit = numba_njit()
    rows = []
    only = [a.split("=", 1)[1].split(",") for a in argv if a.startswith("--only=")]
    for name, fn in PROGRAMS.items():
        if only and name not in only[0]:
            continue
        args = inputs(name, scale)
        def fresh(args=args):
            return [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        ft.reset()
        compiled = ft.compile(fn)
        compiled(*fresh())
        compiled(*fresh())                    # the second call: sizes seen once (default settings)
        jitted = None
        if njit is not None:
            try:
                jitted = njit(fn)
                jitted(*fresh())
            except Exception as exc:           # Numba cannot compile the program as written
                print(f"numba: {name}: {type(exc).__name__}: {str(exc).splitlines()[0]}", file=sys.stderr)
                jitted = None
        py_once = timed([fn], fresh(), rounds=1)[0]
        rounds = rounds_for(py_once, budget=3.0, lo=3, hi=15)
        # copies are made inside each timed call for every runner alike (jacobi writes its input)
        runners = [lambda f=fn, fr=fresh: f(*fr()), lambda f=compiled, fr=fresh: f(*fr()),
                   (lambda f=jitted, fr=fresh: f(*fr())) if jitted is not None else None]
        py, ours, nb = timed(runners, rounds=rounds)
        graphs_before = ft.stats().unique_graphs
        other = inputs(name, scale * 0.7)
        compiled(*[a.copy() if isinstance(a, np.ndarray) else a for a in other])
        recompiled = ft.stats().unique_graphs - graphs_before
        rows.append(dict(program=name, python_s=py, frametrace_s=ours, numba_s=nb,
                         vs_python=py / ours, vs_numba=(nb / ours) if nb else None,
                         cold_frametrace_s=cold(name, scale, "ft"),
                         cold_numba_s=cold(name, scale, "numba") if jitted is not None else None,
                         recompiles_on_new_size=recompiled))
    print(f"{'program':22s} {'python':>9s} {'frametrace':>11s} {'numba':>9s} {'x python':>9s} "
          f"{'x numba':>8s} {'cold ft':>8s} {'cold nb':>8s} {'recompiles':>10s}")
    for r in rows:
        nb = f"{r['numba_s'] * 1e3:8.2f}ms" if r["numba_s"] else "      n/a"
        xnb = f"{r['vs_numba']:8.2f}" if r["vs_numba"] else "     n/a"
        cnb = f"{r['cold_numba_s']:7.2f}s" if r["cold_numba_s"] is not None else "     n/a"
        print(f"{r['program']:22s} {r['python_s'] * 1e3:8.1f}ms {r['frametrace_s'] * 1e3:9.2f}ms {nb} "
              f"{r['vs_python']:9.1f} {xnb} {r['cold_frametrace_s']:7.2f}s {cnb} {r['recompiles_on_new_size']:10d}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
