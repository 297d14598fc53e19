"""NumPy calls of a graph (np.matmul, opaque NumPy functions) made by the native entry itself.

Without them a graph holding a lone `x @ w` (BLAS, which no kernel beats) or `np.histogram`
kept only the Python path: trampoline, Python guards and wrapper cost a few microseconds on top
of NumPy's own call, so the compiled function was slower than the NumPy it replaced on small
arrays. The entry calls the op's NumPy reference through the C API (`PyObject_CallFunctionObjArgs`)
instead, with the same arguments the wrapper passes, and owns the result like an array it
allocated: kernels after it read it, the return value may be it.

A call qualifies when it is pure (not a mutation or a structured loop), returns an array
(a NumPy scalar result becomes a 0-d array, as the wrapper does with np.asarray), and every
argument is an input, an earlier result the entry owns, or a constant; its keyword attributes
are bound once (functools.partial, kept alive with the entry). Exceptions are NumPy's: the
entry returns NULL with the exception set, as the Python path would raise it.
"""
from __future__ import annotations

import functools

import numpy as np

from ...ir.graph import Node
from ...ir.registry import get_op
from .native_guards import NotNative

_CALLABLE = ("fallback", "matmul")
_PURE_KINDS = ("elementwise", "reduction", "scan", "copy", "creation", "matmul", "gather", "opaque")
_CONSTANTS = (int, float, bool, str, type(None))


def plan_call(b, plan, n) -> bool:
    """Can the entry make wrapper step `n` itself? Then remember how (b.calls[n])."""
    op = get_op(n.op)
    if plan.cat[n] not in _CALLABLE or n.dtype is None or n.scalar or plan.by_value(n) or not n.shape \
            or op.kind not in _PURE_KINDS or n.op == "loop" or n.errstate:
        return False
    args = []
    for a in n.args:
        if isinstance(a, Node):
            var = plan.var.get(a)
            if var not in b.objs and var not in b.will_own:
                raise NotNative(f"a NumPy call on {var}, which the entry does not hold")
            args.append(var)
        elif type(a) in _CONSTANTS:
            args.append(("const", a))
        else:
            return False
    donor = getattr(plan, "ufunc_donors", {}).get(n)
    into = getattr(plan, "ufunc_outs", {}).get(n)
    if donor is not None:                            # the wrapper's out= (dead_values.ufunc_donor)
        args.append(plan.var[donor])                 # a ufunc's positional output
    elif into is not None and plan.var.get(into.args[0]) in b.objs:
        args.append(plan.var[into.args[0]])          # `np.multiply(z, z, z)`: the destination itself,
        b.out_calls.add(into)                        # as the wrapper (wrapper.in_place_ufuncs)
    attrs = [(k, v) for k, v in n.call_attrs if not (op.kind == "gather" and k == "size")]
    if any(type(v) not in _CONSTANTS and not (isinstance(v, tuple) and all(type(x) in _CONSTANTS for x in v))
           for _, v in attrs):
        return False
    fn = functools.partial(op.ref, **dict(attrs)) if attrs else op.ref
    b.tr.keep.append(fn)
    b.calls[n] = (fn, args)
    b.will_own.add(plan.var[n])
    for d in n.shape:
        b.size(plan, plan.size_source(d))
    return True


def emit_call(b, plan, n):
    """The call of step `n` (planned by plan_call): its result an owned array in b.objs."""
    ir = b.ir
    fn, args = b.calls[n]
    ptrs = []
    for a in args:
        if isinstance(a, tuple):
            b.tr.keep.append(a[1])
            ptrs.append(ir.const_ptr(a[1]))
        else:
            ptrs.append(b.objs[a])
    r = b.py_call(fn, *ptrs)
    slot = ir.alloca("ptr")
    ir.do(f"store ptr {r}, ptr {slot}, align 8")
    typ = ir.field(r, 8, "ptr")                      # ob_type
    other, done = ir.label("notarr"), ir.label("called")
    ir.do(f"br i1 {ir.op(f'icmp eq ptr {typ}, {ir.const_ptr(np.ndarray)}')}, label %{done}, label %{other}")
    ir.block(other)                                  # a NumPy scalar: np.asarray, as the wrapper
    b.owned.append(r)
    arr = b.py_call(np.asarray, r)
    b.owned.pop()
    ir.call("void", "Py_DecRef", f"ptr {r}")
    ir.do(f"store ptr {arr}, ptr {slot}, align 8")
    ir.do(f"br label %{done}")
    ir.block(done)
    value = ir.op(f"load ptr, ptr {slot}, align 8")
    b.owned.append(value)
    b.objs[plan.var[n]] = value

__all__ = ["plan_call", "emit_call"]
