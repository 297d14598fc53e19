"""np.take_along_axis as a gather inside kernels.

  take_along(arr, indices; axis)    np.take_along_axis(arr, indices, axis) for an integer
      `indices` of arr's rank and a non-negative int axis: arr's other dims broadcast with
      indices' (the result takes indices' length along axis). Kernels load arr at the
      position each index names (negative ones count from the end), fused with the index's
      producers and the result's consumers; an index out of bounds makes NumPy redo the call,
      which raises its IndexError (lower/kernels.py, codegen op gather_pos).
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import Gather, register
from .broadcast import broadcast_shapes


def _take_along_ref(arr, indices, *, axis):
    return np.take_along_axis(arr, indices, axis=axis)


@register("take_along", kind="gather", ref=_take_along_ref, may_raise=lambda n: True,
          lowering=Gather(indexed=True))
def take_along_meta(arr, indices, *, axis):
    """np.take_along_axis(arr, indices, axis): arr[..., indices[..., i, ...], ...] along axis."""
    if not isinstance(arr, FakeArray) or not isinstance(indices, FakeArray):
        raise TypeError("take_along expects two arrays")
    if indices.dtype.kind not in "iu":
        raise NumpyError(IndexError("`indices` must be an integer array"))
    if indices.ndim != arr.ndim:
        raise NumpyError(ValueError("`indices` and `arr` must have the same number of dimensions"))
    if not (isinstance(axis, int) and 0 <= axis < arr.ndim):
        raise ValueError(f"take_along: axis {axis!r} is not canonical for a {arr.ndim}-d array")
    rest = broadcast_shapes(tuple(arr.shape[:axis]) + (1,) + tuple(arr.shape[axis + 1:]),
                            tuple(indices.shape[:axis]) + (1,) + tuple(indices.shape[axis + 1:]))
    return FakeArray(rest[:axis] + (indices.shape[axis],) + rest[axis + 1:], arr.dtype)
