"""Copying shape ops: concatenate, stack, copy (results are new arrays).

Canonical forms:
  concatenate(*xs; axis)   xs: >= 1 array nodes of equal ndim >= 1; axis: non-negative int
                           (np.concatenate(..., axis=None) is lowered to reshapes first)
  stack(*xs; axis)         xs: >= 1 operands of equal shape (weak scalars allowed: 0-d);
                           axis: non-negative int <= ndim
  copy(x[; order])          np.copy(x, order): a new array (a NumPy scalar gives a 0-d array);
                           order "K" (the default, no attribute: NumPy keeps x's layout),
                           "C" (x.copy(), and the copy a ravel/reshape makes) or "A"
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import Creation, NumpyCall, register
from .promotion import fake_like, probe, shape_of
from .symbolic import same_size


def concatenate_ref(*xs, axis):
    return np.concatenate(xs, axis=axis)


@register("concatenate", kind="copy", ref=concatenate_ref, lowering=Creation())
def concatenate_meta(*xs, axis):
    """np.concatenate(xs, axis): sizes off the axis must match; the axis sizes add up."""
    if not xs:
        raise NumpyError(ValueError("need at least one array to concatenate"))
    shapes = [shape_of(x) for x in xs]
    if any(len(s) == 0 for s in shapes):
        raise NumpyError(ValueError("zero-dimensional arrays cannot be concatenated"))
    first = shapes[0]
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(first):
            raise NumpyError(ValueError(
                f"all the input arrays must have same number of dimensions, but the array at "
                f"index 0 has {len(first)} dimension(s) and the array at index {i} has "
                f"{len(s)} dimension(s)"))
    if not (isinstance(axis, int) and 0 <= axis < len(first)):
        raise ValueError(f"concatenate: axis {axis!r} is not canonical")
    value = probe(concatenate_ref, *xs, axis=axis)
    total = first[axis]
    for i, s in enumerate(shapes[1:], 1):
        for d in range(len(first)):
            if d != axis and not same_size(s[d], first[d]):
                raise NumpyError(ValueError(
                    f"all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {d}, the array at index 0 has size "
                    f"{first[d]} and the array at index {i} has size {s[d]}"))
        total = total + s[axis]
    return fake_like(value, first[:axis] + (total,) + first[axis + 1:])


def stack_ref(*xs, axis):
    return np.stack(xs, axis=axis)


@register("stack", kind="copy", ref=stack_ref,
          lowering=NumpyCall("copies of whole operands: NumPy's memcpy"))
def stack_meta(*xs, axis):
    """np.stack(xs, axis): equal shapes; a new axis of length len(xs) at `axis`."""
    if not xs:
        raise NumpyError(ValueError("need at least one array to stack"))
    shapes = [shape_of(x) for x in xs]
    first = shapes[0]
    for s in shapes[1:]:
        if len(s) != len(first) or not all(same_size(a, b) for a, b in zip(s, first, strict=True)):
            raise NumpyError(ValueError("all input arrays must have the same shape"))
    if not (isinstance(axis, int) and 0 <= axis <= len(first)):
        raise ValueError(f"stack: axis {axis!r} is not canonical")
    value = probe(stack_ref, *xs, axis=axis)
    return fake_like(value, first[:axis] + (len(xs),) + first[axis:])


@register("copy", kind="copy", ref=np.copy, lowering=Creation())
def copy_meta(x, *, order="K"):
    """np.copy(x, order): a new array with x's shape and dtype."""
    if not isinstance(x, FakeArray):
        raise TypeError(f"copy expects an array or NumPy scalar operand, got {x!r}")
    if order not in ("K", "C", "A"):
        raise ValueError(f"copy: order {order!r} is not canonical")
    return fake_like(probe(np.copy, x), x.shape)
