"""Matrix products: NumPy (BLAS) for floats, our own loop nest for integers.

Measured (benchmarks/bench_kernels.py, 1 core, 512^3): an i-k-j loop nest vectorised over
j runs float64 in ~20 ms where OpenBLAS takes 6-22 ms and wins clearly below 256^3, so
float products call np.matmul in the wrapper (the epilogue kernel then runs over its
result, in place). NumPy has no BLAS for integers: its loop takes 350 ms at 512^3
int64 where ours takes 13 ms, so 2-d integer products are kernels.
"""
from __future__ import annotations

import numpy as np

from ..ir import ops as _registered  # noqa: F401  (registers every op the table below reads)
from ..ir.graph import Node
from ..ir.registry import Matmul, lowered_as
from .loop_ir import Affine, Const, Let, Load, Loop, Op, Store, Var, cast
from .pointwise import SUPPORTED_DTYPES

MATMULS = frozenset(lowered_as(Matmul))       # registry: np.matmul, np.dot (ir/ops/linalg.py)


def kernel_matmul(node: Node) -> bool:
    """2-d @ 2-d with an integer result: computed by our loop nest."""
    if node.op not in MATMULS or len(node.args) != 2 or node.dtype is None:
        return False
    a, b = node.args
    return (isinstance(a, Node) and isinstance(b, Node) and a.ndim == 2 and b.ndim == 2
            and node.dtype.kind in "iu" and node.dtype.name in SUPPORTED_DTYPES
            and all(x.dtype.name in SUPPORTED_DTYPES for x in (a, b)))


def matmul_body(bld, node: Node) -> list:
    """out[i, :] = 0; for k: out[i, :] += a[i, k] * b[k, :]   (i split across threads)."""
    a, b = node.args
    dt = node.dtype.name
    ia, ib, io = bld.buffer(a), bld.buffer(b), bld.buffer(node, written=True)
    n, m, kk = bld.size(node.shape[0]), bld.size(node.shape[1]), bld.size(a.shape[1])
    i, j, k = Affine.var("o0"), Affine.var("i0"), Affine.var("k0")
    aik = Var(bld.fresh("aik"), dt)
    acc = Op("add", dt, (Load(io, (i, j), dt),
                         Op("multiply", dt, (aik, cast(Load(ib, (k, j), b.dtype.name), dt)))))
    zero = Const(0, dt) if np.dtype(dt).kind != "b" else Const(False, dt)
    return [Loop("o0", n, [
        Loop("i0", m, [Store(io, (i, j), zero)]),
        Loop("k0", kk, [Let(aik.name, cast(Load(ia, (i, k), a.dtype.name), dt)),
                        Loop("i0", m, [Store(io, (i, j), acc)])]),
    ], split=True)]
