"""np.linalg.norm: decomposed into our fusable ops exactly as NumPy computes it, else opaque.

NumPy's `norm` (numpy/linalg/_linalg.py) is a short composition of ufuncs and reductions:
ints and bools are first cast to float64, then e.g. `sqrt(add.reduce((x.conj() * x).real,
axis))` for ord None/2 or `add.reduce(abs(x), axis)` for ord 1 (without an axis, ord None:
`sqrt(x.ravel().dot(x.ravel()))`, BLAS's dot: emitted as NumPy's dot call for a 1-d x). For real float32/float64
operands this module emits the same ops in the same order (so the reduction fuses with its
neighbours, and the numpy backend reproduces NumPy's values exactly); what our kernels cannot
express runs NumPy's own `norm` as an opaque op inside the graph: complex and float16
operands, the singular-value norms (matrix ord 2, -2, 'nuc'), and an `ord` known only at run
time. Errors NumPy raises on the arguments (a bad ord, a duplicate or out-of-range axis, too
many axes) are raised the same way at trace time.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..ops.opaque import register_opaque
from .common import as_array, bind, const_bool, is_proxy, normalize_axis
from .layout import is_c_contiguous
from .opaque_api import opaque_function
from .operators import fast_power
from .shape_rules import reduced_shape

LA = np.linalg
_PARAMS = ("x", "ord", "axis", "keepdims")
_NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _norm_shape(x, ord=None, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return ()
    return reduced_shape(x.shape, axis, keepdims)


register_opaque("linalg_norm", LA.norm, _norm_shape)
_opaque_norm = opaque_function("linalg_norm", "np.linalg.norm", _PARAMS, ("x",))


def _sum(b, x, axes, keepdims=False):
    return b.emit("sum", x, axis=axes, keepdims=keepdims, dtype=None)


def _square_real(b, x):
    """(x.conj() * x).real for a real x: x * x."""
    return b.emit("multiply", x, x)


def _max_from_zero(b, x, axes, keepdims=False):
    """x.max(axis, initial=0) for x >= 0 (or NaN): the max, or 0 over an empty axis."""
    if any(bool(x.shape[a] == 0) for a in axes):
        return _sum(b, x, axes, keepdims)          # all zeros, of the max's shape and dtype
    return b.emit("max", x, axis=axes, keepdims=keepdims)


def _inplace_power(b, x, e):
    """`x **= e` for a float array x: NumPy's shortcut (operators.fast_power) or np.power,
    cast back to x.dtype."""
    fast = fast_power(b, x, e)
    r = b.emit(fast, x) if fast is not None else b.emit("power", x, e)
    return r if r.dtype == x.dtype else b.emit("astype", r, dtype=x.dtype)


def _vector_norm(b, x, ord, axes, keepdims):
    inf = np.inf
    if ord == inf:
        return _max_from_zero(b, b.emit("absolute", x), axes, keepdims)
    if ord == -inf:
        return b.emit("min", b.emit("absolute", x), axis=axes, keepdims=keepdims)
    if ord == 0:
        nz = b.emit("astype", b.emit("not_equal", x, 0), dtype=x.dtype)
        return _sum(b, nz, axes, keepdims)
    if ord == 1:
        return _sum(b, b.emit("absolute", x), axes, keepdims)
    if ord is None or ord == 2:
        return b.emit("sqrt", _sum(b, _square_real(b, x), axes, keepdims))
    if isinstance(ord, str):
        raise NumpyError(ValueError(f"Invalid norm order '{ord}' for vectors"))
    absx = _inplace_power(b, b.emit("absolute", x), ord)
    ret = _sum(b, absx, axes, keepdims)
    return _inplace_power(b, ret, np.reciprocal(ord, dtype=ret.dtype))


def _matrix_norm(b, x, ord, row, col, keepdims):
    inf = np.inf
    if ord in (2, -2, "nuc"):
        return None                                # singular values: NumPy's LAPACK call
    if ord in (None, "fro", "f"):
        return b.emit("sqrt", _sum(b, _square_real(b, x), (row, col), keepdims))
    if ord in (1, -1):                 # column sums, then their max / min
        inner, outer = row, col - (col > row)
    elif ord in (inf, -inf):           # row sums, then their max / min
        inner, outer = col, row - (row > col)
    else:
        raise NumpyError(ValueError("Invalid norm order for matrices."))
    sums = _sum(b, b.emit("absolute", x), (inner,))
    ret = (_max_from_zero(b, sums, (outer,)) if ord in (1, inf)
           else b.emit("min", sums, axis=(outer,), keepdims=False))
    if keepdims:
        ret = b.emit("expand_dims", ret, axis=tuple(sorted((row, col))))
    return ret


def _ord_constant(ord) -> bool:
    return ord is None or isinstance(ord, str) or (
        not is_proxy(ord) and isinstance(ord, (int, float, np.integer, np.floating))
        and not isinstance(ord, (bool, np.bool_)))


def norm_impl(b, *args, **kwargs):
    """np.linalg.norm(x, ord=None, axis=None, keepdims=False)."""
    fname = "np.linalg.norm"
    p = bind(fname, _PARAMS, args, kwargs)
    ord, axis = p.get("ord"), p.get("axis")
    keepdims = const_bool(p.get("keepdims", False), fname, "keepdims")
    x = as_array(b, p["x"], fname)
    if x.dtype.kind not in "fc":
        x = b.emit("astype", x, dtype=np.dtype(np.float64))
    if x.dtype not in _NATIVE_DTYPES or not _ord_constant(ord) or is_proxy(axis):
        return _opaque_norm(b, *args, **kwargs)
    nd = x.ndim
    if axis is None and (ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1)):
        # NumPy: sqrt(x.ravel(order="K").dot(...)), reshaped to ndim ones for keepdims: BLAS's
        # dot (its kernel depends on the stride), whose order is not a pairwise sum's. A 1-d x's
        # ravel is x where contiguous, else a contiguous copy, a C-contiguous N-d x's its C-order
        # view; NumPy's dot call (lower/matmul.py) then gives NumPy's bits. Other N-d layouts:
        # NumPy's norm (its ravel in memory order)
        contiguous = is_c_contiguous(b, x) is True
        if nd != 1 and not contiguous:
            return _opaque_norm(b, *args, **kwargs)
        flat = b.emit("reshape", x, shape=(x.size,)) if contiguous else b.emit("copy", x, order="C")
        ret = b.emit("sqrt", b.emit("dot", flat, flat))
        return b.emit("reshape", ret, shape=(1,) * nd) if keepdims else ret
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        if isinstance(axis, list):
            raise NumpyError(TypeError("'axis' must be None, an integer or a tuple of integers"))
        axis = (axis,)
    if len(axis) == 1:
        return _vector_norm(b, x, ord, (normalize_axis(axis[0], nd, fname),), keepdims)
    if len(axis) == 2:
        row, col = (normalize_axis(a, nd, fname) for a in axis)
        if row == col:
            raise NumpyError(ValueError("Duplicate axes given."))
        ret = _matrix_norm(b, x, ord, row, col, keepdims)
        return _opaque_norm(b, *args, **kwargs) if ret is None else ret
    raise NumpyError(ValueError("Improper number of dimensions to norm."))


FUNCTIONS = {LA.norm: norm_impl}
