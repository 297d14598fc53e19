"""Shared plumbing: symbol names, the float32-via-double wrapper, common constants."""
from __future__ import annotations

from typing import Callable

from ._ir import F32, F64, Fn, H, Val, f32_round

INF = float("inf")
NAN = float("nan")

# ln 2 split three ways: rounded (for exact fma reductions), and fdlibm-style with 21 trailing
# zero bits so that k * LN2_HI32 is exact for |k| < 2**21 without an fma.
LN2 = H("0x1.62e42fefa39efp-1")
LN2_LO = H("0x1.abc9e3b39803fp-56")          # ln2 - LN2
LN2_HI32 = H("0x1.62e42fee00000p-1")
LN2_LO32 = H("0x1.a39ef35793c76p-33")        # ln2 - LN2_HI32
LOG2E = H("0x1.71547652b82fep+0")            # 1/ln2


def symbol(name: str, ty: str) -> str:
    """`ft_<name>_f64` / `ft_<name>_f32`: the IR name of a math function."""
    return f"ft_{name}_{'f64' if ty == F64 else 'f32'}"


Core = Callable[..., Val]   # core(fn, *double_args, prec) -> double result


def define(name: str, ty: str, core: Core, nargs: int = 1, native_f32: Core | None = None) -> str:
    """Define `ft_<name>_<ty>`. float32 runs `native_f32(fn, x)` on floats if given (16 lanes
    per zmm), else converts to double, runs `core` at "f32" precision (shorter polynomials)
    and rounds once at the end."""
    params = [(ty, p) for p in ("x", "y")[:nargs]]
    fn = Fn(symbol(name, ty), ty, params)
    if ty == F32 and native_f32 is not None:
        fn.ret(native_f32(fn, *fn.args))
        return fn.text()
    args = [a if ty == F64 else fn.cast("fpext", a, F64) for a in fn.args]
    res = core(fn, *args, prec="f64" if ty == F64 else "f32")
    fn.ret(res if ty == F64 else fn.cast("fptrunc", res, F32))
    return fn.text()


def isnan(fn: Fn, x: Val) -> Val:
    return fn.fcmp("uno", x, x)


def F(value: float) -> float:
    """`value` rounded to float32, for constants of native-float kernels."""
    return f32_round(value)
