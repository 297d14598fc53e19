"""Elementwise NumPy functions without a loop of ours: opaque calls with broadcast shapes.

The ufuncs that have no op in ops/elementwise.py (gcd, lcm, ldexp, float_power, divmod, modf,
frexp, nextafter, spacing, ...) and elementwise Python-level functions (np.fix, np.real,
np.imag) run NumPy's own loop in the wrapper; aliases with an op of the same meaning
(np.degrees is np.rad2deg's loop) map to that op and fuse. Also np.arange with float bounds.
"""
from __future__ import annotations

import numpy as np
import sympy

from ...errors import NumpyError, Unsupported
from ..ops.broadcast import broadcast_shapes
from ..ops.opaque import register_opaque
from ..ops.promotion import shape_of
from ...shapes.functions import exact_value
from ...shapes.symint import wrap
from ..ops.symbolic import statically_known_true, sym_max
from .common import (as_array, as_dtype, check_operand, is_array, is_proxy, unsupported, unwrap_out,
                     write_ufunc_out)
from .literals import array_like
from .operators import UFUNC_OPS, ufunc_impl

_ALIASES = {np.degrees: "rad2deg", np.radians: "deg2rad"}


def _broadcast_all(*xs, **kw):
    return broadcast_shapes(*(tuple(shape_of(x)) for x in xs))


OPAQUE_UFUNCS = {}
for _name in ("gcd", "lcm", "ldexp", "float_power", "nextafter", "spacing", "bitwise_count",
              "divmod", "modf", "frexp"):
    _uf = getattr(np, _name, None)
    if _uf is None or _uf in UFUNC_OPS:
        continue
    ops = []
    for _k in range(_uf.nout):
        op = f"ufunc_{_name}" if _uf.nout == 1 else f"ufunc_{_name}_{_k}"
        register_opaque(op, _uf, _broadcast_all, item=None if _uf.nout == 1 else _k,
                        doc=f"np.{_name} (NumPy's loop)")
        ops.append(op)
    OPAQUE_UFUNCS[_uf] = tuple(ops)


def _opaque_ufunc_impl(uf, ops):
    fname = f"np.{uf.__name__}"

    def impl(b, *args, out=None, where=True, **kwargs):
        if len(args) > uf.nin and out is None:         # outputs given positionally
            args, out = args[:uf.nin], args[uf.nin:]
        if kwargs or len(args) != uf.nin:
            raise unsupported(fname, f"arguments {sorted(kwargs)}", f"call {fname} with its operands, out=, where=")
        xs = [array_like(b, a, fname) for a in args]
        if not any(is_array(x) for x in xs):
            xs = [as_array(b, x, fname) for x in xs]
        res = tuple(b.emit(op, *xs) for op in ops)
        if out is None:
            if where is not True:
                raise unsupported(fname, "where= without out= (NumPy leaves the other elements "
                                  "uninitialised)", "pass out= as well")
            return res[0] if len(res) == 1 else res
        return _write_outs(b, uf, fname, xs, res, out, where)
    return impl


def _write_outs(b, uf, fname, xs, res, out, where):
    """NumPy's out= (an array, or a tuple with one entry per output, None: allocated) and
    where= (out keeps its values where False) for the results `res` of an opaque ufunc."""
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != uf.nout:
        raise NumpyError(ValueError(f"The 'out' tuple must have exactly {uf.nout} entries: one per ufunc output"))
    if where is not True:
        check_operand(where, fname)
    got = []
    for k, (r, o) in enumerate(zip(res, outs, strict=True)):
        o = unwrap_out(o, fname)
        if o is None:
            got.append(r)
            continue
        if where is not True:
            r = b.emit("where", where, r, o)
        probe_fn = (lambda *a, out, k=k: uf(*a, out=tuple(out if j == k else None for j in range(uf.nout))))
        got.append(write_ufunc_out(b, fname, probe_fn if uf.nout > 1 else uf, xs, r, o))
    return got[0] if len(got) == 1 else tuple(got)


def _same(x, **kw):
    return tuple(shape_of(x))


register_opaque("fix", np.fix, _same)
register_opaque("real", np.real, _same, doc="np.real(x) of a complex x (NumPy's view)", aliases=True)
register_opaque("imag", np.imag, _same, doc="np.imag(x) of a complex x (NumPy's view)", aliases=True)


def fix_impl(b, x, out=None):
    if out is not None:
        raise unsupported("np.fix", "out=")
    return b.emit("fix", as_array(b, x, "np.fix"))


def real_part(b, x):
    """x.real: x itself for real dtypes (NumPy gives a view of the same memory), else NumPy's
    view of the real parts (writing through it is a graph break: registry.OpDef.aliases)."""
    x = as_array(b, x, "np.real")
    return x if x.dtype.kind != "c" else b.emit("real", x)


def imag_part(b, x):
    """x.imag: NumPy's view (a read-only zero array for real dtypes)."""
    return b.emit("imag", as_array(b, x, "np.imag"))


# ---- np.arange with float bounds ------------------------------------------------------------

register_opaque("arange_float", lambda *, start, stop, step, num, dtype: np.arange(start, stop, step, dtype=dtype),
                lambda *, start, stop, step, num, dtype: (num,), doc="np.arange with float bounds")


def _exact(v):
    """An exact sympy value of a float/int constant or size whose float arithmetic is exact."""
    if is_proxy(v):
        raise Unsupported("np.arange with a bound computed from array data", kind="data_dependent",
                          context="np.arange")
    expr = getattr(v, "expr", None)
    if expr is not None:
        return exact_value(expr)           # None: NumPy's float length may differ
    if isinstance(v, float):
        num, den = v.as_integer_ratio()
        if den & (den - 1) or den > 2 ** 20:
            return None                    # not dyadic: NumPy's float length may differ
        return sympy.Rational(num, den)
    return sympy.Integer(int(v))


def arange_float(b, start, stop, step, dtype):
    fname = "np.arange"
    if step == 0:
        raise NumpyError(ZeroDivisionError("division by zero"))
    if all(isinstance(v, (int, float)) for v in (start, stop, step)):     # constants: NumPy's own length
        num = len(np.arange(start, stop, step))
        return b.emit("arange_float", start=start, stop=stop, step=step, num=num, dtype=as_dtype(dtype, fname))
    vals = [_exact(v) for v in (start, stop, step)]
    if any(v is None for v in vals):
        raise Unsupported("np.arange with non-dyadic float bounds and a symbolic size", kind="call",
                          context=fname, hints=("compute start + step * np.arange(n)",))
    q = sympy.ceiling((vals[1] - vals[0]) / vals[2])
    if q.is_number:
        num = max(int(q), 0)
    elif q.is_integer:
        env = next(v.env for v in (start, stop, step) if getattr(v, "env", None) is not None)
        num = wrap(q, "int", env)
        num = num if statically_known_true(num >= 0) else sym_max(num, 0)
    else:
        raise Unsupported("np.arange: a float length that is not a whole number of steps", kind="call",
                          context=fname)
    return b.emit("arange_float", start=start, stop=stop, step=step, num=num, dtype=as_dtype(dtype, fname))


FUNCTIONS = {uf: ufunc_impl(uf, name) for uf, name in _ALIASES.items()}
FUNCTIONS.update({uf: _opaque_ufunc_impl(uf, ops) for uf, ops in OPAQUE_UFUNCS.items()})
FUNCTIONS.update({np.fix: fix_impl, np.real: real_part, np.imag: imag_part})
