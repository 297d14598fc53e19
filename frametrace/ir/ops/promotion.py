"""Result dtypes by asking NumPy itself, on one-element stand-ins for the abstract operands.

NumPy 2's dtype rules (NEP 50 weak Python scalars, ufunc loop tables, `sum` of small ints
-> int64, `true_divide` of ints -> float64, value-based OverflowError for out-of-range
Python ints, ...) are too many to restate. So a meta rule *probes*: it calls the op's own
NumPy reference on stand-ins that have the operands' dtypes and ranks and a size of one,
keeping Python scalars as Python values (weak) and NumPy scalars as NumPy scalars (strong).
The probe's dtype, and whether it returned a NumPy scalar, are exactly NumPy's; shapes are
derived symbolically elsewhere. Errors the probe raises become `NumpyError`.

Stand-ins: FakeArray -> `np.ones((1,)*ndim, dtype)` (a NumPy scalar if `scalar`);
FakeScalar(t) / SymInt / SymFloat / SymBool -> `t(1)`; constants -> themselves.
The probe never touches user data: it is a compile-time computation on constants.

Where every operand is a weak Python scalar, Python's own operator semantics apply
(`FakeScalar(float) * 2.0` is a Python float); `python_result_type` derives that type.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from ...errors import NumpyError, Unsupported
from ..fake import FakeArray, FakeScalar
from .symbolic import is_symbolic, pytype_of

PY_DTYPE = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
            complex: np.dtype(np.complex128)}
PY_TYPES = (bool, int, float, complex)


def is_weak(x) -> bool:
    """A Python scalar, FakeScalar, SymInt or SymFloat: weak for NEP 50 promotion."""
    return isinstance(x, FakeScalar) or pytype_of(x) is not None


def weak_pytype(x):
    return x.pytype if isinstance(x, FakeScalar) else pytype_of(x)


def representative(x):
    """A one-element concrete stand-in with x's dtype, rank and weak/strong kind."""
    if isinstance(x, FakeArray):
        return x.dtype.type(1) if x.scalar else np.ones((1,) * x.ndim, x.dtype)
    if isinstance(x, FakeScalar):
        return x.pytype(1)
    if is_symbolic(x):
        return pytype_of(x)(1)
    if isinstance(x, tuple):
        return tuple(representative(v) for v in x)
    if isinstance(x, list):
        return [representative(v) for v in x]
    return x


def probe(fn, *args, **kwargs):
    """Run `fn` on stand-ins of args/kwargs; NumPy's exception becomes NumpyError."""
    reps = [representative(a) for a in args]
    kw = {k: representative(v) for k, v in kwargs.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*reps, **kw)
        except Exception as exc:            # NumPy refuses: the user must see its error
            raise NumpyError(exc) from exc


def fake_like(value, shape) -> FakeArray:
    """FakeArray with the probe result's dtype and scalar-ness, and the symbolic `shape`."""
    if isinstance(value, (np.ndarray, np.generic)):
        return FakeArray(tuple(shape), value.dtype, isinstance(value, np.generic))
    raise AssertionError(f"probe returned {type(value).__name__}, expected a NumPy value")


def shape_of(x) -> tuple:
    """Shape of an operand: FakeArray's shape, () for scalars of any kind."""
    return x.shape if isinstance(x, FakeArray) else ()


def pyvalue(x):
    """A Python stand-in for a weak operand: constants as is, unknowns as t(1)."""
    return x if type(x) in PY_TYPES else weak_pytype(x)(1)


def python_result_type(pyop, args, opname: str) -> type:
    """The Python type of `pyop(*args)` for weak scalar operands (Python semantics).

    `int ** int` is float when the exponent is negative and `float ** float` may be
    complex for a negative base: those depend on run-time values unless the exponent is
    a known constant (or a SymInt, whose sign is decided with a guard).
    """
    if pyop is operator.pow:
        base, exp = args
        bt, et = weak_pytype(base), weak_pytype(exp)
        if et is int and bt in (bool, int) and type(exp) not in PY_TYPES:
            if not is_symbolic(exp):
                raise Unsupported("the result type of `int ** int` depends on the exponent's "
                                  "run-time sign", kind="data_dependent", context=opname)
            return float if bool(exp < 0) else int
        if et is float and bt in (bool, int, float) and not (
                type(exp) is float and exp.is_integer()) and not (
                type(base) in PY_TYPES and base >= 0):
            raise Unsupported("`float ** float` is complex for a negative base: its result "
                              "type depends on run-time values", kind="data_dependent",
                              context=opname)
    vals = [pyvalue(a) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return type(pyop(*vals))
        except Exception as exc:            # e.g. ZeroDivisionError for `x / 0`
            raise NumpyError(exc) from exc
