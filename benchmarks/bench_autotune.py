"""Autotuning per cache entry (`ft.config.autotune_entries`, issue 23 item 5): what it decides,
what it costs, what it changes, on workloads where compiled and eager are close and on some
where the compiled code wins by far.

    python benchmarks/bench_autotune.py [--clock cpu] [--threads 1] [--only xpy,matmul4]

For each workload, one process: `ft.compile` twice (autotuning off, on), the tuning calls made,
then NumPy, off and on timed round-robin in batches (medians). Printed: the tuner's decision
and its fastest compiled / eager call, the steady per-call time of each, and the extra time the
measuring calls cost (their sum with tuning on minus the same calls with it off). Only entries
whose results are bit-identical either way are tuned (`backends/llvm/exact.py`); the others
print "not tuned".
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def matmul(x, w):
    return x @ w


def add1(x):
    return x + 1


def xpy(x, y):
    x += y
    return x


def scale(m):
    m *= 0.995
    return m


def relu_dense(x, w, b):
    return np.maximum(x @ w + b, 0.0)


def hist_ratio(data, radius):
    return np.histogram(radius, 64, weights=data)[0] / np.histogram(radius, 64)[0]


def clip_chain(x):
    return np.clip(x * 2.0 - 1.0, -0.5, 0.5) + x


def masked(z, mask):
    z[...] = 0
    z[1:-1, 1:-1][mask] = 1
    return z


def _rng(seed=0):
    return np.random.default_rng(seed)


WORKLOADS = {   # name -> (function, argument maker)
    "matmul4": (matmul, lambda: (_rng().random((4, 4)), _rng(1).random((4, 4)))),
    "add1_8": (add1, lambda: (np.ones(8),)),
    "xpy4096": (xpy, lambda: (_rng().random(4096), _rng(1).random(4096) * 1e-9)),
    "scale300x600": (scale, lambda: (_rng().random((300, 600)),)),
    "relu_dense": (relu_dense, lambda: (_rng().random((8, 64)), _rng(1).random((64, 32)), _rng(2).random(32))),
    "histogram": (hist_ratio, lambda: (_rng().random(10_000), _rng(1).random(10_000))),
    "clip_chain_1e5": (clip_chain, lambda: (_rng().random(100_000),)),
    "masked256": (masked, lambda: (np.zeros((256, 256), np.int64), _rng().random((254, 254)) < 0.3)),
}


def measure(name, tick, rounds=11):
    import frametrace as ft
    from csrc_free_runtime import tuning
    fn, make = WORKLOADS[name]
    args = {k: make() for k in ("np", "off", "on")}
    with ft.config.patch(autotune_entries=False):
        off = ft.compile(fn)
        off(*args["off"])
    with ft.config.patch(autotune_entries=True):
        on = ft.compile(fn)
        on(*args["on"])
    measuring = 2 * tuning.PAIRS + 1
    t_on, t_off = [], []
    for _ in range(measuring):                 # the tuning calls, and as many calls with it off
        t0 = tick()
        on(*args["on"])
        t_on.append(tick() - t0)
        t0 = tick()
        off(*args["off"])
        t_off.append(tick() - t0)
    tuners = [e.info.extra["tuning"] for c in _caches(fn) for e in c.entries if e.info.extra.get("tuning")]
    decision = tuners[0].describe() if tuners else "not tuned"
    t0 = time.perf_counter()
    fn(*args["np"])
    reps = max(3, min(3000, int(2e-3 / max(time.perf_counter() - t0, 1e-7))))
    times = {k: [] for k in ("np", "off", "on")}
    calls = {"np": fn, "off": off, "on": on}
    for _ in range(rounds):
        for k, f in calls.items():
            a = args[k]
            t0 = tick()
            for _ in range(reps):
                f(*a)
            times[k].append((tick() - t0) / reps)
    med = {k: statistics.median(v) for k, v in times.items()}
    return med, decision, sum(t_on) - sum(t_off)


def _caches(fn):
    from csrc_free_runtime import all_caches
    return [c for c in all_caches() if c.fn is fn]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--threads", type=int)
    opts = ap.parse_args(argv)
    if opts.threads:
        os.environ["FRAMETRACE_NUM_THREADS"] = str(opts.threads)
    tick = time.process_time if opts.clock == "cpu" else time.perf_counter
    print(f"{'workload':16s} {'NumPy':>10s} {'off':>10s} {'on':>10s}  {'on/off':>6s} {'tuning cost':>12s}  decision")
    for name in (opts.only.split(",") if opts.only else WORKLOADS):
        med, decision, cost = measure(name, tick)
        print(f"{name:16s} {med['np'] * 1e6:8.2f}us {med['off'] * 1e6:8.2f}us {med['on'] * 1e6:8.2f}us  "
              f"{med['off'] / med['on']:5.2f}x {cost * 1e6:10.1f}us  {decision}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
