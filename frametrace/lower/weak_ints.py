"""Run-time Python ints next to narrower integer arrays (NEP 50 weak scalars).

NumPy 2 converts a Python int operand to the integer dtype of the array operands and raises
`OverflowError: Python integer 1000 out of bounds for int8` when it does not fit; a kernel
taking the int as a run-time argument would truncate it silently. For each elementwise node
with a run-time int operand (a dynamic int argument, a size, Python arithmetic on those)
and integer array operands of a dtype that cannot hold every int64, `range_checks(node)`
says which values must lie in which range:

    checks = range_checks(node)   # None: nothing to check; [(operand, lo, hi, raise_fn)]
                                  # "numpy": the op does not raise (comparisons compare the
                                  # exact values): the backend must run its NumPy reference

`raise_fn(value)` raises NumPy's own exception for an out-of-range value (it runs the op's
reference on one-element operands), so the message is NumPy's. Which behaviour an op has
is measured once per (op, dtypes, attrs) with its reference, not listed by hand.
"""
from __future__ import annotations

import warnings

import numpy as np
import sympy

from ..ir.graph import Node
from ..ir.ops.raising import weak_arg
from ..ir.registry import get_op

_cache: dict = {}


def _runtime_int(a) -> bool:
    if isinstance(a, sympy.Basic):
        return not a.is_number and a.is_integer is not False
    return isinstance(a, Node) and weak_arg(a) and a.dtype is not None and a.dtype.name == "int64"


def _strong_int(a) -> bool:
    return isinstance(a, Node) and a.dtype is not None and a.dtype.kind in "iu" and not weak_arg(a)


def _probe_args(node, pos, value):
    args = []
    for i, a in enumerate(node.args):
        if i == pos:
            args.append(value)
        elif _runtime_int(a):
            args.append(1)
        elif isinstance(a, Node):
            if weak_arg(a):
                args.append({"bool": True, "int64": 1}.get(a.dtype.name, 1.0))
            else:
                args.append(np.ones((1,) * max(a.ndim, 1), a.dtype))
        elif isinstance(a, sympy.Basic):
            args.append(int(a) if a.is_integer else float(a))
        else:
            args.append(a)
    return args


def _call(node, pos, value):
    op = get_op(node.op)
    kwargs = dict(node.call_attrs)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return op.ref(*_probe_args(node, pos, value), **kwargs)


def _raises(node, pos, value):
    """True: OverflowError; False: no error; None: another error."""
    try:
        _call(node, pos, value)
    except OverflowError:
        return True
    except Exception:
        return None
    return False


def range_checks(node: Node):
    """See module doc."""
    if not isinstance(node, Node) or node.dtype is None or get_op(node.op).kind != "elementwise":
        return None
    weak = [i for i, a in enumerate(node.args) if _runtime_int(a)]
    strong = [a.dtype for a in node.args if _strong_int(a)]
    if not weak or not strong:
        return None
    dt = np.result_type(*strong)
    if dt.kind not in "iu" or (dt.kind == "i" and dt.itemsize == 8):
        return None                            # every int64 fits
    info = np.iinfo(dt)
    out = []
    for pos in weak:
        key = (node.op, tuple(a.dtype.str if isinstance(a, Node) else repr(a) if i != pos else "w"
                              for i, a in enumerate(node.args)), repr(node.attrs))
        if key not in _cache:
            try:
                ok = (_raises(node, pos, int(info.max)) is False and _raises(node, pos, int(info.min)) is False
                      and _raises(node, pos, int(info.max) + 1) is True
                      and (info.min < -2**63 or _raises(node, pos, int(info.min) - 1) is True))
            except Exception:
                ok = False
            _cache[key] = ok
        if not _cache[key]:
            return "numpy"
        out.append((node.args[pos], int(info.min), int(info.max), _Raiser(node, pos, dt)))
    return out


class _Raiser:
    """raise_fn of a check: NumPy's exception for an out-of-range value."""

    def __init__(self, node, pos, dtype):
        self.node, self.pos, self.dtype = node, pos, dtype

    def __call__(self, value):
        _call(self.node, self.pos, value)
        raise OverflowError(f"Python integer {value} out of bounds for {self.dtype}")

