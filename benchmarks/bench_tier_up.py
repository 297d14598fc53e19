"""Mid-size calls of a kernel compiled small: do they reach the full tier? (issue 23 part 5)

A graph compiled at a small size (its second call: dynamic, hinted small) gets quick-tier kernels
(backends/llvm/tiers.py). Called then many times at a mid size (below the threaded size, where a
single call never asks for the full tier), it used to keep the quick kernels for good. Now small
calls spend a work budget and the call exhausting it starts the full tier's build.

    python benchmarks/bench_tier_up.py [--threads 1] [--calls 300] [--budget N]

Per workload and size: NumPy, `grown` (compiled at 100 then 200 elements, then called `--calls`
times at the size, then half a second for the background build), `direct` (compiled at the size:
the full tier from the start), in ms of the calling thread's CPU time, medians of rounds whose
order alternates; NumPy timed apart (a call right after NumPy's pays for the caches NumPy's
temporaries left: ~40% at 1e5 elements, measured). `--budget 4611686018427387904` gives the old policy (only a large
call tiers up).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import frametrace as ft
from frametrace.backends.llvm import tiers

WORKLOADS = {
    "ten sin": "def f(x):\n    for _ in range(10):\n        x = np.sin(x)\n    return x\n",
    "exp*tanh+log1p": "def f(x):\n    return np.exp(-x * x) * np.tanh(x) + np.log1p(x * x)\n",
    "polynomial": "def f(x):\n    return ((x * 3.0 + 2.0) * x - 1.0) * x + 0.5\n",
}


def fresh(src):
    ns = {"np": np}
    exec(src, ns)
    return ns["f"]


def cpu_medians(fns, x, rounds):
    out = [[] for _ in fns]
    for r in range(rounds):
        for j in range(len(fns)):
            i = (j + r) % len(fns)
            c = time.thread_time()
            fns[i](x)
            out[i].append(time.thread_time() - c)
    return [statistics.median(o) for o in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--sizes", default="3000,20000,100000")
    a = ap.parse_args()
    ft.config.num_threads = a.threads
    if a.budget is not None:
        tiers.TIER_UP_WORK = a.budget
    made = []
    real = tiers.TierUp.__init__

    def record(self, *args):
        made.append(self)
        real(self, *args)
    tiers.TierUp.__init__ = record
    rng = np.random.default_rng(0)
    print(f"threads {a.threads}, budget {tiers.TIER_UP_WORK}, load {os.getloadavg()[0]:.1f}")
    print("| workload | n | NumPy ms | grown ms | direct ms | grown/direct | NumPy/grown | grown tiered up by |")
    print("|---|---|---|---|---|---|---|---|")
    for name, src in WORKLOADS.items():
        for n in map(int, a.sizes.split(",")):
            eager, grown, direct = fresh(src), ft.compile(fresh(src)), ft.compile(fresh(src))
            made.clear()
            grown(rng.random(100))
            grown(rng.random(200))
            up = made[-1] if made else None
            direct(rng.random(n - 1))
            direct(rng.random(n))
            x = rng.random(n)
            assert np.array_equal(grown(x), direct(x))
            for _ in range(a.calls):
                grown(x)
            time.sleep(0.5)
            t = cpu_medians([eager], x, 21) + cpu_medians([grown, direct], x, 41)
            how = "-" if up is None else (up.reason or "not tiered up")
            print(f"| {name} | {n} | {t[0] * 1e3:.3f} | {t[1] * 1e3:.3f} | {t[2] * 1e3:.3f} | "
                  f"{t[1] / t[2]:.2f} | {t[0] / t[1]:.2f} | {how} |", flush=True)
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
