"""Opaque NumPy calls of signal and index programs (NumPy's code inside the graph; the values
around them fuse): np.fft's one-axis transforms fft, ifft, rfft, irfft, hfft, ihfft (NumPy's
dtypes: float32 input gives complex64 since NumPy 2) and np.unravel_index (one op per
coordinate); NumPy's errors (n < 1, a bad axis or norm, an index out of range) from NumPy."""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..ops.opaque import register_opaque
from ..ops.promotion import shape_of
from ..ops.symbolic import is_static
from .opaque_api import opaque_function

_PARAMS = ("a", "n", "axis", "norm", "out")


def _length_rule(kind: str):
    """The result's shape: the transformed axis has length n (or the input's), n // 2 + 1 for
    rfft / ihfft, 2 * (m - 1) for irfft / hfft without n."""
    def rule(a, n=None, axis=-1, norm=None, out=None):
        s = list(shape_of(a))
        if not s:
            raise NumpyError(ValueError("Invalid number of FFT data points (0) specified."))
        ax = axis % len(s) if -len(s) <= axis < len(s) else None
        if ax is None:
            raise NumpyError(np.exceptions.AxisError(axis, len(s)))
        if n is not None and is_static(n) and n < 1:
            raise NumpyError(ValueError(f"Invalid number of FFT data points ({n}) specified."))
        m = s[ax] if n is None else n
        if kind in ("rfft", "ihfft"):
            s[ax] = m // 2 + 1
        elif kind in ("irfft", "hfft"):
            s[ax] = 2 * (m - 1) if n is None else n
        else:
            s[ax] = m
        return tuple(s)
    return rule


FUNCTIONS = {}
for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    _fn = getattr(np.fft, _name)
    register_opaque(f"fft_{_name}", _fn, _length_rule(_name))
    FUNCTIONS[_fn] = opaque_function(f"fft_{_name}", f"np.fft.{_name}", _PARAMS, ("a",))


# np.unravel_index(indices, shape): one opaque op per coordinate (NumPy's tuple result, item k),
# each shaped like the indices; NumPy's ValueError for an index out of range, raised by NumPy
_MAX_DIMS = 8


def _unravel_rule(indices, shape=None, order="C"):
    return tuple(shape_of(indices))


for _k in range(_MAX_DIMS):
    register_opaque(f"unravel_index_{_k}", np.unravel_index, _unravel_rule, item=_k)


def unravel_index_impl(b, indices, shape, order="C"):
    from .opaque_api import constant
    from .common import check_operand
    dims = constant(shape, "np.unravel_index", "shape")
    dims = dims if isinstance(dims, tuple) else (dims,)
    if not 1 <= len(dims) <= _MAX_DIMS:
        from ...errors import Unsupported
        raise Unsupported(f"np.unravel_index into {len(dims)} dimensions", kind="call", context="np.unravel_index")
    x = check_operand(indices, "np.unravel_index")
    return tuple(b.emit(f"unravel_index_{k}", x, shape=dims, order=order) for k in range(len(dims)))


FUNCTIONS[np.unravel_index] = unravel_index_impl
