"""arctan, arctan2, arcsin, arccos: branch-free (selects), so loops calling them vectorise.

arctan (fdlibm's reduction): |x| in [0, 7/16), [7/16, 11/16), [11/16, 19/16), [19/16, 39/16),
[39/16, inf] maps to t = (|x| - c)/(1 + c|x|) with c = 0, 1/2, 1, 3/2 (t = -1/|x| for the last),
atan|x| = atan(c) + atan(t), |t| <= 7/16, atan(c) as hi + lo; atan(t) = t - t*z*A(z), z = t^2.
The numerator |x| - c is exact in each interval (Sterbenz), and atan(c) dominates the sum,
so the rounding of t costs little. Float32 uses c in {0, 1} only (double has bits to spare).

arcsin/arccos: |x| < 1/2: asin x = x + x*t*P(t), t = x^2. |x| >= 1/2: t = (1-|x|)/2 (exact),
asin|x| = pi/2 - 2*asin(sqrt t); sqrt t is carried as s + c with c = (t - s*s)/(2s) so the
result keeps its last bits. Same P on t in [0, 1/4] for both.
"""
from __future__ import annotations

from ._common import INF, F, isnan
from ._ir import F32, F64, Fn, H, Val, hexfloats

# (x - atan x)/x = z * A(z) on |x| <= 7/16: relative error 2^-57.7 (f64), 2^-34.4 (f32)
ATAN_A = hexfloats("""0x1.555555555550dp-2 -0x1.999999998eb4fp-3 0x1.2492492006394p-3
    -0x1.c71c6fe19a26bp-4 0x1.745cdc47a08e4p-4 -0x1.3b0f2a3e6790fp-4 0x1.10d6637052528p-4
    -0x1.dde286a5e6e1ep-5 0x1.97b38e7aecd04p-5 -0x1.2b41da4bc7ed2p-5 0x1.0acf43b9483a1p-6""")
ATAN_A_F32 = hexfloats("""0x1.555554559f126p-2 -0x1.9998c9b9caa71p-3 0x1.247603391552cp-3
    -0x1.c3898c41aa270p-4 0x1.56738a87280b6p-4 -0x1.713a842d653c6p-5""")
# (asin x - x)/x^3 in t = x^2 on [0, 1/4]: relative error 2^-59.8 (f64), 2^-31.7 (f32)
ASIN_P = hexfloats("""0x1.5555555555578p-3 0x1.333333332df7ep-4 0x1.6db6db72260fbp-5
    0x1.f1c71a8dc1af5p-6 0x1.6e8bdfa69c5afp-6 0x1.1c49e2b82f160p-6 0x1.ca20ce5ca4cc8p-7
    0x1.757b77a2e6f3cp-7 0x1.617400a8abac2p-7 0x1.e2bdd544ad83ap-9 0x1.6492e40480887p-6
    -0x1.5954c9c1d4dc6p-6 0x1.0bb07871d0ed2p-5""")
ASIN_P_F32 = hexfloats("""0x1.55554c36aaf0bp-3 0x1.33388eaf8f3abp-4 0x1.6cac3b3b9c055p-5
    0x1.04a65f43c74f9p-5 0x1.d7f1bd2938a91p-7 0x1.33bbf764a768bp-5""")

ATAN_HALF = (H("0x1.dac670561bb4fp-2"), H("0x1.a2b7f222f65e2p-56"))
PIO4 = (H("0x1.921fb54442d18p-1"), H("0x1.1a62633145c07p-55"))
ATAN_3HALF = (H("0x1.f730bd281f69bp-1"), H("0x1.007887af0cbbdp-56"))
PIO2 = (H("0x1.921fb54442d18p+0"), H("0x1.1a62633145c07p-54"))
PI = (H("0x1.921fb54442d18p+1"), H("0x1.1a62633145c07p-53"))


def _k(ty: str, pair: tuple[float, float]) -> tuple[float, float]:
    """A hi + lo constant in the arithmetic type (float: both words rounded to float)."""
    if ty == F64:
        return pair
    hi = F(pair[0])
    return hi, F(pair[0] - hi + pair[1])


def _coeffs(ty: str, prec: str, c64, c32):
    return c64 if prec == "f64" else c32 if ty == F64 else tuple(F(c) for c in c32)


def atan_pos(fn: Fn, ax: Val, prec: str) -> Val:
    """atan(ax) for ax >= 0 (or NaN), in ax's type; prec picks the polynomial."""
    ty = ax.ty
    if prec == "f64" or ty == F32:               # native float needs the finer reduction
        steps = [(7 / 16, 0.5, ATAN_HALF), (11 / 16, 1.0, PIO4), (19 / 16, 1.5, ATAN_3HALF)]
        last = 39 / 16
    else:
        steps, last = [(0.41421356237309503, 1.0, PIO4)], 2.414213562373095
    steps = [(b, cv, _k(ty, pr)) for b, cv, pr in steps]
    coeffs = _coeffs(ty, prec, ATAN_A, ATAN_A_F32)
    pio2 = _k(ty, PIO2)
    c, hi, lo = fn.const(0.0, ax.ty), fn.const(0.0, ax.ty), fn.const(0.0, ax.ty)
    for bound, cv, (h, low) in steps:
        ge = fn.fcmp("oge", ax, bound)
        c, hi, lo = fn.select(ge, cv, c), fn.select(ge, h, hi), fn.select(ge, low, lo)
    far = fn.fcmp("oge", ax, last)
    hi, lo = fn.select(far, pio2[0], hi), fn.select(far, pio2[1], lo)
    num = fn.select(far, -1.0, ax - c)            # exact in each interval
    den = fn.select(far, ax, fn.fma(c, ax, 1.0))
    t = num / den
    z = t * t
    tza = t * (z * fn.horner(z, coeffs))
    return hi - ((tza - lo) - t)


def atan_core(fn: Fn, x: Val, prec: str) -> Val:
    return fn.copysign(atan_pos(fn, fn.fabs(x), prec), x)


def atan2_core(fn: Fn, y: Val, x: Val, prec: str) -> Val:
    ay, ax = fn.fabs(y), fn.fabs(x)
    pi, pio4 = _k(x.ty, PI), _k(x.ty, PIO4)
    a = atan_pos(fn, ay / ax, prec)
    a = fn.select(fn.fcmp("oeq", ay, 0.0), 0.0, a)                   # 0/0 and 0/x
    both_inf = fn.and_(fn.fcmp("oeq", ay, INF), fn.fcmp("oeq", ax, INF))
    a = fn.select(both_inf, pio4[0], a)                              # inf/inf
    xneg = fn.icmp("slt", fn.bitcast(x, "i64" if x.ty == F64 else "i32"), 0)   # x = -0 too
    a = fn.select(xneg, pi[0] - (a - pi[1]), a)
    res = fn.copysign(a, y)
    return fn.select(fn.or_(isnan(fn, x), isnan(fn, y)), x + y, res)


def _asin_parts(fn: Fn, ax: Val, prec: str):
    """(small, t, tp, s, c): t = x^2 or (1-|x|)/2; asin(sqrt t) = s + c + s*tp."""
    small = fn.fcmp("olt", ax, 0.5)
    t = fn.select(small, ax * ax, fn.fma(ax, -0.5, 0.5))          # (1-|x|)/2 is exact
    tp = t * fn.horner(t, _coeffs(ax.ty, prec, ASIN_P, ASIN_P_F32))
    s = fn.sqrt(t)
    c = fn.fma(-s, s, t) / (s + s)                # sqrt(t) = s + c to ~2^-106
    c = fn.select(fn.fcmp("oeq", s, 0.0), 0.0, c)
    return small, t, tp, s, c


def asin_core(fn: Fn, x: Val, prec: str) -> Val:
    ax = fn.fabs(x)
    small, t, tp, s, c = _asin_parts(fn, ax, prec)
    pio2 = _k(x.ty, PIO2)
    near = fn.fma(ax, tp, ax)
    s2 = s + s
    hi = pio2[0] - s2
    err = (pio2[0] - hi) - s2                     # exact: PIO2 >= 2s
    far = hi + (err + (pio2[1] - 2.0 * (c + s * tp)))
    return fn.copysign(fn.select(small, near, far), x)


def acos_core(fn: Fn, x: Val, prec: str) -> Val:
    ax = fn.fabs(x)
    small, t, tp, s, c = _asin_parts(fn, ax, prec)
    pio2, pi = _k(x.ty, PIO2), _k(x.ty, PI)
    hi = pio2[0] - x                              # |x| < 1/2: pi/2 - asin x
    near = hi + (((pio2[0] - hi) - x) + (pio2[1] - x * tp))
    tail2 = 2.0 * (c + s * tp)
    s2 = s + s
    pos = s2 + tail2                              # x >= 1/2: 2 asin(sqrt t)
    hi2 = pi[0] - s2                              # x <= -1/2: pi - 2 asin(sqrt t)
    neg = hi2 + (((pi[0] - hi2) - s2) + (pi[1] - tail2))
    far = fn.select(fn.fcmp("olt", x, 0.0), neg, pos)
    return fn.select(small, near, far)


def native_f32(core):
    """The same core run in float arithmetic (constants and coefficients rounded to float)."""
    return lambda fn, *args: core(fn, *args, prec="f32")
