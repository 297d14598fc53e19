"""Loops over complex values (issue 23 item 5, session 10): complex128 scalars, rows and small
matrices in native loop bodies (codegen/llvm_kernels/complex_ops.py), against the Python loop
as written, one thread.

    python benchmarks/bench_complex_loops.py

Each figure: the median of interleaved rounds (benchmarks/common.py `timed`) after 12 warm-up
calls (a loop still run from the wrapper is timed against the eager frame on its first calls:
csrc_free_runtime/tuning.py), and which path ran it (loops.runs: native kernel calls).
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("FRAMETRACE_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frametrace as ft  # noqa: E402
from common import timed  # noqa: E402
from frametrace.backends.llvm import loops  # noqa: E402


def abs_pairs(Z, out):
    for i in range(Z.shape[0]):
        out[i] = abs(Z[i, 0]) + abs(Z[i, 1])
    return out


def conj_dot(a, b):
    acc = 0j
    for i in range(a.shape[0]):
        acc += a[i] * np.conj(b[i])
    return acc


def escape_times(cs, out, maxiter):
    for j in range(cs.shape[0]):
        c = cs[j]
        z = 0j
        n = 0
        while n < maxiter and abs(z) <= 2.0:
            z = z * z + c
            n += 1
        out[j] = n
    return out


def self_energy(neigh, dH, G, D, Sigma):
    for k in range(G.shape[0]):
        for E in range(G.shape[1]):
            for w in range(D.shape[0]):
                for i in range(D.shape[-1]):
                    for a in range(neigh.shape[0]):
                        for b in range(neigh.shape[1]):
                            if E - w >= 0:
                                dHG = G[k, E - w, neigh[a, b]] @ dH[a, b, i]
                                dHD = dH[a, b, i] * D[w, a, b, i]
                                Sigma[k, E, a] += dHG @ dHD
    return Sigma


def cases():
    rng = np.random.default_rng(0)

    def c(*shape):
        return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    na, nb, norb = 8, 2, 4
    neigh = ((np.arange(na)[:, None] + np.arange(nb)[None, :] - 1) % na).astype(np.int32)
    cs = rng.uniform(-2, 1, 2000) + 1j * rng.uniform(-1.5, 1.5, 2000)
    return [("abs of scalars, 2000 rows", abs_pairs, (c(2000, 2), np.empty(2000))),
            ("carried sum, 10000", conj_dot, (c(10000), c(10000))),
            ("escape times, 2000 points x 60", escape_times, (cs, np.empty(2000, np.int64), 60)),
            ("self-energy nest (8-deep, 4x4 products)", self_energy,
             (neigh, c(na, nb, 2, norb, norb), c(2, 4, na, norb, norb), c(2, na, nb, 2),
              np.zeros((2, 4, na, norb, norb), complex)))]


def main():
    print(f"{'loop':42} {'Python ms':>10} {'compiled ms':>12} {'speed-up':>9}  path")
    for name, fn, args in cases():
        compiled = ft.compile(fn)
        loops.runs.clear()
        for _ in range(12):
            compiled(*args)
        native = loops.runs["native"]
        t_py, t_ft = timed([fn, compiled], args, rounds=15)
        path = "native kernel" if native else "wrapper / eager frame (tuned)"
        print(f"{name:42} {t_py * 1e3:10.3f} {t_ft * 1e3:12.3f} {t_py / t_ft:8.2f}x  {path}")


if __name__ == "__main__":
    main()
