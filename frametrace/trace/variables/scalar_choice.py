"""`max(s, 0.5)` / `min(s, 1.0)` of a NumPy float64 scalar the graph computes and a Python number.

Python returns one of its arguments: the NumPy scalar or the Python number, chosen by the data,
so the result's type is not known when tracing. A `ScalarChoiceVariable` keeps both candidates
and the comparison's outcome (a graph bool):

  returned / stored     rebuilt as `(number if flag else scalar)` from the graph's outputs: the
                        very object Python's max() would have returned
  arithmetic or a comparison with a float64 / complex128 array or NumPy scalar, a ufunc
  (np.clip, np.where) with a float64 / complex128 array operand
                        the float64 value `where(flag, number, scalar)`: NumPy gives the same
                        dtype and value whichever candidate it is (a Python number is weak; the
                        other operand fixes float64 or complex128)
  -c, +c, abs(c)        the same choice between the candidates' results
  anything else         a graph break naming the call (its result would depend on the type:
                        Python vs NumPy scalar arithmetic, float32 promotion, repr, round())
"""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
from .array import ArrayVariable
from .base import VariableTracker
from .constant import ConstantVariable

_WIDE = (np.dtype(np.float64), np.dtype(np.complex128))


def _float64_scalar(v) -> bool:
    return isinstance(v, ArrayVariable) and not v.is_python_scalar and v.proxy.fake.scalar \
        and v.proxy.dtype == np.float64


def _python_number(v) -> bool:
    if isinstance(v, ConstantVariable):
        return type(v.value) in (int, float)
    return isinstance(v, ArrayVariable) and v.is_python_scalar and v.python_type() in (int, float) \
        and not v.derived_python_scalar


class ScalarChoiceVariable(VariableTracker):
    """`number if flag else scalar`, with the float64 graph value of the choice."""

    def __init__(self, name: str, flag: ArrayVariable, number, scalar: ArrayVariable, value: ArrayVariable):
        self.name, self.flag, self.number, self.scalar, self.value = name, flag, number, scalar, value
        self.source = None

    def python_type(self):
        raise Unsupported(self._why(), kind="type")

    def describe(self):
        return f"{self.name}() of a NumPy float64 and a Python number"

    def _why(self):
        return (f"{self.name}() of a NumPy float64 and a Python number used other than with float64 arrays: "
                "its type (a Python or a NumPy scalar) depends on the data")

    def refuse(self) -> Unsupported:
        return Unsupported(self._why(), kind="call", context=f"{self.name}()",
                           hints=(f"write np.{'maximum' if self.name == 'max' else 'minimum'}(a, b), or make both "
                                  f"arguments NumPy scalars: {self.name}(a, np.float64(b))",))

    def operand_for(self, other) -> ArrayVariable:
        """The float64 value, where `other` makes both candidates give the same result."""
        if isinstance(other, ArrayVariable) and not other.is_python_scalar and other.proxy.dtype in _WIDE:
            return self.value
        if isinstance(other, ConstantVariable) and type(other.value) in (np.float64, np.complex128):
            return self.value
        raise self.refuse()

    def stored_into(self, array: ArrayVariable) -> ArrayVariable:
        """The value to store into an element of `array` (`y[i] = c`): the float64 value where
        NumPy stores either candidate alike (a float64 or complex128 array: no cast that could
        warn or raise differently for a Python and a NumPy scalar)."""
        if array.proxy.dtype in _WIDE:
            return self.value
        raise self.refuse()

    def unary(self, tx, op: str) -> "ScalarChoiceVariable":
        """-c, +c, abs(c): the same choice of the candidates' results (each keeps its type)."""
        if op not in ("-", "+", "abs"):
            raise self.refuse()
        from ...ir.numpy_api import unary_op
        b = tx.output.builder
        if isinstance(self.number, ConstantVariable):
            number = ConstantVariable({"-": lambda v: -v, "+": lambda v: +v, "abs": abs}[op](self.number.value))
        else:
            number = ArrayVariable(unary_op(b, op, self.number.proxy))
        return type(self)(self.name, self.flag, number, ArrayVariable(unary_op(b, op, self.scalar.proxy)),
                          ArrayVariable(unary_op(b, op, self.value.proxy)))

    def truth(self, tx):
        raise self.refuse()

    def unpack(self, tx):
        raise self.refuse()

    def var_getattr(self, tx, name):
        raise self.refuse()

    def reconstruct(self, rebuild):
        return f"({rebuild(self.number)} if {rebuild(self.flag)} else {rebuild(self.scalar)})"


def scalar_choice(tx, name: str, better, item, result):
    """`item if better else result` for max()/min() of a NumPy float64 and a Python number, or
    None when the pair is another mix."""
    if _float64_scalar(result) and _python_number(item):
        number, scalar, flag = item, result, better
    elif _python_number(result) and _float64_scalar(item):
        number, scalar = result, item
        flag = tx.wrap_result(tx.output.builder.emit("logical_not", better.proxy))
    else:
        return None
    if isinstance(number, ConstantVariable):
        raw = number.value
        if type(raw) is int:
            if not -2 ** 53 <= raw <= 2 ** 53:
                return None                    # not exact in float64
            raw = float(raw)
    elif number.python_type() is float:
        raw = number.proxy
    else:
        return None                            # a run-time int may not be exact in float64
    b = tx.output.builder
    value = b.emit("getitem", b.emit("where", flag.proxy, raw, scalar.proxy), index=())
    return ScalarChoiceVariable(name, flag, number, scalar, ArrayVariable(value))


def choice_binary(tx, a, b, op: str):
    """`d * s`, `s + c`, `1.0 - s` of a choice and a Python float (or an int exact in float64):
    the same choice of the candidates' results, each computed as its type computes it (the
    Python float's with Python's arithmetic, which never warns for `+ - *`; the NumPy scalar's
    with NumPy's scalar math on `where(flag, 1.0, scalar)`, so it reports an FP error only
    when it is the one Python computes). Other operators and operands: None."""
    base = op[:-1] if op.endswith("=") and op not in ("==", "!=", "<=", ">=") else op
    if base not in ("+", "-", "*") or \
            not isinstance(a, ScalarChoiceVariable) and not isinstance(b, ScalarChoiceVariable):
        return None
    b_ = tx.output.builder

    def harmless(c):
        return ArrayVariable(b_.emit("getitem", b_.emit("where", c.flag.proxy, 1.0, c.scalar.proxy), index=()))
    if isinstance(a, ScalarChoiceVariable) and isinstance(b, ScalarChoiceVariable):
        if a.flag is not b.flag:                  # `s + t` of one loop's choices: the same candidate
            return None
        choice = a
        number, scalar = tx.binary(a.number, b.number, base), tx.binary(harmless(a), harmless(b), base)
    else:
        choice, other, left = (a, b, True) if isinstance(a, ScalarChoiceVariable) else (b, a, False)
        if isinstance(other, ConstantVariable):
            if not (type(other.value) is float or type(other.value) is int and -2 ** 53 <= other.value <= 2 ** 53):
                return None
        elif not (_python_number(other) and other.python_type() is float):
            return None

        def apply(x):
            return tx.binary(x, other, base) if left else tx.binary(other, x, base)
        number, scalar = apply(choice.number), apply(harmless(choice))
    raw = number.value if isinstance(number, ConstantVariable) else number.proxy
    if isinstance(raw, int):
        raw = float(raw)
    value = ArrayVariable(b_.emit("getitem", b_.emit("where", choice.flag.proxy, raw, scalar.proxy), index=()))
    return type(choice)(choice.name, choice.flag, number, scalar, value)


def choice_operands(a, b):
    """An operator's operands with a ScalarChoiceVariable replaced by its float64 value where
    the other operand makes that exact (else the graph break naming the max()/min() call)."""
    if isinstance(a, ScalarChoiceVariable):
        a = a.operand_for(b)
    if isinstance(b, ScalarChoiceVariable):
        b = b.operand_for(a)
    return a, b


def choice_call_args(fn, args: list, kwargs: dict) -> list:
    """A NumPy call's positional arguments with each ScalarChoiceVariable replaced by its float64
    value: for ufuncs, np.clip and np.where with a float64 / complex128 array among the operands
    and no other array dtype (a Python or a NumPy float64 scalar then gives the same result)."""
    if not any(isinstance(a, ScalarChoiceVariable) for a in list(args) + list(kwargs.values())):
        return args
    first = next(a for a in list(args) + list(kwargs.values()) if isinstance(a, ScalarChoiceVariable))
    arrays = [a for a in args if isinstance(a, ArrayVariable) and not a.is_python_scalar]
    elementwise = isinstance(fn, np.ufunc) or fn in (np.clip, np.where)
    if not elementwise or any(isinstance(v, ScalarChoiceVariable) for v in kwargs.values()) or \
            not any(not a.proxy.fake.scalar and a.proxy.dtype in _WIDE for a in arrays) or \
            not all(a.proxy.dtype in _WIDE or (fn is np.where and a is args[0]) for a in arrays):
        raise first.refuse()
    return [a.value if isinstance(a, ScalarChoiceVariable) else a for a in args]


class LoopChoiceVariable(ScalarChoiceVariable):
    """A local that a loop over a range bounded by array data (`for j in range(p[i], p[i + 1])`)
    turns from a Python float into a NumPy float64 in its first iteration (`s = 0.0; ...
    s += a[j] * x[c[j]]`): after the loop it is the Python float it started as when the range
    was empty (`flag`), else the loop's float64. The loop carries it as a float64 (the same
    value); afterwards it is used as a max()/min() choice is (see the module doc)."""

    def describe(self):
        return f"{self.name!r} after a loop over a range bounded by array data"

    def _why(self):
        return (f"{self.name!r} is a Python float if the loop over a range bounded by array data does not "
                "run, else a NumPy float64; used other than stored into or combined with float64 arrays, "
                "its type depends on the data")

    def refuse(self) -> Unsupported:
        return Unsupported(self._why(), kind="call", context=self.name,
                           hints=(f"start it as a NumPy float before the loop: {self.name} = np.float64(0.0)",))
