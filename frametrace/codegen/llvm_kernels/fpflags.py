"""Floating-point error flags of kernels: a cheap "maybe NumPy would report" signal.

NumPy reports divide-by-zero, overflow, underflow and invalid (after each ufunc loop it reads
the FP status register; some loops set a flag explicitly) as `np.errstate` says: ignore,
warn (RuntimeWarning), raise (FloatingPointError), call or log. Kernels report into one
process-wide word (`frametrace_fpflags`, an external symbol every module links against, so
cached machine code stays valid across processes), from two sources:

* The status register. A kernel with floating-point work that may raise a reported flag
  (`uses_status_register`) clears the status flags of SSE's MXCSR on entry and on exit ORs
  the reported ones it saw into the word. Each chunk runs on one thread and reads its own
  thread's register, so threaded kernels report too. Cost: ~20 ns per kernel call.
* An integer flag accumulator (FunctionEmitter.raise_flag), for what the hardware does not
  raise by itself: integer `//` and `%` by zero ("divide", as NumPy's integer loops report),
  int MIN // -1 ("over"), the log family's pole ("divide") and domain ("invalid"), which the
  vectorised math library computes with selects and bit tricks, and a float max / min whose
  result is a zero while its row held zeros of both signs (ZERO_SIGNS below). Each is `acc |= cond ? BIT : 0`, integer
  operations the optimiser can neither fold away nor hoist out of the flag reads (a flag forced
  by an FP operation on a constant, `1.0 / select(c, 0.0, 1.0)`, was folded into
  `select(c, inf, 1.0)` once the sizes were run-time values), and in a loop an OR reduction
  that LLVM vectorises (masked tail lanes included: they contribute nothing). The body's exit
  ORs the accumulator into the word.

Underflow comes from the status register: the math library's scaling of a tiny result
(a subnormal exp(-740)) raises it as the hardware does for 1e-200 * 1e-200; where exp's result
rounds to +0 (exp(-1000)) the library selects it without scaling (no FP assist) and the
accumulator reports the underflow (ops.py `_f_exp`).

The word is a conservative signal: vector code may compute lanes NumPy never computes (a
masked tail), signalling compares raise "invalid" on NaN operands, and NumPy's own loops
differ in when they report underflow (float32 and float64 exp, exp2 disagree), so a set flag
only means "ask NumPy". The wrapper then decides (backends/llvm/fp_errors.py): nothing to do
when the error mode of every flagged kind is "ignore", otherwise NumPy evaluates the graph
eagerly and itself raises or warns with its own messages.

Which ops may report is the registry's `OpDef.fp_errors` (ir/registry.py FP_ERRORS).

Limits: x86-64 only (MXCSR; elsewhere the intrinsics do not exist, a kernel that may raise
fails to compile and its graph runs with the NumPy backend). One word per process: two
Python threads running compiled code at the same moment may see each other's flags (a
spurious NumPy re-evaluation, or one missed report while both take the word).
"""
from __future__ import annotations

import ctypes

import llvmlite.binding as llvm

from ...ir import ops as _registered  # noqa: F401  (registers every op the queries below read)
from ...ir.registry import ops_where
from ...lower.loop_ir import Const, Op, nested, walk_exprs
from ...lower.pointwise import SCALAR_INT   # integer ops on NumPy scalars: overflow reported

SYMBOL = "frametrace_fpflags"
INVALID, DIVIDE, OVERFLOW, UNDERFLOW = 0x1, 0x4, 0x8, 0x10   # MXCSR status bits NumPy reports
REPORTED = INVALID | DIVIDE | OVERFLOW | UNDERFLOW
KINDS = {INVALID: "invalid", DIVIDE: "divide", OVERFLOW: "over", UNDERFLOW: "under"}   # np.geterr() keys
# Not FP errors: a float max/min reduction whose result is a zero saw zeros of both signs
# (fix_zero_sign, lower/reductions.py): which one NumPy returns depends on the order its SIMD
# loop combines elements (np.max([0., -0.]) is -0.0, and np.max([-0.]*20 + [0.]) is 0.0), so
# NumPy redoes the call whatever the error mode.
NEG_ZERO, POS_ZERO = 0x100, 0x200
ZERO_SIGNS = NEG_ZERO | POS_ZERO
BIT = {**{name: bit for bit, name in KINDS.items()}, "neg_zero": NEG_ZERO, "pos_zero": POS_ZERO}

WORD = ctypes.c_uint32(0)                           # the process-wide flag word
ADDRESS = ctypes.addressof(WORD)
llvm.add_symbol(SYMBOL, ADDRESS)
# A zero the optimiser cannot see (FunctionEmitter.opaque_const): float values a kernel picks
# from constants (a bool cast to float is 0.0 or 1.0, np.where(c, 0.0, 1.0)) are built from it,
# so that LLVM cannot fold an FP operation on them into a select of constants and lose the flag
# the hardware raises (1.0 / where(c, 0.0, 1.0) became select(c, inf, 1.0): no divide by zero).
OPAQUE_SYMBOL = "frametrace_opaque_zero"
OPAQUE_ZERO = ctypes.c_uint64(0)
llvm.add_symbol(OPAQUE_SYMBOL, ctypes.addressof(OPAQUE_ZERO))
OPAQUE_DECL = f"@{OPAQUE_SYMBOL} = external global i64"

# integer ops whose zero divisor NumPy reports as "divide by zero" (reported through the
# accumulator, never the status register)
_INT_DIVIDE = ops_where(lambda op: op.fp_errors == "int_divide")
# ops that never raise a reported flag on any input; plus the loop-IR ops that are no
# registered op: index arithmetic, the bool reduction combiners, and the float max / min
# combiners lower/reductions.py emits (over NaN-masked elements: vmaxpd never sees a NaN;
# argmax's first pass red_peak_* is unmasked: its vmaxpd on a NaN sets "invalid" in the status
# register, seen only when another op makes the kernel read it: a spurious "ask NumPy", as for
# any signalling compare) with the zero-sign fix of their result (its flag goes through the
# accumulator)
_QUIET = ops_where(lambda op: op.fp_errors == "none") | {"affine", "red_and", "red_or", "sort_vec", "sort_pick",
                                                          "red_peak_max", "red_peak_min", "red_max_nonan",
                                                          "red_min_nonan", "fix_zero_sign", "mask_nan",
                                                          "keep_bits"}
# what makes a kernel raise the zero-sign bits: the zero of a float max / min with both signs
# seen, a sort of float rows whose order of zeros / NaNs may differ from NumPy's, a gather
# that may be out of bounds
_ZERO_SIGN_OPS = frozenset({"fix_zero_sign", "sort_vec"})


# Which kinds NumPy itself may report for an op (an element of a kernel's expressions), so
# that a graph needs NumPy's help (a saved copy of what it writes, a redo) only when the error
# mode of one of them is not "ignore": `M *= 0.995` can only underflow, ignored by default.
# Float ops NumPy never reports for, whatever the operands (NaN and inf included; checked
# against NumPy in tests/backends/llvm/test_inplace_updates.py), though the status register
# may say "invalid" for them (signalling compares): a flag the graph's kinds mask out.
_NEVER_REPORTED = frozenset({"less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
                             "maximum", "minimum", "fmax", "fmin", "clip", "clip_scalar", "heaviside",
                             "argbetter_max", "argbetter_min"})
# float arithmetic -> the kinds NumPy may report for it (anything else float: all four)
_ARITH_KINDS = {"add": OVERFLOW | INVALID, "subtract": OVERFLOW | INVALID, "red_add": OVERFLOW | INVALID,
                "multiply": OVERFLOW | UNDERFLOW | INVALID, "red_mul": OVERFLOW | UNDERFLOW | INVALID,
                "square": OVERFLOW | UNDERFLOW}


def _const_of(e):
    return abs(e.value) if isinstance(e, Const) and isinstance(e.value, float) and e.value == e.value else None


def _with_constant(e):
    """The kinds of `x op c` (or `c op x` for + - *) with a constant float c, or None. x + c,
    x - c with |c| <= 2**64: nothing (cannot overflow, inf + c is no invalid, a subnormal sum is
    exact); x * c: 0 < |c| < 1 only underflows, |c| == 1 is exact, c == 0 or inf only makes
    inf * 0 invalid; x / c the other way round. (Signalling NaN inputs aside: NumPy arrays
    practically never hold them.)"""
    if len(e.args) != 2 or e.op not in ("add", "subtract", "multiply", "true_divide"):
        return None
    c = _const_of(e.args[1])
    if c is None and e.op != "true_divide":
        c = _const_of(e.args[0])
    if c is None:
        return None
    if e.op in ("add", "subtract"):
        return 0 if c <= 2.0 ** 64 else None
    if e.op == "multiply":
        return (INVALID if c in (0.0, float("inf")) else 0 if c == 1 else
                UNDERFLOW if c < 1 else OVERFLOW | UNDERFLOW)
    return (DIVIDE | INVALID if c == 0 else INVALID if c == float("inf") else 0 if c == 1 else
            UNDERFLOW if c > 1 else OVERFLOW | UNDERFLOW)


def op_kinds(e) -> int:
    """The flag kinds (REPORTED bits) NumPy may report while computing expression node `e`."""
    if not isinstance(e, Op):
        return 0
    operand = getattr(e.args[0], "dtype", e.dtype) if e.args else e.dtype
    if operand.startswith("complex") or e.dtype.startswith("complex"):   # complex_ops.py: native loops
        quiet = e.op in ("where", "negative", "conjugate", "make_complex") or \
            e.op == "cast" and not operand.startswith("float") and operand != "complex128"
        return 0 if quiet else REPORTED
    if e.op == "cast":                            # float -> int: invalid; float64 -> float32: over / under
        if not operand.startswith("float"):
            return 0
        if not e.dtype.startswith("float"):
            return INVALID
        return OVERFLOW | UNDERFLOW if (operand, e.dtype) == ("float64", "float32") else 0
    if operand.startswith("float") or e.dtype.startswith("float"):
        if e.op in _QUIET or e.op in _NEVER_REPORTED:
            return 0
        known = _with_constant(e)
        return known if known is not None else _ARITH_KINDS.get(e.op, REPORTED)
    if e.op in SCALAR_INT:
        return OVERFLOW
    divisor = e.args[1] if len(e.args) == 2 else None      # x // 3: never zero, never -1
    if isinstance(divisor, Const) and divisor.value not in (0, -1):
        return 0
    return DIVIDE | OVERFLOW if e.op in _INT_DIVIDE and operand != "bool" else 0


def _raises(e) -> bool:
    return op_kinds(e) != 0


def kinds(kernel) -> int:
    """The flag kinds NumPy may report for the kernel's work, plus both ZERO_SIGNS bits when
    it may ask NumPy to redo the call whatever the error mode (tracks_zero_signs)."""
    out = 0
    for e in _exprs(kernel.body):
        for x in walk_exprs(e):
            out |= op_kinds(x)
    return out | (ZERO_SIGNS if tracks_zero_signs(kernel) else 0)


def may_raise(kernel) -> bool:
    """Does any expression of the kernel compute something that may set a reported flag (or
    the zero-sign bits: a quiet sort of short rows too, lower/sorting.py)?"""
    return kinds(kernel) != 0


def tracks_zero_signs(kernel) -> bool:
    """Does the kernel reduce floats with max / min, sort float rows or gather at positions
    that may be out of bounds (it may set both ZERO_SIGNS bits, and then NumPy must redo the
    call even with every error mode "ignore")?"""
    return any(isinstance(x, Op) and (x.op in _ZERO_SIGN_OPS and x.dtype.startswith("float")
                                      or x.op == "gather_pos")
               for e in _exprs(kernel.body) for x in walk_exprs(e))


def uses_status_register(kernel) -> bool:
    """Must the kernel's entry read the FP status flags around its body? Not when everything
    that may report is an integer division (its flags go through the accumulator): such a
    body stays inlined into its entry."""
    return any(_raises(x) and not _integer_divide(x) for e in _exprs(kernel.body) for x in walk_exprs(e))


def _integer_divide(e) -> bool:
    """An integer division or an integer NumPy-scalar operation: reported through the accumulator."""
    operand = getattr(e.args[0], "dtype", e.dtype) if e.args else e.dtype
    return (e.op in _INT_DIVIDE or e.op in SCALAR_INT) and not operand.startswith(("float", "complex")) \
        and not e.dtype.startswith(("float", "complex"))


def _exprs(body):
    for s in body:
        for inner in nested(s):
            yield from _exprs(inner)
        for attr in ("value", "init", "cond", "stop"):
            e = getattr(s, attr, None)
            if e is not None and not isinstance(e, list):
                yield e


def exit_ir(acc: str) -> list:
    """Body-exit lines: OR the flag accumulator `acc` (an alloca) into the word, only when set."""
    return [
        f"  %fl.0 = load i32, ptr {acc}",
        "  %fl.1 = icmp ne i32 %fl.0, 0",
        "  br i1 %fl.1, label %fl.set, label %fl.done",
        "fl.set:",
        f"  %fl.2 = atomicrmw or ptr @{SYMBOL}, i32 %fl.0 monotonic",
        "  br label %fl.done",
        "fl.done:",
    ]


def entry_ir(call: str, x87: bool = False) -> list:
    """Entry-function lines around the body call `call`: clear the status flags, run, OR the
    reported ones into the word (once per chunk, only when set). `x87`: the body calls NumPy's
    own ufunc loops (numpy_loops.py), which may set a flag explicitly through glibc's
    feraiseexcept, and glibc raises overflow and underflow in the x87 status word (fldenv),
    not in MXCSR: that word is cleared and read too (its exception bits are MXCSR's)."""
    clear = ['  call void asm sideeffect "fnclex", "~{fpsr},~{dirflag}"()'] if x87 else []
    read = (['  %fp.x0 = call i16 asm sideeffect "fnstsw $0", "={ax},~{dirflag}"()',
             "  %fp.x1 = zext i16 %fp.x0 to i32",
             "  %fp.2 = or i32 %fp.2m, %fp.x1"] if x87 else ["  %fp.2 = add i32 %fp.2m, 0"])
    return [
        "  %fp.m = alloca i32",
        "  call void @llvm.x86.sse.stmxcsr(ptr %fp.m)",
        "  %fp.0 = load i32, ptr %fp.m",
        "  %fp.1 = and i32 %fp.0, -64",
        "  store i32 %fp.1, ptr %fp.m",
        "  call void @llvm.x86.sse.ldmxcsr(ptr %fp.m)",
        *clear,
        call,
        "  call void @llvm.x86.sse.stmxcsr(ptr %fp.m)",
        "  %fp.2m = load i32, ptr %fp.m",
        *read,
        f"  %fp.3 = and i32 %fp.2, {REPORTED}",
        "  %fp.4 = icmp ne i32 %fp.3, 0",
        "  br i1 %fp.4, label %fp.set, label %fp.done",
        "fp.set:",
        f"  %fp.5 = atomicrmw or ptr @{SYMBOL}, i32 %fp.3 monotonic",
        "  br label %fp.done",
        "fp.done:",
    ]


WORD_DECL = f"@{SYMBOL} = external global i32"
DECLS = (WORD_DECL,
         "declare void @llvm.x86.sse.stmxcsr(ptr)",
         "declare void @llvm.x86.sse.ldmxcsr(ptr)")


def take() -> int:
    """The reported flags set since the last take, and clear them."""
    v = WORD.value
    if v:
        WORD.value = 0
    return v


__all__ = ["may_raise", "kinds", "op_kinds",
           "tracks_zero_signs", "uses_status_register", "entry_ir", "exit_ir", "take", "ADDRESS",
           "KINDS", "BIT", "ZERO_SIGNS", "DECLS", "WORD_DECL", "SYMBOL", "OPAQUE_DECL", "OPAQUE_SYMBOL"]
