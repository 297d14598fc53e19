"""The NumPy-API workloads of issue 14 against NumPy eager, in one process (interleaved medians).

Run: python benchmarks/bench_numpy_api.py [--quick] [--reductions] [-k NAME]
--reductions: max/min/argmax/argmin/nanmax/sum rows against NumPy's SIMD loops (float32 and
float64, 1e3..4e6 elements, C and F order; target >= 0.95x, >= 1.5x for (x*x).max()).
Targets (issue 14): >= 1.5x where a fused kernel applies (np.roll / np.pad stencils, the masked
scatter, the triangle mask, np.linalg.norm, np.sort of short rows, np.take_along_axis,
np.nanmean, flips (reversed vector loads), small einsum contractions: a broadcast product
summed in one loop nest), >= 0.95x where an opaque NumPy call or a BLAS matmul runs inside
the graph (x[ids], a large einsum contraction lowered to matmul).
Each workload is compiled once with the LLVM backend
and fullgraph=True (no graph break), checked against NumPy, then timed round-robin.
"""
# ruff: noqa: B023  (the lambdas are timed within the iteration that defines them)
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import frametrace as ft  # noqa: E402
from common import timed, rounds_for  # noqa: E402


def norm_rows(x):
    return np.linalg.norm(x, axis=1) * 2.0 + 1.0


def einsum_bmm(a, b):
    return np.einsum("bij,bjk->bik", a, b) + 1.0


def einsum_attention(q, k):
    return np.einsum("bhqd,bhkd->bhqk", q, k) * 0.125


def einsum_large(a, b):
    return np.einsum("ij,jk->ik", a, b)


def einsum_rowdot(a, b):
    return np.einsum("ij,ij->i", a, b)


def sort_rows(x):
    return np.sort(x, axis=1)[:, :4] * 2.0


def pad_stencil(u):
    p = np.pad(u, 1)
    return 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) - u


def roll_diff(u):
    return (np.roll(u, -1, axis=1) - np.roll(u, 1, axis=1)) * 0.5 + (np.roll(u, -1, axis=0) - u)


def flip_mix(x):
    return np.fliplr(x) * 0.5 + x[::-1] - x


def masked_scatter(x):
    out = x.copy()
    out[out < 0] = 0.0
    return out * 2.0


def causal_mask(s):
    n = s.shape[0]
    return np.exp(np.triu(np.full((n, n), -np.inf), k=1) + s)


def gather_rows(emb, ids):
    return emb[ids] * 2.0 + 1.0


def take_along_rows(x, idx):
    return np.take_along_axis(x, idx, axis=1) * 2.0 + 1.0


def nanmean_rows(x):
    return np.nanmean(x, axis=1) - 1.0


# Reductions against NumPy's SIMD loops (target >= 0.95x; >= 1.5x where a producer fuses in).
REDUCTIONS = [
    ("x.max()", lambda x: x.max()),
    ("x.min()", lambda x: x.min()),
    ("x.argmax()", lambda x: x.argmax()),
    ("x.argmax(axis=1)", lambda x: x.argmax(axis=1)),
    ("x.argmin(axis=0)", lambda x: x.argmin(axis=0)),
    ("np.nanmax(x)", lambda x: np.nanmax(x)),
    ("np.nanmax(x, axis=0)", lambda x: np.nanmax(x, axis=0)),
    ("x.sum()", lambda x: x.sum()),
]
FUSED_REDUCTIONS = [("(x*x).max()", lambda x: (x * x).max())]


def reduction_workloads(quick: bool):
    rng = np.random.default_rng(1)
    sizes = [(10, 100), (200, 500)] if quick else [(10, 100), (200, 500), (4000, 1000)]
    for dtype in (np.float64, np.float32):
        for shape in sizes:
            for order in ("C", "F"):
                x = np.asarray(rng.standard_normal(shape), dtype=dtype, order=order)
                tag = f"{np.dtype(dtype).name[5:]} {shape[0] * shape[1]:.0e} {order}"
                for name, fn in REDUCTIONS:
                    yield f"{name} {tag}", fn, (x,), "opaque"
                for name, fn in FUSED_REDUCTIONS:
                    yield f"{name} {tag}", fn, (x,), "fused"


def workloads(quick: bool):
    rng = np.random.default_rng(0)
    n = 256 if quick else 1024
    return [
        ("linalg.norm(x, axis=1)", norm_rows, (rng.standard_normal((n * 4, 64)),), "fused"),
        ("einsum bij,bjk->bik 4x4", einsum_bmm, (rng.standard_normal((n * 4, 4, 4)),
                                                 rng.standard_normal((n * 4, 4, 4))), "fused"),
        ("einsum bhqd,bhkd->bhqk", einsum_attention, (rng.standard_normal((n // 16, 4, 8, 4)),
                                                      rng.standard_normal((n // 16, 4, 8, 4))), "fused"),
        ("einsum ij,ij->i", einsum_rowdot, (rng.standard_normal((n * 4, 16)),
                                            rng.standard_normal((n * 4, 16))), "fused"),
        # BLAS threads on a loaded machine can make np.matmul itself 50x slower: OPENBLAS_NUM_THREADS=1
        ("einsum ij,jk->ik 256 (matmul)", einsum_large, (rng.standard_normal((256, 256)),
                                                         rng.standard_normal((256, 256))), "opaque"),
        ("sort rows of 16", sort_rows, (rng.standard_normal((n * 4, 16)),), "fused"),
        ("pad + 4-point stencil", pad_stencil, (rng.standard_normal((n, n)),), "fused"),
        ("roll finite differences", roll_diff, (rng.standard_normal((n, n)),), "fused"),
        ("flip: fliplr(x) + x[::-1]", flip_mix, (rng.standard_normal((n // 4, n // 4)),), "fused"),
        ("masked scatter x[m] = 0", masked_scatter, (rng.standard_normal((n, n)),), "fused"),
        ("causal mask triu(k=1)", causal_mask, (rng.standard_normal((n // 2, n // 2)),), "fused"),
        ("emb[ids] gather", gather_rows, (rng.standard_normal((4096, 64)), rng.integers(0, 4096, n)), "opaque"),
        ("take_along_axis(x, i, 1)", take_along_rows, (rng.standard_normal((n * 4, 64)),
                                                       rng.integers(-64, 64, (n * 4, 64))), "fused"),
        ("nanmean(x, axis=1)", nanmean_rows, (np.where(rng.random((n * 4, 64)) < 0.1, np.nan,
                                                       rng.standard_normal((n * 4, 64))),), "fused"),
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reductions", action="store_true", help="the reduction rows instead")
    ap.add_argument("-k", default="", help="only rows whose name contains this")
    args = ap.parse_args(argv)
    print(f"{'workload':36s} {'numpy us':>10s} {'ft us':>10s} {'speedup':>8s}  target")
    rows = reduction_workloads(args.quick) if args.reductions else workloads(args.quick)
    for name, fn, inputs, kind in rows:
        if args.k not in name:
            continue
        compiled = ft.compile(fn, backend="llvm", fullgraph=True)
        with np.errstate(all="ignore"):
            want, got = fn(*[a.copy() for a in inputs]), compiled(*inputs)
            tol = 1e-5 if np.result_type(got) == np.float32 else 1e-9     # float32 sums: order of adds
            np.testing.assert_allclose(got, want, rtol=tol, atol=1e-12)
            t_np = timed([lambda: fn(*inputs)], rounds=3)[0]
            r = rounds_for(t_np, budget=1.0 if args.quick else 3.0)
            t_np, t_ft = timed([lambda: fn(*inputs), lambda: compiled(*inputs)], rounds=r)
        target = 1.5 if kind == "fused" else 0.95
        mark = "ok" if t_np / t_ft >= target else "MISS"
        print(f"{name:36s} {t_np * 1e6:10.1f} {t_ft * 1e6:10.1f} {t_np / t_ft:7.2f}x  >= {target} {mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
