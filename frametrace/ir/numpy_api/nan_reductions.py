"""np.nanmax / np.nanmin / np.nanmean / np.nanargmax / np.nanargmin as native reductions.

Each follows numpy/lib/_nanfunctions_impl.py step by step, with our ops:
  nanmax(a)     fmax.reduce (op nanmax), then "All-NaN slice encountered" (RuntimeWarning)
                if the result has a NaN; a NumPy or Python scalar takes NumPy's slow path,
                whose message is "All-NaN axis encountered" (same value).
  nanmean(a)    ints: np.mean. floats: cnt = sum(~isnan(a), dtype=intp), tot = sum(a with
                NaN -> 0, dtype), tot / cnt with every FP error ignored, cast to tot's dtype;
                "Mean of empty slice" if some cnt is 0. The division is computed as
                tot / max(cnt, 1) and a cnt of 0 gives the NaN that 0 / 0 gives on this CPU,
                so no kernel raises a flag that NumPy's errstate(ignore) would hide.
  nanargmax(a)  floats: ValueError("All-NaN slice encountered") if a slice is all NaN (and a
                is not empty), then argmax of a with NaN -> -inf (+inf for nanargmin).
The warnings and the error come from `report_if` nodes (ir/ops/nan_reductions.py): the
kernels compute the flag, the wrapper warns or raises. Unsupported: out= for nanmean and
nanargmax, where=, initial=.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from .common import as_array, bind, is_array, normalize_axis, reject
from .reductions import reduction_impl

with np.errstate(all="ignore"):
    _ZERO_BY_ZERO = float(np.divide(np.float64(0.0), np.float64(0.0)))   # the CPU's default NaN

_nanmax_reduce = {"nanmax": reduction_impl("nanmax", "np.nanmax"),
                  "nanmin": reduction_impl("nanmin", "np.nanmin")}
_mean = reduction_impl("mean", "np.nanmean")
_argmax = {"nanargmax": reduction_impl("argmax", "np.nanargmax"),
           "nanargmin": reduction_impl("argmin", "np.nanargmin")}


def _any(b, x):
    return b.emit("any", x, axis=None, keepdims=False)


def _nan_extreme_impl(name):
    fname = f"np.{name}"

    def impl(b, a, *args, **kwargs):
        slow = not is_array(a) or a.scalar          # NumPy's path for non-ndarrays
        x = as_array(b, a, fname)
        res = _nanmax_reduce[name](b, x, *args, **kwargs)
        if x.dtype.kind in "fc":
            flag = _any(b, b.emit("isnan", res))
            b.emit("report_if", flag, message="All-NaN axis encountered" if slow
                   else "All-NaN slice encountered", error=False)
        return res
    impl.__name__ = f"{name}_impl"
    return impl


def nanmean_impl(b, a, *args, **kwargs):
    """np.nanmean(a, axis=None, dtype=None, out=None, keepdims=<no value>, *, where=...)."""
    fname = "np.nanmean"
    p = bind(fname, ("axis", "dtype", "out", "keepdims", "where"), args, kwargs)
    reject(fname, p, out=None, where=np._NoValue)
    x = as_array(b, a, fname)
    if x.dtype.kind not in "fc":
        return _mean(b, x, *args, **kwargs)
    dtype = p.get("dtype")
    if dtype is not None and not issubclass(np.dtype(dtype).type, np.inexact):
        raise NumpyError(TypeError("If a is inexact, then dtype must be inexact"))
    axis, keepdims = p.get("axis"), p.get("keepdims", np._NoValue)
    mask = b.emit("isnan", x)
    cnt = reduction_impl("sum", fname)(b, b.emit("logical_not", mask), axis, np.dtype(np.intp),
                                       keepdims=keepdims)
    tot = reduction_impl("sum", fname)(b, b.emit("where", mask, 0, x), axis, dtype, keepdims=keepdims)
    empty = b.emit("equal", cnt, 0)
    if tot.dtype.kind == "c":                  # no complex kernels: NumPy's own 0 / 0
        avg = b.emit("divide_quiet", tot, cnt)
    else:
        avg = b.emit("where", empty, _ZERO_BY_ZERO, b.emit("divide_quiet", tot, b.emit("maximum", cnt, 1)))
    if avg.dtype != tot.dtype:
        avg = b.emit("astype", avg, dtype=tot.dtype)              # np.divide(..., out=tot)
    if tot.scalar and not avg.scalar:
        avg = b.emit("getitem", avg, index=())                 # np.where made a 0-d array
    b.emit("report_if", _any(b, empty), message="Mean of empty slice", error=False)
    return avg


def _nanarg_impl(name):
    fname = f"np.{name}"
    fill = -np.inf if name == "nanargmax" else np.inf

    def impl(b, a, *args, **kwargs):
        p = bind(fname, ("axis", "out", "keepdims"), args, kwargs)
        reject(fname, p, out=None)
        x = as_array(b, a, fname)
        if x.dtype.kind in "fc":
            mask = b.emit("isnan", x)
            if not bool(x.fake.size == 0):
                axis = p.get("axis")
                all_nan = b.emit("all", mask, axis=None if axis is None else (
                    normalize_axis(axis, x.ndim, fname),), keepdims=False)
                b.emit("report_if", _any(b, all_nan), message="All-NaN slice encountered", error=True)
            x = b.emit("where", mask, fill, x)
        return _argmax[name](b, x, *args, **kwargs)
    impl.__name__ = f"{name}_impl"
    return impl


FUNCTIONS = {
    np.nanmax: _nan_extreme_impl("nanmax"), np.nanmin: _nan_extreme_impl("nanmin"),
    np.nanmean: nanmean_impl,
    np.nanargmax: _nanarg_impl("nanargmax"), np.nanargmin: _nanarg_impl("nanargmin"),
}
