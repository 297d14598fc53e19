"""tanh, sinh, cosh from the exp/expm1 cores (branch-free, vectorisable).

tanh|x| = t/(t+2) with t = expm1(2|x|) (= 1 for |x| > 22); sinh|x| = (t + t/(t+1))/2 with
t = expm1(|x|) for |x| < 22, else e^|x|/2; cosh x = h + 1/(4h) with h = e^|x|/2. The halving
is folded into exp's power-of-two scale, so sinh/cosh do not overflow before 710.47.
All three are evaluated on |x| and take the sign at the end (odd/even symmetry, -0 kept).
Native float32: the same in float, plus odd polynomials for tanh/sinh on |x| < 0.5625,
where the expm1 forms lose ~1 ulp in float arithmetic.
"""
from __future__ import annotations

from . import exp_log_f32 as f32
from ._common import F
from ._ir import Fn, Val, hexfloats
from .exp_log import exp_core, exp_parts, expm1_from_parts


def tanh_core(fn: Fn, x: Val, prec: str) -> Val:
    ax = fn.fabs(x)
    ki, rh, t = exp_parts(fn, ax + ax, prec, 0.0, 44.0)
    em1 = expm1_from_parts(fn, ki, rh, t)         # expm1(2|x|), |x| <= 22
    z = em1 / (em1 + 2.0)
    return fn.copysign(fn.select(fn.fcmp("ogt", ax, 22.0), 1.0, z), x)


# (tanh x - x)/x^3 in x^2 on |x| <= 0.5625: relative error 2^-29.5 (remez.py TANH_P_F32)
TANH_P_F32 = tuple(F(c) for c in hexfloats("""-0x1.555548b3e8c28p-2 0x1.110c8c246518dp-3
    -0x1.b90d157c8dc46p-5 0x1.584c459ab7e48p-6 -0x1.9594247211ae7p-8"""))


# (sinh x - x)/x^3 in x^2 on |x| <= 0.5625: relative error 2^-31.9 (remez.py SINH_P_F32)
SINH_P_F32 = tuple(F(c) for c in hexfloats("0x1.5555577f22d8dp-3 0x1.110e79c40101fp-7 0x1.a3a0d2fdbeeefp-13"))


def tanh_f32(fn: Fn, x: Val) -> Val:
    """Native float: |x| < 0.5625 an odd polynomial (the expm1 form loses ~2 ulp there),
    else t/(t+2) with t = expm1(2|x|); tanh rounds to 1 in float for |x| > 9.01."""
    ax = fn.fabs(x)
    ki, r, t = f32.exp_parts(fn, ax + ax, 0.0, 20.0)
    s = fn.pow2(ki)                               # k >= 1 where this branch is used
    em1 = fn.fma(s, r + t, s - 1.0)               # s - 1 exact; error damped by t/(t+2)
    z = em1 / (em1 + 2.0)
    z = fn.select(fn.fcmp("ogt", ax, 9.5), 1.0, z)
    x2 = ax * ax
    near = fn.fma(ax, x2 * fn.horner(x2, TANH_P_F32), ax)
    return fn.copysign(fn.select(fn.fcmp("olt", ax, 0.5625), near, z), x)


def sinh_core(fn: Fn, x: Val, prec: str) -> Val:
    ax = fn.fabs(x)
    ki, rh, t = exp_parts(fn, ax, prec, 0.0, 711.0)           # one reduction for both forms
    em1 = expm1_from_parts(fn, ki, rh, t)         # valid for |x| < 22 (k <= 31)
    near = 0.5 * (em1 + em1 / (em1 + 1.0))
    far = fn.scale2(1.0 + (rh + t), fn.iop("sub", ki, 1))     # e^|x| / 2
    return fn.copysign(fn.select(fn.fcmp("olt", ax, 22.0), near, far), x)


def cosh_core(fn: Fn, x: Val, prec: str) -> Val:
    h = exp_core(fn, fn.fabs(x), prec, k_bias=-1)
    return h + 0.25 / h


def sinh_f32(fn: Fn, x: Val) -> Val:
    """|x| < 0.5625: odd polynomial; < 9: (t + t/(t+1))/2 with t = expm1|x|; else e^|x|/2."""
    ax = fn.fabs(x)
    ki, r, t = f32.exp_parts(fn, ax, 0.0, 90.0)
    em1 = f32.expm1_from_parts(fn, ki, r, t)      # |x| < 9: k <= 13
    mid = 0.5 * (em1 + em1 / (em1 + 1.0))
    far = fn.scale2(1.0 + (r + t), fn.iop("sub", ki, 1))
    x2 = ax * ax
    near = fn.fma(ax, x2 * fn.horner(x2, SINH_P_F32), ax)
    res = fn.select(fn.fcmp("olt", ax, 9.0), mid, far)
    return fn.copysign(fn.select(fn.fcmp("olt", ax, 0.5625), near, res), x)


def cosh_f32(fn: Fn, x: Val) -> Val:
    ki, r, t = f32.exp_parts(fn, fn.fabs(x), 0.0, 90.0)
    h = fn.scale2(1.0 + (r + t), fn.iop("sub", ki, 1))
    return h + 0.25 / h
