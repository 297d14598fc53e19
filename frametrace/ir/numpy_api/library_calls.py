"""Sorting, statistics, signal and creation functions as opaque NumPy calls.

Registered side by side: the op (its NumPy function and shape rule) and the API binding
(NumPy's parameter names). Data-dependent result sizes (np.unique's counts, np.bincount)
are unbacked symbols bound from the result at run time.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError, Unsupported
from ..fake import FakeArray
from ..ops.broadcast import broadcast_shapes
from ..ops.opaque import register_opaque
from ..ops.promotion import shape_of
from ..ops.symbolic import is_static, sym_max, sym_min
from .data_dependent import unique as unique_values
from .opaque_api import opaque_function
from .shape_rules import along_axis_shape, quantile_rule, reduced_shape, reduction_rule, same_shape


def _broadcast_rule(a, b, *args, **kw):
    return broadcast_shapes(shape_of(a), shape_of(b))


def _searchsorted_rule(a, v, side="left", sorter=None):
    return tuple(np.shape(v)) if not hasattr(v, "shape") else tuple(v.shape)


def _partition_rule(a, kth, axis=-1, kind="introselect", order=None):
    s = along_axis_shape(a, axis=axis)
    return FakeArray(s, a.dtype)


def _average_rule(a, axis=None, weights=None, returned=False, keepdims=False):
    return reduced_shape(a.shape, axis, keepdims)


def _cov_rule(m, y=None, rowvar=True, **kw):
    if m.ndim == 1 and y is None:
        return ()
    rows = (m.shape[0] if rowvar else m.shape[1]) if m.ndim == 2 else 1
    if y is not None:
        rows = rows + ((y.shape[0] if rowvar else y.shape[1]) if y.ndim == 2 else 1)
    return () if rows == 1 else (rows, rows)       # NumPy squeezes a single variable's result


def _histogram_rule(a, bins=10, range=None, density=None, weights=None):
    if not isinstance(bins, int):
        raise Unsupported("np.histogram with bin edges or a bin rule", kind="call", context="np.histogram")
    return (bins,)


def _histogram_edges_rule(a, bins=10, range=None, density=None, weights=None):
    return (_histogram_rule(a, bins)[0] + 1,)


def _convolve_rule(a, v, mode="full"):
    n = shape_of(a)[0] if shape_of(a) else 1
    m = len(v) if isinstance(v, tuple) else (shape_of(v)[0] if shape_of(v) else 1)
    if mode == "full":
        return (n + m - 1,)
    if mode == "same":
        return (sym_max(n, m),)
    if mode == "valid":
        return (sym_max(n, m) - sym_min(n, m) + 1,)
    raise NumpyError(ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})"))


def _space_rule(start=None, stop=None, num=50, endpoint=True, dtype=None, axis=0, base=10.0, retstep=False):
    for s in (start, stop):
        if shape_of(s):
            raise Unsupported("np.linspace & co. with array endpoints", kind="call", context="np.linspace")
    if retstep:
        raise Unsupported("np.linspace(retstep=True)", kind="call", context="np.linspace")
    if is_static(num) and num < 0:
        raise NumpyError(ValueError(f"Number of samples, {num}, must be non-negative."))
    return (num,)


def _pad_rule(array, pad_width, mode="constant", **kw):
    widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (array.ndim, 2))
    if any(not isinstance(w, int) for w in widths.ravel()):
        raise Unsupported("np.pad with non-constant widths", kind="call", context="np.pad")
    return tuple(d + int(lo) + int(hi) for d, (lo, hi) in zip(array.shape, widths, strict=True))


def _diag_rule(v, k=0):
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        return (n, n)
    if v.ndim != 2:
        raise NumpyError(ValueError("Input must be 1- or 2-d."))
    r, c = v.shape
    return (sym_max(sym_min(r, c - k) if k >= 0 else sym_min(r + k, c), 0),)


def _trace_rule(a, offset=0, axis1=0, axis2=1, dtype=None):
    return tuple(d for i, d in enumerate(a.shape) if i not in (axis1 % a.ndim, axis2 % a.ndim))


def _bincount_rule(x, weights=None, minlength=0, size=None):
    return (size,)


def _unique_counts_rule(ar, size=None):
    return FakeArray((size,), np.dtype(np.int64))


def _count_nonzero_rule(a, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return None
    return FakeArray(reduced_shape(a.shape, axis, keepdims), np.dtype(np.intp))


_REDUCTIONS = ("median", "nanstd", "nanvar", "nanmedian")    # nanmax & co.: nan_reductions.py
_QUANTILES = ("percentile", "quantile", "nanpercentile", "nanquantile")
_ELEMENTWISE = ("sinc", "angle", "nan_to_num", "i0")    # not real_if_close: its dtype depends on the data

for _n in _REDUCTIONS:
    register_opaque(_n, getattr(np, _n), reduction_rule)
for _n in _QUANTILES:
    register_opaque(_n, getattr(np, _n), quantile_rule)
for _n in _ELEMENTWISE:
    register_opaque(_n, getattr(np, _n), same_shape)
for _n in ("sort", "argsort"):          # np.sort's binding: sorting.py (short rows are native)
    register_opaque(_n, getattr(np, _n), along_axis_shape)
register_opaque("partition", np.partition, _partition_rule)
register_opaque("searchsorted", np.searchsorted, _searchsorted_rule)
register_opaque("average", np.average, _average_rule)
register_opaque("cov", np.cov, _cov_rule)
register_opaque("corrcoef", np.corrcoef, _cov_rule)
register_opaque("histogram_hist", np.histogram, _histogram_rule, item=0)
register_opaque("histogram_edges", np.histogram, _histogram_edges_rule, item=1)
register_opaque("interp", np.interp, lambda x, xp, fp, **kw: tuple(shape_of(x)))
register_opaque("convolve", np.convolve, _convolve_rule)
register_opaque("correlate", np.correlate, _convolve_rule)
register_opaque("isclose", np.isclose, _broadcast_rule)
register_opaque("allclose", np.allclose, _broadcast_rule, pytype=bool)
register_opaque("array_equal", np.array_equal, lambda a1, a2, equal_nan=False: (), pytype=bool)
for _n in ("linspace", "logspace", "geomspace"):
    register_opaque(_n, getattr(np, _n), _space_rule)
register_opaque("pad", np.pad, _pad_rule)
register_opaque("diag", np.diag, _diag_rule)
register_opaque("trace", np.trace, _trace_rule)
register_opaque("diagonal", np.diagonal, lambda a, offset=0, axis1=0, axis2=1: _trace_rule(
    a, offset, axis1, axis2) + _diag_rule(FakeArray((a.shape[axis1], a.shape[axis2]), a.dtype), offset),
                doc="np.diagonal: NumPy's read-only view of the diagonal", aliases=True)
register_opaque("bincount", np.bincount, _bincount_rule, kind="gather")
register_opaque("unique_counts", lambda ar: np.unique(ar, return_counts=True)[1], _unique_counts_rule,
                kind="gather")
register_opaque("unique_index", lambda ar: np.unique(ar, return_index=True)[1], _unique_counts_rule,
                kind="gather")
register_opaque("unique_inverse", lambda ar: np.unique(ar, return_inverse=True)[1],
                lambda ar, size=None: FakeArray(tuple(ar.shape), np.dtype(np.int64)))


def _count_nonzero_meta(a, axis=None, keepdims=False):
    return _count_nonzero_rule(a, axis, keepdims)


register_opaque("count_nonzero", np.count_nonzero, lambda a: ())
register_opaque("count_nonzero_axis", np.count_nonzero, _count_nonzero_meta)


def _histogram_impl(b, a, bins=10, range=None, density=None, weights=None):
    names = ("a", "bins", "range", "density", "weights")
    args = (a, bins, range, density, weights)
    return (opaque_function("histogram_hist", "np.histogram", names, ("a", "weights"))(b, *args),
            opaque_function("histogram_edges", "np.histogram", names, ("a", "weights"))(b, *args))


def _bincount_impl(b, x, weights=None, minlength=0):
    if not (is_static(minlength)):
        raise Unsupported("np.bincount with a symbolic minlength", kind="call", context="np.bincount")
    env = getattr(b, "shape_env", None)
    if env is None:
        raise Unsupported("np.bincount needs a ShapeEnv", kind="data_dependent")
    from ...shapes import int_oo
    size = env.create_unbacked_symint(int(minlength), int_oo, source="np.bincount")
    return opaque_function("bincount", "np.bincount", ("x", "weights", "minlength", "size"), ("x", "weights"))(
        b, x, weights, minlength, size)


def _unique_impl(b, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kw):
    """np.unique with any of return_index/return_inverse/return_counts (axis=None): the
    values and counts/first indices share one unbacked size; the inverse has ar's shape."""
    if axis is not None or kw:
        raise Unsupported("np.unique with axis= or equal_nan=/sorted=", kind="call", context="np.unique")
    u = unique_values(b, ar)
    out = [u]
    for flag, op in ((return_index, "unique_index"), (return_inverse, "unique_inverse"),
                     (return_counts, "unique_counts")):
        if flag:
            out.append(opaque_function(op, "np.unique", ("ar", "size"), ("ar",))(b, ar, u.shape[0]))
    return out[0] if len(out) == 1 else tuple(out)


def _count_nonzero_impl(b, a, axis=None, *, keepdims=False):
    if axis is None and keepdims is False:
        return opaque_function("count_nonzero", "np.count_nonzero", ("a",))(b, a)
    return opaque_function("count_nonzero_axis", "np.count_nonzero", ("a", "axis", "keepdims"))(
        b, a, axis, keepdims)


FUNCTIONS = {
    np.median: opaque_function("median", "np.median", ("a", "axis", "out", "overwrite_input", "keepdims")),
    np.nanmedian: opaque_function("nanmedian", "np.nanmedian", ("a", "axis", "out", "overwrite_input",
                                                                "keepdims")),
    **{getattr(np, n): opaque_function(n, f"np.{n}", ("a", "axis", "dtype", "out", "ddof", "keepdims"))
       for n in ("nanstd", "nanvar")},
    **{getattr(np, n): opaque_function(n, f"np.{n}", ("a", "q", "axis", "out", "overwrite_input", "method",
                                                       "keepdims")) for n in _QUANTILES},
    np.sinc: opaque_function("sinc", "np.sinc", ("x",), ("x",)),
    np.angle: opaque_function("angle", "np.angle", ("z", "deg"), ("z",)),
    np.nan_to_num: opaque_function("nan_to_num", "np.nan_to_num", ("x", "copy", "nan", "posinf", "neginf"),
                                   ("x",)),
    np.i0: opaque_function("i0", "np.i0", ("x",), ("x",)),
    np.argsort: opaque_function("argsort", "np.argsort", ("a", "axis", "kind", "order")),
    np.partition: opaque_function("partition", "np.partition", ("a", "kth", "axis", "kind", "order")),
    np.searchsorted: opaque_function("searchsorted", "np.searchsorted", ("a", "v", "side", "sorter"),
                                     ("a", "v", "sorter")),
    np.average: opaque_function("average", "np.average", ("a", "axis", "weights", "returned", "keepdims"),
                                ("a", "weights")),
    np.cov: opaque_function("cov", "np.cov", ("m", "y", "rowvar", "bias", "ddof"), ("m", "y")),
    np.corrcoef: opaque_function("corrcoef", "np.corrcoef", ("x", "y", "rowvar"), ("x", "y")),
    np.histogram: _histogram_impl,
    np.interp: opaque_function("interp", "np.interp", ("x", "xp", "fp", "left", "right", "period"),
                               ("x", "xp", "fp")),
    np.convolve: opaque_function("convolve", "np.convolve", ("a", "v", "mode"), ("a", "v")),
    np.correlate: opaque_function("correlate", "np.correlate", ("a", "v", "mode"), ("a", "v")),
    np.isclose: opaque_function("isclose", "np.isclose", ("a", "b", "rtol", "atol", "equal_nan"), ("a", "b")),
    np.allclose: opaque_function("allclose", "np.allclose", ("a", "b", "rtol", "atol", "equal_nan"),
                                 ("a", "b")),
    np.array_equal: opaque_function("array_equal", "np.array_equal", ("a1", "a2", "equal_nan"), ("a1", "a2")),
    **{getattr(np, n): opaque_function(n, f"np.{n}", ("start", "stop", "num", "endpoint", "retstep", "dtype",
                                                       "axis"), ("start", "stop")) for n in ("linspace", "geomspace")},
    np.logspace: opaque_function("logspace", "np.logspace", ("start", "stop", "num", "endpoint", "base",
                                                             "dtype", "axis"), ("start", "stop")),
    np.diag: opaque_function("diag", "np.diag", ("v", "k"), ("v",)),
    np.trace: opaque_function("trace", "np.trace", ("a", "offset", "axis1", "axis2", "dtype")),
    np.diagonal: opaque_function("diagonal", "np.diagonal", ("a", "offset", "axis1", "axis2")),
    np.bincount: _bincount_impl,
    np.unique: _unique_impl,
    np.count_nonzero: _count_nonzero_impl,
}
