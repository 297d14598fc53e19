"""ufunc methods: np.add.reduce, np.maximum.accumulate, np.multiply.outer, np.add.at, for
every (non-generalized) ufunc NumPy has.

reduce and accumulate map to the reduction/scan ops where NumPy's ufunc has one (add ->
sum/cumsum, multiply -> prod/cumprod, maximum -> max, ...); the other reduces and accumulates
are opaque NumPy calls (`<name>_reduce`, `<name>_accumulate`: NumPy's own left-to-right fold,
so subtract / divide / power reduce in NumPy's order); outer is the ufunc on operands
reshaped to broadcast (fused elementwise, or NumPy's loop for the ufuncs without one of
ours); at is an unbuffered "ufunc_at" mutation (unary and binary ufuncs).
tests/ir/test_ir_ufunc_audit.py walks every ufunc with each method, out= and where=.
"""
from __future__ import annotations

import numpy as np

from ..ops.elementwise import BINARY
from ..ops.opaque import register_opaque
from .advanced import ufunc_at
from .common import (as_array, as_dtype, bind, const_bool, normalize_axes, normalize_axis, unsupported,
                     unwrap_out, write_reduction_out)
from .extra_elementwise import OPAQUE_UFUNCS
from .opaque_api import constant
from .operators import UFUNC_OPS
from .reductions import reduction_impl
from .shape_rules import reduced_shape

_REDUCE = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
           np.logical_and: "all", np.logical_or: "any"}
_SCAN = {np.add: "cumsum", np.multiply: "cumprod"}
# the binary ufuncs with one output, with a loop of ours or NumPy's (gcd, lcm, ...)
_BINARY_UFUNCS = [getattr(np, n) for n in BINARY] + [uf for uf in OPAQUE_UFUNCS if uf.nin == 2]
_BINARY_UFUNCS = list(dict.fromkeys(uf for uf in _BINARY_UFUNCS
                                    if uf.nin == 2 and uf.nout == 1 and uf.signature is None))


def _same_shape(x, *, axis, dtype=None):
    return tuple(x.shape)


def _accumulate_ref(ufunc):
    return lambda x, *, axis, dtype=None: ufunc.accumulate(x, axis=axis, dtype=dtype)


def _reduce_ref(ufunc):
    def ref(x, *, axis, keepdims=False, dtype=None, initial=np._NoValue, where=True):
        return ufunc.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
    return ref


def _reduce_shape(x, *, axis, keepdims=False, dtype=None, initial=None, where=None):
    return reduced_shape(tuple(x.shape), axis, keepdims)


_ACCUMULATE_OPS, _REDUCE_OPS = {}, {}
for _uf in _BINARY_UFUNCS:
    _name = _uf.__name__
    if _uf not in _SCAN:
        _ACCUMULATE_OPS[_uf] = f"{_name}_accumulate"
        register_opaque(f"{_name}_accumulate", _accumulate_ref(_uf), _same_shape,
                        doc=f"np.{_name}.accumulate(x, axis, dtype)")
    _REDUCE_OPS[_uf] = f"{_name}_reduce"         # also add & co. with initial= / where=
    register_opaque(f"{_name}_reduce", _reduce_ref(_uf), _reduce_shape,
                    doc=f"np.{_name}.reduce(x, axis, dtype, keepdims, initial, where): NumPy's fold")


def _opaque_reduce(b, ufunc, fname, array, axis, dtype, out, keepdims, initial, where):
    x = as_array(b, array, fname)
    axes = normalize_axes(axis, x.ndim, fname)
    attrs = {"axis": axes, "keepdims": const_bool(keepdims, fname, "keepdims"), "dtype": as_dtype(dtype, fname)}
    if initial is not np._NoValue:
        attrs["initial"] = constant(initial, fname, "initial")
    mask = ()
    if where is not True:
        mask, attrs["kw_arrays"] = (as_array(b, where, fname),), ("where",)
    result = b.emit(_REDUCE_OPS[ufunc], x, *mask, **attrs)
    out = unwrap_out(out, fname)
    return result if out is None else write_reduction_out(b, fname, result, out)


def reduce_method(ufunc):
    name = _REDUCE.get(ufunc)
    fname = f"np.{ufunc.__name__}.reduce"

    def impl(b, array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True,
             **kwargs):
        if kwargs:
            raise unsupported(fname, f"arguments {sorted(kwargs)}")
        if name is None or initial is not np._NoValue or where is not True:
            return _opaque_reduce(b, ufunc, fname, array, axis, dtype, out, keepdims, initial, where)
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
        x = as_array(b, array, fname)
        if x.ndim == 0:
            raise unsupported(fname, "a 0-d operand")
        ax = normalize_axis(axis, x.ndim, fname)
        if ufunc in _SCAN:
            result = reduction_impl(_SCAN[ufunc], fname)(b, x, axis=ax, dtype=dtype)
        else:
            result = b.emit(_ACCUMULATE_OPS[ufunc], x, axis=ax, dtype=as_dtype(dtype, fname))
        out = unwrap_out(out, fname)
        if out is None:
            return result
        if out.dtype != result.dtype:
            raise unsupported(fname, "out= of another dtype than the result", "cast the result instead")
        return write_reduction_out(b, fname, result, out)
    return impl


def outer_method(ufunc):
    fname = f"np.{ufunc.__name__}.outer"
    opname = UFUNC_OPS[ufunc] if ufunc in UFUNC_OPS else OPAQUE_UFUNCS[ufunc][0]

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
for _uf in _BINARY_UFUNCS:
    FUNCTIONS[_uf.reduce] = reduce_method(_uf)
    FUNCTIONS[_uf.accumulate] = accumulate_method(_uf)
    FUNCTIONS[_uf.outer] = outer_method(_uf)
for _uf in {v for v in vars(np).values() if isinstance(v, np.ufunc)}:     # NumPy's scatter: any ufunc
    if _uf.nout == 1 and _uf.signature is None:
        FUNCTIONS[_uf.at] = at_method(_uf)
