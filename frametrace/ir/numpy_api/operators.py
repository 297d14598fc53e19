"""Python operators and NumPy ufunc calls on traced values.

`binary_op(b, "+", x, y)` is what `x + y` does: NumPy's ufunc when an array or NumPy
scalar is involved, Python's operator when both sides are Python scalars (a run-time float
times 2.0 stays a Python float), plain symbolic arithmetic when no Proxy is involved.
`np.add(x, y)` on Python scalars gives a NumPy scalar, as NumPy does: weak operands are
first converted as np.asarray does (0-d int64/float64/complex128/bool arrays).
"""
from __future__ import annotations

import operator

import numpy as np

from ...errors import NumpyError, Unsupported
from ..fake import FakeArray
from ..ops.elementwise import BINARY, UNARY
from ..ops.promotion import probe
from .literals import array_like
from .common import (as_array, as_dtype, bind, check_operand, is_array, is_proxy,
                     is_weak_value, meta_of, reject, unsupported, unwrap_out, weak_type,
                     write_ufunc_out)

BINARY_OPERATORS = {
    "+": ("add", operator.add), "-": ("subtract", operator.sub),
    "*": ("multiply", operator.mul), "/": ("true_divide", operator.truediv),
    "//": ("floor_divide", operator.floordiv), "%": ("remainder", operator.mod),
    "**": ("power", operator.pow), "@": ("matmul", operator.matmul),
    "&": ("bitwise_and", operator.and_), "|": ("bitwise_or", operator.or_),
    "^": ("bitwise_xor", operator.xor), "<<": ("left_shift", operator.lshift),
    ">>": ("right_shift", operator.rshift),
}
COMPARE_OPERATORS = {
    "<": ("less", operator.lt), "<=": ("less_equal", operator.le), "==": ("equal", operator.eq),
    "!=": ("not_equal", operator.ne), ">": ("greater", operator.gt),
    ">=": ("greater_equal", operator.ge),
}
UNARY_OPERATORS = {
    "-": ("negative", operator.neg), "+": ("positive", operator.pos),
    "~": ("invert", operator.invert), "abs": ("absolute", abs),
}

# every NumPy ufunc object with an op of the same meaning (aliases such as np.abs, np.divide,
# np.mod, np.pow, np.bitwise_not are the same objects and so are covered too)
UFUNC_OPS = {getattr(np, name): name for name in (*UNARY, *BINARY)}
UFUNC_OPS[np.matmul] = "matmul"


def _binary(b, table, op, lhs, rhs):
    name, pyop = table[op]
    if not is_proxy(lhs) and not is_proxy(rhs):
        return pyop(lhs, rhs)                 # sizes and constants: symbolic Python arithmetic
    ctx = f"operator {op}"
    return b.emit_operator(name, check_operand(lhs, ctx), check_operand(rhs, ctx))


def binary_op(b, op: str, lhs, rhs):
    """`lhs <op> rhs` for op in + - * / // % ** @ & | ^ << >>."""
    if op == "**" and is_array(lhs) and not lhs.scalar:
        fast = fast_power(b, lhs, rhs)
        if fast is not None:
            return b.emit(fast, lhs)
    return _binary(b, BINARY_OPERATORS, op, lhs, rhs)


# ndarray.__pow__ / __ipow__ with an exact Python int or float exponent (NumPy's
# fast_scalar_power in multiarray/number.c): (exponent type, value) -> the ufunc it calls
# instead of np.power, and whether any dtype takes it (else only float and complex arrays)
FAST_POWER = {(int, -1): ("reciprocal", False), (int, 2): ("square", True), (float, 0.5): ("sqrt", False)}


def fast_power(b, x, e, inplace=False):
    """The ufunc `x ** e` calls for an ndarray x (a 0-d array too, not a NumPy scalar), or
    None for np.power. They differ from np.power in their error messages ("divide by zero
    encountered in reciprocal"); `bool_array ** 2` is np.square's int8 where np.power gives
    int64, `complex_array ** 0.5` np.sqrt's rounding. An exponent known only at run time (a
    Python int argument n) keeps np.power: values and dtypes agree except for a bool array
    (Unsupported; `inplace`: `x **= n` into a bool x fails NumPy's cast either way), a message
    says "power" where NumPy's says "reciprocal" or "square" (README)."""
    if is_weak_value(e):
        if x.dtype.kind == "b" and weak_type(e) is int and not inplace:
            if is_proxy(e):
                raise Unsupported("`bool_array ** n` has dtype int8 if n == 2 at run time, else "
                                  "int64", kind="data_dependent", context="operator **")
            return "square" if bool(e == 2) else None
        return None
    if type(e) not in (int, float):
        return None
    fast = FAST_POWER.get((type(e), e))
    if fast is None or not (fast[1] or x.dtype.kind in "fc"):
        return None
    return fast[0]


def compare_op(b, op: str, lhs, rhs):
    """`lhs <op> rhs` for op in < <= == != > >=."""
    return _binary(b, COMPARE_OPERATORS, op, lhs, rhs)


def unary_op(b, op: str, x):
    """`-x`, `+x`, `~x`, `abs(x)`."""
    name, pyop = UNARY_OPERATORS[op]
    if not is_proxy(x):
        return pyop(x)
    return b.emit_operator(name, check_operand(x, f"operator {op}"))


def inplace_op(b, op: str, target, rhs):
    """`target <op>= rhs`: for an array, NumPy's `ufunc(target, rhs, out=target)` (result
    computed, same_kind cast checked, then assigned into target); returns the new value
    of the name, i.e. `target` itself. NumPy and Python scalars are immutable: rebinding."""
    if not is_array(target) or target.scalar:
        return binary_op(b, op, target, rhs)
    name, _ = BINARY_OPERATORS[op]
    rhs = check_operand(rhs, f"operator {op}=")
    fast = fast_power(b, target, rhs, inplace=True) if op == "**" else None
    if fast is not None:                       # ndarray.__ipow__: np.<fast>(target, out=target)
        return write_ufunc_out(b, f"operator {op}=", getattr(np, fast), (target,), b.emit(fast, target),
                               target)
    result = b.emit(name, target, rhs)
    ufunc = np.matmul if name == "matmul" else getattr(np, name)
    return write_ufunc_out(b, f"operator {op}=", ufunc, (target, rhs), result, target,
                           core=name == "matmul")


_UFUNC_KW = ("out", "where", "casting", "order", "dtype", "subok", "signature", "axes", "axis",
             "keepdims")


def ufunc_impl(ufunc: np.ufunc, opname: str):
    """The traced form of calling `ufunc(*args, **kwargs)` (out=, where= with out=, dtype=)."""
    fname = f"np.{ufunc.__name__}"
    pyop = {**UNARY, **BINARY}.get(opname)     # ops with Python semantics on weak scalars

    def impl(b, *args, **kwargs):
        if len(args) > ufunc.nin:                  # outputs given positionally
            if "out" in kwargs or len(args) > ufunc.nin + ufunc.nout:
                raise NumpyError(TypeError(f"{fname}: too many arguments"))
            args, kwargs = args[:ufunc.nin], {**kwargs, "out": args[ufunc.nin:]}
        if len(args) < ufunc.nin:
            raise NumpyError(TypeError(f"{fname}() takes from {ufunc.nin} to "
                                       f"{ufunc.nin + ufunc.nout} positional arguments but "
                                       f"{len(args)} were given"))
        p = bind(fname, _UFUNC_KW, (), kwargs)
        reject(fname, p, casting="same_kind", order="K", subok=True,
               signature=None, axes=None, axis=None, keepdims=False)
        mask = p.get("where", True)
        if mask is not True and p.get("out") is None:
            raise unsupported(fname, "where= without out= (NumPy leaves the other elements "
                              "uninitialised)", "pass out= as well")
        operands = [array_like(b, a, fname) for a in args]
        if pyop is not None and not any(is_array(a) for a in operands):
            # all weak: NumPy converts them to NumPy scalars first (np.add(1, 2) is np.int64)
            operands = [as_array(b, a, fname) if is_weak_value(a) else a for a in operands]
        dtype = as_dtype(p.get("dtype"), fname)
        if dtype is not None:
            operands = _cast_for_dtype(b, fname, ufunc, operands, dtype)
        result = b.emit(opname, *operands)
        out = unwrap_out(p.get("out"), fname)
        if out is None:
            return result
        if mask is not True:                       # where=: keep out's values where False
            check_operand(mask, fname)
            result = b.emit("where", mask, result, out)
        return write_ufunc_out(b, fname, ufunc, operands, result, out, core=opname == "matmul")
    impl.__name__ = f"{ufunc.__name__}_impl"
    return impl


def _cast_for_dtype(b, fname, ufunc, operands, dtype):
    """ufunc(..., dtype=dt): array inputs cast to dt, then the op; NumPy checks the casts,
    and the combination is refused where its result dtype would differ from NumPy's."""
    want = probe(ufunc, *(meta_of(o) for o in operands), dtype=dtype).dtype
    needs = [is_array(o) and o.dtype != dtype for o in operands]
    cast_meta = [FakeArray(o.shape, dtype, o.scalar) if n else meta_of(o)
                 for o, n in zip(operands, needs, strict=True)]
    if probe(ufunc, *cast_meta).dtype != want:
        raise unsupported(fname, f"dtype={dtype} with these operand types")
    return [b.emit("astype", o, dtype=dtype) if n else o for o, n in zip(operands, needs, strict=True)]
