"""x[mask] over the whole array (mask.shape == x.shape) as two native kernels.

    k_count:   cnt = sum(mask) as int64     (a synthetic `sum` reduction: reductions.py,
                                             the mask's elementwise producer fused)
    wrapper:   u0 = int(cnt); out = np.empty(u0, dtype)
    k_compact: j = 0; for i in C order: if mask[i]: out[j] = x[i]; j += 1
                                            (loop_ir.Append; x and the mask read through
                                             strides, fusible producers recomputed inline)

The size symbol u0 is bound from the count, so one compiled graph serves every mask.
Other data-dependent ops (a mask over leading dims, argwhere, unique, ...) stay NumPy.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import Node
from .kernels import KernelBuilder
from .loop_ir import Acc, Affine, Append, Const, Kernel, Loop, cast


def count_node(plan, node: Node) -> Node:
    """The synthetic `sum(mask)` (int64) whose value the wrapper reads the size from."""
    cnt = Node("sum", (node.args[1],), (("axis", None),), (), np.dtype(np.int64), True, f"{node.name}_cnt")
    plan.var[cnt] = f"{plan.var[node]}_cnt"
    plan.cat[cnt] = "red"
    return cnt


def count_kernel(plan, cnt: Node, name: str) -> Kernel:
    b = KernelBuilder(plan, [], 0, (), name)
    b.add_reduction(cnt, stored=True)
    return b.kernel()


def compaction_kernel(plan, node: Node, name: str) -> Kernel:
    x, m = node.args[0], node.args[1]
    b = KernelBuilder(plan, [], 0, (), name)
    vars_ = tuple(f"i{d}" for d in range(x.ndim))
    idx = tuple(Affine.var(v) for v in vars_)
    out = b.buffer(node, written=True)
    body = [Append(out, "j", b.size(node.shape[0]), cast(b.value(x, idx), node.dtype.name),
                   cast(b.value(m, idx), "bool"))]
    for v, d in reversed(list(zip(vars_, x.shape))):
        body = [Loop(v, b.size(d), body)]
    k = Kernel(name, [Acc("j", "int64", Const(0, "int64"))] + body, b.buffers, b.slots, "1")
    k.work = "0"                      # sequential: always on the calling thread
    for buf in k.buffers:
        buf.noalias = True
    return k
