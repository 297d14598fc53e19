"""exp, exp2, expm1, log, log2, log10, log1p: branch-free, so loops calling them vectorise.

Exponentials: x = k*ln2 + r with |r| <= ln2/2 (k by the 1.5*2**52 shifter, r exact by an
fma with ln2 rounded to double plus a second-word correction), e^r by a minimax polynomial,
then * 2**k in two exponent-bit multiplies so subnormal results round once.

Logarithms (the fdlibm scheme): x = 2**k * (1+f) with 1+f in [sqrt(2)/2, sqrt(2)),
s = f/(2+f), log(1+f) = f - hfsq + s*(hfsq + R(s*s)) where hfsq = f*f/2 and R is a minimax
polynomial; the pieces are added small-to-large so the result is within 1 ulp.

Coefficients: `python -m frametrace.codegen.llvm_math.remez` re-derives every table.
"""
from __future__ import annotations

from ._common import INF, LN2, LN2_HI32, LN2_LO, LN2_LO32, LOG2E, NAN
from ._ir import F64, Fn, H, Val, hexfloats, shifter

# (e^r - 1 - r - r^2/2) / r^3 on |r| <= ln2/2; weighted error 2^-61.7 (f64), 2^-31.3 (f32)
EXP_Q = hexfloats("""0x1.5555555555559p-3 0x1.5555555555559p-5 0x1.111111110f6e2p-7 0x1.6c16c16c14a7fp-10
    0x1.a01a01afd3391p-13 0x1.a01a01af64debp-16 0x1.71ddf87cfcdafp-19
    0x1.27e4c7c2f3848p-22 0x1.af5e7b79d8bd3p-26 0x1.1f92c0d4b750ep-29""")
EXP_Q_F32 = hexfloats("""0x1.55555579a1479p-3 0x1.5554f23877eeep-5 0x1.1110a332aafddp-7 0x1.6d40d7fc67cc5p-10
    0x1.a18945a214516p-13""")
# R(z)/z with log((1+s)/(1-s)) = 2s + s*R(s^2), 0 <= s <= 0.1716; error 2^-58.5 / 2^-36.6
LOG_R = hexfloats("""0x1.5555555555592p-1 0x1.999999997fdb8p-2 0x1.24924941f123dp-2 0x1.c71c52095ddb5p-3
    0x1.74663ee84c192p-3 0x1.39a1baba44c7bp-3 0x1.2f05636b5f25bp-3""")
LOG_R_F32 = hexfloats("""0x1.555554fd9cae1p-1 0x1.999a7a8af4e2fp-2 0x1.2438d7941ed72p-2 0x1.e2f663b16d558p-3""")

IVLN2_HI, IVLN2_LO = H("0x1.71547652b82fep+0"), H("0x1.777d0ffda0d24p-56")      # 1/ln2
IVLN10_HI, IVLN10_LO = H("0x1.bcb7b1526e50ep-2"), H("0x1.95355baaafad3p-57")    # 1/ln10
LOG10_2_HI, LOG10_2_LO = H("0x1.34413509f79ffp-2"), -H("0x1.9dc1da994fd21p-59")  # log10(2)


# -- exponentials ------------------------------------------------------------------------
def clamp(fn: Fn, x: Val, lo: float, hi: float) -> Val:
    """min(max(x, lo), hi) that keeps NaN (each compare is false for NaN)."""
    x = fn.select(fn.fcmp("olt", x, lo), lo, x)
    return fn.select(fn.fcmp("ogt", x, hi), hi, x)


def exp_reduce(fn: Fn, x: Val, prec: str):
    """x = k*ln2 + rh + rl; returns (k as i64, rh, rl, r = rh + rl rounded)."""
    kd, ki = shifter(fn, x, LOG2E)
    rh = fn.fma(kd, -LN2, x)                  # exact: the difference fits in 53 bits
    rl = kd * -LN2_LO
    return ki, rh, rl, rh + rl


def expm1_tail(fn: Fn, rh: Val, rl: Val, r: Val, prec: str) -> Val:
    """t with e^(rh+rl) - 1 = rh + t, |t| small: rl + r^2 * (1/2 + r*Q(r))."""
    q = fn.horner(r, EXP_Q if prec == "f64" else EXP_Q_F32)
    return fn.fma(r * r, fn.fma(r, q, 0.5), rl)


def exp_parts(fn: Fn, x: Val, prec: str, lo: float, hi: float) -> tuple[Val, Val, Val]:
    """Clamp x to [lo, hi] (NaN stays), then (k, rh, t) with e^x = 2**k * (1 + rh + t)."""
    xc = clamp(fn, x, lo, hi)
    ki, rh, rl, r = exp_reduce(fn, xc, prec)
    return ki, rh, expm1_tail(fn, rh, rl, r, prec)


def expm1_from_parts(fn: Fn, ki: Val, rh: Val, t: Val) -> Val:
    """2**k*(1 + rh + t) - 1 for k <= 53, summed as (2**k - 1) + 2**k*rh + 2**k*t: the first
    two terms are exact and added by two_sum, so only the final rounding remains."""
    s = fn.pow2(ki)
    hi, err = fn.two_sum(s - 1.0, s * rh)
    return hi + (err + s * t)


# e^x rounds to +0 below these (e^x < 2**-1075, resp. 2**-150 in float32: under half the least
# subnormal). `exp` computes such lanes from 0.0 and selects +0: scaling a normal value to a
# zero or a subnormal takes a microcode assist on x86 (~100+ cycles per vector instruction),
# which made every element of a causal mask (-1e10) in a softmax ~6x dearer than the others.
# The underflow flag that scaling raised is raised by the kernel's flag accumulator instead
# (codegen/llvm_kernels/ops.py, `exp`); lanes between this and the normal range still scale.
EXP_ZERO_BELOW = -745.2
EXP_ZERO_BELOW_F32 = -104.0


def zero_below(fn: Fn, x: Val, below: float, compute) -> Val:
    """compute(x), with lanes x < below computed from 0.0 and given +0 (NaN: computed)."""
    tiny = fn.fcmp("olt", x, below)
    return fn.select(tiny, 0.0, compute(fn.select(tiny, 0.0, x)))


def exp_core(fn: Fn, x: Val, prec: str, k_bias: int = 0) -> Val:
    """e^x * 2**k_bias (k_bias = -1 gives e^x/2 without overflowing early: cosh)."""
    ki, rh, t = exp_parts(fn, x, prec, -746.0, 710.0 - 0.7 * k_bias)
    if k_bias:
        ki = fn.iop("add", ki, k_bias)
    return fn.scale2(1.0 + (rh + t), ki)


def exp_fn(fn: Fn, x: Val, prec: str) -> Val:
    """np.exp: exp_core, without scaling the lanes whose result rounds to +0."""
    return zero_below(fn, x, EXP_ZERO_BELOW if prec == "f64" else EXP_ZERO_BELOW_F32,
                      lambda xc: exp_core(fn, xc, prec))


def exp2_core(fn: Fn, x: Val, prec: str) -> Val:
    xc = clamp(fn, x, -1080.0, 1030.0)
    kd, ki = shifter(fn, xc, 1.0)
    r = xc - kd                                   # exact, |r| <= 1/2
    uh, ul = fn.two_prod(r, LN2)                  # r*ln2 as a double-double
    ul = fn.fma(r, LN2_LO, ul)
    p = 1.0 + (uh + expm1_tail(fn, uh, ul, uh, prec))
    return fn.scale2(p, ki)


def expm1_core(fn: Fn, x: Val, prec: str) -> Val:
    """k <= 53: expm1_from_parts; k > 53: the -1 moves into the tail; k > 1020: the plain
    exp form (2**k alone would overflow)."""
    ki, rh, t = exp_parts(fn, x, prec, -40.0, 710.0)          # e^-40 < half an ulp of 1
    res = expm1_from_parts(fn, ki, rh, t)
    s = fn.pow2(ki)
    hi, err = fn.two_sum(s, s * rh)
    res = fn.select(fn.icmp("sgt", ki, 53), hi + ((err - 1.0) + s * t), res)
    res = fn.select(fn.icmp("sgt", ki, 1020), fn.scale2(1.0 + (rh + t), ki), res)
    return fn.select(fn.fcmp("oeq", x, 0.0), x, res)          # keeps expm1(-0) = -0


# -- logarithms ----------------------------------------------------------------------------
def log_reduce(fn: Fn, x: Val, subnormals: bool = True) -> tuple[Val, Val]:
    """(k as double, f) with x = 2**k * (1+f), 1+f in [sqrt(2)/2, sqrt(2)); x > 0 finite.
    subnormals=False skips their rescaling (inputs widened from float32 are never subnormal)."""
    ix = fn.bitcast(x, "i64")
    kadj = None
    if subnormals:
        sub = fn.fcmp("olt", x, H("0x1p-1022"))       # scale into the normal range
        ix = fn.bitcast(fn.select(sub, x * H("0x1p54"), x), "i64")
        kadj = fn.select(sub, fn.const(-54, "i64"), fn.const(0, "i64"))
    k = fn.iop("ashr", fn.iop("sub", ix, 0x3FE6A09E667F3BCD), 52)
    m = fn.bitcast(fn.iop("sub", ix, fn.iop("shl", k, 52)), F64)
    if kadj is not None:
        k = fn.iop("add", k, kadj)
    return fn.cast("sitofp", k, F64), m - 1.0


def log1p_parts(fn: Fn, f: Val, prec: str) -> tuple[Val, Val, Val]:
    """(hfsq, s, tail) with log(1+f) = f - hfsq + tail and tail = s*(hfsq + R)."""
    s = f / (2.0 + f)
    z = s * s
    R = z * fn.horner(z, LOG_R if prec == "f64" else LOG_R_F32)
    hfsq = 0.5 * f * f
    return hfsq, s, s * (hfsq + R)


def log_fixup(fn: Fn, x: Val, res: Val) -> Val:
    """log(+inf) = inf, log(+-0) = -inf, log(x < 0 or NaN) = NaN."""
    res = fn.select(fn.fcmp("oeq", x, INF), INF, res)
    res = fn.select(fn.fcmp("oeq", x, 0.0), -INF, res)
    return fn.select(fn.fcmp("ult", x, 0.0), NAN, res)


def log_core(fn: Fn, x: Val, prec: str) -> Val:
    dk, f = log_reduce(fn, x, prec == "f64")
    hfsq, s, tail = log1p_parts(fn, f, prec)
    res = dk * LN2_HI32 - ((hfsq - (tail + dk * LN2_LO32)) - f)
    return log_fixup(fn, x, res)


def log_hilo(fn: Fn, f: Val, prec: str) -> tuple[Val, Val]:
    """log(1+f) as hi + lo with hi = f - hfsq rounded (its error goes into lo)."""
    hfsq, s, tail = log1p_parts(fn, f, prec)
    hi = f - hfsq
    lo = ((f - hi) - hfsq) + tail                 # f - hi - hfsq is exact (|f| >= hfsq)
    return hi, lo


def log2_core(fn: Fn, x: Val, prec: str) -> Val:
    dk, f = log_reduce(fn, x, prec == "f64")
    hi, lo = log_hilo(fn, f, prec)
    ph, pl = fn.two_prod(hi, IVLN2_HI)
    pl = pl + (hi * IVLN2_LO + lo * IVLN2_HI)
    w, e = fn.fast_two_sum(dk, ph)                # |dk| >= 1 > |ph| unless dk == 0
    return log_fixup(fn, x, w + (e + pl))


def log10_core(fn: Fn, x: Val, prec: str) -> Val:
    dk, f = log_reduce(fn, x, prec == "f64")
    hi, lo = log_hilo(fn, f, prec)
    ph, pl = fn.two_prod(hi, IVLN10_HI)
    pl = pl + (hi * IVLN10_LO + lo * IVLN10_HI)
    kh, kl = fn.two_prod(dk, LOG10_2_HI)
    kl = fn.fma(dk, LOG10_2_LO, kl)
    w, e = fn.fast_two_sum(kh, ph)                # |kh| >= 0.30 > 0.16 >= |ph| unless dk == 0
    return log_fixup(fn, x, w + (e + (kl + pl)))


def log1p_core(fn: Fn, x: Val, prec: str) -> Val:
    u, c = fn.two_sum(fn.const(1.0, F64), x)      # 1 + x == u + c exactly
    dk, f = log_reduce(fn, u, False)             # u = 1 + x >= 2**-53 is normal
    hfsq, s, tail = log1p_parts(fn, f, prec)
    corr = dk * LN2_LO32 + c / u                  # log(u + c) = log(u) + c/u + O((c/u)^2)
    res = dk * LN2_HI32 - ((hfsq - (tail + corr)) - f)
    res = fn.select(fn.fcmp("oeq", x, INF), INF, res)
    res = fn.select(fn.fcmp("oeq", x, -1.0), -INF, res)
    res = fn.select(fn.fcmp("ult", x, -1.0), NAN, res)
    return fn.select(fn.fcmp("oeq", x, 0.0), x, res)          # keeps log1p(-0) = -0
