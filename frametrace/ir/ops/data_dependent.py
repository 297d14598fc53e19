"""Ops whose result size depends on array data: boolean masks, nonzero, integer gathers.

Canonical forms:
  mask_select(x, mask; size)  x[mask]: mask is a bool array whose shape equals x's leading
                              dims; the result is (size, *x.shape[mask.ndim:]) where `size`
                              is an unbacked symbol (u0 in [0, number of mask elements])
  argwhere(a; size)           np.argwhere(a): int64 array (size, a.ndim) of the indices of
                              nonzero elements, in C order
  take(x, idx)                x[idx] for an integer index array along axis 0: shape
                              idx.shape + x.shape[1:]; out-of-bounds indices raise IndexError
                              at run time exactly as NumPy does
The unbacked symbol is bound at run time from the node's result shape.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import Gather, NumpyCall, register
from .raising import take_may_raise
from .symbolic import same_size


def _mask_select_ref(x, mask, size=None):
    return x[mask]


@register("mask_select", kind="gather", ref=_mask_select_ref, lowering=Gather())
def mask_select_meta(x, mask, size):
    """x[mask] with a boolean mask over x's leading dims."""
    if mask.dtype != np.bool_:
        raise NumpyError(IndexError("arrays used as indices must be of integer (or boolean) type"))
    if mask.ndim > x.ndim:
        raise NumpyError(IndexError(f"too many indices for array: array is {x.ndim}-dimensional, "
                                    f"but {mask.ndim} were indexed"))
    for d, (a, m) in enumerate(zip(x.shape, mask.shape)):
        if not same_size(a, m):
            raise NumpyError(IndexError(f"boolean index did not match indexed array along axis {d}; "
                                        f"size of axis is {a} but size of corresponding boolean axis is {m}"))
    return FakeArray((size,) + tuple(x.shape[mask.ndim:]), x.dtype)


def _argwhere_ref(a, size=None):
    return np.argwhere(a)


@register("argwhere", kind="gather", ref=_argwhere_ref,
          lowering=NumpyCall("data-dependent size: NumPy's nonzero"))
def argwhere_meta(a, size):
    """np.argwhere(a): (size, a.ndim) int64 indices of the nonzero elements."""
    return FakeArray((size, a.ndim), np.dtype(np.int64))


def _take_ref(x, idx):
    return x[idx]


@register("take", kind="gather", ref=_take_ref, may_raise=take_may_raise,
          lowering=NumpyCall("integer gather along axis 0"))
def take_meta(x, idx):
    """x[idx] along axis 0 with an integer index array."""
    if idx.dtype.kind not in "iu":
        raise NumpyError(IndexError("arrays used as indices must be of integer (or boolean) type"))
    if x.ndim == 0:
        raise NumpyError(IndexError("too many indices for array: array is 0-dimensional, but 1 were indexed"))
    return FakeArray(tuple(idx.shape) + tuple(x.shape[1:]), x.dtype, scalar=idx.ndim == 0 and x.ndim == 1)


def _unique_ref(a, size=None):
    return np.unique(a)


@register("unique", kind="gather", ref=_unique_ref, layout="c",
          lowering=NumpyCall("data-dependent size (sorting)"))
def unique_meta(a, size):
    """np.unique(a): the sorted distinct values, flattened."""
    return FakeArray((size,), a.dtype)
