"""Complex values in kernels (native loop bodies, backends/llvm/loops.py): a complex128 is the
LLVM struct {double, double} (complex64 {float, float}) in registers and in memory (NumPy's
layout: real part, then imaginary part; the struct's alignment is its parts', as NumPy's).

Each rule computes what NumPy's own loop computes, bit for bit on finite values:

* add, subtract, negative, conjugate, positive: part by part.
* multiply: NumPy's ufunc loop (loops_arithm_fp.dispatch, AVX2 / AVX-512F) computes
  re = fma(ar, br, -(ai * bi)), im = fma(ar, bi, ai * br) (one fused multiply-subtract-add
  per lane); its scalar math (`np.complex128 * np.complex128`) and Python's complex compute
  ar * br - ai * bi, ar * bi + ai * br without fusing. Which one the running NumPy's loop does
  is probed once (`numpy_multiply_fused`); `scalar_multiply` is the unfused one.
* true_divide: Smith's algorithm as NumPy's loops.c.src (the larger part of the divisor
  divides the smaller; a zero divisor divides each part by +0.0), no fused operations.
* absolute (float result): NumPy's vectorised loop (loops_unary_complex.dispatch):
  infinities first (inf), then NaN (nan), then larger * sqrt(fma(r, r, 1)) with r the smaller
  part over the larger (0 where the larger is 0 or both are inf; the division only runs where
  it is defined, so it raises no flag NumPy's masked division does not). Probed like multiply.
  NumPy scalars' abs (`scalar_absolute`) is the C library's hypot, called (Python's complex abs
  raises OverflowError where hypot overflows: not built).
* equal / not_equal: both parts; less etc.: NumPy's lexicographic order (real parts first,
  NaN in either imaginary part makes `<` false).
* real, imag (`z.real` of an element): its part, the bits NumPy's view reads.
* cast: from bool / int / float (imaginary part +0.0), between complex types part by part,
  to bool (either part nonzero). To a real type NumPy warns (ComplexWarning): never built
  (loops.py refuses such a cast before code generation).

Sums of products (`red_add` and the dot products of loop_arrays.py) are sums of these
multiplies in loop order: NumPy's BLAS (zgemm / zdotu) sums in its own order and fuses
differently, so products are reassociated within the documented bound, as float ones.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import struct

import llvmlite.binding as llvm
import numpy as np

_PART = {"complex128": "float64", "complex64": "float32"}
_LLPART = {"complex128": "double", "complex64": "float"}


def part(dt: str) -> str:
    """The real dtype of a complex dtype's parts."""
    return _PART[dt]


def llvm_type(dt: str) -> str:
    p = _LLPART[dt]
    return f"{{{p}, {p}}}"


def _hex(v: float, dt: str) -> str:
    v = float(np.float32(v)) if dt == "complex64" else float(v)
    return "0x" + struct.pack(">d", v).hex().upper()


def const(value, dt: str) -> str:
    z = complex(value)
    p = _LLPART[dt]
    return f"{{ {p} {_hex(z.real, dt)}, {p} {_hex(z.imag, dt)} }}"


# ----------------------------------------------------------------------------- helpers

def _parts(e, t, x):
    T = llvm_type(t)
    p = _LLPART[t]
    return (e.emit(f"extractvalue {T} {x}, 0", p), e.emit(f"extractvalue {T} {x}, 1", p))


def make(e, t, re, im):
    T = llvm_type(t)
    p = _LLPART[t]
    v = e.emit(f"insertvalue {T} poison, {p} {re}, 0", T)
    return e.emit(f"insertvalue {T} {v}, {p} {im}, 1", T)


def _f(e, t, op, a, b):
    p = _LLPART[t]
    return e.emit(f"{op} {p} {a}, {b}", p)


def _fma(e, t, a, b, c):
    p = _LLPART[t]
    sfx = "f64" if p == "double" else "f32"
    return e.emit(f"call {p} @llvm.fma.{sfx}({p} {a}, {p} {b}, {p} {c})", p)


def _fcmp(e, t, pred, a, b):
    return e.emit(f"fcmp {pred} {_LLPART[t]} {a}, {b}", "i1")


def _fc(t, v):
    return _hex(v, t)


def _sel(e, t, c, a, b):
    p = _LLPART[t]
    return e.emit(f"select i1 {c}, {p} {a}, {p} {b}", p)


# ----------------------------------------------------------------------------- rules

def _partwise(op):
    def rule(e, t, a, b):
        (ar, ai), (br, bi) = _parts(e, t, a), _parts(e, t, b)
        return make(e, t, _f(e, t, op, ar, br), _f(e, t, op, ai, bi))
    return rule


def _negative(e, t, x):
    p = _LLPART[t]
    re, im = _parts(e, t, x)
    return make(e, t, e.emit(f"fneg {p} {re}", p), e.emit(f"fneg {p} {im}", p))


def _conjugate(e, t, x):
    p = _LLPART[t]
    re, im = _parts(e, t, x)
    return make(e, t, re, e.emit(f"fneg {p} {im}", p))


def _multiply_plain(e, t, a, b):
    (ar, ai), (br, bi) = _parts(e, t, a), _parts(e, t, b)
    re = _f(e, t, "fsub", _f(e, t, "fmul", ar, br), _f(e, t, "fmul", ai, bi))
    im = _f(e, t, "fadd", _f(e, t, "fmul", ar, bi), _f(e, t, "fmul", ai, br))
    return make(e, t, re, im)


def _multiply_fused(e, t, a, b):
    p = _LLPART[t]
    (ar, ai), (br, bi) = _parts(e, t, a), _parts(e, t, b)
    re = _fma(e, t, ar, br, e.emit(f"fneg {p} {_f(e, t, 'fmul', ai, bi)}", p))
    im = _fma(e, t, ar, bi, _f(e, t, "fmul", ai, br))
    return make(e, t, re, im)


def _multiply(e, t, a, b):
    return (_multiply_fused if numpy_multiply_fused(t) else _multiply_plain)(e, t, a, b)


def _divide(e, t, a, b):
    """NumPy's complex division (Smith), branch-free: both branches computed, one selected.
    (The unselected branch may divide by zero or overflow: flags NumPy's loop would not
    raise; the status register then says "ask NumPy", a spurious redo, never a wrong value.)"""
    p = _LLPART[t]
    (ar, ai), (br, bi) = _parts(e, t, a), _parts(e, t, b)
    fabs = "f64" if p == "double" else "f32"
    abr = e.emit(f"call {p} @llvm.fabs.{fabs}({p} {br})", p)
    abi = e.emit(f"call {p} @llvm.fabs.{fabs}({p} {bi})", p)
    real_big = _fcmp(e, t, "oge", abr, abi)
    both_zero = e.emit(f"and i1 {_fcmp(e, t, 'oeq', abr, _fc(t, 0.0))}, {_fcmp(e, t, 'oeq', abi, _fc(t, 0.0))}",
                       "i1")
    one = _fc(t, 1.0)
    # |br| >= |bi|: rat = bi / br, scl = 1 / (br + bi * rat): ((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    # else:         rat = br / bi, scl = 1 / (bi + br * rat): ((ar * rat + ai) * scl, (ai * rat - ar) * scl)
    # (each branch divides by its own larger part: a select of the operands, one division)
    num = _sel(e, t, real_big, bi, br)
    den = _sel(e, t, real_big, br, bi)
    rat = _f(e, t, "fdiv", num, den)
    scl = _f(e, t, "fdiv", one, _f(e, t, "fadd", den, _f(e, t, "fmul", num, rat)))
    re1 = _f(e, t, "fmul", _f(e, t, "fadd", ar, _f(e, t, "fmul", ai, rat)), scl)
    im1 = _f(e, t, "fmul", _f(e, t, "fsub", ai, _f(e, t, "fmul", ar, rat)), scl)
    re2 = _f(e, t, "fmul", _f(e, t, "fadd", _f(e, t, "fmul", ar, rat), ai), scl)
    im2 = _f(e, t, "fmul", _f(e, t, "fsub", _f(e, t, "fmul", ai, rat), ar), scl)
    re = _sel(e, t, real_big, re1, re2)
    im = _sel(e, t, real_big, im1, im2)
    # a zero divisor: each part divided by |br| (+0.0): inf or nan, NumPy's choice
    zre, zim = _f(e, t, "fdiv", ar, abr), _f(e, t, "fdiv", ai, abr)
    return make(e, t, _sel(e, t, both_zero, zre, re), _sel(e, t, both_zero, zim, im))


def _absolute(e, t, x):
    """NumPy's vectorised complex abs (see the module docstring); a float result."""
    p = _LLPART[t]
    fabs = "f64" if p == "double" else "f32"
    re, im = _parts(e, t, x)
    re = e.emit(f"call {p} @llvm.fabs.{fabs}({p} {re})", p)
    im = e.emit(f"call {p} @llvm.fabs.{fabs}({p} {im})", p)
    inf, nan = _fc(t, math.inf), _fc(t, math.nan)
    re_inf, im_inf = _fcmp(e, t, "oeq", re, inf), _fcmp(e, t, "oeq", im, inf)
    im = _sel(e, t, re_inf, inf, im)
    re = _sel(e, t, im_inf, inf, re)
    re_ok, im_ok = _fcmp(e, t, "ord", re, re), _fcmp(e, t, "ord", im, im)
    im = _sel(e, t, re_ok, im, nan)
    re = _sel(e, t, im_ok, re, nan)
    # max / min as vmaxpd / vminpd: the second operand when either is NaN (both are NaN here then)
    larger = _sel(e, t, _fcmp(e, t, "ogt", re, im), re, im)
    smaller = _sel(e, t, _fcmp(e, t, "olt", im, re), im, re)
    zero = _fcmp(e, t, "oeq", larger, _fc(t, 0.0))
    both_inf = _fcmp(e, t, "oeq", smaller, inf)
    ok = e.emit(f"xor i1 {e.emit(f'or i1 {zero}, {both_inf}', 'i1')}, true", "i1")
    ratio = _f(e, t, "fdiv", _sel(e, t, ok, smaller, _fc(t, 0.0)), _sel(e, t, ok, larger, _fc(t, 1.0)))
    root = e.emit(f"call {p} @llvm.sqrt.{fabs}({p} {_fma(e, t, ratio, ratio, _fc(t, 1.0))})", p)
    return _f(e, t, "fmul", root, larger)


def _libm_hypot():
    """The C library's hypot / hypotf as symbols kernels call (NumPy scalars' abs is npy_hypot:
    the C library's hypot), or None when it cannot be found."""
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        found = {name: ctypes.cast(getattr(libm, name), ctypes.c_void_p).value for name in ("hypot", "hypotf")}
    except (OSError, AttributeError):
        return None
    for name, address in found.items():
        llvm.add_symbol(f"frametrace_{name}", address)
    return found


HYPOT = _libm_hypot() is not None


def _scalar_absolute(e, t, x):
    """abs of a NumPy complex scalar: the C library's hypot of its parts (as npy_hypot)."""
    p = _LLPART[t]
    fn = "frametrace_hypot" if p == "double" else "frametrace_hypotf"
    e.mod.decls.add(f"declare {p} @{fn}({p}, {p})")
    re, im = _parts(e, t, x)
    return e.emit(f"call {p} @{fn}({p} {re}, {p} {im})", p)


def _equal(e, t, a, b):
    (ar, ai), (br, bi) = _parts(e, t, a), _parts(e, t, b)
    return e.emit(f"and i1 {_fcmp(e, t, 'oeq', ar, br)}, {_fcmp(e, t, 'oeq', ai, bi)}", "i1")


def _not_equal(e, t, a, b):
    (ar, ai), (br, bi) = _parts(e, t, a), _parts(e, t, b)
    return e.emit(f"or i1 {_fcmp(e, t, 'une', ar, br)}, {_fcmp(e, t, 'une', ai, bi)}", "i1")


def _order(strict):
    """NumPy's CLT / CLE: (xr < yr && !isnan(xi) && !isnan(yi)) || (xr == yr && xi < yi)."""
    def rule(e, t, a, b):
        (ar, ai), (br, bi) = _parts(e, t, a), _parts(e, t, b)
        lt = _fcmp(e, t, "olt", ar, br)
        ords = e.emit(f"and i1 {_fcmp(e, t, 'ord', ai, ai)}, {_fcmp(e, t, 'ord', bi, bi)}", "i1")
        first = e.emit(f"and i1 {lt}, {ords}", "i1")
        second = e.emit(f"and i1 {_fcmp(e, t, 'oeq', ar, br)}, {_fcmp(e, t, 'olt' if strict else 'ole', ai, bi)}",
                        "i1")
        return e.emit(f"or i1 {first}, {second}", "i1")
    return rule


def _swapped(rule):
    return lambda e, t, a, b: rule(e, t, b, a)


def _nonzero(e, t, x):
    re, im = _parts(e, t, x)
    return e.emit(f"or i1 {_fcmp(e, t, 'une', re, _fc(t, 0.0))}, {_fcmp(e, t, 'une', im, _fc(t, 0.0))}", "i1")


def _isnan(e, t, x):
    re, im = _parts(e, t, x)
    return e.emit(f"or i1 {_fcmp(e, t, 'uno', re, re)}, {_fcmp(e, t, 'uno', im, im)}", "i1")


def _abs_parts_vs_inf(e, t, x, pred, join):
    """(|re| pred inf) join (|im| pred inf): isfinite ("one", "and") and isinf ("oeq", "or")."""
    p = _LLPART[t]
    fabs = "f64" if p == "double" else "f32"
    re, im = _parts(e, t, x)
    c = [_fcmp(e, t, pred, e.emit(f"call {p} @llvm.fabs.{fabs}({p} {v})", p), _fc(t, math.inf)) for v in (re, im)]
    return e.emit(f"{join} i1 {c[0]}, {c[1]}", "i1")


def _isfinite(e, t, x):
    return _abs_parts_vs_inf(e, t, x, "one", "and")


def _isinf(e, t, x):
    return _abs_parts_vs_inf(e, t, x, "oeq", "or")


COMPLEX = {
    "add": _partwise("fadd"), "subtract": _partwise("fsub"), "red_add": _partwise("fadd"),
    "multiply": _multiply, "scalar_multiply": _multiply_plain, "true_divide": _divide,
    "negative": _negative, "conjugate": _conjugate, "absolute": _absolute, "scalar_absolute": _scalar_absolute,
    "equal": _equal, "not_equal": _not_equal,
    "less": _order(True), "less_equal": _order(False),
    "greater": _swapped(_order(True)), "greater_equal": _swapped(_order(False)),
    "isnan": _isnan, "isfinite": _isfinite, "isinf": _isinf,
    "logical_not": lambda e, t, x: e.emit(f"xor i1 {_nonzero(e, t, x)}, true", "i1"),
    "real": lambda e, t, x: _parts(e, t, x)[0], "imag": lambda e, t, x: _parts(e, t, x)[1],
}


def _make_complex(e, t, re, im):
    """make_complex(re, im): a complex value of its parts (a complex scalar passed to a
    native loop as two float slots, backends/llvm/loops.py); a rule of the parts' kind."""
    return make(e, "complex128" if _LLPART["complex128"] == reg_of(t) else "complex64", re, im)


def reg_of(t: str) -> str:
    return {"float64": "double", "float32": "float"}[t]


# float-kind rules (their operands are the parts)
FLOAT_RULES = {"make_complex": _make_complex}


# ----------------------------------------------------------------------------- casts

def cast(e, x: str, src: str, dst: str, real_cast) -> str:
    """NumPy's cast of `x` from src to dst where one of them is complex; `real_cast(e, x, s, d)`
    casts between real types (types.cast)."""
    sk, dk = np.dtype(src).kind, np.dtype(dst).kind
    if sk == "c" and dk == "c":
        re, im = _parts(e, src, x)
        return make(e, dst, real_cast(e, re, part(src), part(dst)), real_cast(e, im, part(src), part(dst)))
    if dk == "c":
        return make(e, dst, real_cast(e, x, src, part(dst)), _fc(dst, 0.0))
    if dk == "b":
        return _nonzero(e, src, x)
    raise TypeError(f"a cast from {src} to {dst} drops the imaginary part (NumPy warns): never generated")


# ----------------------------------------------------------------------------- NumPy's loops

def numpy_multiply_fused(dt: str) -> bool:
    """Does the running NumPy's complex multiply loop fuse (fma) as its AVX2 / AVX-512F loop
    does? (Only meaningful where numpy_loops_known(dt).)"""
    return _probe(dt)[0]


def numpy_loops_known(dt: str) -> bool:
    """Do NumPy's multiply and abs loops for `dt` compute what the rules above compute? Probed
    once per process on random values (where the candidate formulas round differently); False
    keeps complex values out of native loops (the generic path runs them)."""
    return _probe(dt)[1]


@functools.lru_cache(maxsize=None)
def _probe(dt: str) -> tuple:
    from fractions import Fraction
    ptype = np.dtype(part(dt)).type

    def fma(x, y, z):
        return ptype(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))

    rng = np.random.default_rng(12345)
    n = 64
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    got = [(ptype(g.real), ptype(g.imag)) for g in a * b]
    parts = [(ptype(x.real), ptype(x.imag), ptype(y.real), ptype(y.imag)) for x, y in zip(a, b)]
    fused = [(fma(xr, yr, -(xi * yi)), fma(xr, yi, xi * yr)) for xr, xi, yr, yi in parts]
    plain = [(xr * yr - xi * yi, xr * yi + xi * yr) for xr, xi, yr, yi in parts]
    if got not in (fused, plain):
        return False, False
    for x, g in zip(a, np.abs(a)):
        re, im = abs(ptype(x.real)), abs(ptype(x.imag))
        big, small = max(re, im), min(re, im)
        r = small / big
        if ptype(g) != ptype(np.sqrt(fma(r, r, ptype(1.0))) * big):
            return got == fused, False
    return got == fused, True
