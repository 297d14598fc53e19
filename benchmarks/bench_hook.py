"""Overhead of the global hook (ft.enable) on a call-heavy pure-Python program, once warm.

The program makes ~300k small Python calls; we time it without the hook and with it (after a
warm-up run, so every function has been seen and skipped or compiled). Medians of 7 runs.
"""
from __future__ import annotations

import statistics
import time

import frametrace as ft


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def add(a, b):
    return a + b


def program():
    total = 0
    for i in range(100_000):
        total = add(total, i)
    return total + fib(20)


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
    print(f"{'call-heavy program (110k + 22k calls)':<40} no hook {base * 1e3:7.1f} ms   "
          f"ft.enable() {hooked * 1e3:7.1f} ms   overhead {100 * (hooked / base - 1):+.0f}%")


if __name__ == "__main__":
    main()
