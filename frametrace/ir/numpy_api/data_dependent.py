"""The NumPy API whose result sizes depend on data: masks, nonzero, argwhere, where(cond), unique,
slices whose bounds are read from arrays (`A[ptr[i]:ptr[i + 1]]`).

Each result size is a fresh unbacked symbol (`u0`, ...) with range [0, number of elements];
it is bound at run time from the result's shape, so one graph serves every mask.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError, Unsupported
from ..builder import to_expr
from ..graph import IndexSlice, Node
from ..registry import get_op
from ...shapes import int_oo
from ..ops.opaque import register_opaque
from .common import is_array, is_proxy


def _count_bound(shape):
    n = 1
    for d in shape:
        if not isinstance(d, int):
            return None
        n *= d
    return n


def unbacked_size(b, shape, what):
    env = getattr(b, "shape_env", None)
    if env is None:
        raise Unsupported(f"{what}: a data-dependent size needs a ShapeEnv", kind="data_dependent")
    from ...shapes import int_oo
    upper = _count_bound(shape)
    return env.create_unbacked_symint(0, int_oo if upper is None else upper, source=what)


def mask_count(b, mask):
    """The number of True elements of `mask` as an unbacked size: the same symbol for every
    `x[mask]` by the same mask value (`Z[I] ** 2 + C[I]` adds arrays of one length), a fresh one
    once anything has been written in place since (the mask itself may have changed)."""
    memo = b.__dict__.setdefault("_mask_counts", {})
    key = (mask.node, b.mutations)
    size = memo.get(key)
    if size is None:
        size = memo[key] = unbacked_size(b, mask.shape, "x[mask]")
    return size


def array_index(b, x, index):
    """x[index] where index is an array: a boolean mask or an integer gather (axis 0)."""
    if not is_array(index):
        raise Unsupported("indexing with a run-time scalar", kind="data_dependent", context="getitem")
    if index.dtype == np.bool_:
        if index.ndim == 0:
            raise Unsupported("indexing with a 0-d boolean", kind="indexing", context="getitem")
        return b.emit("mask_select", x, index, size=mask_count(b, index))
    if index.dtype.kind in "iu":
        return b.emit("take", x, index)
    raise NumpyError(IndexError("arrays used as indices must be of integer (or boolean) type"))


def _slice_by_values_rule(x, start, stop, *, axis, size):
    return tuple(x.shape[:axis]) + (size,) + tuple(x.shape[axis + 1:])


def _slice_by_values(x, start, stop, *, axis):
    return x[(slice(None),) * axis + (slice(start, stop),)]


register_opaque("slice_by_values", _slice_by_values, _slice_by_values_rule, kind="gather", aliases=True,
                doc="x[..., start:stop] with bounds read from array data: NumPy's view, its length "
                    "an unbacked size")


def data_slice(b, x, axis, part):
    """x[:, ..., start:stop] along `axis` where a bound is a value computed from array data
    (`A[ptr[i]:ptr[i + 1]]`): NumPy's own slicing at run time (clamping, negative bounds,
    TypeError for a bound that is not an integer), a view with an unbacked length. Reads only:
    a write through it breaks the graph (registry.OpDef.aliases)."""
    if part.step is not None and not (isinstance(part.step, int) and part.step == 1):
        raise Unsupported("a slice with a step and bounds computed from array data", kind="data_dependent",
                          context="getitem")
    bounds = []
    for v in (part.start, part.stop):
        if is_array(v) and v.ndim != 0:
            raise NumpyError(TypeError("only integer scalar arrays can be converted to a scalar index"))
        bounds.append(v)
    n = x.shape[axis]
    if getattr(b, "shape_env", None) is None:
        raise Unsupported("a slice bound computed from array data needs a ShapeEnv", kind="data_dependent")
    # slices with the same bounds along axes of the same length have the same length: one size
    # symbol (`A_col[p[i]:p[i + 1]]` and `A_val[p[i]:p[i + 1]]` then multiply elementwise)
    memo = b.__dict__.setdefault("_slice_sizes", {})
    key = (value_key(b, bounds[0]), value_key(b, bounds[1]), to_expr(n))
    size = memo.get(key)
    if size is None:
        size = memo[key] = b.shape_env.create_unbacked_symint(0, n if isinstance(n, int) else int_oo,
                                                               source="x[a:b]")
    return b.emit("slice_by_values", x, *bounds, axis=axis, size=size)


def note_read(b, out, x, index) -> None:
    """`out` is the element x[index] (a NumPy scalar) read with b.mutations writes emitted
    before it: two such reads with no write in between are the same value (value_key)."""
    b.__dict__.setdefault("_reads", {})[out.node] = (x.node, to_expr(index), b.mutations)


def value_key(b, v, depth=8):
    """A hashable key equal for two values the graph computes equally: an element read
    (note_read) of the same array at the same index with no write in between, a pure
    elementwise op of equal operands (`p[i] + 1`, `int(p[i])`); otherwise the node itself."""
    if not is_proxy(v):
        v = to_expr(v)
        return ("const", v if not isinstance(v, np.generic) else (type(v), v.item()))
    node = v.node if hasattr(v, "node") else v
    return _node_key(b, node, depth)


def _node_key(b, node, depth):
    read = b.__dict__.get("_reads", {}).get(node)
    if read is not None:
        return ("read",) + read
    if depth > 0 and node.op != "input" and get_op(node.op).kind == "elementwise":   # (an input: itself)
        args = tuple(_node_key(b, a, depth - 1) if isinstance(a, Node) else ("const", a) for a in node.args)
        return ("op", node.op, node.attrs, node.dtype, args)
    return ("node", node)


def _as_array_arg(b, a, fname):
    if not is_array(a):
        raise Unsupported(f"np.{fname} of a non-array", kind="call", context=fname)
    return a


def argwhere(b, a):
    a = _as_array_arg(b, a, "argwhere")
    size = unbacked_size(b, a.shape, "np.argwhere")
    return b.emit("argwhere", a, size=size)


def nonzero(b, a):
    a = _as_array_arg(b, a, "nonzero")
    if a.ndim == 0:
        raise NumpyError(ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar)."))
    idx = argwhere(b, a)
    return tuple(b.emit("copy", b.emit("getitem", idx, index=(IndexSlice(0, idx.shape[0], 1), d)))
                 for d in range(a.ndim))


def flatnonzero(b, a):
    a = _as_array_arg(b, a, "flatnonzero")
    flat = b.emit("reshape", a, shape=(_count(a.shape),))
    return nonzero(b, flat)[0]


def _count(shape):
    n = 1
    for d in shape:
        n = n * d
    return n


def unique(b, a, **kwargs):
    if any(v not in (False, None) for v in kwargs.values()):
        raise Unsupported("np.unique with return_index/return_inverse/return_counts/axis", kind="call",
                          context="unique")
    a = _as_array_arg(b, a, "unique")
    size = unbacked_size(b, a.shape, "np.unique")
    return b.emit("unique", a, size=size)


def nonzero_method(b, self):
    return nonzero(b, self)


FUNCTIONS = {np.argwhere: argwhere, np.nonzero: nonzero, np.flatnonzero: flatnonzero, np.unique: unique}
METHODS = {"nonzero": nonzero_method}
_ = is_proxy
