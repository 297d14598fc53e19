"""Vectorisable math functions as LLVM IR text, for the kernel generator to paste and call.

    from frametrace.codegen.llvm_math import math_function_ir, math_functions_ir, MATH_FUNCTIONS
    text = math_function_ir("sin", "double")
    # defines `define internal double @ft_sin_f64(double %x) alwaysinline nounwind ...`
    # (helpers' names all start with `ft_sin_f64.`); float32: `@ft_<name>_f32(float %x)`;
    # power and arctan2 take `(x, y)` in NumPy's argument order.

Each function is straight-line IR built from instructions and intrinsics that lower to
instructions (fma, fabs, floor, copysign, sqrt, bitcasts, integer ops on the bit patterns),
so once inlined at O3 a loop calling it vectorises (zmm on AVX-512). No tables, no calls,
except one rare path below. float32 mostly runs natively in float (16 lanes per zmm);
`MathFunction.native_f32` is None where it converts to double instead (see the table).

Rare path: sin/cos/tan of |x| >= 2**30 (2**16 for float32), inf or NaN branch to a scalar
Payne-Hanek routine (`@ft_sin_f64.huge`, noinline) through a call site that names masked
vector wrappers (VFABI attribute), so the loop still vectorises; ordinary inputs pay a mask
test per vector. Compile with frametrace.codegen.llvm_jit (it inlines those wrappers after
vectorisation; another pipeline is still correct, just slower on such loops).

Pasting rules: define each (name, dtype) once per module -- math_functions_ir joins several
and drops duplicates. No `declare`s are emitted (LLVM >= 19 declares used intrinsics), so
the text never clashes with the host module's own declarations.

Accuracy (tests/codegen/test_llvm_math.py, table in its docstring): below 2 ulp for every
function and dtype -- float64 against long double on wide random ranges (sin/cos/tan, tanh,
sinh ~1.7-1.9; the rest <= 1.3), float32 over all 2**32 inputs for the unary functions
(<= 1.7) -- with NaN, infinities, signed zeros and subnormals as in NumPy/C99.

Speed (benchmarks/bench_llvm_math.py, n = 1e6, vs NumPy 2.4's SIMD ufuncs): float64 sin/cos
~1.1-1.3 ns/element (NumPy ~18), exp at parity, most others 0.7-1.5x NumPy; float32 exp,
sin, cos 1.4-1.8x faster. Slower than NumPy: power (vectorised, but its double-double log
costs ~150 instructions per 8 lanes: 0.65x f64, 0.36x f32), float32 log2/log10/tan/sinh.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import exp_log as el, exp_log_f32 as el32, hyperbolic as hy, inverse_trig as it
from . import power as pw, trig as tr
from ._common import define, symbol
from ._ir import F32, F64

__all__ = ["MATH_FUNCTIONS", "MathFunction", "math_function_ir", "math_functions_ir", "symbol_name"]


@dataclass(frozen=True)
class MathFunction:
    """One function: NumPy name, arity, the double core `core(fn, *args, prec)` (also run for
    float32, in double with shorter polynomials, when there is no native float32 core) and
    the native float32 core `native_f32(fn, *args)` or None."""
    name: str
    nargs: int
    core: Callable
    native_f32: Callable | None = None

    def build(self, ty: str) -> str:
        return define(self.name, ty, self.core, self.nargs,
                      self.native_f32 if ty == F32 else None)


# name, arity, double core, native float32 core (None: float32 evaluates in double)
_TABLE = [
    ("exp", 1, el.exp_fn, el32.exp_f32),
    ("exp2", 1, el.exp2_core, el32.exp2_f32),
    ("expm1", 1, el.expm1_core, el32.expm1_f32),
    ("log", 1, el.log_core, el32.log_f32),
    ("log2", 1, el.log2_core, el32.log2_f32),
    ("log10", 1, el.log10_core, el32.log10_f32),
    ("log1p", 1, el.log1p_core, el32.log1p_f32),
    ("sin", 1, tr.sin_core, tr.sin_f32),
    ("cos", 1, tr.cos_core, tr.cos_f32),
    ("tan", 1, tr.tan_core, tr.tan_f32),           # tan_f32: lean double evaluation inside
    ("arctan", 1, it.atan_core, it.native_f32(it.atan_core)),
    ("arcsin", 1, it.asin_core, it.native_f32(it.asin_core)),
    ("arccos", 1, it.acos_core, it.native_f32(it.acos_core)),
    ("arctan2", 2, it.atan2_core, it.native_f32(it.atan2_core)),
    ("tanh", 1, hy.tanh_core, hy.tanh_f32),
    ("sinh", 1, hy.sinh_core, hy.sinh_f32),
    ("cosh", 1, hy.cosh_core, hy.cosh_f32),
    ("sqrt", 1, pw.sqrt_core, pw.sqrt_core),
    ("power", 2, pw.pow_core, pw.pow_f32),         # pow_f32: log/exp in double inside
]


def _registry() -> dict[str, MathFunction]:
    return {name: MathFunction(name, nargs, core, native) for name, nargs, core, native in _TABLE}


MATH_FUNCTIONS: dict[str, MathFunction] = _registry()

_DTYPES = {"double": F64, "f64": F64, "float64": F64, "float": F32, "f32": F32, "float32": F32}


def _ty(dtype) -> str:
    """IR type for "double"/"f64"/"float64"/np.float64/np.dtype(...), and the f32 spellings."""
    key = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if key is None:
        import numpy as np
        try:
            key = np.dtype(dtype).name
        except TypeError:
            key = repr(dtype)
    try:
        return _DTYPES[key]
    except KeyError:
        raise ValueError(f"llvm_math supports float64 and float32, not {dtype!r}; "
                         f"cast integer inputs to float first") from None


def symbol_name(name: str, dtype) -> str:
    """IR name of a function, e.g. symbol_name("sin", "double") == "ft_sin_f64"."""
    _lookup(name)
    return symbol(name, _ty(dtype))


def _lookup(name: str) -> MathFunction:
    try:
        return MATH_FUNCTIONS[name]
    except KeyError:
        raise KeyError(f"no llvm_math function {name!r}; available: "
                       f"{', '.join(sorted(MATH_FUNCTIONS))}") from None


_cache: dict[tuple[str, str], str] = {}


def math_function_ir(name: str, dtype) -> str:
    """IR text defining `@ft_<name>_<f64|f32>` and its helpers (cached per (name, dtype))."""
    key = (name, _ty(dtype))
    if key not in _cache:
        _cache[key] = _lookup(name).build(key[1])
    return _cache[key]


def math_functions_ir(requests) -> str:
    """IR text for several (name, dtype) pairs, each defined once, in first-seen order."""
    seen: dict[tuple[str, str], None] = {}
    for name, dtype in requests:
        seen[(name, _ty(dtype))] = None
    return "\n".join(math_function_ir(n, t) for n, t in seen)
