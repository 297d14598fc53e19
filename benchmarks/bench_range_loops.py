"""Loops over ranges bounded by array data (`for j in range(p[i], p[i + 1])`) as native loop
nests: the programs of range_loop_programs.py, the Python loop as written (NumPy eager), the
same computation with NumPy's whole-array calls (np.bincount), ft.compile (steady state) and
numba.njit on the same source, in one process (1 thread).

    python benchmarks/bench_range_loops.py [--quick]
    PYTHONPATH=$PWD /work/nbvenv/bin/python benchmarks/bench_range_loops.py    # with Numba

Timing: interleaved rounds, medians (common.timed). Inputs: 20,000 rows, 0-16 entries per
row (~160,000 entries), int32 indices; --quick: 2,000 rows.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("FRAMETRACE_THREADS", "1")

import frametrace as ft                                    # noqa: E402
from common import numba_njit, timed                       # noqa: E402
from range_loop_programs import PROGRAMS, inputs           # noqa: E402


def main():
    quick = "--quick" in sys.argv
    m = 2_000 if quick else 20_000
    njit = numba_njit()
    print(f"load {open('/proc/loadavg').read().split()[0]}; {m} rows; numba {'yes' if njit else 'no'}")
    print(f"{'program':20s} {'python loop':>12s} {'numpy calls':>12s} {'ft.compile':>12s} {'numba':>12s} "
          f"{'ft/loop':>9s} {'ft/numpy':>9s} {'ft/numba':>9s}")
    for name, (fn, vec) in PROGRAMS.items():
        args = inputs(name, m)
        f = ft.compile(fn)
        f(*args)
        f(*args)
        nb = njit(fn) if njit else None
        if nb is not None:
            try:
                nb(*args)
            except Exception:                          # noqa: BLE001  (Numba needs the helper jitted too)
                nb = None
        want = fn(*args)
        for g in (f, vec) + ((nb,) if nb else ()):
            np.testing.assert_allclose(g(*args), want, rtol=1e-9, atol=1e-9)
        t_loop, t_vec, t_ft, t_nb = timed([fn, vec, f, nb], args, rounds=7)
        nbs = f"{t_nb * 1e3:10.3f}ms" if t_nb else f"{'n/a':>12s}"
        ratio_nb = f"{t_nb / t_ft:8.2f}x" if t_nb else f"{'':>9s}"
        print(f"{name:20s} {t_loop * 1e3:10.2f}ms {t_vec * 1e3:10.3f}ms {t_ft * 1e3:10.3f}ms {nbs} "
              f"{t_loop / t_ft:8.0f}x {t_vec / t_ft:8.2f}x {ratio_nb}")
    s = ft.stats()
    print(f"graph breaks {s.graph_breaks}, frames compiled {s.frames_compiled}")


if __name__ == "__main__":
    main()
