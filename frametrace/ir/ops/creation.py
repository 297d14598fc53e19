"""Creation ops: new arrays from sizes.

Canonical forms:
  zeros/ones/empty(; shape, dtype)   shape: tuple of sizes (int | SymInt) >= 0; dtype: np.dtype
  full(fill; shape, dtype)           fill: a scalar or array broadcastable to shape;
                                     dtype: np.dtype (resolved by the API: np.full's default is
                                     the dtype of np.array(fill)); the fill is cast unsafely
  arange(start, stop, step; dtype)   start/stop: int | SymInt; step: a static nonzero int;
                                     dtype: np.dtype; length max(0, ceil((stop - start) / step))
"""
from __future__ import annotations

import operator

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import Creation, register
from .broadcast import check_broadcast_to
from .promotion import probe, shape_of
from .symbolic import is_static, statically_known_true, sym_max


def _check_shape(shape) -> tuple:
    shape = tuple(shape)
    if any(bool(d < 0) for d in shape):
        raise NumpyError(ValueError("negative dimensions are not allowed"))
    return shape


def _creation(name, fn):
    def ref(*, shape, dtype):
        return fn(shape, dtype=dtype)

    def meta(*, shape, dtype):
        return FakeArray(_check_shape(shape), np.dtype(dtype))
    meta.__name__, ref.__name__ = f"{name}_meta", f"{name}_ref"
    meta.__doc__ = f"np.{name}(shape, dtype)"
    register(name, kind="creation", ref=ref, lowering=Creation(), layout="c")(meta)


_creation("zeros", np.zeros)
_creation("ones", np.ones)
_creation("empty", np.empty)


def full_ref(fill, *, shape, dtype):
    return np.full(shape, fill, dtype=dtype)


@register("full", kind="creation", ref=full_ref, lowering=Creation(), layout="c")
def full_meta(fill, *, shape, dtype):
    """np.full(shape, fill, dtype): the fill broadcasts to shape and is cast unsafely."""
    shape = _check_shape(shape)
    value = probe(np.full, (1,) * len(shape), fill, dtype=np.dtype(dtype))
    check_broadcast_to(shape_of(fill), shape)
    return FakeArray(shape, value.dtype)


def full_default_dtype(fill) -> np.dtype:
    """np.full's dtype when none is given: that of np.array(fill)."""
    return probe(np.full, (), fill).dtype


def arange_ref(start, stop, step, *, dtype):
    return np.arange(start, stop, step, dtype=dtype)


def range_length(start, stop, step):
    """len(range(start, stop, step)) for a static nonzero step (symbolic start/stop)."""
    d, s = (stop - start, step) if step > 0 else (start - stop, -step)
    length = d if s == 1 else (d + (s - 1)) // s
    if is_static(length):
        return max(int(length), 0)
    return length if statically_known_true(d >= 0) else sym_max(length, 0)


@register("arange", kind="creation", ref=arange_ref, lowering=Creation(), layout="c")
def arange_meta(start, stop, step, *, dtype):
    """np.arange(start, stop, step, dtype) over integer bounds."""
    if not is_static(step):
        raise TypeError("arange: the step must be a static int")
    step = operator.index(step)
    if step == 0:
        raise NumpyError(ZeroDivisionError("division by zero"))
    probe(arange_ref, 0, 1, 1, dtype=np.dtype(dtype))
    return FakeArray((range_length(start, stop, step),), np.dtype(dtype))
