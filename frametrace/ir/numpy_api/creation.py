"""np.zeros / ones / empty / full, their *_like forms, and np.arange with integer bounds."""
from __future__ import annotations

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
