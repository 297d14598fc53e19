"""Shared helpers of the benchmarks: interleaved medians, bandwidth, fresh processes, Numba.

The VM is noisy (shared/reference/LLVM_FINDINGS.md): variants are timed round-robin, so
machine noise hits each of them alike, and every figure is a median.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(fns, args=(), rounds=9, budget=None):
    """Median seconds per call of each fn (None: skipped), interleaved round-robin.
    With `budget` (seconds), stop early once that much time has passed (>= 3 rounds)."""
    samples = [[] for _ in fns]
    start = time.perf_counter()
    for r in range(rounds):
        for i, fn in enumerate(fns):
            if fn is None:
                continue
            t0 = time.perf_counter()
            fn(*args)
            samples[i].append(time.perf_counter() - t0)
        if budget is not None and r >= 2 and time.perf_counter() - start > budget:
            break
    return [statistics.median(s) if s else None for s in samples]


def rounds_for(seconds: float, budget: float = 1.0, lo: int = 3, hi: int = 200) -> int:
    """Rounds that fit a time budget for a call of about `seconds`."""
    return max(lo, min(hi, int(budget / max(seconds, 1e-7))))


def per_call(fn, args=(), number=2000, repeat=15) -> float:
    """Median seconds per call of a fast function (timeit-style batches)."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(*args)
        out.append((time.perf_counter() - t0) / number)
    return statistics.median(out)


def copy_bandwidth(n: int = 10_000_000, rounds: int = 30) -> float:
    """GB/s of np.copyto between two preallocated float64 arrays (bytes read + written)."""
    a, b = np.random.default_rng(1).random(n), np.empty(n)
    np.copyto(b, a)
    t = timed([lambda: np.copyto(b, a)], (), rounds)[0]
    return 2 * a.nbytes / t / 1e9


def numba_njit():
    """numba.njit, or None when Numba is not installed (it is optional)."""
    try:
        import numba
    except Exception:
        return None
    return numba.njit


def run_script(source: str, env: dict | None = None, timeout: float = 300) -> dict:
    """Run `source` in a fresh Python process; it prints one JSON object on its last line."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = ROOT + os.pathsep + full_env.get("PYTHONPATH", "")
    # A user's interpreter caches modules' bytecode (.pyc); some sandboxes (this one) set
    # PYTHONDONTWRITEBYTECODE, which would make every fresh process compile our modules from
    # source (~0.1 s) and charge that to "cold start". Cold here means: fresh process, empty
    # kernel cache, bytecode cached as on any second run of a program.
    full_env.pop("PYTHONDONTWRITEBYTECODE", None)
    full_env.update(env or {})
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True, text=True,
                         env=full_env, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"benchmark subprocess failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fresh_cache_dir() -> str:
    return tempfile.mkdtemp(prefix="frametrace-bench-")
