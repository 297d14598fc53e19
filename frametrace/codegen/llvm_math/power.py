"""power(x, y) (C99/NumPy special cases) and sqrt; branch-free, vectorisable.

x**y = exp(y * log|x|) with log|x| as a double-double accurate to ~2^-66 relative: the
absolute error of y*log|x| (up to ~745 before over/underflow) becomes the relative error of
the result, so a plain-double log would cost tens of ulp near the range ends.
log|x| = k ln2 + log((1+s)/(1-s)), s = f/(2+f) as sh + sl; 2s + (2/3)s^3 are formed exactly
(two_prod), the rest s^5*Q(s^2) is small enough for plain doubles. exp then takes the
double-double y*log|x| = ph + pl, folding pl into its reduced argument.

Float32 computes exp(y * log|x|) in plain double: its error (<= 2^-45 relative) is far below
half a float ulp. Special cases are selects applied after the core value:
  |x| = 0, inf; y = +-inf; x < 0 (odd integer y: negate; non-integer y: NaN);
  NaN in, NaN out; then pow(x, 0) = 1 and pow(1, y) = 1 for every x, y (NaN included).
"""
from __future__ import annotations

from ._common import INF, LN2, LN2_HI32, LN2_LO, LN2_LO32, LOG2E, NAN, isnan
from ._ir import F32, F64, Fn, H, Val, hexfloats, shifter
from .exp_log import clamp, exp_core, expm1_tail, log1p_parts, log_reduce

# (log((1+s)/(1-s)) - 2s)/s^3 - 2/3, divided by s^2: coefficients 2..9 of the
# 2^-73-accurate fit LOG_P_HI (remez.py) on 0 <= s <= 0.1716.
LOG_Q = hexfloats("""0x1.999999999998ep-2 0x1.24924924939abp-2 0x1.c71c71c4bfff2p-3
    0x1.745d1877b5ecbp-3 0x1.3b1353e03b233p-3 0x1.112292809d4a5p-3 0x1.ddf2753298889p-4
    0x1.ecebc8f344d00p-4""")
TWO3, TWO3_LO = H("0x1.5555555555555p-1"), H("0x1.5555555555555p-55")


def log_dd(fn: Fn, ax: Val) -> tuple[Val, Val]:
    """log(ax) = hi + lo to ~2^-66 relative, for finite ax > 0."""
    dk, f = log_reduce(fn, ax)
    dh = 2.0 + f
    dl = f - (dh - 2.0)                           # exact: 2 + f = dh + dl
    inv = 1.0 / dh
    sh = f * inv
    sl = (fn.fma(-sh, dh, f) - sh * dl) * inv     # s = f/(2+f) = sh + sl
    zh, zl = fn.two_prod(sh, sh)
    ch, cl = fn.two_prod(sh, zh)                  # s^3 = ch + cl
    cl = cl + fn.fma(sh, zl, 3.0 * zh * sl)
    th, tl = fn.two_prod(ch, TWO3)                # (2/3) s^3 = th + tl
    tl = tl + (ch * TWO3_LO + cl * TWO3)
    rest = ch * zh * fn.horner(zh, LOG_Q)         # s^5 Q(s^2): < 2^-12 of the total
    s2 = sh + sh
    head, e = fn.fast_two_sum(s2, th)
    tail = e + ((sl + sl) + (tl + rest))
    kh, kl = fn.two_prod(dk, LN2)
    kl = fn.fma(dk, LN2_LO, kl)
    hi, e2 = fn.two_sum(kh, head)
    return fn.fast_two_sum(hi, e2 + (kl + tail))


def _exp_dd(fn: Fn, ph: Val, pl: Val) -> Val:
    """e^(ph + pl), |pl| <~ ulp(ph); over/underflows like exp."""
    inside = fn.fcmp("olt", fn.fabs(ph), 746.0)
    pl = fn.select(inside, pl, 0.0)               # y*log|x| beyond the range: pl may be NaN
    xc = clamp(fn, ph, -746.0, 710.0)
    kd, ki = shifter(fn, xc, LOG2E)
    rh = fn.fma(kd, -LN2, xc)                     # exact
    rl = fn.fma(kd, -LN2_LO, pl)
    t = expm1_tail(fn, rh, rl, rh + rl, "f64")
    return fn.scale2(1.0 + (rh + t), ki)


def _log_plain(fn: Fn, ax: Val) -> Val:
    dk, f = log_reduce(fn, ax, subnormals=False)
    hfsq, s, tail = log1p_parts(fn, f, "f32")
    return dk * LN2_HI32 - ((hfsq - (tail + dk * LN2_LO32)) - f)


def pow_core(fn: Fn, x: Val, y: Val, prec: str) -> Val:
    ax = fn.fabs(x)
    if prec == "f64":
        lh, ll = log_dd(fn, ax)
        ph, pe = fn.two_prod(y, lh)
        res = _exp_dd(fn, ph, fn.fma(y, ll, pe))
    elif x.ty == F32:                             # native float: only the core runs in double
        w = fn.cast("fpext", y, F64) * _log_plain(fn, fn.cast("fpext", ax, F64))
        res = fn.cast("fptrunc", exp_core(fn, w, "f32"), F32)
    else:
        res = exp_core(fn, y * _log_plain(fn, ax), "f32")
    inf, zero = fn.const(INF, x.ty), fn.const(0.0, x.ty)
    ylt0 = fn.fcmp("olt", y, 0.0)
    res = fn.select(fn.fcmp("oeq", ax, 0.0), fn.select(ylt0, inf, zero), res)
    res = fn.select(fn.fcmp("oeq", ax, INF), fn.select(ylt0, zero, inf), res)
    grows = fn.xor(fn.fcmp("olt", ax, 1.0), fn.fcmp("ogt", y, 0.0))   # |x|^y -> inf as |y| -> inf
    at_inf = fn.select(fn.fcmp("oeq", ax, 1.0), 1.0, fn.select(grows, inf, zero))
    res = fn.select(fn.fcmp("oeq", fn.fabs(y), INF), at_inf, res)
    # negative x: odd integer y flips the sign (also for -0, -inf); non-integer y is NaN
    yint = fn.fcmp("oeq", fn.floor(y), y)
    half = 0.5 * y
    yodd = fn.and_(yint, fn.fcmp("one", fn.floor(half), half))
    xneg = fn.icmp("slt", fn.bitcast(x, "i64" if x.ty == F64 else "i32"), 0)
    res = fn.select(fn.and_(xneg, yodd), -res, res)
    finite_neg = fn.and_(fn.fcmp("olt", x, 0.0), fn.fcmp("one", x, -INF))
    res = fn.select(fn.and_(finite_neg, fn.xor(yint, fn.const(True, "i1"))), NAN, res)
    res = fn.select(fn.or_(isnan(fn, x), isnan(fn, y)), NAN, res)
    one = fn.or_(fn.fcmp("oeq", y, 0.0), fn.fcmp("oeq", x, 1.0))
    return fn.select(one, 1.0, res)


def sqrt_core(fn: Fn, x: Val, prec: str = "f64") -> Val:
    return fn.sqrt(x)                             # llvm.sqrt: correctly rounded, vsqrtp[sd]


def pow_f32(fn: Fn, x: Val, y: Val) -> Val:
    return pow_core(fn, x, y, prec="f32")
