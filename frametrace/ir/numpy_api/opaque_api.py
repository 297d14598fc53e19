"""Binding NumPy calls to opaque ops: `opaque_function(op, fname, params)` -> impl(b, ...).

The impl binds the call's arguments to NumPy's parameter names; leading array arguments
are passed positionally, later ones by keyword (`kw_arrays`), everything else must be a
constant (lists become tuples) or a size, and becomes an attribute passed by keyword. The
registered shape rule (see ops/opaque.py) sees the same names.
"""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
from ..ops.symbolic import is_symbolic
from .common import bind, is_array, is_proxy, is_weak_value


def constant(v, fname: str, name: str):
    """An attribute value: constants, sizes and (nested) lists/tuples of them."""
    if isinstance(v, (list, tuple)):
        return tuple(constant(x, fname, name) for x in v)
    if is_proxy(v):
        raise Unsupported(f"{fname}: argument {name} computed at run time", kind="call", context=fname,
                          hints=(f"pass {name} as a constant",))
    if isinstance(v, np.ndarray):
        return constant(v.tolist(), fname, name)
    if isinstance(v, (type(None), bool, int, float, complex, str, np.generic, np.dtype, type)) or is_symbolic(v):
        return v
    raise Unsupported(f"{fname}: argument {name} of type {type(v).__name__}", kind="call", context=fname)


def emit_opaque(b, op: str, fname: str, bound: dict, params: tuple, array_params: tuple):
    """Emit `op` for bound NumPy arguments (module doc)."""
    pos, kw_names, kw_arrays, attrs = [], [], [], {}
    leading = True
    for name in params:
        if name not in bound:
            leading = False
            continue
        v = bound[name]
        if name in array_params and (is_array(v) or is_weak_value(v)):
            x = v          # a run-time Python scalar stays one: NEP 50 weak promotion, as in NumPy
            if leading:
                pos.append(x)
            else:
                kw_names.append(name)
                kw_arrays.append(x)
        else:
            leading = False
            attrs[name] = constant(v, fname, name)
    if kw_names:
        attrs["kw_arrays"] = tuple(kw_names)
    return b.emit(op, *pos, *kw_arrays, **attrs)


def opaque_function(op: str, fname: str, params: tuple, array_params: tuple = ("a",), *,
                    check=None, post=None):
    """impl(b, *args, **kwargs) emitting opaque op `op`; `check(bound)` may reject calls
    (raise Unsupported/NumpyError); `post(b, result, bound)` may adjust the result."""

    def impl(b, *args, **kwargs):
        bound = bind(fname, params, args, kwargs)
        if check is not None:
            check(bound)
        result = emit_opaque(b, op, fname, bound, params, array_params)
        return result if post is None else post(b, result, bound)
    impl.__name__ = f"{op.replace('.', '_')}_impl"
    return impl
