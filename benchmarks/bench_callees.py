"""What the runtime's callee compilation costs frames that are not candidates, once warm.

A call-heavy pure-Python program (~110k calls of small functions, no arrays) runs
  (a) plain;
  (b) from the eager part of an `ft.compile`d function: while it runs, every frame it calls is a
      candidate (Dynamo's frame callback): the functions are found, tried once, found to do no
      array work and given their own code back; the discovery profiler is re-armed with a backoff;
  (c) under `ft.enable()` (warm: every function already seen), and (c') entering and leaving
      `with ft.enabled():` around each run (the profiler runs until QUIET_CALLS known calls).
Interleaved medians (common.timed) and the mean, which includes the calls that re-arm discovery.
Also the per-call cost of an inactive hooked function (called outside any compiled call).
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import frametrace as ft
from bench_hook import add, fib
from common import per_call


def program():
    total = 0
    for i in range(100_000):
        total = add(total, i)
    return total + fib(18)


def driver(x):
    # eval cannot be traced: a graph break at the call, which runs eagerly under the compiled frame
    return x * eval("program()")


def layer(x):
    return np.tanh(x) * 0.5


def uses_layer(x):
    return layer(eval("x"))        # layer is hooked (and compiled) as a callee


def main():
    compiled = ft.compile(driver)
    x = np.ones(4)
    with ft.config.patch(pgo=False):
        for _ in range(3):
            compiled(x)                # warm: driver compiled, program/add/fib tried once and restored

        def run_enabled():
            with ft.enabled():
                program()
        run_enabled()
        rounds = 41
        samples = {"plain": [], "compiled": [], "enabled": [], "block": []}
        for _ in range(rounds):
            for name, fn in (("plain", program), ("compiled", lambda: compiled(x)), ("block", run_enabled)):
                t0 = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - t0)
            with ft.enabled():
                program()              # the discovery profiler steps aside after QUIET_CALLS known calls
                t0 = time.perf_counter()
                program()
                samples["enabled"].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) for k, v in samples.items()}
        mean = {k: statistics.fmean(v) for k, v in samples.items()}
        base = med["plain"]
        print(f"{'call-heavy program (~110k calls), median of ' + str(rounds):<48}")
        for name, label in (("plain", "(a) plain"), ("compiled", "(b) eager part of ft.compile"),
                            ("enabled", "(c) under ft.enable(), warm"),
                            ("block", "(c') with ft.enabled(): program()")):
            print(f"  {label:<32} median {med[name] * 1e3:7.2f} ms  ratio {med[name] / base:5.3f}   "
                  f"mean {mean[name] * 1e3:7.2f} ms  ratio {mean[name] / mean['plain']:5.3f}")

        # a hooked function called outside any compiled call runs its own code through the trampoline
        compiled_layer = ft.compile(uses_layer)
        compiled_layer(x)
        compiled_layer(x)
        from csrc_free_runtime import global_hook
        rec = global_hook._records.get(layer)
        original = rec.cache.fn if rec is not None else layer
        pairs = [(per_call(original, (x,)), per_call(layer, (x,))) for _ in range(5)]
        t_plain = statistics.median(p[0] for p in pairs)
        t_hooked = statistics.median(p[1] for p in pairs)
        print(f"  inactive hooked function (np.tanh on 4 floats): own code {t_plain * 1e9:6.0f} ns, "
              f"through its trampoline {t_hooked * 1e9:6.0f} ns"
              f"{'' if rec is not None else '   (layer was not hooked)'}")

if __name__ == "__main__":
    main()
