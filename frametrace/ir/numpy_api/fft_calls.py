"""np.fft's one-axis transforms as opaque calls (NumPy's pocketfft inside the graph; the values
around them fuse): fft, ifft, rfft, irfft, hfft, ihfft, with NumPy's dtypes (float32 input gives
complex64 since NumPy 2) and NumPy's errors (n < 1, a bad axis, a bad norm) from NumPy itself."""
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
