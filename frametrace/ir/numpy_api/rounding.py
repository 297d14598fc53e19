"""Rounding: np.round / np.around / ndarray.round with any constant `decimals`, and Python's
builtin round() of values computed in the graph.

np.round follows NumPy's PyArray_Round (multiarray/calculation.c), as graph ops that fuse:

  floats, decimals == 0    rint(x)
  floats, decimals > 0     rint(x * f) / f      f = NumPy's power_of_ten(decimals), a Python
  floats, decimals < 0     rint(x / f) * f      float (weak: float32 stays float32)
  ints, decimals >= 0      a copy
  ints, decimals < 0       the float64 rint(x / f) * f cast back to the int dtype (NumPy's
                           unsafe cast: 254 uint8 at -2 is 300 -> 44)
  bools                    float16 for decimals == 0; NumPy's own exception otherwise

NumPy writes decimals != 0 results into a new C-ordered array (F-ordered for an F-contiguous
input): a copy with order "A" first, so the fused ops keep that layout. A 0-d result is a NumPy
scalar. Not traced (a graph break naming the call): complex values with decimals != 0,
decimals computed at run time, out=, and a factor f that overflows the dtype (float16 at 5+).

Python's round():

  round(np scalar)         int(np.round(s)): a rint in the graph, then Python's int()
  round(np scalar, n)      np.round(s, n), a NumPy scalar of s's dtype (NumPy's __round__)
  round(float)             Python's int(rint(v)): round-half-even, ValueError for NaN,
                           OverflowError for inf, exactly as round() raises
  round(float, n)          Python's own float.__round__ run in the wrapper (correctly rounded:
                           round(2.675, 2) == 2.67), op `py_round_float`
  round(int, n)            Python's own int.__round__ in the wrapper, op `py_round_int`
"""
from __future__ import annotations

import operator

import numpy as np

from ...errors import NumpyError, Unsupported
from ..builder import Proxy
from ..fake import FakeArray, FakeScalar
from ..ops.opaque import register_opaque
from ..ops.promotion import probe
from ..ops.symbolic import is_symbolic
from .common import as_array, reject

_P10 = (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)


def power_of_ten(n: int) -> float:
    """NumPy's power_of_ten: exact up to 1e22, repeated multiplication by 10 past 1e9."""
    if n < 9:
        return _P10[n]
    ret = 1e9
    while n > 9:
        ret *= 10.0
        n -= 1
    return ret


def _decimals(fname: str, decimals) -> int:
    if isinstance(decimals, Proxy) or not isinstance(decimals, (int, np.integer)):
        if isinstance(decimals, Proxy) or hasattr(decimals, "__index__"):
            raise Unsupported(f"{fname} with decimals computed at run time", kind="call", context=fname,
                              hints=("pass decimals as a constant",))
        probe(np.round, np.zeros(1), decimals)        # NumPy's TypeError
        raise Unsupported(f"{fname} with decimals={decimals!r}", kind="call", context=fname)
    return int(decimals)


def _scalar_if_0d(b, r):
    if isinstance(r.fake, FakeArray) and r.ndim == 0 and not r.scalar:
        return b.emit("getitem", r, index=())
    return r


def round_array(b, x, decimals: int, fname: str = "np.round"):
    """np.round(x, decimals) of a traced array or NumPy scalar x (a FakeArray proxy)."""
    kind = x.dtype.kind
    if kind == "b":
        if decimals != 0:
            probe(np.round, np.zeros(1, dtype=bool), decimals)   # NumPy's casting error
            raise Unsupported(f"{fname} of bools with decimals={decimals}", kind="call", context=fname)
        return _scalar_if_0d(b, b.emit("astype", x, dtype=np.dtype(np.float16)))
    if kind in "iu":
        if decimals >= 0:
            return _scalar_if_0d(b, b.emit("astype", x, dtype=x.dtype))
        from .operators import binary_op
        f = power_of_ten(-decimals)
        v = b.emit("copy", x, order="A") if x.ndim >= 2 else _as_1d(b, x)    # NumPy's C/F result
        y = b.emit("rint", binary_op(b, "/", v, f))
        y = binary_op(b, "*", y, f)
        return _back(b, x, b.emit("astype", y, dtype=x.dtype))
    if kind not in "fc":
        raise Unsupported(f"{fname} of a {x.dtype} array", kind="call", context=fname)
    if decimals == 0:
        return b.emit("rint", x)
    if kind == "c":
        raise Unsupported(f"{fname} of complex values with decimals={decimals}", kind="call", context=fname,
                          hints=("round x.real and x.imag separately",))
    f = power_of_ten(abs(decimals))
    with np.errstate(all="ignore"):
        overflows = np.isfinite(f) and not np.isfinite(x.dtype.type(f))
    if overflows:
        raise Unsupported(f"{fname} of {x.dtype} with decimals={decimals} (10**{abs(decimals)} overflows "
                          f"{x.dtype})", kind="call", context=fname)
    from .operators import binary_op
    v = b.emit("copy", x, order="A") if x.ndim >= 2 else _as_1d(b, x)   # NumPy's C/F result
    first, then = ("*", "/") if decimals > 0 else ("/", "*")
    y = b.emit("rint", binary_op(b, first, v, f))
    return _back(b, x, binary_op(b, then, y, f))


def _as_1d(b, x):
    """NumPy rounds into an array (out=), also for a 0-d input or a NumPy scalar: its warnings
    read "in multiply", not "in scalar multiply". A 0-d value is computed as one element."""
    return b.emit("reshape", b.emit("copy", x), shape=(1,)) if x.ndim == 0 else x


def _back(b, x, r):
    return b.emit("getitem", r, index=(0,)) if x.ndim == 0 else r


def round_impl(b, a, decimals=0, out=None):
    """np.round / np.around / ndarray.round."""
    reject("np.round", {"out": out}, out=None)
    d = _decimals("np.round", decimals)
    return round_array(b, as_array(b, a, "np.round"), d)


def _round_float(v, ndigits):
    return round(float(v), ndigits)


def _round_int(v, ndigits):
    return round(int(v), ndigits)


def _real_scalar_rule(what):
    def rule(v, ndigits=None):
        if isinstance(v, FakeArray) and (v.ndim != 0 or v.dtype.kind not in "biuf"):
            raise Unsupported(f"{what} of a {v.dtype} array", kind="call", context=what)
        return ()
    return rule


register_opaque("py_round_float", _round_float, _real_scalar_rule("round()"), pytype=float,
                probe_result=False, doc="round(v, n): Python's float.__round__ of a value computed in the graph")
register_opaque("py_round_int", _round_int, _real_scalar_rule("round()"), pytype=int,
                probe_result=False, doc="round(v, n): Python's int.__round__ of a value computed in the graph")


def python_round(b, x: Proxy, ndigits=None):
    """Builtin round(x, ndigits) of a traced NumPy scalar or run-time Python number."""
    from .python_scalars import python_int
    fake = x.fake
    if isinstance(fake, FakeArray):
        if not fake.scalar:
            raise NumpyError(TypeError("type numpy.ndarray doesn't define __round__ method"))
        if fake.dtype.kind not in "iuf":
            probe(round, fake.dtype.type(0))                   # NumPy's TypeError (bool, ...)
            raise Unsupported(f"round() of a {fake.dtype} value", kind="call", context="round")
        if ndigits is None:
            return python_int(b, b.emit("rint", x) if fake.dtype.kind == "f" else x)
        return round_array(b, x, _decimals("round", ndigits), "round")
    if fake.pytype is bool or fake.pytype is complex:
        raise Unsupported(f"round() of a run-time {fake.pytype.__name__}", kind="call", context="round")
    if ndigits is None:
        if fake.pytype is int:
            return x
        return python_int(b, b.emit("rint", as_array(b, x, "round")))
    if isinstance(ndigits, Proxy):
        if not (isinstance(ndigits.fake, FakeScalar) and ndigits.fake.pytype is int):
            raise Unsupported("round() with ndigits computed in the graph that is not a Python int",
                              kind="call", context="round")
    elif not is_symbolic(ndigits):
        if not hasattr(ndigits, "__index__"):
            probe(round, 1.5, ndigits)                         # Python's TypeError
        ndigits = operator.index(ndigits)
    return b.emit("py_round_int" if fake.pytype is int else "py_round_float", x, ndigits)
