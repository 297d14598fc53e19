"""A tiny LLVM IR *text* emitter for scalar math code, with exact-arithmetic helpers.

Values are `Val` objects (an SSA name or literal plus its type) that support + - * / and
unary minus, so kernels read like the math they implement:

    fn = Fn("ft_exp_f64", "double", [("double", "x")])
    x, = fn.args
    r = fn.fma(k, -LN2_HI, x)          # llvm.fma: one rounding
    fn.ret(fn.horner(r, COEFFS))

No fast-math flags are ever emitted: the error-free transformations below (two_sum,
two_prod) depend on every operation being rounded exactly as written. Intrinsic calls are
not declared: LLVM >= 19 declares used intrinsics implicitly, which lets several functions'
texts be pasted into one module without clashing `declare` lines.
"""
from __future__ import annotations

import struct

H = float.fromhex       # Python has no hex float literals: H("0x1.8p52")


def hexfloats(text: str) -> tuple[float, ...]:
    """Coefficient table from whitespace/comma separated C99 hex floats."""
    return tuple(float.fromhex(t) for t in text.replace(",", " ").split())


F64 = "double"
F32 = "float"
_SUFFIX = {"double": "f64", "float": "f32", "i1": "i1", "i32": "i32", "i64": "i64", "i128": "i128"}


def float_literal(value: float, ty: str) -> str:
    """Exact IR literal: the IEEE double bit pattern in hex (LLVM's form for float too)."""
    if ty == F32:
        rounded = struct.unpack("<f", struct.pack("<f", value))[0]
        if rounded != value and value == value and abs(value) != float("inf"):
            raise ValueError(f"{value!r} is not exactly representable as float")
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    return f"0x{bits:016X}"


def f32_round(value: float) -> float:
    """`value` rounded to the nearest float32 (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


class Val:
    """An SSA value or literal of IR type `ty`, owned by the function `fn`."""

    __slots__ = ("fn", "ref", "ty")

    def __init__(self, fn: "Fn", ref: str, ty: str):
        self.fn, self.ref, self.ty = fn, ref, ty

    def __str__(self) -> str:
        return f"{self.ty} {self.ref}"

    def _bin(self, op, other, swap=False):
        a, b = (other, self) if swap else (self, other)
        return self.fn.binop(op, a, b)

    def __add__(self, o): return self._bin("fadd", o)
    def __radd__(self, o): return self._bin("fadd", o, True)
    def __sub__(self, o): return self._bin("fsub", o)
    def __rsub__(self, o): return self._bin("fsub", o, True)
    def __mul__(self, o): return self._bin("fmul", o)
    def __rmul__(self, o): return self._bin("fmul", o, True)
    def __truediv__(self, o): return self._bin("fdiv", o)
    def __rtruediv__(self, o): return self._bin("fdiv", o, True)
    def __neg__(self): return self.fn.emit(self.ty, f"fneg {self}")


class Fn:
    """Builds one `define` block; `text()` returns it."""

    def __init__(self, name: str, ret: str, params: list[tuple[str, str]],
                 attrs: str = "alwaysinline nounwind willreturn memory(none)",
                 linkage: str = "internal"):
        self.name, self.ret_ty, self.params, self.attrs, self.linkage = name, ret, params, attrs, linkage
        self.lines: list[str] = []
        self.extra: list[str] = []      # helper definitions emitted after this function
        self._n = 0
        self.args = [Val(self, f"%{p}", ty) for ty, p in params]

    # -- plumbing ---------------------------------------------------------------------
    def emit(self, ty: str | None, rhs: str) -> Val | None:
        """Append `%vN = <rhs>` (or just `<rhs>` when ty is None) and return %vN."""
        if ty is None:
            self.lines.append(f"  {rhs}")
            return None
        self._n += 1
        ref = f"%v{self._n}"
        self.lines.append(f"  {ref} = {rhs}")
        return Val(self, ref, ty)

    def const(self, value, ty: str) -> Val:
        if ty in (F64, F32):
            return Val(self, float_literal(float(value), ty), ty)
        if ty == "i1":
            return Val(self, "true" if value else "false", ty)
        return Val(self, str(int(value)), ty)

    def val(self, x, ty: str) -> Val:
        return x if isinstance(x, Val) else self.const(x, ty)

    def _pair(self, a, b):
        ty = a.ty if isinstance(a, Val) else b.ty if isinstance(b, Val) else F64
        return self.val(a, ty), self.val(b, ty), ty

    def text(self) -> str:
        params = ", ".join(f"{ty} %{p}" for ty, p in self.params)
        head = f"define {self.linkage} {self.ret_ty} @{self.name}({params}) {self.attrs} {{"
        return "\n".join([head, *self.lines, "}", "", *self.extra])

    # -- floating point -------------------------------------------------------------------
    def binop(self, op: str, a, b) -> Val:
        a, b, ty = self._pair(a, b)
        return self.emit(ty, f"{op} {ty} {a.ref}, {b.ref}")

    def intrinsic(self, name: str, *args, ty: str | None = None) -> Val:
        ty = ty or next(a.ty for a in args if isinstance(a, Val))
        vals = [self.val(a, ty) for a in args]
        return self.emit(ty, f"call {ty} @llvm.{name}.{_SUFFIX[ty]}({', '.join(map(str, vals))})")

    def fma(self, a, b, c) -> Val: return self.intrinsic("fma", a, b, c)
    def fabs(self, a) -> Val: return self.intrinsic("fabs", a)
    def floor(self, a) -> Val: return self.intrinsic("floor", a)
    def trunc(self, a) -> Val: return self.intrinsic("trunc", a)
    def roundeven(self, a) -> Val: return self.intrinsic("roundeven", a)
    def sqrt(self, a) -> Val: return self.intrinsic("sqrt", a)
    def copysign(self, mag, sign) -> Val: return self.intrinsic("copysign", mag, sign)

    def fcmp(self, pred: str, a, b) -> Val:
        a, b, ty = self._pair(a, b)
        return self.emit("i1", f"fcmp {pred} {ty} {a.ref}, {b.ref}")

    def select(self, c: Val, a, b) -> Val:
        a, b, ty = self._pair(a, b)
        return self.emit(ty, f"select i1 {c.ref}, {ty} {a.ref}, {ty} {b.ref}")

    def cast(self, op: str, a: Val, ty: str) -> Val:
        return self.emit(ty, f"{op} {a} to {ty}")

    def bitcast(self, a, ty): return self.cast("bitcast", a, ty)

    # -- integers -----------------------------------------------------------------------
    def iop(self, op: str, a, b) -> Val:
        a, b, ty = self._pair(a, b)
        return self.emit(ty, f"{op} {ty} {a.ref}, {b.ref}")

    def icmp(self, pred: str, a, b) -> Val:
        a, b, ty = self._pair(a, b)
        return self.emit("i1", f"icmp {pred} {ty} {a.ref}, {b.ref}")

    def and_(self, a, b): return self.iop("and", a, b)
    def or_(self, a, b): return self.iop("or", a, b)
    def xor(self, a, b): return self.iop("xor", a, b)

    # -- control flow (only the huge-argument slow paths branch) ---------------------------
    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def br(self, label: str) -> None:
        self.emit(None, f"br label %{label}")

    def cbr(self, c: Val, if_true: str, if_false: str) -> None:
        self.emit(None, f"br i1 {c.ref}, label %{if_true}, label %{if_false}")

    def phi(self, ty: str, incoming: list[tuple[Val, str]]) -> Val:
        arms = ", ".join(f"[{self.val(v, ty).ref}, %{lab}]" for v, lab in incoming)
        return self.emit(ty, f"phi {ty} {arms}")

    def call(self, ret: str, name: str, args: list[Val], attrs: str = "") -> Val:
        return self.emit(ret, f"call {ret} @{name}({', '.join(map(str, args))}) {attrs}".rstrip())

    def ret(self, v: Val) -> None:
        self.emit(None, f"ret {v}")

    # -- building blocks ------------------------------------------------------------------
    def horner(self, x: Val, coeffs) -> Val:
        """c0 + x*(c1 + x*(c2 + ...)) with one fma per coefficient."""
        acc = self.const(coeffs[-1], x.ty)
        for c in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    def two_sum(self, a: Val, b: Val) -> tuple[Val, Val]:
        """s + e == a + b exactly (Knuth; no magnitude precondition)."""
        s = a + b
        bb = s - a
        e = (a - (s - bb)) + (b - bb)
        return s, e

    def fast_two_sum(self, a: Val, b: Val) -> tuple[Val, Val]:
        """s + e == a + b exactly, provided |a| >= |b| (or a == 0)."""
        s = a + b
        return s, b - (s - a)

    def two_prod(self, a: Val, b) -> tuple[Val, Val]:
        """p + e == a * b exactly (barring over/underflow)."""
        p = a * b
        return p, self.fma(a, b, -p)

    def pow2(self, k: Val) -> Val:
        """2**k for an integer k in the normal exponent range, from exponent bits:
        i64 k -> double (k in [-1022, 1023]), i32 k -> float (k in [-126, 127])."""
        if k.ty == "i32":
            return self.bitcast(self.iop("shl", self.iop("add", k, 127), 23), F32)
        return self.bitcast(self.iop("shl", self.iop("add", k, 1023), 52), F64)

    def scale2(self, p: Val, k: Val) -> Val:
        """p * 2**k in two exact-exponent steps, rounding once even into subnormals or
        overflow; k (i64 for double, i32 for float) within twice the exponent range."""
        k1 = self.iop("ashr", k, 1)
        k2 = self.iop("sub", k, k1)
        return (p * self.pow2(k1)) * self.pow2(k2)


_MAGIC = {F64: (H("0x1.8p52"), "i64", 0x4338000000000000), F32: (H("0x1.8p23"), "i32", 0x4B400000)}


def shifter(fn: Fn, x: Val, scale: float) -> tuple[Val, Val]:
    """(k as x's float type, k as i64/i32) with k = nearest integer to x*scale (ties to even),
    |x*scale| < 2**51 (double) or 2**22 (float).

    fma(x, scale, 1.5*2**52) puts k in the low mantissa bits: no fptosi, so no poison for
    NaN or infinite lanes (callers fix those up with selects).
    """
    magic, ity, bits = _MAGIC[x.ty]
    t = fn.fma(x, fn.const(f32_round(scale) if x.ty == F32 else scale, x.ty), magic)
    kd = t - magic
    ki = fn.iop("sub", fn.bitcast(t, ity), bits)
    return kd, ki
