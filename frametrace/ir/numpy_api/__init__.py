"""How NumPy's public API maps onto graph ops, for the tracer.

Entry points (b is a `GraphBuilder`; values are Proxy, Python/NumPy constants, SymInt/
SymFloat, slices, Ellipsis and tuples/lists of these):

    lookup_function(fn)            -> impl(b, *args, **kwargs) | None   np.sin, np.sum, np.float32, ...
    is_traceable_function(fn)      -> bool
    lookup_method(name)            -> impl(b, self, *args, **kwargs) | None   x.sum(...), x.reshape(...)
    array_attribute(b, x, name)    x.T, x.mT, x.shape, x.ndim, x.dtype, x.size, x.itemsize, x.nbytes
    binary_op(b, op, lhs, rhs)     + - * / // % ** @ & | ^ << >>
    compare_op(b, op, lhs, rhs)    < <= == != > >=
    unary_op(b, op, x)             - + ~ abs
    inplace_op(b, op, target, rhs) x op= y -> the new value of the name (target for arrays)
    getitem(b, x, index)           basic and advanced indexing -> Proxy
    setitem(b, x, index, value)    -> None (emits getitem view + assign)

Modules: functions (the lookup table), operators, reductions, shaping, creation, layout,
indexing + advanced (lists / ranges / integer and boolean arrays as indices, x[idx] = v,
ufunc.at), data_dependent (unbacked sizes), joining (split, stacks, triangles, repetition,
flips: native compositions), literals (np.array of lists), python_scalars (int() and math.f
of traced scalars), rounding (np.round with decimals, builtin round()), ufunc_methods,
and the opaque NumPy calls: opaque_api (binding),
linalg_calls, library_calls, more_calls, extra_elementwise. catalog writes
docs/numpy_functions.md.

Errors: `frametrace.errors.Unsupported` for what is not traced (message names the function
and argument); `NumpyError` wrapping the exception NumPy would raise.
"""
from .. import ops  # noqa: F401  (registers every op)
from .functions import is_traceable_function, lookup_function
from .indexing import getitem, setitem
from .methods import array_attribute, lookup_method
from .operators import binary_op, compare_op, inplace_op, unary_op
from .python_scalars import math_function, python_int
from .rounding import python_round

__all__ = ["lookup_function", "is_traceable_function", "lookup_method", "array_attribute",
           "binary_op", "compare_op", "unary_op", "inplace_op", "getitem", "setitem",
           "python_int", "math_function", "python_round"]
