"""np.gradient with uniform spacing, as NumPy computes it (numpy/lib/_function_base_impl.py).

For each axis: a new array like f (its memory order; float64 for integer input), the interior
`(f[2:] - f[:-2]) / (2. * dx)` and the two edges (first order: `(f[1] - f[0]) / dx`; second
order: `a * f[0] + b * f[1] + c * f[2]` with NumPy's coefficients), written by the same
indexing and arithmetic ops a user's code would emit, in NumPy's order of operations: NumPy's
values and dtypes (NEP 50: float32 data with a Python float spacing stays float32), one fused
kernel. One axis gives an array, several a tuple.

Spacings: none, one scalar for every axis, or one scalar per axis (constants, NumPy or run-time
Python scalars, 0-d arrays). Coordinate arrays (`np.gradient(y, x)`) are not traced: NumPy
chooses between its uniform and non-uniform formulas by comparing the coordinates' differences,
a decision on data (a graph break naming the call).
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError, Unsupported
from ..builder import Proxy
from ..fake import FakeArray
from ..ops.promotion import probe
from ..ops.symbolic import is_symbolic
from .common import as_array, normalize_axes
from .creation import empty_like_impl
from .indexing import getitem, setitem

_FNAME = "np.gradient"


def _arith(b, op: str, a, c):
    """a op c: Python's (NumPy's scalar) arithmetic on two constants, a graph op otherwise."""
    if not isinstance(a, Proxy) and not isinstance(c, Proxy) and not is_symbolic(a) and not is_symbolic(c):
        with np.errstate(all="ignore"):
            return {"*": lambda: a * c, "/": lambda: a / c, "+": lambda: a + c, "-": lambda: a - c}[op]()
    from .operators import binary_op
    return binary_op(b, op, a, c)


def _spacing(v):
    """A scalar spacing, or Unsupported for a coordinate array."""
    if isinstance(v, Proxy) and isinstance(v.fake, FakeArray) and v.fake.ndim != 0:
        raise Unsupported("np.gradient with coordinate arrays (NumPy picks its formula by comparing "
                          "their differences: a decision on data)", kind="call", context=_FNAME,
                          hints=("pass the spacing as a scalar (x[1] - x[0]) when the grid is uniform",))
    if isinstance(v, (list, tuple, np.ndarray)):
        if np.ndim(v) != 0:
            raise Unsupported("np.gradient with coordinate arrays", kind="call", context=_FNAME,
                              hints=("pass the spacing as a scalar when the grid is uniform",))
        v = np.asarray(v)[()]
    return v


def _index(ndim: int, axis: int, entry):
    return tuple(entry if d == axis else slice(None) for d in range(ndim))


def gradient_impl(b, f, *varargs, axis=None, edge_order=1):
    x = as_array(b, f, _FNAME)
    n_dim = x.ndim
    axes = tuple(range(n_dim)) if axis is None else normalize_axes(axis, n_dim, _FNAME,
                                                                   duplicate_msg="repeated axis")
    if len(varargs) == 0:
        dx = [1.0] * len(axes)
    elif len(varargs) == 1 and _is_scalar(varargs[0]):
        dx = [_spacing(varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        dx = [_spacing(v) for v in varargs]
    else:
        raise NumpyError(TypeError("invalid number of arguments"))
    if type(edge_order) is not int or edge_order not in (1, 2):
        if isinstance(edge_order, int) and edge_order > 2:
            raise NumpyError(ValueError("'edge_order' greater than 2 not supported"))
        raise Unsupported(f"np.gradient with edge_order={edge_order!r}", kind="call", context=_FNAME)
    kind = x.dtype.kind
    if kind in "iu":
        x, otype = b.emit("astype", x, dtype=np.dtype(np.float64)), np.dtype(np.float64)
    elif kind in "fc":
        otype = x.dtype
    else:
        probe(np.gradient, np.zeros(3, dtype=x.dtype))          # NumPy's error (bool subtract, ...)
        raise Unsupported(f"np.gradient of a {x.dtype} array", kind="call", context=_FNAME)

    outvals = []
    for ax, h in zip(axes, dx):
        if x.shape[ax] < edge_order + 1:                        # a guard on a symbolic size
            raise NumpyError(ValueError(
                "Shape of array too small to calculate a numerical gradient, "
                "at least (edge_order + 1) elements are required."))
        out = empty_like_impl(b, x, dtype=otype)

        def at(entry, ax=ax):
            return getitem(b, x, _index(n_dim, ax, entry))

        def put(entry, value, ax=ax, out=out):
            setitem(b, out, _index(n_dim, ax, entry), value)

        put(slice(1, -1), _arith(b, "/", _arith(b, "-", at(slice(2, None)), at(slice(None, -2))),
                                 _arith(b, "*", 2., h)))
        if edge_order == 1:
            put(0, _arith(b, "/", _arith(b, "-", at(1), at(0)), h))
            put(-1, _arith(b, "/", _arith(b, "-", at(-1), at(-2)), h))
        else:
            for entry, coefs, picks in ((0, (-1.5, 2., -0.5), (0, 1, 2)), (-1, (0.5, -2., 1.5), (-3, -2, -1))):
                a_, b_, c_ = (_arith(b, "/", k, h) for k in coefs)
                total = _arith(b, "+", _arith(b, "*", a_, at(picks[0])), _arith(b, "*", b_, at(picks[1])))
                put(entry, _arith(b, "+", total, _arith(b, "*", c_, at(picks[2]))))
        outvals.append(out)
    if len(axes) == 1:
        return outvals[0]
    return tuple(outvals)


def _is_scalar(v) -> bool:
    if isinstance(v, Proxy):
        return not isinstance(v.fake, FakeArray) or v.fake.ndim == 0
    return np.ndim(v) == 0


FUNCTIONS = {np.gradient: gradient_impl}
