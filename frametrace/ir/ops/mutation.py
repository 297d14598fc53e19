"""Mutation: writes into the buffer of an earlier value.

Canonical form:
  assign(dst, src)   `dst[...] = src`: dst is an array node that is an input, a view of one,
                     or an earlier result; src (array, NumPy scalar, weak scalar or size)
                     broadcasts to dst's shape (extra leading size-1 dims allowed, as in
                     NumPy assignment) and is cast unsafely (but an out-of-range Python int
                     or a NaN/inf Python float into an int array raises, as in NumPy).
                     No result value; every later node sees the new contents.
"""
from __future__ import annotations

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import Scatter, register
from .broadcast import check_broadcast_to
from .promotion import probe, shape_of

def assign_ref(dst, src):
    dst[...] = src

def _probe_assign(dst, src):
    dst[...] = src
    return dst

@register("assign", kind="mutation", ref=assign_ref, lowering=Scatter())
def assign_meta(dst, src):
    """dst[...] = src (broadcast, unsafe cast); returns None."""
    if not isinstance(dst, FakeArray) or dst.scalar:
        what = "a NumPy scalar" if isinstance(dst, FakeArray) else repr(dst)
        raise NumpyError(TypeError(f"assignment destination must be an array, got {what}"))
    probe(_probe_assign, dst, src)
    check_broadcast_to(shape_of(src), dst.shape, strip_leading_ones=True)
    return None

