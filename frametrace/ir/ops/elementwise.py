"""Elementwise ops: unary and binary ufuncs, where, clip, astype.

Canonical forms (operands are array / NumPy-scalar nodes, weak Python scalars, or size
expressions; NumPy broadcasting; dtypes by NEP 50 exactly as NumPy 2 resolves them):
  <unary ufunc>(x)            e.g. sin(x), negative(x), isnan(x), invert(x)
  <binary ufunc>(a, b)        e.g. add(a, b), power(x, 2) (a constant exponent stays `power`;
                              a backend may rewrite it), equal(a, b), left_shift(a, b)
  where(cond, a, b)           np.where with three arguments
  clip(x, lo, hi)             lo / hi may be None (np.clip's rules)
  astype(x; dtype)            dtype: np.dtype; unsafe cast; a NumPy scalar stays a NumPy
                              scalar, a weak Python scalar becomes one (`np.float32(x)`)
The result is a NumPy scalar exactly where NumPy returns one (ufuncs: every 0-d result).
When *every* operand is a weak Python scalar and the ufunc is a Python operator
(+ - * / // % ** comparisons & | ^ << >>, unary - + ~ abs), Python semantics apply: the
result is a FakeScalar and the reference applies the Python operator.
"""
from __future__ import annotations


import numpy as np

from ..fake import FakeScalar
from ..graph import SCALAR_MATH
from ..registry import Loop, NumpyCall, register
from .broadcast import broadcast_shapes
from .promotion import PY_TYPES, fake_like, is_weak, probe, python_result_type, shape_of
from .raising import elementwise_may_raise
from .ufunc_names import BINARY, UNARY

# Native loop bodies: the operand kinds each ufunc has a rule for in codegen/llvm_kernels/ops.py
# ('f' float, 'iu' signed and unsigned integers, 'b' bool); a kind not listed runs in NumPy.
_F_UNARY = ("negative positive absolute fabs sqrt square reciprocal exp exp2 expm1 log log2 log10 "
            "log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh cbrt "
            "floor ceil trunc rint deg2rad rad2deg sign isnan isinf isfinite signbit logical_not")
_I_UNARY = ("negative positive absolute square sign invert logical_not isnan isinf isfinite floor "
            "ceil trunc rint")
_B_UNARY = "absolute logical_not invert isnan isinf isfinite floor ceil trunc"
_CMP = "equal not_equal less less_equal greater greater_equal logical_and logical_or logical_xor"
_F_BINARY = ("add subtract multiply true_divide floor_divide remainder fmod power maximum minimum "
             "fmax fmin arctan2 hypot copysign logaddexp logaddexp2 heaviside " + _CMP)
_I_BINARY = ("add subtract multiply floor_divide remainder fmod maximum minimum fmax fmin "
             "bitwise_and bitwise_or bitwise_xor left_shift right_shift " + _CMP)
_B_BINARY = "add multiply maximum minimum fmax fmin bitwise_and bitwise_or bitwise_xor " + _CMP
# float bodies that call the vectorised math library (cost class "expensive")
_MATH = ("exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh "
         "arcsinh arccosh arctanh cbrt power arctan2 hypot").split()
_EXPENSIVE = _MATH + ["logaddexp", "logaddexp2"]
# floating-point errors (registry.FP_ERRORS): ufuncs that never report one on any input, and
# those whose integer loops report a zero divisor; every other ufunc: "float"
# the Python operator of each op written with one (`a * b`, `-a`): on NumPy scalars NumPy's
# scalar math computes it (graph.SCALAR_MATH), on arrays the ufunc
OPERATORS = {name: f for table in (UNARY, BINARY) for name, f in table.items() if f is not None}


def scalar_operator(node):
    """The Python operator a backend calls for `node` when it is SCALAR_MATH, else None."""
    return OPERATORS.get(node.op) if node.attr(SCALAR_MATH) else None


_FP_QUIET = ("isnan isinf isfinite signbit copysign negative positive absolute fabs floor ceil trunc "
             "rint logical_not logical_and logical_or logical_xor").split()
_INT_DIVIDE = ("floor_divide", "remainder", "fmod")
# ufuncs with no native loop, each with the reason
_NUMPY_ONLY = {"conjugate": "complex only: kernels have no complex dtype"}


def _lowering(name: str, nin: int):
    if name in _NUMPY_ONLY:
        return NumpyCall(_NUMPY_ONLY[name])
    tables = (_F_UNARY, _I_UNARY, _B_UNARY) if nin == 1 else (_F_BINARY, _I_BINARY, _B_BINARY)
    kinds = "".join(k for k, t in zip(("f", "iu", "b"), tables) if name in t.split())
    return Loop(kinds, math=name in _MATH)


def _ufunc_meta(name, ufunc, pyop):
    def meta(*args):
        if len(args) != ufunc.nin:
            raise TypeError(f"{name} takes {ufunc.nin} operand(s), got {len(args)}")
        if pyop is not None and all(is_weak(a) for a in args):
            return FakeScalar(python_result_type(pyop, args, name))
        value = probe(ufunc, *args)           # dtype (and dtype errors) first, as NumPy
        return fake_like(value, broadcast_shapes(*(shape_of(a) for a in args)))
    meta.__name__ = f"{name}_meta"
    meta.__doc__ = f"np.{ufunc.__name__}: broadcasting, NEP 50 promotion."
    return meta


def _ufunc_ref(ufunc, pyop):
    if pyop is None:
        return ufunc

    def ref(*args):
        if all(type(a) in PY_TYPES for a in args):   # Python scalars: Python semantics
            return pyop(*args)
        return ufunc(*args)
    ref.__name__ = f"{ufunc.__name__}_ref"
    return ref


def _fp_errors(name: str) -> str:
    return "none" if name in _FP_QUIET else "int_divide" if name in _INT_DIVIDE else "float"


def _register_ufuncs(table, may_raise=None):
    for name, pyop in table.items():
        ufunc = getattr(np, name)
        register(name, kind="elementwise", ufunc=ufunc, ref=_ufunc_ref(ufunc, pyop), may_raise=may_raise,
                 lowering=_lowering(name, ufunc.nin), cost="expensive" if name in _EXPENSIVE else "cheap",
                 fp_errors=_fp_errors(name))(_ufunc_meta(name, ufunc, pyop))


_register_ufuncs(UNARY)
_register_ufuncs(BINARY, may_raise=elementwise_may_raise)


@register("where", kind="elementwise", ref=np.where, may_raise=elementwise_may_raise,
          lowering=Loop("fiub", body="where"), fp_errors="none")
def where_meta(cond, a, b):
    """np.where(cond, a, b): all three broadcast; a and b promote (NEP 50)."""
    value = probe(np.where, cond, a, b)
    return fake_like(value, broadcast_shapes(shape_of(cond), shape_of(a), shape_of(b)))


def clip_ref(x, lo, hi):
    return np.clip(x, lo, hi)


@register("clip", kind="elementwise", ref=clip_ref, may_raise=elementwise_may_raise,
          lowering=Loop("fiub", body="clip"))
def clip_meta(x, lo, hi):
    """np.clip(x, lo, hi): x, lo and hi broadcast; lo or hi may be None."""
    value = probe(clip_ref, x, lo, hi)
    return fake_like(value, broadcast_shapes(shape_of(x), shape_of(lo), shape_of(hi)))


def astype_ref(x, *, dtype):
    if isinstance(x, (np.ndarray, np.generic)):
        return x.astype(dtype)
    return np.dtype(dtype).type(x)        # a Python scalar or size -> NumPy scalar


@register("astype", kind="elementwise", ref=astype_ref, lowering=Loop("fiub", body="cast"))
def astype_meta(x, *, dtype):
    """x.astype(dtype) (unsafe cast, always a copy); Python scalars -> NumPy scalars."""
    value = probe(astype_ref, x, dtype=np.dtype(dtype))
    return fake_like(value, shape_of(x))



