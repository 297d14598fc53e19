"""Reductions and scans.

Canonical forms (x is an array or NumPy-scalar node; weak scalars are converted to NumPy
scalars by the API layer first):
  sum/prod/mean(x; axis, keepdims, dtype)
  var/std(x; axis, keepdims, dtype, ddof)
  max/min/any/all(x; axis, keepdims)
      axis: None (all axes) or a tuple of distinct non-negative ints < x.ndim
      keepdims: bool; dtype: np.dtype or None; ddof: int (constant)
  argmax/argmin(x; axis, keepdims)      axis: None (flattened) or a non-negative int
  cumsum/cumprod(x; axis, dtype)        axis: None (flattened -> 1-d of x.size) or int
Result dtypes are NumPy's (sum of bool/small ints -> int64, of small uints -> uint64,
mean/var/std of ints -> float64, var of complex -> float, argmax -> int64); a 0-d result is
a NumPy scalar. max/min/argmax/argmin over an axis of size 0 raise ValueError, as NumPy
does, even when the result itself is empty.
"""
from __future__ import annotations

import numpy as np
import sympy

from ...errors import NumpyError
from ..fake import FakeArray
from ..registry import Reduction, Scan, register
from .promotion import fake_like, probe
from .raising import no_identity_reduction_may_raise

_REDUCTIONS = {            # name -> (NumPy function, extra attrs beyond axis/keepdims)
    "sum": (np.sum, ("dtype",)), "prod": (np.prod, ("dtype",)), "mean": (np.mean, ("dtype",)),
    "var": (np.var, ("dtype", "ddof")), "std": (np.std, ("dtype", "ddof")),
    "max": (np.max, ()), "min": (np.min, ()), "any": (np.any, ()), "all": (np.all, ()),
}
_NO_IDENTITY = {"max": "maximum", "min": "minimum"}

# How each reduction lowers (see registry.Reduction); params: NumPy's positional parameters
_ARG = ("axis", "out", "keepdims")
LOWERING = {
    "sum": Reduction("red_add", "zero", "add", "logical_or",
                     params=("axis", "dtype", "out", "keepdims", "initial", "where")),
    "prod": Reduction("red_mul", "one", "multiply", "logical_and",
                      params=("axis", "dtype", "out", "keepdims", "initial", "where")),
    "mean": Reduction("red_add", "zero", "add", params=("axis", "dtype", "out", "keepdims", "where")),
    "var": Reduction(params=("axis", "dtype", "out", "ddof", "keepdims", "where", "mean", "correction")),
    "std": Reduction(params=("axis", "dtype", "out", "ddof", "keepdims", "where", "mean", "correction")),
    "max": Reduction("red_max", "lowest", "maximum", nonempty=True,        # NaN propagates
                     params=("axis", "out", "keepdims", "initial", "where")),
    "min": Reduction("red_min", "highest", "minimum", nonempty=True,
                     params=("axis", "out", "keepdims", "initial", "where")),
    "any": Reduction("red_or", "zero", "logical_or", params=("axis", "out", "keepdims", "where")),
    "all": Reduction("red_and", "one", "logical_and", params=("axis", "out", "keepdims", "where")),
    "argmax": Reduction(nonempty=True, params=_ARG),       # a loop of its own (best, index)
    "argmin": Reduction(nonempty=True, params=_ARG),
    "cumsum": Scan("add", params=("axis", "dtype", "out")),
    "cumprod": Scan("multiply", params=("axis", "dtype", "out")),
}


def _array(x, name) -> FakeArray:
    if not isinstance(x, FakeArray):
        raise TypeError(f"{name} expects an array or NumPy scalar operand, got {x!r}")
    return x


def _axes(axis, ndim, name):
    axes = tuple(range(ndim)) if axis is None else tuple(axis)
    if len(set(axes)) != len(axes) or any(not (0 <= a < ndim) for a in axes):
        raise ValueError(f"{name}: axis {axis!r} is not canonical for a {ndim}-d array")
    return axes


def reduced_shape(shape, axes, keepdims) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def check_nonempty(shape, axes, what: str) -> None:
    """NumPy refuses to reduce over an empty axis when the op has no identity. A size that
    depends on data (`v[p[i]:p[i + 1]].max()`, `x[mask].min()`) is not decided here: every
    backend checks it at run time (NumPy itself; the LLVM wrapper's and native entry's
    `empty_checks`; a native loop nest leaves for the generic path: loop_reductions.py)."""
    from ...errors import DataDependentError
    for i in axes:
        try:
            empty = bool(shape[i] == 0)
        except DataDependentError:
            continue
        if empty:
            raise NumpyError(ValueError(what))


def _reduction_meta(name, fn, extra):
    def meta(x, *, axis=None, keepdims=False, **attrs):
        x = _array(x, name)
        unknown = set(attrs) - set(extra)
        if unknown:
            raise TypeError(f"{name}: unknown attributes {sorted(unknown)}")
        value = probe(fn, x, axis=axis, keepdims=keepdims, **attrs)
        axes = _axes(axis, x.ndim, name)
        if name in _NO_IDENTITY:
            check_nonempty(x.shape, axes, f"zero-size array to reduction operation "
                                          f"{_NO_IDENTITY[name]} which has no identity")
        return fake_like(value, reduced_shape(x.shape, axes, keepdims))
    meta.__name__ = f"{name}_meta"
    meta.__doc__ = f"np.{name}(x, axis, keepdims{''.join(', ' + e for e in extra)})"
    return meta


def _count(node):
    """The number of elements each result element reduces (int or sympy)."""
    x, axis = node.args[0], node.attr("axis")
    n = 1
    for d in range(x.ndim) if axis is None else axis:
        n = n * x.shape[d]
    return n


def _mean_warns(node):
    """np.mean (numpy/_core/_methods.py _mean) warns before summing over nothing."""
    return [(sympy.Eq(_count(node), 0), "Mean of empty slice")]


def _var_warns(node):
    """np.var / np.std (_methods._var) warn when ddof leaves no degree of freedom."""
    return [(sympy.Ge(node.attr("ddof") or 0, _count(node)), "Degrees of freedom <= 0 for slice")]


_WARNS = {"mean": _mean_warns, "var": _var_warns, "std": _var_warns}

for _name, (_fn, _extra) in _REDUCTIONS.items():
    register(_name, kind="reduction", ref=_fn, lowering=LOWERING[_name], layout="keep",
             may_raise=no_identity_reduction_may_raise if _name in _NO_IDENTITY else None,
             warns=_WARNS.get(_name))(
        _reduction_meta(_name, _fn, _extra))


def _arg_meta(name, fn):
    def meta(x, *, axis=None, keepdims=False):
        x = _array(x, name)
        if axis is not None and not (isinstance(axis, int) and 0 <= axis < x.ndim):
            raise ValueError(f"{name}: axis {axis!r} is not canonical for a {x.ndim}-d array")
        value = probe(fn, x, axis=axis, keepdims=keepdims)
        axes = tuple(range(x.ndim)) if axis is None else (axis,)
        check_nonempty(x.shape, axes, f"attempt to get {name} of an empty sequence")
        if axis is None:
            shape = (1,) * x.ndim if keepdims else ()
        else:
            shape = reduced_shape(x.shape, axes, keepdims)
        return fake_like(value, shape)
    meta.__name__ = f"{name}_meta"
    meta.__doc__ = f"np.{name}(x, axis: int | None, keepdims) -> int64 indices"
    return meta


register("argmax", kind="reduction", ref=np.argmax, may_raise=no_identity_reduction_may_raise,
         lowering=LOWERING["argmax"], layout="c")(
    _arg_meta("argmax", np.argmax))
register("argmin", kind="reduction", ref=np.argmin, may_raise=no_identity_reduction_may_raise,
         lowering=LOWERING["argmin"], layout="c")(
    _arg_meta("argmin", np.argmin))


def _scan_meta(name, fn):
    def meta(x, *, axis=None, dtype=None):
        x = _array(x, name)
        if axis is not None and not (isinstance(axis, int) and 0 <= axis < x.ndim):
            raise ValueError(f"{name}: axis {axis!r} is not canonical for a {x.ndim}-d array")
        value = probe(fn, x, axis=axis, dtype=dtype)
        return fake_like(value, (x.size,) if axis is None else x.shape)
    meta.__name__ = f"{name}_meta"
    meta.__doc__ = f"np.{name}(x, axis: int | None, dtype); axis None scans the flattened array"
    return meta


register("cumsum", kind="scan", ref=np.cumsum, lowering=LOWERING["cumsum"])(
    _scan_meta("cumsum", np.cumsum))
register("cumprod", kind="scan", ref=np.cumprod, lowering=LOWERING["cumprod"])(
    _scan_meta("cumprod", np.cumprod))
