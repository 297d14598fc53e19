"""Exact equality of constants as guards need it: floats and complex values by bits.

`==` cannot tell -0.0 from 0.0 and says NaN != NaN; a guard on a baked-in float must do both
(NaN equals NaN whatever its payload, -0.0 differs from 0.0). Finite non-zero floats compare
exactly with `==`, so only zeros, infinities and NaN need this; complex values likewise per part.
"""
from __future__ import annotations

import math
import numbers


def needs_bits(value) -> bool:
    """True when `==` would not be exact for this float/complex constant."""
    if isinstance(value, (bool, numbers.Integral)):
        return False
    if isinstance(value, numbers.Real):
        value = float(value)
        return value == 0.0 or not math.isfinite(value)
    if isinstance(value, numbers.Complex):
        return needs_bits(float(value.real)) or needs_bits(float(value.imag))
    return False


def _same_float(a: float, b: float) -> bool:
    if a != a:
        return b != b
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def same_bits(a, b) -> bool:
    """`a` (a frame value of the guarded exact type) equals constant `b` exactly."""
    if type(a) is not type(b):
        return False
    if isinstance(b, numbers.Integral):
        return bool(a == b)
    if isinstance(b, numbers.Real):
        return _same_float(float(a), float(b))
    if isinstance(b, numbers.Complex):
        return _same_float(float(a.real), float(b.real)) and _same_float(float(a.imag), float(b.imag))
    return bool(a == b)

