"""View ops: results share memory with their input where NumPy's do.

Canonical forms (x is an array or NumPy-scalar node):
  getitem(x; index)       basic indexing; `index` is canonical (see ops/indexing.py): one
                          entry per input dim (int | IndexSlice) plus None for new axes
  transpose(x; axes)      axes: a full permutation of range(x.ndim), as a tuple of ints
  reshape(x; shape)       shape: tuple of sizes (int | SymInt), fully resolved: no -1
                          (see `resolve_reshape`); a view when NumPy can make one, else a copy
  expand_dims(x; axis)    axis: tuple of distinct non-negative ints < x.ndim + len(axis)
  squeeze(x; axis)        axis: tuple of distinct non-negative ints whose sizes are 1
  broadcast_to(x; shape)  shape: tuple of sizes; the result is a read-only view
Scalar-ness follows NumPy (np.transpose of a NumPy scalar is a NumPy scalar, an integer
getitem that selects one element is a NumPy scalar, not a view).
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import View, register
from .broadcast import check_broadcast_to
from .indexing import index_is_scalar, index_result_shape, py_index
from .promotion import fake_like, probe
from .symbolic import fmt_shape, is_static, prod, same_size


def _array(x, name) -> FakeArray:
    if not isinstance(x, FakeArray):
        raise TypeError(f"{name} expects an array or NumPy scalar operand, got {x!r}")
    return x


def getitem_ref(x, *, index):
    return x[py_index(index)]


@register("getitem", kind="view", ref=getitem_ref, lowering=View())
def getitem_meta(x, *, index):
    """x[index] for a canonical basic index: a view, or a NumPy scalar for one element."""
    x = _array(x, "getitem")
    return FakeArray(index_result_shape(x.shape, index), x.dtype, index_is_scalar(index))


def transpose_ref(x, *, axes):
    return np.transpose(x, axes)


@register("transpose", kind="view", ref=transpose_ref, lowering=View())
def transpose_meta(x, *, axes):
    """np.transpose(x, axes) with a full permutation."""
    x = _array(x, "transpose")
    if sorted(axes) != list(range(x.ndim)):
        raise NumpyError(ValueError("axes don't match array"))
    value = probe(transpose_ref, x, axes=tuple(axes))
    return fake_like(value, tuple(x.shape[a] for a in axes))


def reshape_ref(x, *, shape):
    return np.reshape(x, shape)


def _shape_text(shape, unknown=None):
    return fmt_shape(["newaxis" if i == unknown else d for i, d in enumerate(shape)])


def resolve_reshape(size, shape) -> tuple:
    """Replace the one negative entry of a reshape target by `size // prod(others)`.

    NumPy treats any negative entry as "unknown"; the total is checked equal with a guard.
    Raises NumpyError(ValueError) where NumPy would.
    """
    shape = tuple(shape)
    unknown = [i for i, d in enumerate(shape) if bool(d < 0)]
    if len(unknown) > 1:
        raise NumpyError(ValueError("can only specify one unknown dimension"))
    if not unknown:
        if not same_size(prod(shape), size):
            raise NumpyError(ValueError(f"cannot reshape array of size {size} into shape "
                                        f"{_shape_text(shape)}"))
        return shape
    u = unknown[0]
    known = prod(d for i, d in enumerate(shape) if i != u)
    missing = None if bool(known == 0) else size // known
    if missing is None or not same_size(missing * known, size):
        raise NumpyError(ValueError(f"cannot reshape array of size {size} into shape "
                                    f"{_shape_text(shape, u)}"))
    return shape[:u] + (missing,) + shape[u + 1:]


@register("reshape", kind="view", ref=reshape_ref, lowering=View())
def reshape_meta(x, *, shape):
    """np.reshape(x, shape) with a resolved shape (same number of elements)."""
    x = _array(x, "reshape")
    shape = tuple(shape)
    if any(is_static(d) and d < 0 for d in shape):
        raise ValueError(f"reshape: shape {shape!r} is not resolved (see resolve_reshape)")
    if not same_size(prod(shape), x.size):
        raise NumpyError(ValueError(f"cannot reshape array of size {x.size} into shape "
                                    f"{_shape_text(shape)}"))
    value = probe(reshape_ref, x, shape=(1,) * len(shape))
    return fake_like(value, shape)


def expand_dims_ref(x, *, axis):
    return np.expand_dims(x, axis)


@register("expand_dims", kind="view", ref=expand_dims_ref, lowering=View())
def expand_dims_meta(x, *, axis):
    """np.expand_dims(x, axis) with axis a tuple of non-negative output positions."""
    x = _array(x, "expand_dims")
    out_ndim = x.ndim + len(axis)
    if len(set(axis)) != len(axis) or any(not (0 <= a < out_ndim) for a in axis):
        raise ValueError(f"expand_dims: axis {axis!r} is not canonical")
    value = probe(expand_dims_ref, x, axis=tuple(axis))
    dims = iter(x.shape)
    return fake_like(value, tuple(1 if i in axis else next(dims) for i in range(out_ndim)))


def squeeze_ref(x, *, axis):
    return np.squeeze(x, axis)


@register("squeeze", kind="view", ref=squeeze_ref, lowering=View())
def squeeze_meta(x, *, axis):
    """np.squeeze(x, axis) with axis a tuple of non-negative dims of size 1."""
    x = _array(x, "squeeze")
    if len(set(axis)) != len(axis) or any(not (0 <= a < x.ndim) for a in axis):
        raise ValueError(f"squeeze: axis {axis!r} is not canonical")
    for a in axis:
        if not same_size(x.shape[a], 1):
            raise NumpyError(ValueError("cannot select an axis to squeeze out which has size "
                                        "not equal to one"))
    value = probe(squeeze_ref, x, axis=tuple(axis))
    return fake_like(value, tuple(d for i, d in enumerate(x.shape) if i not in axis))


def broadcast_to_ref(x, *, shape):
    return np.broadcast_to(x, shape)


@register("broadcast_to", kind="view", ref=broadcast_to_ref, lowering=View())
def broadcast_to_meta(x, *, shape):
    """np.broadcast_to(x, shape): a read-only view."""
    x = _array(x, "broadcast_to")
    shape = tuple(shape)
    if any(bool(d < 0) for d in shape):
        raise NumpyError(ValueError("all elements of broadcast shape must be non-negative"))
    if len(shape) < x.ndim:
        raise NumpyError(ValueError("input operand has more dimensions than allowed by the "
                                    "axis remapping"))
    check_broadcast_to(x.shape, shape, what="operands could not be broadcast together with "
                                            "remapped shapes")
    value = probe(broadcast_to_ref, x, shape=(1,) * len(shape))
    return fake_like(value, shape)
