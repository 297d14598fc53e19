"""The first calls after the compiling one, per call, against NumPy (issue 23 item 5, issue 20 item 4).

    python benchmarks/bench_first_calls.py                  # every workload, scenario and mode
    python benchmarks/bench_first_calls.py --only sin10 --threads 1 --json out.json

Each row is a fresh process with an empty kernel cache. Scenarios:
  static      the first call compiles at the large size (as ../shared/perf/smoke.py does);
  grow        two small calls compile first (static, then dynamic at a small size: quick-tier
              kernels, backends/llvm/tiers.py), then the large calls start (the tier-up window).
Modes (what a large call of a quick kernel does):
  background  the full tier builds on a worker thread, calls run the quick kernels meanwhile (default);
  sync        the first large call builds the full tier itself, then runs it;
  full        no quick tier at all: every dynamic kernel is compiled at the full tier (cold cost).
Per row: the compiling call(s), the first 30 large calls (sum, slowest, how many slower than
NumPy's median), wall clock and the calling thread's CPU time (a loaded machine charges wall
time for waiting on a core; thread CPU time does not include the LLVM worker's).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import fresh_cache_dir, run_script  # noqa: E402

CHILD = r"""
import json, statistics, time
import numpy as np
import frametrace as ft
from frametrace.backends.llvm import tiers

MODE, NAME, SCENARIO, CALLS = {mode!r}, {name!r}, {scenario!r}, {calls}
if MODE == "sync":
    tiers.SYNC = True
elif MODE == "full":
    tiers.QUICK_WORK = 0

def sin10(x):
    for _ in range(10):
        x = np.sin(x)
    return x

def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x ** 3)))

def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)

def layernorm(x, w):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * w

def exp2(x):
    return np.exp(x) * 2.0

rng = np.random.default_rng(0)
WORK = {{
    "sin10": (sin10, lambda n, m: (rng.standard_normal(n * m),), (1000, 1000)),
    "gelu": (gelu, lambda n, m: (rng.standard_normal((n, m)).astype(np.float32),), (2048, 1024)),
    "softmax": (softmax, lambda n, m: (rng.standard_normal((n, m)),), (4096, 1024)),
    "layernorm": (layernorm, lambda n, m: (rng.standard_normal((n, m)), rng.standard_normal(m)), (4096, 1024)),
    "exp2": (exp2, lambda n, m: (rng.standard_normal(n * m),), (4000, 1000)),
}}
fn, make, (n, m) = WORK[NAME]
big = make(n, m)

def timed(f, args):
    w, c = time.perf_counter(), time.thread_time()
    f(*args)
    return time.perf_counter() - w, time.thread_time() - c

numpy = [timed(fn, big) for _ in range(7)]
f = ft.compile(fn)
compiling = []
if SCENARIO == "grow":
    compiling.append(timed(f, make(3, 5)))
    compiling.append(timed(f, make(5, 7)))
first = [timed(f, big) for _ in range(CALLS)]
if SCENARIO == "static":
    compiling.append(first.pop(0))
np_wall = statistics.median(t[0] for t in numpy)
np_cpu = statistics.median(t[1] for t in numpy)
print(json.dumps({{
    "numpy_wall": np_wall, "numpy_cpu": np_cpu,
    "compiling_wall": sum(t[0] for t in compiling),
    "wall": [t[0] for t in first], "cpu": [t[1] for t in first],
    "slower_wall": sum(t[0] > np_wall for t in first), "slower_cpu": sum(t[1] > np_cpu for t in first),
}}))
"""

NAMES = ("sin10", "gelu", "softmax", "layernorm", "exp2")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--scenarios", default="static,grow")
    ap.add_argument("--modes", default="background,sync,full")
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--threads", type=int, default=0, help="FRAMETRACE_NUM_THREADS (0: the default)")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    names = [n for n in NAMES if not args.only or n in args.only.split(",")]
    env = {"FRAMETRACE_NUM_THREADS": str(args.threads)} if args.threads else {}
    rows = []
    print(f"{'workload':10s} {'scenario':8s} {'mode':10s} {'compile ms':>10s} {'NumPy ms':>9s} "
          f"{'30 calls ms':>11s} {'slowest':>8s} {'>NumPy':>6s} | {'cpu: NumPy':>10s} {'30 calls':>8s} "
          f"{'slowest':>8s} {'>NumPy':>6s}")
    for name in names:
        for scenario in args.scenarios.split(","):
            for mode in args.modes.split(","):
                if scenario == "static" and mode != "background":
                    continue                  # static kernels never tier up: one mode is enough
                src = CHILD.format(mode=mode, name=name, scenario=scenario, calls=args.calls + (scenario == "static"))
                r = run_script(src, env=dict(env, FRAMETRACE_CACHE_DIR=fresh_cache_dir()))
                r.update(name=name, scenario=scenario, mode=mode)
                rows.append(r)
                print(f"{name:10s} {scenario:8s} {mode:10s} {r['compiling_wall'] * 1e3:10.0f} "
                      f"{r['numpy_wall'] * 1e3:9.1f} {sum(r['wall']) * 1e3:11.0f} {max(r['wall']) * 1e3:8.1f} "
                      f"{r['slower_wall']:6d} | {r['numpy_cpu'] * 1e3:10.1f} {sum(r['cpu']) * 1e3:8.0f} "
                      f"{max(r['cpu']) * 1e3:8.1f} {r['slower_cpu']:6d}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
