"""Shape rules shared by the opaque NumPy calls (symbolic sizes in, symbolic sizes out)."""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..ops.promotion import shape_of
from ..ops.symbolic import prod


def axes_of(axis, ndim: int):
    """None or a tuple of non-negative axes (NumPy's AxisError when out of range)."""
    if axis is None:
        return None
    seq = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in seq:
        if not -ndim <= a < ndim:
            raise NumpyError(np.exceptions.AxisError(a, ndim))
        out.append(a % ndim)
    return tuple(out)


def reduced_shape(shape, axis=None, keepdims=False) -> tuple:
    """The shape a reduction over `axis` leaves (None: every axis)."""
    shape = tuple(shape)
    axes = axes_of(axis, len(shape))
    if axes is None:
        return (1,) * len(shape) if keepdims else ()
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduction_rule(x, *args, axis=None, keepdims=False, **kw):
    return reduced_shape(shape_of(x), axis, keepdims)


def same_shape(x, *args, **kw):
    return tuple(shape_of(x))


def along_axis_shape(x, *args, axis=-1, **kw):
    """sort/argsort/partition: x's shape, or the flattened size for axis=None."""
    s = tuple(shape_of(x))
    return (prod(s),) if axis is None else s


def quantile_rule(a, q=None, axis=None, keepdims=False, **kw):
    return tuple(np.shape(q)) + reduced_shape(shape_of(a), axis, keepdims)
