"""Floating-point exception flags of kernels: a cheap "maybe NumPy would warn" signal.

NumPy reports divide-by-zero, overflow and invalid (after each ufunc loop it reads the FP
status register) as `np.errstate` says: ignore, warn (RuntimeWarning), raise
(FloatingPointError), call or log. A kernel that may raise one (`may_raise`) clears the
status flags of SSE's MXCSR on entry, and on exit ORs the three flags it saw into one
process-wide word (`frametrace_fpflags`, an external symbol every module links against, so
cached machine code stays valid across processes). Each chunk runs on one thread and reads
its own thread's register, so threaded kernels report too. Cost: ~20 ns per kernel call.

The word is a conservative signal: vector code may compute lanes NumPy never computes (a
masked tail) and signalling compares raise "invalid" on NaN operands, so a set flag only
means "ask NumPy". The wrapper then decides (backends/llvm/fp_errors.py): nothing to do
when the error mode of every flagged kind is "ignore", otherwise NumPy evaluates the graph
eagerly and itself raises or warns with its own messages.

Integer `//` and `%` by zero set "divide" deliberately (ops.py: `raise_flag_if`), as
NumPy's integer loops do; int64 MIN // -1 sets "overflow".

Limits: x86-64 only (MXCSR; elsewhere the intrinsics do not exist, a kernel that may raise
fails to compile and its graph runs with the NumPy backend). One word per process: two
Python threads running compiled code at the same moment may see each other's flags (a
spurious NumPy re-evaluation, or one missed report while both take the word).
"""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm

from ...lower.loop_ir import Const, Op, walk_exprs

SYMBOL = "frametrace_fpflags"
INVALID, DIVIDE, OVERFLOW = 0x1, 0x4, 0x8          # MXCSR status bits NumPy reports
REPORTED = INVALID | DIVIDE | OVERFLOW
KINDS = {INVALID: "invalid", DIVIDE: "divide", OVERFLOW: "over"}   # np.geterr() keys

WORD = ctypes.c_uint32(0)                           # the process-wide flag word
ADDRESS = ctypes.addressof(WORD)
llvm.add_symbol(SYMBOL, ADDRESS)

# integer ops whose zero divisor NumPy reports as "divide by zero"
_INT_DIVIDE = ("floor_divide", "remainder", "fmod", "divmod")
# float ops that never raise the three reported flags on any input (quiet tests, sign
# manipulation, selects, exact rounding)
_QUIET = ("isnan", "isinf", "isfinite", "signbit", "copysign", "negative", "positive", "absolute",
          "fabs", "where", "floor", "ceil", "trunc", "rint", "logical_not", "logical_and", "logical_or",
          "logical_xor", "affine", "red_and", "red_or")


def _const_of(e):
    return abs(e.value) if isinstance(e, Const) and isinstance(e.value, float) and e.value == e.value else None


def _quiet_with_constant(e) -> bool:
    """x + c, x - c (|c| <= 2**64: cannot overflow, inf + c is no invalid), x * c (0 < |c| <= 1),
    x / c (|c| >= 1, finite): no reported flag for any x, so `x += 1` needs no check."""
    if len(e.args) != 2:
        return False
    c = _const_of(e.args[1]) if e.op == "true_divide" else (_const_of(e.args[1]) if _const_of(e.args[1])
                                                             is not None else _const_of(e.args[0]))
    if c is None:
        return False
    if e.op in ("add", "subtract"):
        return c <= 2.0 ** 64
    if e.op == "multiply":
        return 0 < c <= 1
    return e.op == "true_divide" and 1 <= c < float("inf")


def _raises(e) -> bool:
    if not isinstance(e, Op) or _quiet_with_constant(e):
        return False
    operand = getattr(e.args[0], "dtype", e.dtype) if e.args else e.dtype
    if e.op == "cast":                            # float -> int or a narrower float
        return operand.startswith("float") and (not e.dtype.startswith("float")
                                                or (operand, e.dtype) == ("float64", "float32"))
    if operand.startswith("float") or e.dtype.startswith("float"):
        return e.op not in _QUIET
    divisor = e.args[1] if len(e.args) == 2 else None      # x // 3: never zero, never -1
    if isinstance(divisor, Const) and divisor.value not in (0, -1):
        return False
    return e.op in _INT_DIVIDE and operand != "bool"


def may_raise(kernel) -> bool:
    """Does any expression of the kernel compute something that may set a reported flag?"""
    return any(_raises(x) for e in _exprs(kernel.body) for x in walk_exprs(e))


def _exprs(body):
    for s in body:
        inner = getattr(s, "body", None)
        if isinstance(inner, list):
            yield from _exprs(inner)
        for attr in ("value", "init", "cond", "stop"):
            e = getattr(s, attr, None)
            if e is not None and not isinstance(e, list):
                yield e


def entry_ir(call: str) -> list:
    """Entry-function lines around the body call `call`: clear the status flags, run, OR the
    reported ones into the word (once per chunk, only when set)."""
    return [
        "  %fp.m = alloca i32",
        "  call void @llvm.x86.sse.stmxcsr(ptr %fp.m)",
        "  %fp.0 = load i32, ptr %fp.m",
        "  %fp.1 = and i32 %fp.0, -64",
        "  store i32 %fp.1, ptr %fp.m",
        "  call void @llvm.x86.sse.ldmxcsr(ptr %fp.m)",
        call,
        "  call void @llvm.x86.sse.stmxcsr(ptr %fp.m)",
        "  %fp.2 = load i32, ptr %fp.m",
        f"  %fp.3 = and i32 %fp.2, {REPORTED}",
        "  %fp.4 = icmp ne i32 %fp.3, 0",
        "  br i1 %fp.4, label %fp.set, label %fp.done",
        "fp.set:",
        f"  %fp.5 = atomicrmw or ptr @{SYMBOL}, i32 %fp.3 monotonic",
        "  br label %fp.done",
        "fp.done:",
    ]


DECLS = (f"@{SYMBOL} = external global i32",
         "declare void @llvm.x86.sse.stmxcsr(ptr)",
         "declare void @llvm.x86.sse.ldmxcsr(ptr)")


def take() -> int:
    """The reported flags set since the last take, and clear them."""
    v = WORD.value
    if v:
        WORD.value = 0
    return v


__all__ = ["may_raise", "entry_ir", "take", "ADDRESS", "KINDS", "DECLS", "SYMBOL"]
