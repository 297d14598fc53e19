"""np.ascontiguousarray / np.asfortranarray: the same array when its layout already is the one
asked for (a guard on the layout class, as ravel's), else a copy in that order; an array of at
least one dimension (a 0-d value becomes a 1-element view), `dtype=` cast first (a new array).
A layout the trace cannot know is a graph break naming the call."""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
from .common import as_array, as_dtype, reject
from .layout import is_contiguous
from .literals import array_from_sequence, is_sequence


def _as_contiguous(order: str, fname: str):
    def impl(b, a, dtype=None, *, like=None):
        reject(fname, {"like": like}, like=None)
        dt = as_dtype(dtype, fname)
        x = array_from_sequence(b, a, dt, fname) if is_sequence(a) else as_array(b, a, fname)
        fresh = x.scalar or is_sequence(a)
        if dt is not None and dt != x.dtype:
            x, fresh = b.emit("astype", x, dtype=dt), True
        if x.scalar:
            x = b.emit("copy", x)                      # a NumPy scalar: a new 0-d array
        if x.ndim == 0:
            return b.emit("reshape", x, shape=(1,))
        if fresh and x.ndim == 1:
            return x
        ok = is_contiguous(b, x, order)
        if ok is None:
            raise Unsupported(f"{fname} of an array whose layout is not known when tracing", kind="call",
                              context=fname, hints=("call it on the function's input, or drop it",))
        if ok:
            return x
        if order == "C":
            return b.emit("copy", x, order="C")
        rev = tuple(range(x.ndim))[::-1]              # F order: the transpose of a C copy of x.T
        return b.emit("transpose", b.emit("copy", b.emit("transpose", x, axes=rev), order="C"), axes=rev)
    impl.__name__ = f"{fname[3:]}_impl"
    return impl


FUNCTIONS = {np.ascontiguousarray: _as_contiguous("C", "np.ascontiguousarray"),
             np.asfortranarray: _as_contiguous("F", "np.asfortranarray")}
