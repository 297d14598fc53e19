"""Accuracy, special values and vectorisation of frametrace.codegen.llvm_math.

Each function/dtype is compiled into a loop kernel `void k(T* x, [T* y,] T* out, i64 n)` and
run through ctypes. float64 is measured against NumPy's long double (x87, 64-bit mantissa)
functions, float32 against NumPy's float64 result; errors are in ulps of the result type.
Run with `-s` to see the measured maxima. At the time of writing (ranges below, 40k-120k
points per function; float32 column in brackets: every float32 input, opt-in test
`FRAMETRACE_EXHAUSTIVE_F32=1`, unary functions only):

    function  f64   f32  [all f32]      function  f64   f32  [all f32]
    exp       0.80  0.91  [1.03]        sin       1.71  1.40  [1.49]
    exp2      0.84  0.92  [1.03]        cos       1.75  1.42  [1.49]
    expm1     0.90  0.82  [1.25]        tan       1.89  0.50  [0.50]
    log       0.76  0.75  [0.84]        arctan    0.76  0.80  [0.85]
    log2      0.71  0.71  [0.85]        arcsin    0.60  0.60  [0.63]
    log10     0.67  0.67  [0.75]        arccos    0.60  0.59  [0.63]
    log1p     0.76  0.74  [0.87]        arctan2   1.33  1.38
    sqrt      0.50  0.50  [0.50]        tanh      1.83  1.46  [1.50]
    power     0.81  0.50                sinh      1.88  1.41  [1.68]
                                        cosh      1.28  1.37  [1.48]
"""
from __future__ import annotations

import ctypes
import functools
import os
import re

import llvmlite.binding as llvm
import numpy as np
import pytest

from frametrace.codegen.llvm_jit import compile_ir, host_target_machine
from frametrace.codegen.llvm_math import (MATH_FUNCTIONS, math_function_ir, math_functions_ir,
                                          symbol_name)

MAX_ULP = 4.0
LD = np.longdouble
HAVE_LD = np.finfo(LD).nmant >= 63          # x87 extended; else fall back to float64 refs


# -- kernels ------------------------------------------------------------------------------
def loop_kernel_ir(name: str, ty: str) -> str:
    """IR of `k(x, [y,] out, n)` applying the math function elementwise."""
    sym = symbol_name(name, ty)
    binary = MATH_FUNCTIONS[name].nargs == 2
    params = "ptr noalias %x, ptr noalias %y, ptr noalias %out, i64 %n" if binary else \
        "ptr noalias %x, ptr noalias %out, i64 %n"
    loads = f"  %v = load {ty}, ptr %px\n"
    if binary:
        loads += (f"  %py = getelementptr inbounds {ty}, ptr %y, i64 %i\n"
                  f"  %w = load {ty}, ptr %py\n")
    call_args = f"{ty} %v, {ty} %w" if binary else f"{ty} %v"
    return math_function_ir(name, ty) + f"""
define void @k({params}) {{
entry:
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %exit
loop:
  %i = phi i64 [0, %entry], [%i.next, %loop]
  %px = getelementptr inbounds {ty}, ptr %x, i64 %i
  %po = getelementptr inbounds {ty}, ptr %out, i64 %i
{loads}  %r = call {ty} @{sym}({call_args})
  store {ty} %r, ptr %po
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"""


class Kernel:
    def __init__(self, name: str, ty: str):
        self.name, self.ty = name, ty
        self.nargs = MATH_FUNCTIONS[name].nargs
        self.dtype = np.float64 if ty == "double" else np.float32
        self.cm = compile_ir(loop_kernel_ir(name, ty), ["k"])
        proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (self.nargs + 1), ctypes.c_int64)
        self.fn = proto(self.cm.address("k"))

    def __call__(self, *xs):
        xs = [np.ascontiguousarray(x, dtype=self.dtype) for x in xs]
        out = np.empty_like(xs[0])
        self.fn(*[x.ctypes.data for x in xs], out.ctypes.data, out.size)
        return out


@functools.lru_cache(maxsize=None)
def kernel(name: str, ty: str) -> Kernel:
    return Kernel(name, ty)


# -- error measure ------------------------------------------------------------------------
def ulp_errors(got: np.ndarray, ref: np.ndarray, ty: str) -> np.ndarray:
    """|got - ref| in ulps of the result type at ref; inf where NaN/inf disagree."""
    if ty == "double":
        mant_bits, min_exp, out_t = 53, -1074, np.float64
    else:
        mant_bits, min_exp, out_t = 24, -149, np.float32
    ref = np.asarray(ref)
    _, e = np.frexp(ref)
    ulp = np.ldexp(np.ones_like(ref), np.maximum(e - mant_bits, min_exp))
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(ref.dtype) - ref) / ulp
        ref_rounded = ref.astype(out_t)
    inf_case = np.isinf(got) | np.isinf(ref_rounded)
    err = np.where(inf_case, np.where(got == ref_rounded, 0.0, np.inf), err)
    nan_got, nan_ref = np.isnan(got), np.isnan(ref)
    err = np.where(nan_got & nan_ref, 0.0, err)
    return np.where(nan_got != nan_ref, np.inf, err)


def reference(name: str, ty: str, xs):
    f = getattr(np, name)                     # our names are NumPy's names
    with np.errstate(all="ignore"):
        if ty == "float":
            return f(*[x.astype(np.float64) for x in xs])
        return f(*[x.astype(LD) for x in xs]) if HAVE_LD else f(*xs)


# -- inputs -------------------------------------------------------------------------------
def _logu(rng, n, lo, hi, signed=True):
    v = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    return v * rng.choice([-1.0, 1.0], n) if signed else v


def _near(rng, points, n, rel=1e-15):
    p = rng.choice(np.asarray(points, dtype=np.float64), n)
    return p * (1 + rng.uniform(-rel, rel, n))


def random_inputs(name: str, seed: int = 1234):
    rng = np.random.default_rng(seed)
    u, lg = rng.uniform, functools.partial(_logu, rng)
    if name in ("exp", "expm1"):
        lo = -745.2 if name == "exp" else -60.0
        x = [u(lo, 709.8, 40000), lg(20000, 1e-300, 700),
             _near(rng, [709.782712893384, -745.1332191019411, -708.39641853226, 0.34657359], 10000, 1e-13)]
    elif name == "exp2":
        x = [u(-1075, 1024, 40000), lg(20000, 1e-300, 1000), _near(rng, np.arange(-30, 30), 10000, 1e-14)]
    elif name in ("log", "log2", "log10", "sqrt"):
        x = [lg(40000, 5e-324, 1.7e308, False), u(0.5, 2.0, 20000), 1 + lg(10000, 1e-15, 1e-3)]
    elif name == "log1p":
        x = [lg(30000, 1e-300, 1e308, False), -lg(20000, 1e-300, 1.0, False), u(-0.5, 1.0, 20000)]
    elif name in ("sin", "cos", "tan"):
        k = rng.integers(-200000, 200000, 20000)
        big = rng.integers(2**20, 2**30, 5000) * rng.choice([-1, 1], 5000)
        x = [u(-10, 10, 40000), lg(30000, 1e-310, 1.7e308), _near(rng, k * (np.pi / 2), 20000),
             np.nextafter(k * (np.pi / 2), np.inf), _near(rng, big * (np.pi / 2), 5000, 1e-16),
             lg(5000, 2.0**29, 2.0**31), [6381956970095103.0 * 2.0**797, 1e22, 1e300, 2.0**30]]
    elif name in ("tanh", "sinh", "cosh"):
        x = [u(-25, 25, 40000), lg(30000, 1e-310, 711.0), u(709.0, 711.0, 5000)]
    elif name == "arctan":
        x = [u(-10, 10, 40000), lg(40000, 1e-310, 1.7e308)]
    elif name in ("arcsin", "arccos"):
        x = [u(-1, 1, 40000), lg(20000, 1e-310, 1.0), 1 - lg(10000, 1e-16, 0.5, False),
             -1 + lg(10000, 1e-16, 0.5, False)]
    elif name == "arctan2":
        y = np.concatenate([lg(30000, 1e-310, 1e308), u(-3, 3, 30000)])
        x = np.concatenate([lg(30000, 1e-310, 1e308), u(-3, 3, 30000)])
        return [y, x]
    elif name == "power":
        base = lg(40000, 1e-300, 1e300, False)
        # exponents reaching the over/underflow range, where log|x| must be most precise
        expo = u(-1, 1, 40000) * 740 / np.maximum(1e-3, np.abs(np.log(base)))
        ints = rng.integers(-60, 60, 20000).astype(np.float64)
        xs = np.concatenate([base, u(0, 4, 20000), -u(0.5, 2.0, 20000), 1 + lg(5000, 1e-12, 1e-3)])
        ys = np.concatenate([expo, u(-30, 30, 20000), ints, lg(5000, 1e2, 1e10)])
        return [xs, ys]
    else:
        raise AssertionError(name)
    return [np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in x])]


SPECIALS = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, -2.2250738585072014e-308,
                     1.7976931348623157e308, -1.7976931348623157e308, np.inf, -np.inf, np.nan,
                     1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 1e-20, 0.9999999999999999, 1.0000000000000002])

FUNCS = sorted(MATH_FUNCTIONS)
TYPES = ["double", "float"]
MEASURED: dict[tuple[str, str], float] = {}


# -- tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("ty", TYPES)
@pytest.mark.parametrize("name", FUNCS)
def test_random_ranges_within_4_ulp(name, ty):
    k = kernel(name, ty)
    xs = random_inputs(name)
    if ty == "float":
        with np.errstate(over="ignore"):
            xs = [x.astype(np.float32) for x in xs]
        keep = np.logical_and.reduce([np.isfinite(x) for x in xs])
        xs = [x[keep] for x in xs]
    got = k(*xs)
    ref = reference(name, ty, xs)
    err = ulp_errors(got, ref, ty)
    worst = int(np.argmax(err))
    MEASURED[(name, ty)] = float(err.max())
    print(f"\n{name:8s} {ty:6s} max {err.max():.3f} ulp  mean {err.mean():.3f}  (n={err.size})")
    assert err.max() <= MAX_ULP, (
        f"{name}({', '.join(repr(x[worst]) for x in xs)}) = {got[worst]!r}, reference {ref[worst]!r}: "
        f"{err.max():.2f} ulp")
    zero = ref == 0
    assert np.array_equal(np.signbit(got[zero]), np.signbit(ref[zero].astype(got.dtype)))


@pytest.mark.parametrize("ty", TYPES)
@pytest.mark.parametrize("name", FUNCS)
def test_special_values_match_numpy(name, ty):
    k = kernel(name, ty)
    with np.errstate(over="ignore"):
        sp = SPECIALS.astype(k.dtype)
    if k.nargs == 2:
        a, b = np.meshgrid(sp, sp)
        xs = [a.ravel(), b.ravel()]
    else:
        xs = [sp]
    got = k(*xs)
    with np.errstate(all="ignore"):
        expect = getattr(np, name)(*xs)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expect), err_msg=f"NaN positions {xs}")
    np.testing.assert_array_equal(np.isinf(got) & (got > 0), np.isinf(expect) & (expect > 0))
    np.testing.assert_array_equal(np.isinf(got) & (got < 0), np.isinf(expect) & (expect < 0))
    zero = expect == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(expect[zero]),
                                  err_msg=f"signs of zeros for inputs {[x[zero] for x in xs]}")
    finite = np.isfinite(expect)
    err = ulp_errors(got[finite], reference(name, ty, [x[finite] for x in xs]), ty)
    assert err.max(initial=0) <= MAX_ULP, [x[finite][np.argmax(err)] for x in xs]


def _host_has_avx() -> bool:
    host_target_machine()   # initialises the native target
    feats = llvm.get_host_cpu_features()
    return bool(feats.get("avx", False))


@pytest.mark.skipif(not _host_has_avx(), reason="host CPU has no AVX: loops vectorise to xmm only")
def test_exp_loop_is_vectorised():
    asm = kernel("exp", "double").cm.asm
    body = asm[asm.index("k:"):]
    fmas = [ln for ln in body.splitlines()
            if ln.split()[:1] and ln.split()[0].startswith("vfmadd") and ln.split()[0].endswith("pd")
            and ("%zmm" in ln or "%ymm" in ln)]
    assert fmas, "no packed-double FMA on ymm/zmm registers in the exp kernel:\n" + body[:3000]


@pytest.mark.skipif(not _host_has_avx(), reason="host CPU has no AVX")
@pytest.mark.parametrize("ty", TYPES)
@pytest.mark.parametrize("name", FUNCS)
def test_every_function_vectorises(name, ty):
    """Packed arithmetic on ymm/zmm in the kernel: the loop calling the function vectorised."""
    asm = kernel(name, ty).cm.asm
    body = asm[asm.index("k:"):]
    packed = re.compile(r"^v(fn?madd|fn?msub|mul|add|sub|div|sqrt)\w*p[sd]$")
    assert any(ln.split() and packed.match(ln.split()[0]) and ("%zmm" in ln or "%ymm" in ln)
               for ln in body.splitlines()), f"{name}/{ty}: no packed arithmetic on ymm/zmm"


@pytest.mark.parametrize("name, expect", [
    ("sin", [-0.8522008497671888, -0.8178819121159085, 0.563127779850884, 1.0]),
    ("cos", [0.523214785395139, -0.5753861119575491, -0.826369834614148, -4.687165924254628e-19]),
    ("tan", [-1.6287782256068988, 1.4214488238747245, -0.6814476476066215, -2.133485385753704e+18]),
])
def test_trig_huge_arguments(name, expect):
    """Payne-Hanek path; expected values from mpmath at 400 digits. The last input is the
    double closest to a multiple of pi/2 (|x - k pi/2| ~ 2^-61), the hardest reduction."""
    x = np.array([1e22, 1e300, 2.0**1023, 6381956970095103.0 * 2.0**797])
    for sign in (1.0, -1.0):
        got = kernel(name, "double")(sign * x)
        want = np.array(expect) * (1.0 if name == "cos" else sign)
        assert np.all(ulp_errors(got, want, "double") <= 1.0), (got, want)


def test_two_over_pi_table_matches_mpmath():
    mp = pytest.importorskip("mpmath")
    from frametrace.codegen.llvm_math.trig import TWO_OVER_PI_WORDS
    with mp.workdps(450):
        v = 2 / mp.pi
        words = [int(mp.floor(v * mp.mpf(2) ** (64 * j))) % (1 << 64) for j in range(1, 21)]
    assert list(TWO_OVER_PI_WORDS) == [0] + words


def test_several_functions_share_one_module():
    ir = math_functions_ir([("sin", "double"), ("cos", np.float64), ("sin", "f64"),
                            ("exp", np.dtype("float32"))])
    assert ir.count("define internal double @ft_sin_f64(") == 1
    body = ir + """
define double @both(double %x) {
  %s = call double @ft_sin_f64(double %x)
  %c = call double @ft_cos_f64(double %x)
  %r = fadd double %s, %c
  ret double %r
}
"""
    cm = compile_ir(body, ["both"])
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double)(cm.address("both"))
    assert f(0.5) == pytest.approx(np.sin(0.5) + np.cos(0.5), rel=1e-15)
    assert f(1e300) == pytest.approx(np.sin(1e300) + np.cos(1e300), rel=1e-15)


def test_unknown_function_and_dtype_errors():
    with pytest.raises(KeyError, match="available"):
        math_function_ir("gamma", "double")
    with pytest.raises(ValueError, match="float64 and float32"):
        math_function_ir("exp", "int64")


@pytest.mark.skipif(not os.environ.get("FRAMETRACE_EXHAUSTIVE_F32"),
                    reason="every float32 input: minutes per function; set FRAMETRACE_EXHAUSTIVE_F32=1")
@pytest.mark.parametrize("name", [n for n in FUNCS if MATH_FUNCTIONS[n].nargs == 1])
def test_float32_exhaustive(name):
    k = kernel(name, "float")
    worst, chunk = 0.0, 1 << 24
    for start in range(0, 1 << 32, chunk):
        x = np.arange(start, start + chunk, dtype=np.uint64).astype(np.uint32).view(np.float32)
        err = ulp_errors(k(x), reference(name, "float", [x]), "float")
        worst = max(worst, float(err.max()))
    print(f"\n{name} float32 exhaustive max {worst:.3f} ulp")
    assert worst <= MAX_ULP
