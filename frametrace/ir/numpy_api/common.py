"""Shared helpers of the NumPy API layer: argument binding, operand kinds, axes, dtypes, out=.

Values reaching the API layer are `Proxy` (arrays, NumPy scalars, run-time Python scalars),
Python constants, np.generic constants, SymInt/SymFloat/SymBool, slices, Ellipsis, and
tuples/lists of these. Anything else is `Unsupported`; anything NumPy itself would reject
raises `NumpyError` with NumPy's exception, so the tracer can run the frame eagerly.
"""
from __future__ import annotations

import operator

import numpy as np

from ...errors import NumpyError, Unsupported
from ..builder import Proxy
from ..fake import FakeArray, FakeScalar
from ..ops.broadcast import check_broadcast_to
from ..ops.promotion import PY_DTYPE, PY_TYPES, probe
from ..ops.symbolic import fmt_shape, is_static, is_symbolic, pytype_of, same_size

_NUMERIC_KINDS = "biufc"


def unsupported(fname: str, what: str, *hints, kind: str = "call") -> Unsupported:
    return Unsupported(f"{what} is not supported", kind=kind, context=fname, hints=hints)


def bind(fname: str, params: tuple, args: tuple, kwargs: dict) -> dict:
    """Bind positional args and kwargs to parameter names, as Python would (TypeError as NumPy)."""
    if len(args) > len(params):
        raise NumpyError(TypeError(f"{fname}() takes at most {len(params)} arguments "
                                   f"({len(args)} given)"))
    bound = dict(zip(params, args, strict=False))
    for k, v in kwargs.items():
        if k not in params:
            raise NumpyError(TypeError(f"{fname}() got an unexpected keyword argument '{k}'"))
        if k in bound:
            raise NumpyError(TypeError(f"{fname}() got multiple values for argument '{k}'"))
        bound[k] = v
    return bound


def _is_default(v, ok) -> bool:
    return any(v is o or (type(v) is type(o) and not isinstance(v, Proxy) and v == o)
               for o in (ok if isinstance(ok, tuple) else (ok,)))


def reject(fname: str, bound: dict, **accepted) -> None:
    """Unsupported for each bound argument whose value is not one of its accepted values."""
    for name, ok in accepted.items():
        if name in bound and not _is_default(bound[name], ok):
            raise unsupported(fname, f"argument {name}={bound[name]!r}",
                              f"call {fname} without {name}= to trace it")


# ---- operand kinds ------------------------------------------------------------------------

def is_proxy(x) -> bool:
    return isinstance(x, Proxy)


def is_array(x) -> bool:
    """A Proxy of an array or NumPy scalar (FakeArray)."""
    return isinstance(x, Proxy) and isinstance(x.fake, FakeArray)


def is_weak_value(x) -> bool:
    """A run-time Python scalar (FakeScalar Proxy) or a symbolic size."""
    return (isinstance(x, Proxy) and isinstance(x.fake, FakeScalar)) or is_symbolic(x)


def weak_type(x):
    return x.fake.pytype if isinstance(x, Proxy) else pytype_of(x)


def check_operand(x, fname: str):
    """Accept an operand of an elementwise op; reject containers and non-numeric objects."""
    if isinstance(x, Proxy) or type(x) in PY_TYPES or is_symbolic(x):
        return x
    if isinstance(x, np.generic) and x.dtype.kind in _NUMERIC_KINDS:
        return x
    raise unsupported(fname, f"an operand of type {type(x).__name__}",
                      "convert lists/tuples to arrays before the compiled region")


def meta_of(x):
    """The abstract value a meta rule sees for x."""
    return x.fake if isinstance(x, Proxy) else x


def as_array(b, x, fname: str):
    """x as a Proxy with a FakeArray, as NumPy's functions see it: a NumPy scalar constant
    stays a NumPy scalar; a weak value (run-time Python scalar, size, Python constant)
    becomes `np.asarray(x)`, a 0-d array, so NumPy's rather than Python's semantics apply."""
    if is_array(x):
        return x
    x = check_operand(x, fname)
    if isinstance(x, np.generic):
        return b.emit("astype", x, dtype=x.dtype)
    return b.emit("full", x, shape=(), dtype=PY_DTYPE[weak_type(x) or type(x)])


# ---- sizes, axes, dtypes ------------------------------------------------------------------

def size_arg(x, fname: str):
    """A size argument: int (np.integer ok) or SymInt."""
    if isinstance(x, (bool, np.bool_)):
        raise NumpyError(TypeError(f"{fname}: expected an integer size, got {x!r}"))
    if is_static(x):
        return operator.index(x)
    if is_symbolic(x) and pytype_of(x) is int:
        return x
    if isinstance(x, Proxy):
        raise unsupported(fname, "a size computed from array data", "compute sizes from shapes with Python "
                          "ints: x.size, math.prod(x.shape), len(x) (not np.prod(x.shape), a NumPy value)",
                          kind="data_dependent")
    raise NumpyError(TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer"))


def shape_arg(shape, fname: str) -> tuple:
    """A shape argument: one size or a sequence of sizes."""
    if isinstance(shape, (tuple, list)):
        return tuple(size_arg(d, fname) for d in shape)
    return (size_arg(shape, fname),)


def static_int(x, fname: str, what: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not (is_static(x) or is_symbolic(x)):
        raise NumpyError(TypeError(f"{fname}: {what} must be an integer, got {x!r}"))
    if not is_static(x):
        raise unsupported(fname, f"a symbolic {what}", kind="dynamic_axis")
    return operator.index(x)


def normalize_axis(axis, ndim: int, fname: str) -> int:
    a = static_int(axis, fname, "axis")
    if not -ndim <= a < ndim:
        raise NumpyError(np.exceptions.AxisError(a, ndim))
    return a + ndim if a < 0 else a


def normalize_axes(axis, ndim: int, fname: str, *, duplicate_msg="duplicate value in 'axis'"):
    """None, an int or a sequence of ints -> None or a tuple of non-negative ints."""
    if axis is None:
        return None
    seq = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(normalize_axis(a, ndim, fname) for a in seq)
    if len(set(axes)) != len(axes):
        raise NumpyError(ValueError(duplicate_msg))
    return axes


def as_dtype(dtype, fname: str):
    """np.dtype or None; object/string/structured dtypes are not traced."""
    if dtype is None:
        return None
    if isinstance(dtype, Proxy):
        raise unsupported(fname, "a dtype computed at run time")
    try:
        dt = np.dtype(dtype)
    except TypeError as exc:
        raise NumpyError(exc) from exc
    if dt.kind not in _NUMERIC_KINDS or dt.fields is not None:
        raise unsupported(fname, f"dtype {dt}", "only bool, integer, float and complex dtypes are traced")
    return dt


def const_bool(x, fname: str, what: str) -> bool:
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return bool(x)
    raise unsupported(fname, f"a non-constant {what}={x!r}")


# ---- out= ---------------------------------------------------------------------------------

def unwrap_out(out, fname: str):
    """None or the array Proxy that out= names (a 1-tuple is accepted, as NumPy does)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise NumpyError(ValueError(f"{fname}: out must be a tuple of length 1"))
        out = out[0]
    if out is None:
        return None
    if not is_array(out):
        raise unsupported(fname, f"out={type(out).__name__}", "pass an array as out=")
    if out.scalar:
        raise NumpyError(TypeError(f"{fname}: out must be an array, not a NumPy scalar"))
    return out


def write_ufunc_out(b, fname: str, fn, operands, result, out, *, core: bool = False):
    """`fn(*operands, out=out)`: result broadcasts into out (never out into result), the
    cast is checked with NumPy's own same_kind rule, then result is assigned to out."""
    rs, os_ = tuple(result.shape), tuple(out.shape)
    ok = len(rs) <= len(os_)
    if ok and core:
        ok = len(rs) == len(os_) and all(same_size(r, o) for r, o in zip(rs, os_, strict=True))
    elif ok:
        try:
            check_broadcast_to(rs, os_)
        except NumpyError:
            ok = False
    if not ok:
        raise NumpyError(ValueError(f"non-broadcastable output operand with shape "
                                    f"{fmt_shape(os_)} doesn't match the broadcast shape {fmt_shape(rs)}"))
    probe(fn, *(meta_of(o) for o in operands), out=out.fake)
    b.emit("assign", out, result, writer="ufunc")
    return out


def write_reduction_out(b, fname: str, result, out):
    """Reductions and scans into out=: same shape exactly; NumPy casts unsafely."""
    rs, os_ = tuple(result.shape), tuple(out.shape)
    if len(rs) != len(os_):
        raise NumpyError(ValueError(f"output parameter for reduction operation has the wrong "
                                    f"number of dimensions: Found {len(os_)} but expected {len(rs)}"))
    if not all(same_size(r, o) for r, o in zip(rs, os_, strict=True)):
        raise NumpyError(ValueError(f"output parameter has the wrong shape: found "
                                    f"{fmt_shape(os_)} but expected {fmt_shape(rs)}"))
    b.emit("assign", out, result, writer="ufunc")
    return out
