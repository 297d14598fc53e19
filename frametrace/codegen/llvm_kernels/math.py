"""Where a transcendental comes from: `frametrace.codegen.llvm_math` (vectorisable IR) when
it defines the function, else the C library (scalar calls; correct, slower). One switch."""
from __future__ import annotations

USE_LLVM_MATH = True

_LIBM = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
         "arccosh": "acosh", "arctanh": "atanh", "power": "pow", "arctan2": "atan2"}


def _llvm_math():
    if not USE_LLVM_MATH:
        return None
    try:
        from .. import llvm_math
        return llvm_math
    except Exception:                       # not there (yet) or broken: use libm
        return None


def math_function(name: str, dt: str, nargs: int):
    """(symbol, definition IR text or None, declaration or None) for NumPy function `name`."""
    lm = _llvm_math()
    if lm is not None and name in lm.MATH_FUNCTIONS and lm.MATH_FUNCTIONS[name].nargs == nargs:
        try:
            return lm.symbol_name(name, dt), lm.math_function_ir(name, dt), None
        except Exception:
            pass
    ty = "double" if dt == "float64" else "float"
    cname = _LIBM.get(name, name) + ("" if dt == "float64" else "f")
    decl = f"declare {ty} @{cname}({', '.join([ty] * nargs)})"
    return cname, None, decl
