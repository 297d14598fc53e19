"""np.sum & co. and the matching ndarray methods, normalised to the reduction ops' attributes.

Function and method share one implementation (`x.sum(...)` is `np.sum(x, ...)`); the
positional parameter order is NumPy's for each family. Weak scalars are reduced as NumPy
scalars (`np.sum(3.0)` is np.float64); np.nansum / np.nanprod (and nancumsum /
nancumprod) reduce (scan) `where(isnan(x), 0 | 1, x)`, as NumPy computes them.
Unsupported: initial=, where=, mean=, correction=.
"""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
from ..registry import Reduction, Scan, lowered_as
from .literals import array_from_sequence, is_sequence
from .common import (as_array, as_dtype, bind, const_bool, normalize_axes, normalize_axis,
                     reject, unwrap_out, write_reduction_out)

# name -> NumPy's positional parameters after the operand, as registered (ir/ops/reductions.py)
PARAMS = {n: lw.params for n, lw in {**lowered_as(Reduction), **lowered_as(Scan)}.items()}
_HAS_DTYPE = {"sum", "prod", "mean", "var", "std"}
_UFUNC_REDUCE = {"sum", "prod", "max", "min", "any", "all"}
_ZERO_D_AXIS_OK = _UFUNC_REDUCE | {"argmax", "argmin", "cumsum", "cumprod"}


def _is_int_axis(axis) -> bool:
    return isinstance(axis, (int, np.integer)) and not isinstance(axis, (bool, np.bool_))


def _keepdims(p, fname):
    v = p.get("keepdims", False)
    return False if v is np._NoValue else const_bool(v, fname, "keepdims")


def _ddof(p, fname):
    ddof = p.get("ddof", 0)
    if isinstance(ddof, (bool, np.bool_)) or not isinstance(ddof, (int, float, np.integer, np.floating)):
        raise Unsupported(f"{fname}: a non-constant ddof={ddof!r} is not supported",
                          kind="call", context=fname)
    return ddof.item() if isinstance(ddof, np.generic) else ddof


def attrs_for(name: str, x, p: dict, fname: str) -> dict:
    """Canonical attributes of reduction/scan `name` from bound NumPy arguments."""
    axis = p.get("axis")
    if name in ("argmax", "argmin"):
        return {"axis": None if axis is None else normalize_axis(axis, x.ndim, fname),
                "keepdims": _keepdims(p, fname)}
    if name in ("cumsum", "cumprod"):
        return {"axis": None if axis is None else normalize_axis(axis, x.ndim, fname),
                "dtype": as_dtype(p.get("dtype"), fname)}
    attrs = {"axis": normalize_axes(axis, x.ndim, fname), "keepdims": _keepdims(p, fname)}
    if name in _HAS_DTYPE:
        attrs["dtype"] = as_dtype(p.get("dtype"), fname)
    if name in ("var", "std"):
        attrs["ddof"] = _ddof(p, fname)
    return attrs


def array_like_input(b, a, fname: str):
    """The array a reduction reads: a list or tuple becomes `np.asarray` of it, as NumPy does."""
    return array_from_sequence(b, a, None, fname) if is_sequence(a) else as_array(b, a, fname)


def reduction_impl(name: str, fname: str | None = None):
    """impl(b, a, *args, **kwargs) for np.<name>(a, ...) and a.<name>(...)."""
    fname = fname or f"np.{name}"
    params = PARAMS[name]

    def impl(b, a, *args, **kwargs):
        p = bind(fname, params, args, kwargs)
        reject(fname, p, initial=np._NoValue, where=(True, np._NoValue), mean=np._NoValue,
               correction=np._NoValue)
        x = array_like_input(b, a, fname)             # np.sum([a, b]), np.prod(x.shape): NumPy's array of it
        if x.ndim == 0 and name in _ZERO_D_AXIS_OK and _is_int_axis(p.get("axis")):
            # NumPy accepts axis=0 / -1 on a 0-d operand here and reduces over nothing
            normalize_axis(p["axis"], 1, fname)
            p["axis"] = () if name in _UFUNC_REDUCE else None
        result = b.emit(name, x, **attrs_for(name, x, p, fname))
        out = unwrap_out(p.get("out"), fname)
        return result if out is None else write_reduction_out(b, fname, result, out)
    impl.__name__ = f"{name}_impl"
    return impl



def nan_reduction_impl(name: str, fill):
    """np.nansum / np.nanprod / np.nancumsum / np.nancumprod: as NumPy, NaN replaced by `fill`
    (in float and complex arrays; ints and bools have none), then the reduction or scan."""
    fname = f"np.nan{name}"
    inner = reduction_impl(name, fname)

    def impl(b, a, *args, **kwargs):
        x = as_array(b, a, fname)
        if x.dtype.kind in "fc":
            x = b.emit("where", b.emit("isnan", x), fill, x)
        return inner(b, x, *args, **kwargs)
    impl.__name__ = f"nan{name}_impl"
    return impl
