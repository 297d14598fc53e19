"""Mutation: writes into the buffer of an earlier value.

Canonical form:
  assign(dst, src; writer=None)
                     `dst[...] = src`: dst is an array node that is an input, a view of one,
                     or an earlier result; src (array, NumPy scalar, weak scalar or size)
                     broadcasts to dst's shape (extra leading size-1 dims allowed, as in
                     NumPy assignment) and is cast unsafely (but an out-of-range Python int
                     or a NaN/inf Python float into an int array raises, as in NumPy).
                     No result value; every later node sees the new contents.
                     `writer` says which NumPy operation writes, for NumPy's message when dst
                     is read-only (READ_ONLY): None an assignment (`x[i] = v`, fill, copyto),
                     "ufunc" an out= or in-place operator (`x += 1`, `np.add(a, b, out=x)`,
                     reductions into out=), "sort" `x.sort()`.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import Scatter, register
from .broadcast import check_broadcast_to
from .promotion import probe, shape_of

# NumPy's ValueError when the destination is read-only, per writer
READ_ONLY = {None: "assignment destination is read-only", "ufunc": "output array is read-only",
             "sort": "sort array is read-only"}


def assign_ref(dst, src, *, writer=None):
    if isinstance(dst, np.ndarray) and not dst.flags.writeable:
        raise ValueError(READ_ONLY[writer])
    dst[...] = src


def _probe_assign(dst, src):
    dst[...] = src
    return dst

@register("assign", kind="mutation", ref=assign_ref, lowering=Scatter())
def assign_meta(dst, src, *, writer=None):
    """dst[...] = src (broadcast, unsafe cast); returns None."""
    assert writer in READ_ONLY, writer
    if not isinstance(dst, FakeArray) or dst.scalar:
        what = "a NumPy scalar" if isinstance(dst, FakeArray) else repr(dst)
        raise NumpyError(TypeError(f"assignment destination must be an array, got {what}"))
    probe(_probe_assign, dst, src)
    check_broadcast_to(shape_of(src), dst.shape, strip_leading_ones=True)
    return None

