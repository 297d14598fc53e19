"""np.pad as a composition: one concatenate per padded axis, so it fuses with its readers.

NumPy pads axis after axis, each over the array padded so far (corners take the last axis's
values), into a C-ordered array for a C-contiguous input; so does this, axis by axis, then a
C-order copy (fused, no extra pass). Other inputs (F-ordered, strided: NumPy's result order
depends on which) run NumPy's np.pad, so the layout guard has two classes, as for ravel:

  constant   full(value) blocks either side; the value converted as NumPy's assignment does
  edge       the first / last slice broadcast to the width
  wrap       the last / first `w` slices (w <= the axis size)
  reflect    flipped slices without the edge (w <= size - 1), symmetric with it (w <= size)

Inside a kernel each concatenate is read through segments (lower/segments.py): `np.pad(u, 1)`
followed by a stencil is one loop nest, split into row and column ranges. Widths must be
constant; other modes, run-time widths and widths beyond what one reflection covers (NumPy
repeats those) run NumPy's np.pad as an opaque call.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..ops.symbolic import same_size
from .common import as_array, is_array, is_weak_value, weak_type
from .indexing import getitem
from .layout import is_c_contiguous
from .opaque_api import opaque_function

_OPAQUE = opaque_function("pad", "np.pad", ("array", "pad_width", "mode", "constant_values", "end_values",
                                            "reflect_type"), ("array",))
_MODES = ("constant", "edge", "wrap", "reflect", "symmetric")


def _pairs(value, ndim: int):
    """NumPy's _as_pairs for constant widths / values: ((before, after),) * ndim, or None."""
    if is_array(value) or (isinstance(value, (list, tuple)) and any(is_array(v) for v in value)):
        return None
    try:
        arr = np.asarray(value, dtype=object)
        pairs = np.broadcast_to(arr, (ndim, 2))
    except (ValueError, TypeError):
        return None
    return [tuple(p) for p in pairs.tolist()]


def _widths(pad_width, ndim: int):
    pairs = _pairs(pad_width, ndim)
    if pairs is None or not all(type(w) is int or isinstance(w, np.integer)
                                for p in pairs for w in p):
        return None
    if any(w < 0 for p in pairs for w in p):
        raise NumpyError(ValueError("index can't contain negative values"))
    return [(int(lo), int(hi)) for lo, hi in pairs]


def _fill(value, dtype):
    """value converted to dtype as `padded[...] = value` converts it, or None (NumPy raises,
    or may: a run-time Python number goes into float arrays only, where a cast is exact)."""
    if is_weak_value(value) and weak_type(value) in (bool, int, float) and dtype.kind == "f":
        return value
    if not isinstance(value, (bool, int, float, np.generic)):
        return None
    out = np.empty((), dtype)
    try:
        with np.errstate(all="ignore"):
            out[()] = value
    except (ValueError, TypeError, OverflowError):
        return None
    return out[()]


def _along(b, x, axis: int, start, stop, step=None):
    index = (slice(None),) * axis + (slice(start, stop, step),)
    return getitem(b, x, index)


def _down(b, x, axis: int, start, count: int):
    """x[start], x[start - 1], ... (count elements) along axis."""
    stop = start - count
    return _along(b, x, axis, start, None if same_size(stop, -1) else stop, -1)


def _block(b, x, axis: int, width: int, fill):
    shape = tuple(x.shape[:axis]) + (width,) + tuple(x.shape[axis + 1:])
    return b.emit("full", fill, shape=shape, dtype=x.dtype)


def _edge(b, x, axis: int, width: int, last: bool):
    end = _along(b, x, axis, -1, None) if last else _along(b, x, axis, 0, 1)
    shape = tuple(x.shape[:axis]) + (width,) + tuple(x.shape[axis + 1:])
    return b.emit("broadcast_to", end, shape=shape)


def _sides(b, x, axis: int, lo: int, hi: int, mode: str, fills):
    """(before, after) pieces along axis, or None when the mode needs NumPy's loop."""
    n = x.shape[axis]
    if mode == "constant":
        return (_block(b, x, axis, lo, fills[0]) if lo else None,
                _block(b, x, axis, hi, fills[1]) if hi else None)
    if same_size(n, 0):
        raise NumpyError(ValueError(f"can't extend empty axis {axis} using modes other than "
                                    f"'constant' or 'empty'"))
    if mode == "edge":
        return (_edge(b, x, axis, lo, False) if lo else None, _edge(b, x, axis, hi, True) if hi else None)
    if mode == "wrap":
        if not (lo <= n and hi <= n):
            return None
        return (_along(b, x, axis, n - lo, None) if lo else None, _along(b, x, axis, 0, hi) if hi else None)
    if mode == "reflect":
        if not (lo <= n - 1 and hi <= n - 1):     # also n == 1: NumPy repeats the only element
            return None
        return (_down(b, x, axis, lo, lo) if lo else None, _down(b, x, axis, n - 2, hi) if hi else None)
    if not (lo <= n and hi <= n):                 # symmetric
        return None
    return (_down(b, x, axis, lo - 1, lo) if lo else None, _down(b, x, axis, n - 1, hi) if hi else None)


def pad_impl(b, array, pad_width, mode="constant", **kwargs):
    """np.pad: a concatenate per padded axis (module doc), else NumPy's np.pad."""
    def numpy_pad():
        return _OPAQUE(b, array, pad_width, mode, **kwargs)
    if not is_array(array) or not isinstance(mode, str) or mode not in _MODES or \
            set(kwargs) - ({"constant_values"} if mode == "constant" else set()):
        return numpy_pad()
    x = as_array(b, array, "np.pad")
    if x.ndim == 0:
        return numpy_pad()
    widths = _widths(pad_width, x.ndim)
    fills = None
    if widths is not None and mode == "constant":
        values = _pairs(kwargs.get("constant_values", 0), x.ndim)
        fills = None if values is None else [tuple(_fill(v, x.dtype) for v in p) for p in values]
        if fills is None or any(f is None for p in fills for f in p):
            return numpy_pad()
    if widths is None:
        return numpy_pad()
    if not is_c_contiguous(b, x):             # NumPy's allocation order then depends on x's
        return numpy_pad()                    # layout class: its np.pad decides, one guard
    out = x
    for axis, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        sides = _sides(b, out, axis, lo, hi, mode, fills[axis] if fills else None)
        if sides is None:
            return numpy_pad()
        pieces = [p for p in (sides[0], out, sides[1]) if p is not None]
        out = b.emit("concatenate", *pieces, axis=axis)
    return b.emit("copy", out, order="C")     # fused: the C order NumPy allocates


FUNCTIONS = {np.pad: pad_impl}
