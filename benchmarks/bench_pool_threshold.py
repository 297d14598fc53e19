"""Where the thread pool pays: one kernel's call time on the calling thread only vs split
over the pool (runtime.call), at work around runtime.PARALLEL_THRESHOLD, plus the pool's bare
hand-off cost (submit + result of a no-op). Interleaved rounds, medians.

    .venv/bin/python benchmarks/bench_pool_threshold.py [--rounds 15]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import timed  # noqa: E402

import frametrace as ft  # noqa: E402
from frametrace.backends.llvm import runtime  # noqa: E402
from frametrace.config import config  # noqa: E402


def handoff_us(rounds: int) -> float:
    """Median microseconds of one pool hand-off (the work's own time is ~0)."""
    pool = runtime._get_pool(1)
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(200):
            pool.submit(int).result()
        out.append((time.perf_counter() - t0) / 200 * 1e6)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    opts = ap.parse_args()
    print(f"load {open('/proc/loadavg').read().split()[:3]}, cpus {os.cpu_count()}")
    print(f"pool hand-off: {handoff_us(opts.rounds):.1f} us")

    def light(x):                     # weight 1 per element
        return x * 2.0 + 1.0

    def heavy(x):                     # exp: an expensive op (weight 9)
        return np.exp(x) * 0.5

    # every call threaded when num_threads > 1, in chunks of any size (set before compiling:
    # wrappers and native entries test the threshold they were built with)
    runtime.PARALLEL_THRESHOLD, runtime.MIN_CHUNK_WORK = 0, 1
    for name, fn in (("x*2+1", light), ("exp(x)*0.5", heavy)):
        f = ft.compile(fn)
        for n in (1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22):
            x = np.random.default_rng(0).random(n)
            f(x)
            work = n * (1 if fn is light else 9)

            def one(x=x, f=f):
                config.num_threads = 1
                f(x)

            def pooled(x=x, f=f):
                config.num_threads = 0
                f(x)
            t1, tp = timed([one, pooled], rounds=opts.rounds)
            config.num_threads = 0
            tn = timed([lambda x=x, fn=fn: fn(x)], rounds=opts.rounds)[0]
            print(f"{name:11s} n={n:>8d} work={work:>9d}: one thread {t1 * 1e6:9.1f} us, pool {tp * 1e6:9.1f} us "
                  f"({t1 / tp:4.2f}x), NumPy {tn * 1e6:9.1f} us")


if __name__ == "__main__":
    main()
