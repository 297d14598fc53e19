"""Native float32 exp/log family: the exp_log.py algorithms in float arithmetic, so a zmm
register holds 16 lanes instead of 8 doubles. Constants are float-rounded splits; the
polynomials are the f32 fits of remez.py rounded to float.

Exhaustively checked over all 2**32 inputs against NumPy float64 (see the test module).
"""
from __future__ import annotations

from ._common import INF, LN2, LOG2E, NAN, F
from ._ir import F32, Fn, H, Val, hexfloats, shifter
from .exp_log import (IVLN2_HI, IVLN2_LO, IVLN10_HI, IVLN10_LO, LN2_LO, LOG10_2_HI, LOG10_2_LO,
                      EXP_ZERO_BELOW_F32, LOG_R_F32, clamp, log_fixup, zero_below)

# e^r = 1 + r + r^2/2 + r^3 Q(r) on |r| <= ln2/2 (+0.01): relative (to r) error 2^-25.9
EXP_Q = tuple(F(c) for c in hexfloats("""0x1.55549de6f63c7p-3 0x1.5554b7e007eecp-5
    0x1.1236e5a2dd635p-7 0x1.6d857a397d622p-10"""))
LOG_R = tuple(F(c) for c in LOG_R_F32)
LN2_F = F(LN2)
LN2_F_LO = F(LN2 - LN2_F + LN2_LO)
LN2_HI16 = H("0x1.62e4p-1")                      # 16 bits: k * it is exact for |k| < 2**8
LN2_LO16 = F(LN2 - LN2_HI16 + LN2_LO)
IVLN2_F = F(IVLN2_HI)
IVLN2_F_LO = F(IVLN2_HI - IVLN2_F + IVLN2_LO)
IVLN10_F = F(IVLN10_HI)
IVLN10_F_LO = F(IVLN10_HI - IVLN10_F + IVLN10_LO)
LOG10_2_F = F(LOG10_2_HI)
LOG10_2_F_LO = F(LOG10_2_HI - LOG10_2_F + LOG10_2_LO)


# -- exponentials --------------------------------------------------------------------------
def exp_tail(fn: Fn, r: Val) -> Val:
    """t with e^r = 1 + r + t."""
    return (r * r) * fn.fma(r, fn.horner(r, EXP_Q), 0.5)


def exp_parts(fn: Fn, x: Val, lo: float, hi: float) -> tuple[Val, Val, Val]:
    """x clamped to [lo, hi]: (k as i32, r, t) with e^x = 2**k * (1 + r + t)."""
    xc = clamp(fn, x, lo, hi)
    kd, ki = shifter(fn, xc, LOG2E)
    r = fn.fma(kd, -LN2_F_LO, fn.fma(kd, -LN2_F, xc))      # inner fma exact
    return ki, r, exp_tail(fn, r)


def expm1_from_parts(fn: Fn, ki: Val, r: Val, t: Val) -> Val:
    """2**k (1 + r + t) - 1 for k <= 24 (see exp_log.expm1_from_parts)."""
    s = fn.pow2(ki)
    hi, err = fn.two_sum(s - 1.0, s * r)
    return hi + (err + s * t)


def exp_f32(fn: Fn, x: Val) -> Val:
    def scaled(xc):
        ki, r, t = exp_parts(fn, xc, -104.0, 89.0)
        return fn.scale2(1.0 + (r + t), ki)        # k in [-150, 128]: two exact steps
    return zero_below(fn, x, EXP_ZERO_BELOW_F32, scaled)     # (exp_log.py: no assist for zeros)


def exp2_f32(fn: Fn, x: Val) -> Val:
    xc = clamp(fn, x, -152.0, 129.0)
    kd, ki = shifter(fn, xc, 1.0)
    r = xc - kd                                   # exact
    u = fn.fma(r, LN2_F, r * LN2_F_LO)
    return fn.scale2(1.0 + (u + exp_tail(fn, u)), ki)


def expm1_f32(fn: Fn, x: Val) -> Val:
    ki, r, t = exp_parts(fn, x, -18.0, 89.0)      # e^-18 < half an ulp of 1
    res = expm1_from_parts(fn, ki, r, t)
    s = fn.pow2(ki)
    hi, err = fn.two_sum(s, s * r)                # k > 24: the 1 goes into the tail
    res = fn.select(fn.icmp("sgt", ki, 24), hi + ((err - 1.0) + s * t), res)
    res = fn.select(fn.icmp("sgt", ki, 125), fn.scale2(1.0 + (r + t), ki), res)
    return fn.select(fn.fcmp("oeq", x, 0.0), x, res)


# -- logarithms ----------------------------------------------------------------------------
def log_reduce(fn: Fn, x: Val, subnormals: bool = True) -> tuple[Val, Val]:
    """(k as float, f): x = 2**k (1+f), 1+f in [sqrt(2)/2, sqrt(2)), for finite x > 0."""
    ix = fn.bitcast(x, "i32")
    if subnormals:
        sub = fn.fcmp("olt", x, H("0x1p-126"))
        ix = fn.bitcast(fn.select(sub, x * H("0x1p23"), x), "i32")
    k = fn.iop("ashr", fn.iop("sub", ix, 0x3F3504F3), 23)   # 0x3F3504F3 = sqrt(2)/2
    f = fn.bitcast(fn.iop("sub", ix, fn.iop("shl", k, 23)), F32) - 1.0
    if subnormals:
        k = fn.iop("add", k, fn.select(sub, fn.const(-23, "i32"), fn.const(0, "i32")))
    return fn.cast("sitofp", k, F32), f


def log1p_parts(fn: Fn, f: Val) -> tuple[Val, Val]:
    """(hfsq, tail) with log(1+f) = f - hfsq + tail."""
    s = f / (2.0 + f)
    z = s * s
    hfsq = 0.5 * f * f
    return hfsq, s * (hfsq + z * fn.horner(z, LOG_R))


def log_f32(fn: Fn, x: Val) -> Val:
    dk, f = log_reduce(fn, x)
    hfsq, tail = log1p_parts(fn, f)
    return log_fixup(fn, x, dk * LN2_HI16 - ((hfsq - (tail + dk * LN2_LO16)) - f))


def _log_hilo(fn: Fn, x: Val) -> tuple[Val, Val, Val]:
    dk, f = log_reduce(fn, x)
    hfsq, tail = log1p_parts(fn, f)
    hi = f - hfsq
    return dk, hi, ((f - hi) - hfsq) + tail


def log2_f32(fn: Fn, x: Val) -> Val:
    dk, hi, lo = _log_hilo(fn, x)
    ph, pl = fn.two_prod(hi, IVLN2_F)
    pl = pl + (hi * IVLN2_F_LO + lo * IVLN2_F)
    w, e = fn.fast_two_sum(dk, ph)
    return log_fixup(fn, x, w + (e + pl))


def log10_f32(fn: Fn, x: Val) -> Val:
    dk, hi, lo = _log_hilo(fn, x)
    ph, pl = fn.two_prod(hi, IVLN10_F)
    pl = pl + (hi * IVLN10_F_LO + lo * IVLN10_F)
    kh, kl = fn.two_prod(dk, LOG10_2_F)
    kl = fn.fma(dk, LOG10_2_F_LO, kl)
    w, e = fn.fast_two_sum(kh, ph)
    return log_fixup(fn, x, w + (e + (kl + pl)))


def log1p_f32(fn: Fn, x: Val) -> Val:
    u, c = fn.two_sum(fn.const(1.0, F32), x)      # 1 + x == u + c exactly
    dk, f = log_reduce(fn, u, subnormals=False)   # u >= 2**-24 is normal
    hfsq, tail = log1p_parts(fn, f)
    res = dk * LN2_HI16 - ((hfsq - (tail + (dk * LN2_LO16 + c / u))) - f)
    res = fn.select(fn.fcmp("oeq", x, INF), INF, res)
    res = fn.select(fn.fcmp("oeq", x, -1.0), -INF, res)
    res = fn.select(fn.fcmp("ult", x, -1.0), NAN, res)
    return fn.select(fn.fcmp("oeq", x, 0.0), x, res)
