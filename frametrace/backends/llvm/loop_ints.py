"""Python ints and NumPy integers in native element loops (loops.py), with Python's and NumPy's
semantics exactly:

  Python int `+ - * // %` and `<< >>`      checked int64 ops (codegen/llvm_kernels/checked.py):
                                           overflow, a zero divisor or a negative shift count
                                           leaves the kernel; the generic path grows the int or
                                           raises Python's error
  Python int `& | ^ ~`                     exact in int64 (two's complement, as Python's)
  a Python int meeting a narrower NumPy    range-checked first (NumPy 2 raises OverflowError
  integer (`crc ^ np.uint8(b)`)            where a cast would wrap, NEP 50), unless its range is
                                           evident (`x & 0xFF`)
  a Python int compared with a NumPy int   exact in int64 (`np.uint8(3) < 300` is True); with a
                                           uint64 or an integer array: not native
"""
from __future__ import annotations

import numpy as np
import sympy

from ...ir.graph import Node
from ...lower.loop_ir import Const, Op, cast
from ...lower.pointwise import weak_node
from .loop_arrays import ArrayVal
from .loop_call import NotNative

_COMPARE = frozenset({"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"})
# Python int arithmetic as checked int64 ops (codegen/llvm_kernels/checked.py): overflow or a
# zero divisor leaves the kernel before the iteration's effects, the generic path runs the rest
_PY_INT_OPS = {"add": "checked_add", "subtract": "checked_subtract", "multiply": "checked_multiply",
               "negative": "checked_negative", "floor_divide": "checked_floor_divide",
               "remainder": "checked_remainder", "left_shift": "checked_left_shift",
               "right_shift": "checked_right_shift"}
# ... and those exact on int64 (two's complement is Python's infinite one, cut at 64 bits)
_PY_INT_EXACT = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "positive"})


class IntBody:
    """The builder's integer methods (mixed into loops._Builder: `expr`, `checked`,
    `_checked_let` and the NotNative error come from there)."""

    def _weak_int_compare(self, n: Node):
        """A comparison of a Python int with a NumPy integer (not uint64): exact, as NumPy 2
        compares them whatever the Python int's size (`np.uint8(3) < 300` is True)."""
        if n.op not in _COMPARE or len(n.args) != 2 or any(isinstance(a, Node) and a.shape != () for a in n.args):
            return None
        kinds = [("weak" if _py_int(a) else a.dtype.kind if isinstance(a, Node) and a.dtype.name != "uint64"
                  else None) for a in n.args]
        if "weak" in kinds and any(isinstance(a, Node) and a.dtype.name == "uint64" for a in n.args):
            raise self.NotNative("a Python int compared with a uint64")   # exact in NumPy, not in int64
        if "weak" not in kinds or not all(k in ("weak", "i", "u", "b") for k in kinds) or kinds == ["weak", "weak"]:
            return None
        args = [cast(self.expr(a) if self.expr(a) is not None else _constant(a, "int64"), "int64")
                for a in n.args]
        return Op(n.op, "bool", tuple(args))

    def _weak_operands(self, n: Node) -> list:
        """The operands' expressions; a Python int value meeting a narrower NumPy integer is
        range-checked first: NumPy raises OverflowError where a cast would wrap (NEP 50), and
        the generic path raises it."""
        out = []
        strong = [a.dtype for a in n.args if isinstance(a, Node) and not _py_int(a)]
        target = np.result_type(*strong) if strong and all(d.kind in "iu" for d in strong) else None
        narrow = target is not None and target.name != "int64" and n.op not in _COMPARE
        for a in n.args:
            entry = self.env.get(a) if isinstance(a, Node) else None
            if isinstance(entry, ArrayVal) or isinstance(entry, tuple) and entry[0] == "buf":   # an array operand
                out.append(None)
                continue
            e = self.expr(a)
            runtime_int = isinstance(a, Node) and a.shape == () and _py_int(a) and a.dtype.kind != "b" or \
                isinstance(a, sympy.Expr) and not a.is_number          # a size or index: `x[i] ^ (m + i)`
            if narrow and runtime_int and not _within(a, np.iinfo(target)):
                info = np.iinfo(target)
                e = self._checked_let(self.checked("checked_range", (
                    cast(e, "int64"), Const(max(int(info.min), -2 ** 63), "int64"),
                    Const(min(int(info.max), 2 ** 63 - 1), "int64"))))
            out.append(e)
        return out


def _int_bounds(a, depth=0):
    """(lo, hi) bounds of a Python int value when evident from its op (a constant, `x & mask`
    with a constant mask >= 0, `b if c else d` of such), else None."""
    if isinstance(a, (bool, int)) and not isinstance(a, np.generic):
        return int(a), int(a)
    if not isinstance(a, Node) or depth > 8:
        return None
    if a.op == "bitwise_and":
        masks = [int(x) for x in a.args if isinstance(x, int) and not isinstance(x, bool) and x >= 0]
        if masks:
            return 0, min(masks)
    if a.op == "select":
        b, c = (_int_bounds(x, depth + 1) for x in a.args[1:])
        if b is not None and c is not None:
            return min(b[0], c[0]), max(b[1], c[1])
    return None


def _within(a, info) -> bool:
    """Is Python int `a` evidently in the range of the integer type `info` (no check needed)?"""
    bounds = _int_bounds(a)
    return bounds is not None and int(info.min) <= bounds[0] and bounds[1] <= int(info.max)


def _nep50_only(n: Node) -> bool:
    """An elementwise op whose only way to raise is NEP 50's OverflowError for a run-time
    Python int out of its NumPy integer operand's range (range-checked: _weak_operands), or
    none at all (a comparison, exact)."""
    if n.op == "power" or all(_py_int(a) for a in n.args):
        return False
    return not _unproven_broadcast(n)


def _unproven_broadcast(n: Node) -> bool:
    for a in n.args:
        if isinstance(a, Node) and a.dtype is not None:
            off = len(n.shape) - a.ndim
            if off < 0 or any(not (d == 1 or d == o or sympy.sympify(d) == sympy.sympify(o))
                              for d, o in zip(a.shape, n.shape[off:])):
                return True
    return False


def _py_int(a) -> bool:
    """A Python int or bool operand (a weak int value of the body, `b if c else d` of such, a
    constant, a size): arithmetic on these is Python's, whatever dtype the graph gives it."""
    if isinstance(a, Node):
        if a.dtype is None or a.dtype.kind not in "iub":
            return False
        return weak_node(a) or a.op == "select" and all(_py_int(x) for x in a.args[1:])
    return isinstance(a, (bool, int, sympy.Expr)) and not isinstance(a, np.generic)


def _constant(value, dt):
    try:
        return Const(np.dtype(dt).type(value).item(), dt)
    except (OverflowError, ValueError, TypeError) as exc:
        raise NotNative(f"constant {value!r}: {exc}") from None
