"""np.zeros / ones / empty / full, their *_like forms, np.ndarray(shape), np.arange with integer
bounds, and np.mgrid / np.ogrid."""
from __future__ import annotations

import math

import numpy as np

from ...errors import NumpyError
from ..ops.creation import full_default_dtype
from ..ops.promotion import PY_DTYPE
from ..ops.symbolic import pytype_of
from .extra_elementwise import arange_float
from .common import (Proxy, as_dtype, check_operand, is_array, is_proxy, is_symbolic, is_weak_value, meta_of,
                     reject, shape_arg, size_arg, unsupported, weak_type)

_F64 = np.dtype(np.float64)


def _creation_impl(op: str):
    fname = f"np.{op}"

    def impl(b, shape, dtype=None, order="C", *, device=None, like=None):
        reject(fname, {"order": order, "device": device, "like": like}, order="C",
               device=None, like=None)
        return b.emit(op, shape=shape_arg(shape, fname), dtype=as_dtype(dtype, fname) or _F64)
    impl.__name__ = f"{op}_impl"
    return impl


zeros_impl, ones_impl, empty_impl = (_creation_impl(n) for n in ("zeros", "ones", "empty"))


def ndarray_impl(b, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
    """np.ndarray(shape, dtype): an uninitialised array, as np.empty (without buffer=/strides=)."""
    reject("np.ndarray", {"buffer": buffer, "offset": offset, "strides": strides, "order": order},
           buffer=None, offset=0, strides=None, order=(None, "C"))
    return b.emit("empty", shape=shape_arg(shape, "np.ndarray"), dtype=as_dtype(dtype, "np.ndarray") or _F64)


def full_impl(b, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    reject("np.full", {"order": order, "device": device, "like": like}, order="C",
           device=None, like=None)
    fill = check_operand(fill_value, "np.full")
    dt = as_dtype(dtype, "np.full") or full_default_dtype(meta_of(fill))
    return b.emit("full", fill, shape=shape_arg(shape, "np.full"), dtype=dt)


def _like_defaults(a, dtype, shape, fname):
    if is_array(a):
        base_dtype, base_shape = a.dtype, tuple(a.shape)
    elif is_weak_value(a) or type(a) in PY_DTYPE:
        base_dtype, base_shape = PY_DTYPE[weak_type(a) or type(a)], ()
    elif isinstance(a, np.generic):
        base_dtype, base_shape = a.dtype, ()
    else:
        raise unsupported(fname, f"a prototype of type {type(a).__name__}")
    dt = as_dtype(dtype, fname) or base_dtype
    return dt, base_shape if shape is None else shape_arg(shape, fname)


def _keeps_order(a, order, shape) -> bool:
    """NumPy gives a *_like result the prototype's memory order ("K"): only an array of 2+
    dims with the same shape can have another order than C."""
    return order == "K" and shape is None and is_array(a) and len(a.shape) >= 2


def _like_in_order(b, a, dt, fill):
    """A new array shaped like `a` in a's memory order, every element `fill` (a `dt` scalar):
    `where(False, a, fill)` allocates in "K" order on both backends and reads nothing of `a`
    once lowered (the select of a constant False folds away)."""
    proto = a if a.dtype == dt else b.emit("astype", a, dtype=dt)
    return b.emit("where", False, proto, fill)


def _like_impl(op: str):
    fname = f"np.{op}_like"
    fill = {"zeros": 0, "empty": 0, "ones": 1}[op]

    def impl(b, a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        reject(fname, {"order": order, "subok": subok, "device": device},
               order=("K", "C", "A"), subok=True, device=None)
        dt, sh = _like_defaults(a, dtype, shape, fname)
        if _keeps_order(a, order, shape):
            return _like_in_order(b, a, dt, dt.type(fill))
        return b.emit(op, shape=sh, dtype=dt)
    impl.__name__ = f"{op}_like_impl"
    return impl


zeros_like_impl, ones_like_impl, empty_like_impl = (
    _like_impl(n) for n in ("zeros", "ones", "empty"))


def full_like_impl(b, a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                   device=None):
    fname = "np.full_like"
    reject(fname, {"order": order, "subok": subok, "device": device},
           order=("K", "C", "A"), subok=True, device=None)
    dt, sh = _like_defaults(a, dtype, shape, fname)
    fill = check_operand(fill_value, fname)
    if _keeps_order(a, order, shape) and not isinstance(fill, Proxy) and not is_symbolic(fill):
        try:                                    # NumPy's own conversion of the fill value
            value = np.full_like(np.empty((), dt), fill)[()]
        except (OverflowError, ValueError, TypeError):
            value = None                        # "full" below raises as NumPy does
        if value is not None:
            return _like_in_order(b, a, dt, value)
    return b.emit("full", fill, shape=sh, dtype=dt)


def _int_bound(x, what):
    if isinstance(x, (float, np.floating)) or (is_weak_value(x) and weak_type(x) is not int):
        raise unsupported("np.arange", f"a non-integer {what} ({x!r})",
                          "use integer bounds, or compute a float range as start + step * np.arange(n)")
    if is_proxy(x):
        raise unsupported("np.arange", f"a {what} only known at run time (not a size)",
                          kind="data_dependent")
    return size_arg(x, "np.arange")


def arange_impl(b, *args, dtype=None, device=None, like=None, **kw):
    fname = "np.arange"
    reject(fname, {"device": device, "like": like}, device=None, like=None)
    if kw:
        named = [kw.pop(k) for k in ("start", "stop", "step") if k in kw]
        if kw:
            raise NumpyError(TypeError(f"arange() got an unexpected keyword argument '{next(iter(kw))}'"))
        args = args + tuple(named)
    if not 1 <= len(args) <= 3:
        raise NumpyError(TypeError("arange() requires between 1 and 3 positional arguments"))
    if len(args) == 1:
        args = (0, args[0])
    start, stop, step = (args + (1,))[:3]
    if any(isinstance(v, float) or pytype_of(v) is float for v in (start, stop, step)):
        return arange_float(b, start, stop, step, dtype)
    start, stop = _int_bound(start, "start"), _int_bound(stop, "stop")
    step = _int_bound(step, "step")
    if not isinstance(step, int):
        raise unsupported(fname, "a symbolic step", "use a constant step")
    if step == 0:
        raise NumpyError(ZeroDivisionError("division by zero"))
    dt = as_dtype(dtype, fname) or np.dtype(np.int64)
    return b.emit("arange", start, stop, step, dtype=dt)


# ---- np.mgrid / np.ogrid ------------------------------------------------------------------

def grid_getitem(b, key, sparse: bool):
    """np.mgrid[key] (sparse=False) / np.ogrid[key] as NumPy's nd_grid computes it: for a tuple
    of slices, sizes ceil((stop - start) / step), the common type of all bounds, and per axis
    `arange(size) * step + start` broadcast over the others (mgrid: stacked into one array of
    shape (ndim, *sizes); ogrid: a tuple of arrays of shape (1, .., size, .., 1)). A single
    slice is np.arange. Complex steps (point counts) are traced only with constant bounds."""
    fname = "np.ogrid" if sparse else "np.mgrid"
    if isinstance(key, slice):
        start = 0 if key.start is None else key.start
        if isinstance(key.step, complex):
            return _grid_axis(b, key, fname)[1]
        return arange_impl(b, start, key.stop, 1 if key.step is None else key.step)
    if not isinstance(key, tuple) or not all(isinstance(k, slice) for k in key):
        raise unsupported(fname, f"an index {key!r}", "index np.mgrid/np.ogrid with slices")
    axes = [_grid_axis(b, k, fname) for k in key]
    nd = len(axes)
    out = []
    for k, (size, values) in enumerate(axes):
        shape = tuple(size if j == k else 1 for j in range(nd))
        v = b.emit("reshape", values, shape=shape)
        if not sparse:
            v = b.emit("broadcast_to", v, shape=tuple(s for s, _ in axes))
        out.append(v)
    if sparse:
        return tuple(out)
    dt = np.result_type(*(v.dtype for v in out)) if out else np.dtype(np.int64)
    return b.emit("stack", *(b.emit("astype", v, dtype=dt) if v.dtype != dt else v for v in out), axis=0)


def _grid_axis(b, k: slice, fname):
    """(size, values) of one slice of an nd_grid key."""
    start = 0 if k.start is None else k.start
    step = 1 if k.step is None else k.step
    stop = k.stop
    for v in (start, stop, step):
        if is_proxy(v) or not (isinstance(v, (int, float, complex)) or is_symbolic(v)) or isinstance(v, bool):
            raise unsupported(fname, f"a bound {v!r}", "use constant or size bounds", kind="data_dependent")
    if isinstance(step, complex):
        if not all(isinstance(v, (int, float)) for v in (start, stop)):
            raise unsupported(fname, "a complex step with symbolic bounds")
        size = int(abs(step))
        typ = np.result_type(start, stop, abs(step))
        step = (stop - start) / float(size - 1) if size != 1 else 1
    else:
        if all(isinstance(v, (int, float)) for v in (start, stop, step)):
            size = int(math.ceil((stop - start) / step))
        elif all(pytype_of(v) is int or isinstance(v, int) for v in (start, stop, step)) and isinstance(step, int):
            size = -((start - stop) // step)                     # ceil division of ints
        else:
            raise unsupported(fname, "float bounds with symbolic sizes")
        typ = np.result_type(*(0.0 if isinstance(v, float) or pytype_of(v) is float else 0
                               for v in (start, stop, step)))
        if size < 0:                                             # a guard when symbolic
            raise NumpyError(ValueError("negative dimensions are not allowed"))
    values = b.emit("arange", 0, size, 1, dtype=np.dtype(typ))
    if not (isinstance(step, int) and step == 1):
        values = b.emit("multiply", values, step)
    if not (isinstance(start, int) and start == 0):
        values = b.emit("add", values, start)
    return size, values
