"""View ops as index maps: `x.T[i, j]` is `x[j, i]`, so a kernel can read through a view
of a value it computes itself (nothing materialised) or of an array (no NumPy view built).

`view_index(node, idx, size_arg)` maps an index into the view to the index into its input;
`size_arg(expr)` turns a symbolic size/offset into an int64 kernel argument. Views it cannot
map affinely (a general reshape) raise NotLowerable: their input is materialised and the
view is made by NumPy in the wrapper.
"""
from __future__ import annotations

import sympy

from ..ir.graph import IndexSlice, Node
from ..shapes.minmax import start_if_nonempty
from .loop_ir import Affine
from .pointwise import NotLowerable


def is_one(d) -> bool:
    """A dimension statically of size 1 (broadcasts)."""
    return isinstance(d, int) and d == 1


def broadcast_index(child_shape, idx: tuple) -> tuple:
    """Index into an operand of shape `child_shape` that broadcasts to len(idx) dims."""
    off = len(idx) - len(child_shape)
    return tuple(Affine() if is_one(d) else idx[off + i] for i, d in enumerate(child_shape))


def broadcast_ok(child_shape, out_shape) -> bool:
    """Each operand dim is statically 1 (broadcast) or statically equal to the result's.
    A symbolic dim the tracer only *guarded* to be 1 is neither: NumPy handles that node."""
    off = len(out_shape) - len(child_shape)
    return off >= 0 and all(is_one(c) or _same(c, out_shape[off + i]) for i, c in enumerate(child_shape))


def offset(v, size_arg) -> Affine:
    """A constant or symbolic index offset as an Affine (symbols become int64 arguments)."""
    if isinstance(v, int):
        return Affine(const=v)
    if isinstance(v, sympy.Basic) and v.is_Integer:
        return Affine(const=int(v))
    return Affine(syms=((size_arg(v), 1),))


def _getitem(x: Node, index, idx, size_arg):
    out, k = [], 0
    for e in index:
        if e is None:                              # new axis: consumes an output dim
            k += 1
        elif isinstance(e, IndexSlice):
            if not isinstance(e.step, int):
                raise NotLowerable("symbolic slice step")
            # a kernel reads the view only where it is non-empty, so a start clamped to the
            # size (`Min(1, n)` for `x[1:]`) is read unclamped (shapes/minmax.py)
            start = start_if_nonempty(e.start, x.shape[len(out)], e.step)
            out.append(offset(start, size_arg) + idx[k].scale(e.step))
            k += 1
        else:                                      # integer index: removes the dim
            out.append(offset(e, size_arg))
    return tuple(out)


def _squeeze(x: Node, axis, idx):
    it = iter(idx)
    return tuple(Affine() if d in axis else next(it) for d in range(x.ndim))


def _reshape(x: Node, shape, idx):
    """Only reshapes that insert or remove size-1 dims (x.reshape(1, -1) and the like)."""
    keep_in = [d for d in range(x.ndim) if not is_one(x.shape[d])]
    keep_out = [d for d in range(len(shape)) if not is_one(shape[d])]
    if len(keep_in) != len(keep_out) or any(
            not _same(x.shape[a], shape[b]) for a, b in zip(keep_in, keep_out)):
        raise NotLowerable("general reshape")
    out = [Affine()] * x.ndim
    for a, b in zip(keep_in, keep_out):
        out[a] = idx[b]
    return tuple(out)


def _same(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return sympy.sympify(a - b) == 0


def view_index(node: Node, idx: tuple, size_arg) -> tuple:
    """Index into node.args[0] that node[idx] reads (see module doc)."""
    x = node.args[0]
    if not isinstance(x, Node):
        raise NotLowerable("view of a constant")
    a = node.kwargs
    if node.op == "transpose":
        out = [None] * x.ndim
        for k, ax in enumerate(a["axes"]):
            out[ax] = idx[k]
        return tuple(out)
    if node.op == "expand_dims":
        return tuple(i for k, i in enumerate(idx) if k not in a["axis"])
    if node.op == "squeeze":
        return _squeeze(x, a["axis"], idx)
    if node.op == "broadcast_to":
        if not broadcast_ok(x.shape, node.shape):
            raise NotLowerable("broadcast of a dim not known to be 1")
        return broadcast_index(x.shape, idx)
    if node.op == "getitem":
        return _getitem(x, a["index"], idx, size_arg)
    if node.op == "reshape":
        return _reshape(x, a["shape"], idx)
    raise NotLowerable(f"view {node.op}")


def inlinable(node: Node) -> bool:
    """Whether `view_index` can map this view (checked on placeholder indices)."""
    try:
        view_index(node, tuple(Affine.var(f"i{k}") for k in range(node.ndim)), lambda e: None)
        return True
    except NotLowerable:
        return False
