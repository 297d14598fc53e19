"""The unary and binary ufuncs the graph has as elementwise ops, each with the Python operator of
the same meaning on Python scalars (None: no such operator). Read by the elementwise ops'
registrations and by the `may_raise` predicates (raising.py), which sit below them."""
from __future__ import annotations

import operator

# name -> the Python operator with the same meaning on Python scalars (None: no such operator)
UNARY = {
    "negative": operator.neg, "positive": operator.pos, "absolute": abs, "invert": operator.invert,
    "sign": None, "exp": None, "expm1": None, "exp2": None, "log": None, "log1p": None,
    "log2": None, "log10": None, "sqrt": None, "cbrt": None, "square": None, "reciprocal": None,
    "sin": None, "cos": None, "tan": None, "arcsin": None, "arccos": None, "arctan": None,
    "sinh": None, "cosh": None, "tanh": None, "arcsinh": None, "arccosh": None, "arctanh": None,
    "deg2rad": None, "rad2deg": None, "floor": None, "ceil": None, "trunc": None, "rint": None,
    "fabs": None, "isnan": None, "isinf": None, "isfinite": None, "signbit": None,
    "logical_not": None, "conjugate": None,
}
BINARY = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "true_divide": operator.truediv, "floor_divide": operator.floordiv,
    "remainder": operator.mod, "power": operator.pow,
    "equal": operator.eq, "not_equal": operator.ne, "less": operator.lt,
    "less_equal": operator.le, "greater": operator.gt, "greater_equal": operator.ge,
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
    "left_shift": operator.lshift, "right_shift": operator.rshift,
    "maximum": None, "minimum": None, "fmax": None, "fmin": None, "fmod": None,
    "arctan2": None, "hypot": None, "copysign": None, "logaddexp": None, "logaddexp2": None,
    "heaviside": None, "logical_and": None, "logical_or": None, "logical_xor": None,
}
