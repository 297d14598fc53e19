"""Python's own scalar functions of values computed in the graph: `int(v)`, `math.f(v)` and
`x.item()`.

`n = int(np.ceil(t_end / dt))`, `math.sqrt(np.linalg.det(c))`, `math.exp(x[i])`: Python
computes these on a NumPy or Python scalar and returns a Python scalar, with Python's rules:
`int(nan)` raises ValueError, `int(inf)` OverflowError, `int(1e300)` is a big int,
`math.sqrt(-1.0)` raises "math domain error", `math.exp(1000.0)` "math range error". A node
here runs that very function in the wrapper (as opaque NumPy calls do), so every result and
exception is Python's own and the graph does not break. An exact integer conversion
(`int(x[i])` of an int64) is a cast in the graph instead: it cannot fail.

  py_int(v)              int(v); a FakeScalar(int) result
  math_<name>(*vs)       math.<name>(*vs); a FakeScalar of the function's result type
  item_method(b, x, *i)  x.item(*i): an element as a Python float / int / bool (no new op)
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ...errors import NumpyError, Unsupported
from ..builder import Proxy, record_fake
from ..fake import FakeArray, FakeScalar
from ..ops.symbolic import is_symbolic, same_size
from ..ops.opaque import register_opaque

# math functions of one or two real numbers, by the Python type they return
_MATH_INT = ("ceil", "floor", "trunc", "isqrt", "factorial", "gcd", "lcm", "comb", "perm")
_MATH_BOOL = ("isnan", "isinf", "isfinite", "isclose")
_MATH_FLOAT = ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
               "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
               "fabs", "copysign", "fmod", "remainder", "pow", "hypot", "degrees", "radians", "erf",
               "erfc", "gamma", "lgamma", "ldexp", "nextafter", "ulp", "cbrt")
MATH_RESULT = {**{n: int for n in _MATH_INT}, **{n: bool for n in _MATH_BOOL},
               **{n: float for n in _MATH_FLOAT}}


def _scalar_operand(x, what: str) -> None:
    if isinstance(x, FakeArray):
        if x.ndim != 0:
            raise Unsupported(f"{what} of an array with {x.ndim} dimensions", kind="call", context=what,
                              hints=("index the array to a single element first",))
        if x.dtype.kind not in "biuf":
            raise Unsupported(f"{what} of a {x.dtype} value", kind="call", context=what)
    elif not isinstance(x, FakeScalar) and not is_symbolic(x) and type(x) not in (int, float, bool):
        raise TypeError(f"{what}: expected a real scalar operand, got {x!r}")


def _operands_rule(what: str):
    def rule(*xs):
        for x in xs:
            _scalar_operand(x, what)
        return ()
    return rule


register_opaque("py_int", int, _operands_rule("int()"), pytype=int, probe_result=False,
                doc="int(v): Python's int() of a value computed in the graph")
for _name, _type in MATH_RESULT.items():
    if hasattr(math, _name):
        register_opaque(f"math_{_name}", getattr(math, _name), _operands_rule(f"math.{_name}"), pytype=_type,
                        probe_result=False, doc=f"math.{_name}: Python's function of values computed in the graph")


def python_int(b, x: Proxy) -> Proxy:
    """int(x) of a traced scalar: an exact cast for integers and bools that fit int64, else
    Python's int() at run time (NaN, inf, big values)."""
    fake = x.fake
    if isinstance(fake, FakeArray) and fake.ndim == 0 and fake.dtype.kind in "bi":
        cast = b.emit("astype", x, dtype=np.dtype(np.int64))
        return Proxy(cast.node, FakeScalar(int))
    return b.emit("py_int", x)


def math_function(b, fn, args: list) -> Proxy:
    """math.<fn>(*args) of traced scalars (constants and sizes allowed among them)."""
    name = getattr(fn, "__name__", "")
    if MATH_RESULT.get(name) is None or getattr(math, name, None) is not fn:
        raise Unsupported(f"math.{name} of a value computed in the graph", kind="call", context=f"math.{name}")
    return b.emit(f"math_{name}", *args)


_ITEM_TYPES = {"f": float, "i": int, "u": int, "b": bool}


def item_method(b, x: Proxy, *args) -> Proxy:
    """x.item(*args) of a traced array or NumPy scalar: the element as a Python float, int or
    bool (`loss.item()`, `x.item(i)`, `m.item(i, j)`), NumPy's errors when the array is not of
    size 1 or an index is out of bounds (the frame then runs eagerly: NumPy's own message).
    A float is a float64 graph value standing for a Python float, as `float(v)` (the tracer
    marks it: `derived_python_scalar`); an int an exact cast (Python's int() for uint64)."""
    from .indexing import getitem
    fake = x.fake
    pytype = _ITEM_TYPES.get(fake.dtype.kind)
    if pytype is None:
        raise Unsupported(f"ndarray.item() of a {fake.dtype} value", kind="call", context="ndarray.item")
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if any(isinstance(a, Proxy) or is_symbolic(a) for a in args):
        raise Unsupported("ndarray.item() with an index computed at run time", kind="call",
                          context="ndarray.item", hints=("index first: float(x[i]) or int(x[i])",))
    if not args:
        if not same_size(fake.size, 1):
            raise NumpyError(ValueError("can only convert an array of size 1 to a Python scalar"))
        element = getitem(b, x, (0,) * fake.ndim) if fake.ndim else x
    else:
        index = [operator.index(a) for a in args]
        if len(index) == 1 and fake.ndim != 1:
            n = fake.size
            if not (-n <= index[0]) or not (index[0] < n):            # guards on a symbolic size
                raise NumpyError(IndexError(f"index {index[0]} is out of bounds for size {n}"))
            if not all(isinstance(d, int) for d in fake.shape):
                raise Unsupported("ndarray.item(i) of a multi-dimensional array of a run-time shape",
                                  kind="call", context="ndarray.item", hints=("use x.flat[i]",))
            index = list(np.unravel_index(index[0] % n, fake.shape)) if fake.ndim else []
            index = [int(i) for i in index]
        elif len(index) != fake.ndim:
            raise NumpyError(ValueError("incorrect number of indices for array"))
        element = getitem(b, x, tuple(index)) if index else x
    if pytype is float:
        cast = b.emit("astype", element, dtype=np.dtype(np.float64))
        record_fake(cast.node, FakeScalar(float))        # the NumPy backend makes it a Python float
        return Proxy(cast.node, FakeScalar(float))
    if pytype is bool:
        cast = b.emit("astype", element, dtype=np.dtype(np.bool_))
        return Proxy(cast.node, FakeScalar(bool))
    return python_int(b, element)


item_method.derived_python_scalar = True      # a float result is float64 in the graph


TOLIST_LIMIT = 64       # elements: each is a graph output (a Python scalar made at the end)


def tolist_method(b, x: Proxy):
    """x.tolist() of a small array: nested lists of Python scalars, each the element's
    `x.item(...)`; the shape is specialised (one graph per shape, as `range(len(x))` unrolled).
    More than TOLIST_LIMIT elements is a graph break (one output per element): return the array
    and call .tolist() on it outside the compiled function."""
    fake = x.fake
    if fake.dtype.kind not in _ITEM_TYPES:
        raise Unsupported(f"ndarray.tolist() of a {fake.dtype} array", kind="call", context="ndarray.tolist")
    if not fake.size <= TOLIST_LIMIT:          # a guard on a run-time size
        raise Unsupported(f"ndarray.tolist() of more than {TOLIST_LIMIT} elements", kind="call",
                          context="ndarray.tolist",
                          hints=("return the array and call .tolist() outside the compiled function",))
    from ...shapes import guard_int
    shape = tuple(guard_int(d) for d in fake.shape)     # the list's lengths: one graph per shape

    def build(prefix):
        if len(prefix) == fake.ndim:
            return item_method(b, x, *prefix) if prefix else item_method(b, x)
        return [build(prefix + (i,)) for i in range(shape[len(prefix)])]
    return build(())


tolist_method.derived_python_scalar = True
