"""Which graph nodes may raise at run time: the `may_raise` predicates of the op registry.

Dead-code elimination keeps a node whose value is unused when its op's predicate says it
may raise for some run-time values, so the compiled function raises where NumPy does
(NumPy evaluates every statement, used or not). Each predicate is conservative: True
unless the node provably cannot raise. What the meta rules already decide at trace time
(shapes, dtypes, constant operands) is not repeated here.
"""
from __future__ import annotations

import weakref

import numpy as np
import sympy

from ..graph import Node, fold_operands_first
from .ufunc_names import BINARY, UNARY

_PY_DTYPES = ("bool", "int64", "float64")
# Python operators on Python scalars that raise for some values: ZeroDivisionError (/ // %
# and 0.0 ** -1), OverflowError (float **), ValueError (negative shift count)
_PY_RAISING = ("true_divide", "floor_divide", "remainder", "power", "left_shift", "right_shift")


_WEAK: "weakref.WeakKeyDictionary[Node, bool]" = weakref.WeakKeyDictionary()


def _may_be_weak(a: Node) -> bool:
    return a.op != "input" and UNARY.get(a.op, BINARY.get(a.op)) is not None and a.scalar and \
        a.shape == () and a.dtype is not None and a.dtype.name in _PY_DTYPES


def weak_arg(a) -> bool:
    """A Python scalar at run time (NEP 50 weak): a constant, a size expression, a scalar
    input, or Python-operator arithmetic on those (the meta rule's FakeScalar case).
    Remembered per node, computed without recursion (loops make long chains of them)."""
    if not isinstance(a, Node):
        return isinstance(a, (bool, int, float, complex, sympy.Basic)) and not isinstance(a, np.generic)
    if a.op == "input":
        return a.attr("kind") == "scalar"
    if not _may_be_weak(a):
        return False
    return fold_operands_first(a, _WEAK, _may_be_weak, lambda n: all(weak_arg(x) for x in n.args))


def _runtime_int(a) -> bool:
    """A Python int known only at run time (a dynamic int argument, a size expression)."""
    if isinstance(a, sympy.Basic):
        return not a.is_number and a.is_integer is not False
    return isinstance(a, Node) and weak_arg(a) and a.dtype.name == "int64"


def _strong_int(a) -> bool:
    return isinstance(a, Node) and a.dtype is not None and a.dtype.kind in "iu" and not weak_arg(a)


def _nonnegative(a) -> bool:
    """Provably >= 0 for every run-time value."""
    if isinstance(a, Node):
        return a.dtype is not None and a.dtype.kind in "ub"
    if isinstance(a, sympy.Basic):
        return bool(a.is_nonnegative)
    if isinstance(a, (bool, int, float, np.generic)):
        return bool(a >= 0)
    return False


def elementwise_may_raise(node: Node) -> bool:
    """Python semantics: / // % ** << >> may raise. NumPy semantics: an integer power with a
    possibly negative exponent raises ValueError; a run-time Python int out of the range of
    an integer array operand's dtype raises OverflowError (NEP 50); a broadcast the trace
    could only assume (a data-dependent size taken to be 1) raises ValueError when it is not."""
    if all(weak_arg(a) for a in node.args):
        return BINARY.get(node.op) is not None and node.op in _PY_RAISING
    if node.op == "power" and node.dtype is not None and node.dtype.kind in "iu" \
            and len(node.args) == 2 and not _nonnegative(node.args[1]):
        return True
    if _broadcast_unproven(node):
        return True
    return any(_runtime_int(a) for a in node.args) and any(_strong_int(a) for a in node.args)


def _broadcast_unproven(node: Node) -> bool:
    """Some operand dim is neither 1 nor the result's own size expression."""
    for a in node.args:
        if not isinstance(a, Node) or a.dtype is None:
            continue
        off = len(node.shape) - a.ndim
        if off < 0:
            return True
        for d, o in zip(a.shape, node.shape[off:]):
            if not (d == 1 or d == o or sympy.sympify(d) == sympy.sympify(o)):
                return True
    return False


def take_may_raise(node: Node) -> bool:
    """x[idx] with an integer index array: IndexError for an out-of-bounds index."""
    return True


def _positive(d) -> bool:
    if isinstance(d, sympy.Basic):
        return bool(d.is_positive)
    return isinstance(d, int) and d > 0


def no_identity_reduction_may_raise(node: Node) -> bool:
    """max/min/argmax/argmin over an axis whose size may be 0 raise ValueError (the meta rule
    raises when the size is known to be 0; an unbacked size may be 0 at run time)."""
    x = node.args[0] if node.args else None
    if not isinstance(x, Node):
        return False
    axis = node.attr("axis")
    axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    return not all(_positive(x.shape[a]) for a in axes)
