"""Sorting short rows in a kernel (sort_rows, ir/ops/sorting.py).

The kernel's outer loops run over the rows (all dims but the last). A row's n elements (a
static n <= Sort.max_row) are one `sort_vec` value: the code generator (codegen/llvm_kernels/
ops.py) puts them in a vector register of the next power of two lanes and runs Batcher's
odd-even merge network on it, one shuffle + min + max + select per layer (10 layers for 16
lanes); `sort_pick(sorted, k, lanes)` is the k-th smallest, stored to out[row, k]. Floats are
sorted as integer keys (a total order: -0.0 before 0.0, np.nan after +inf): integer min / max
raise no FP flag on NaN. Where that order may differ from NumPy's (zeros of both signs, a NaN
other than np.nan) the kernel flags it and NumPy sorts again (ir/ops/sorting.py).
"""
from __future__ import annotations

from ..ir.graph import Node
from .loop_ir import Affine, Const, Op, Store, cast


def sort_rows(b, node: Node):
    """The phase of one kernel sorting each row of node.args[0] into node's buffer."""
    x, dt = node.args[0], node.dtype.name
    n = int(x.shape[-1])
    if n == 0:
        return
    out = b.buffer(node, written=True)
    ph = b.new_phase(())
    row = b.outer_index(())
    lanes = Const(1 << (n - 1).bit_length(), "int64")
    vec = Op("sort_vec", dt, tuple(cast(b.value(x, row + (Affine(const=k),)), dt) for k in range(n)))
    for k in range(n):
        ph.body.append(Store(out, row + (Affine(const=k),), Op("sort_pick", dt, (vec, Const(k, "int64"), lanes))))
    b.commit(ph)
