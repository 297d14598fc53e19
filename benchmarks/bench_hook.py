"""Overhead of the global hook (ft.enable) on a call-heavy pure-Python program, once warm.

The program makes ~130k small Python calls, 10k of them to a helper that uses a NumPy constant on
Python floats (`np.pi * i`: chosen by the hook for its code, compiled once, found to hold no array
and given its code back); we time it without the hook and with it (after a warm-up run, so every
function has been seen and skipped or compiled). Interleaved rounds, medians. Also the one-time
cost of the hook's decision for a new function (candidates.code_uses_numpy).
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import frametrace as ft
from frametrace.candidates import code_uses_numpy


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def add(a, b):
    return a + b


def phase(i):
    return np.pi * i / 180.0


def program():
    total = 0
    for i in range(100_000):
        total = add(total, i)
    angle = 0.0
    for i in range(10_000):
        angle += phase(i)
    return total + fib(20) + angle


def timed(repeat=3):
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        program()
        samples.append(time.perf_counter() - t)
    return min(samples)


def main():
    base_samples, hooked_samples = [], []
    for _ in range(9):                 # interleaved rounds: machine noise hits both alike
        base_samples.append(timed())
        with ft.config.patch(pgo=False), ft.enabled():
            program()                  # warm-up: every function seen once
            hooked_samples.append(timed())
    base, hooked = statistics.median(base_samples), statistics.median(hooked_samples)
    print(f"{'call-heavy program (120k + 22k calls)':<40} no hook {base * 1e3:7.1f} ms   "
          f"ft.enable() {hooked * 1e3:7.1f} ms   overhead {100 * (hooked / base - 1):+.1f}%")
    decide = []
    for _ in range(5):
        t0 = time.perf_counter()
        for fn in (fib, add, phase, program) * 250:
            code_uses_numpy(fn)
        decide.append((time.perf_counter() - t0) / 1000)
    print(f"{'decision for a new function (once)':<40} {statistics.median(decide) * 1e6:.1f} us")


if __name__ == "__main__":
    main()
