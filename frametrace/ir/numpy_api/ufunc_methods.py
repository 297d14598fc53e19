"""ufunc methods: np.add.reduce, np.maximum.accumulate, np.multiply.outer, np.add.at.

reduce and accumulate map to the reduction/scan ops where NumPy's ufunc has one (add ->
sum/cumsum, multiply -> prod/cumprod, maximum -> max, ...); other accumulates are opaque
NumPy calls; outer is the ufunc on operands reshaped to broadcast (fused elementwise);
at is an unbuffered "ufunc_at" mutation.
"""
from __future__ import annotations

import numpy as np

from ..ops.elementwise import BINARY
from ..ops.opaque import register_opaque
from .advanced import ufunc_at
from .common import as_array, bind, normalize_axis, unsupported
from .operators import UFUNC_OPS
from .reductions import reduction_impl

_REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
           np.logical_and: "all", np.logical_or: "any"}
_SCAN = {np.add: "cumsum", np.multiply: "cumprod"}


def _same_shape(x, *, axis, dtype=None):
    return tuple(x.shape)


def _accumulate_ref(ufunc):
    return lambda x, *, axis, dtype=None: ufunc.accumulate(x, axis=axis, dtype=dtype)


_ACCUMULATE_OPS = {}
for _name in BINARY:
    _uf = getattr(np, _name)
    if _uf.nin == 2 and _uf.nout == 1 and _uf not in _SCAN:
        _ACCUMULATE_OPS[_uf] = f"{_name}_accumulate"
        register_opaque(f"{_name}_accumulate", _accumulate_ref(_uf), _same_shape,
                        doc=f"np.{_name}.accumulate(x, axis, dtype)")


def reduce_method(ufunc):
    name = _REDUCE.get(ufunc)
    fname = f"np.{ufunc.__name__}.reduce"

    def impl(b, array, axis=0, dtype=None, out=None, keepdims=False, **kwargs):
        if name is None or kwargs:
            raise unsupported(fname, "this ufunc's reduce" if name is None else f"arguments {sorted(kwargs)}")
        kw = {"axis": axis, "out": out, "keepdims": keepdims}
        if name in ("sum", "prod"):
            kw["dtype"] = dtype
        elif dtype is not None:
            raise unsupported(fname, "dtype=")
        return reduction_impl(name, fname)(b, array, **kw)
    return impl


def accumulate_method(ufunc):
    fname = f"np.{ufunc.__name__}.accumulate"

    def impl(b, array, axis=0, dtype=None, out=None):
        if out is not None:
            raise unsupported(fname, "out=")
        x = as_array(b, array, fname)
        if x.ndim == 0:
            raise unsupported(fname, "a 0-d operand")
        ax = normalize_axis(axis, x.ndim, fname)
        if ufunc in _SCAN:
            return reduction_impl(_SCAN[ufunc], fname)(b, x, axis=ax, dtype=dtype)
        op = _ACCUMULATE_OPS.get(ufunc)
        if op is None:
            raise unsupported(fname, "this ufunc's accumulate")
        return b.emit(op, x, axis=ax, dtype=dtype)
    return impl


def outer_method(ufunc):
    fname = f"np.{ufunc.__name__}.outer"
    opname = UFUNC_OPS[ufunc]

    def impl(b, A, B, **kwargs):
        if kwargs:
            raise unsupported(fname, f"arguments {sorted(kwargs)}")
        a, c = as_array(b, A, fname), as_array(b, B, fname)
        a = b.emit("reshape", a, shape=tuple(a.shape) + (1,) * c.ndim) if c.ndim else a
        return b.emit(opname, a, c)
    return impl


def at_method(ufunc):
    def impl(b, a, indices, *rest, **kwargs):
        p = bind(f"np.{ufunc.__name__}.at", ("b",), rest, kwargs)
        return ufunc_at(b, ufunc, a, indices, p.get("b"))
    return impl


FUNCTIONS: dict = {}
for _uf in UFUNC_OPS:
    if _uf.nin == 2 and _uf.nout == 1 and _uf is not np.matmul:
        FUNCTIONS[_uf.reduce] = reduce_method(_uf)
        FUNCTIONS[_uf.accumulate] = accumulate_method(_uf)
        FUNCTIONS[_uf.outer] = outer_method(_uf)
        FUNCTIONS[_uf.at] = at_method(_uf)
