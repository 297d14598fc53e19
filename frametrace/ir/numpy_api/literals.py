"""np.array / np.asarray of a (nested) Python list or tuple: literal tables and lists of values.

NumPy discovers the shape and dtype of `np.array(seq)` from the items: Python numbers count
with their default dtypes (int64, float64, complex128, bool), NumPy scalars and arrays with
their own, and the result dtype is their common type (not NEP 50's weak promotion:
`np.array([np.float32(1), 2.0])` is float64). We let NumPy do that discovery on stand-ins
(each traced item replaced by a zero of its type and static shape), so the dtype, the shape
and every error (a ragged list, an int out of range of `dtype=`) are NumPy's own.

  all items constant   one `array_constant` node (the values are constants of the code; the
                       array is built per call, as NumPy builds it)
  traced items         nested `stack` nodes over the items, each cast to the result dtype
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError, Unsupported
from ..builder import Proxy
from ..fake import FakeScalar
from ..ops.symbolic import is_static, is_symbolic, pytype_of
from .common import as_array, check_operand

_STAND_IN = {int: 0, float: 0.0, bool: False, complex: 0j}


def is_sequence(x) -> bool:
    return isinstance(x, (list, tuple))


def _leaves(seq):
    for v in seq:
        if is_sequence(v):
            yield from _leaves(v)
        else:
            yield v


def _stand_in(x, fname):
    """A constant NumPy sees as it would see x: same type (and static shape for arrays)."""
    if is_sequence(x):
        return [_stand_in(v, fname) for v in x]
    if isinstance(x, Proxy):
        fake = x.fake
        if isinstance(fake, FakeScalar):
            return _STAND_IN[fake.pytype]
        if x.scalar:
            return fake.dtype.type(0)
        shape = tuple(int(d) if is_static(d) else 1 for d in fake.shape)
        return np.zeros(shape, fake.dtype)
    if is_symbolic(x):
        return _STAND_IN[pytype_of(x)]
    return x


def array_like(b, x, fname: str):
    """An operand a NumPy function converts with `np.asarray` (a ufunc's inputs, the arrays
    np.concatenate / np.stack join, np.where's and np.clip's values, np.dot's factors): a list
    or tuple becomes NumPy's array of it (`np.concatenate(([0.0], x))`), anything else is
    checked as an operand. (Not for operators: `[1, 2] * n` is Python's list repetition.)"""
    if is_sequence(x):
        return array_from_sequence(b, x, None, fname)
    return check_operand(x, fname)


def array_from_sequence(b, seq, dt, fname: str):
    """`np.array(seq, dtype=dt)` for a list/tuple `seq` (dt None: NumPy's discovery)."""
    try:
        probe = np.array(_stand_in(seq, fname), dtype=dt)
    except (ValueError, TypeError, OverflowError) as exc:
        raise NumpyError(exc, context=fname) from None
    if probe.dtype.kind not in "biufc":
        raise Unsupported(f"{fname} of a list giving dtype {probe.dtype}", kind="call", context=fname,
                          hints=("only bool, integer, float and complex arrays are traced",))
    leaves = list(_leaves(seq))
    if not any(isinstance(v, Proxy) or is_symbolic(v) for v in leaves):
        return b.emit("array_constant", value=_as_tuples(seq), dtype=probe.dtype)
    return _stacked(b, seq, probe.dtype, dt is not None, fname)


def _as_tuples(x):
    return tuple(_as_tuples(v) for v in x) if is_sequence(x) else x


def _stacked(b, seq, dt, explicit: bool, fname):
    if is_sequence(seq):
        if not seq:
            raise Unsupported(f"{fname} of an empty list beside traced values", kind="call", context=fname)
        return b.emit("stack", *(_stacked(b, v, dt, explicit, fname) for v in seq), axis=0)
    x = as_array(b, seq, fname)
    if x.dtype != dt:
        # NumPy converts each item as a Python number when dtype= narrows it (an int16 300 into
        # int8 raises, a NaN into int raises); a safe cast converts exactly like astype.
        if explicit and not np.can_cast(x.dtype, dt, "safe"):
            raise Unsupported(f"{fname}(dtype={dt}) of a traced {x.dtype} item", kind="call", context=fname,
                              hints=(f"cast the item with .astype({dt.name}) first",))
        x = b.emit("astype", x, dtype=dt)
    return x
