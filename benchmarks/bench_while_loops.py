"""`while` loops on data and graph breaks inside loops (issue 20, item 3): steady state against
the Python loop as written (NumPy eager), the frames compiled, and the cold first call at two
trip counts (what is compiled must not grow with the trip count, so neither may the cold time
beyond the run itself).

    python benchmarks/bench_while_loops.py            # the sizes below
    python benchmarks/bench_while_loops.py --quick    # fewer rounds

Steady: interleaved medians (common.timed), inputs copied inside each timed call for every
runner alike. Cold: a fresh process with an empty kernel cache times the first call (tracing +
LLVM + run) at the short and the long trip count; `run` is that trip count's NumPy time, so
cold - run is what compiling costs.
"""
from __future__ import annotations

import json
import sys

import numpy as np

import frametrace as ft
from common import fresh_cache_dir, run_script, timed


def relax(u, b, tol):
    """Jacobi sweeps until the relative change is below tol (`udiff = 1.0`, then np.float64)."""
    udiff, sweeps = 1.0, 0
    while udiff > tol:
        un = u.copy()
        u[1:-1] = 0.5 * (un[2:] + un[:-2]) - b[1:-1]
        udiff = np.abs(np.sum(u) - np.sum(un)) / np.abs(np.sum(u))
        sweeps += 1
    return u, sweeps


def relax_literal(u, b):
    """npbench channel_flow's form: `udiff = 1` and a literal tolerance (the trace decides the
    first test: a do-while node, the body traced once)."""
    udiff, sweeps = 1, 0
    while udiff > 1e-6:
        un = u.copy()
        u[1:-1] = 0.5 * (un[2:] + un[:-2]) - b[1:-1]
        udiff = np.abs(np.sum(u) - np.sum(un)) / np.abs(np.sum(u))
        sweeps += 1
    return u, sweeps


def simulate(x, t_end):
    """A time step from the data, an output schedule (`if` on data), a carried array."""
    t, out, snapshots = 0.0, 1, 0
    while t < t_end:
        dt = 0.05 * np.min(x)
        if t + dt > out * 0.5:
            snapshots += 1
            out += 1
        x = x + dt * (np.roll(x, 1) - x)
        t = t + dt
    return x, t, snapshots


def first_crossing(x, level):
    """A search: a counter indexing the array until a data test fails."""
    i = 0
    while i < x.shape[0] and x[i] < level:
        i += 1
    return i


def log_progress(x, iters):
    """A graph break (print) inside a loop: the loop runs in Python, its callees compiled."""
    for k in range(iters):
        x = smooth(x)
        if k % 1000 == 0:
            print(end="")
    return x


def smooth(x):
    return 0.25 * np.roll(x, 1) + 0.5 * x + 0.25 * np.roll(x, -1)


PROGRAMS = {
    # name: (fn, short args, long args)
    "relax": (relax, lambda: (np.ones(200), np.full(200, 1e-3), 1e-3),
              lambda: (np.ones(200), np.full(200, 1e-3), 1e-7)),
    "relax_literal": (relax_literal, lambda: (np.ones(20), np.full(20, 1e-3)),      # ~500 sweeps
                      lambda: (np.ones(200), np.full(200, 1e-3))),                   # ~40,000 sweeps
    "simulate": (simulate, lambda: (np.linspace(1.0, 2.0, 4096), 5.0),
                 lambda: (np.linspace(1.0, 2.0, 4096), 50.0)),
    "first_crossing": (first_crossing, lambda: (np.linspace(0.0, 1.0, 100_000), 0.01),
                       lambda: (np.linspace(0.0, 1.0, 100_000), 0.99)),
    "log_progress": (log_progress, lambda: (np.random.default_rng(0).random(1000), 100),
                     lambda: (np.random.default_rng(0).random(1000), 2000)),
}

COLD = """
import json, time, sys
sys.path.insert(0, {bench!r})
t0 = time.perf_counter()
import numpy as np
import frametrace as ft
from bench_while_loops import PROGRAMS
fn, short, long = PROGRAMS[{name!r}]
args = (short if {which!r} == "short" else long)()
f = ft.compile(fn)
t1 = time.perf_counter()
f(*args)
t2 = time.perf_counter()
print(json.dumps({{"first_call": t2 - t1, "frames": ft.stats().frames_compiled}}))
"""


def cold(name, which):
    import os
    return run_script(COLD.format(bench=os.path.dirname(os.path.abspath(__file__)), name=name, which=which),
                      env={"FRAMETRACE_CACHE_DIR": fresh_cache_dir()})


def copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def main(argv):
    rounds = 3 if "--quick" in argv else 7
    rows = []
    for name, (fn, short, long) in PROGRAMS.items():
        ft.reset()
        compiled = ft.compile(fn)
        for make in (short, long):
            compiled(*copied(make()))
        frames = ft.stats().frames_compiled
        row = {"program": name, "frames": frames, "graph_breaks": ft.stats().graph_breaks}
        for which, make in (("short", short), ("long", long)):
            args = make()
            py, ours = timed([lambda a=args, f=fn: f(*copied(a)), lambda a=args, f=compiled: f(*copied(a))],
                               rounds=rounds)
            c = cold(name, which)
            row[which] = {"numpy_s": py, "frametrace_s": ours, "speedup": py / ours,
                          "cold_s": c["first_call"], "cold_frames": c["frames"]}
        row["frames_after_both"] = ft.stats().frames_compiled
        rows.append(row)
    print(f"{'program':16s} {'trips':6s} {'numpy':>10s} {'frametrace':>11s} {'x numpy':>8s} {'cold':>8s} "
          f"{'cold frames':>11s} {'frames':>6s} {'breaks':>6s}")
    for r in rows:
        for which in ("short", "long"):
            d = r[which]
            print(f"{r['program']:16s} {which:6s} {d['numpy_s'] * 1e3:8.2f}ms {d['frametrace_s'] * 1e3:9.2f}ms "
                  f"{d['speedup']:8.2f} {d['cold_s']:7.2f}s {d['cold_frames']:11d} {r['frames']:6d} "
                  f"{r['graph_breaks']:6d}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
