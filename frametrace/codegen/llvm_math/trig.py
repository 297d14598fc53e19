"""sin, cos, tan with correct argument reduction over the whole double range.

float64, |x| < 2**30: x - j*pi/2 (j an integer) is formed as a double-double hi + lo with
pi/2 split in three doubles: x - j*P1 is exact in one fma (the difference fits in 53 bits),
j*P2 is formed exactly by two_prod and subtracted by two_sum, j*P3 is a rounded correction
(its error, < 2**-131, is far below the smallest |r| such x can produce).
  sin: j = 2*round(x/pi), cos: j = 2*round(x/pi - 1/2) + 1, so r = x - j*pi/2 lies in
  [-pi/2, pi/2] and sin x = +-sin r: ONE odd polynomial, no quadrant select (fast; the wide
  range costs accuracy near |sin| = 1: max 1.8 ulp). sin(r + lo) = r + r*z*P(z) + lo*(1 - z/2).
  tan: j = round(2x/pi), |r| <= pi/4, sin and cos kernels (fdlibm's shape, own coefficients)
  and tan = s/c or -c/s by the parity of j.
float32 (native): the same schemes in float with |x| < 2**16 and a three-fma reduction; tan
  evaluates in double internally (near its poles a float reduction is not accurate enough).

Otherwise (huge |x|, inf, NaN): a scalar Payne-Hanek reduction (`<name>.huge`, reached via
_slowpath.guarded_call so the loop still vectorises): x = m * 2**e; the 192 bits of 2/pi
that matter for this e are cut from a table with funnel shifts and multiplied by m in
64-bit limbs (i128); the fraction becomes a double-double times pi/2.
"""
from __future__ import annotations

from ._common import NAN, F
from ._ir import F32, F64, Fn, H, Val, hexfloats, shifter
from ._slowpath import guarded_call

# (sin x - x)/x^3 and (cos x - 1 + x^2/2)/x^4 in x^2 on |x| <= pi/4 (remez.py):
# relative error 2^-58.0 / absolute 2^-64.2 (f64), 2^-37.6 / 2^-33.3 (f32).
SIN_P = hexfloats("""-0x1.5555555555549p-3 0x1.111111110f881p-7 -0x1.a01a019c126c0p-13
    0x1.71de357875337p-19 -0x1.ae5e66d58828ap-26 0x1.5d932f7849762p-33""")
SIN_P_F32 = hexfloats("-0x1.5555554cbad1dp-3 0x1.11110896f770ap-7 -0x1.a00f9e32fb588p-13 0x1.6cd87a490acd0p-19")
COS_C = hexfloats("""0x1.555555555554cp-5 -0x1.6c16c16c15184p-10 0x1.a01a019cb26fbp-16
    -0x1.27e4f80a76eacp-22 0x1.1ee9ec48194ffp-29 -0x1.8faecf66722d1p-37""")
COS_C_F32 = hexfloats("0x1.55554ab402d49p-5 -0x1.6c0c8bb911a22p-10 0x1.9a0259aedd209p-16")

# (sin x - x)/x^3 in x^2 on |x| <= pi/2 (+ margin): relative error 2^-62.0
SIN_PI = hexfloats("""-0x1.5555555555555p-3 0x1.11111111110cbp-7 -0x1.a01a01a015192p-13
    0x1.71de3a52c1c58p-19 -0x1.ae6454e4d6597p-26 0x1.6123d15423d1cp-33 -0x1.ae44aa00a1f55p-41
    0x1.8851f932bcc1dp-49""")

TWO_OVER_PI = H("0x1.45f306dc9c883p-1")
INV_PI = H("0x1.45f306dc9c883p-2")
PIO2_1, PIO2_2, PIO2_3 = H("0x1.921fb54442d18p+0"), H("0x1.1a62633145c07p-54"), -H("0x1.f1976b7ed8fbcp-110")
HUGE = 2.0 ** 30

# 2/pi = sum b_i 2^-i; word j (j >= 1) holds b_{64(j-1)+1} .. b_{64j}; word 0 is zero padding.
# Checked against mpmath by tests/codegen/test_llvm_math.py.
TWO_OVER_PI_WORDS = (0,) + tuple(int(w, 16) for w in """
    a2f9836e4e441529 fc2757d1f534ddc0 db6295993c439041 fe5163abdebbc561 b7246e3a424dd2e0
    06492eea09d1921c fe1deb1cb129a73e e88235f52ebb4484 e99c7026b45f7e41 3991d639835339f4
    9c845f8bbdf9283b 1ff897ffde05980f ef2f118b5a0a6d1f 6d367ecf27cb09b7 4f463f669e5fea2d
    7527bac7ebe5f17b 3d0739f78a5292ea 6bfb5fb11f8d5d08 56033046fc7b6bab f0cfbc209af4361d""".split())


# -- reductions ------------------------------------------------------------------------
def reduce_medium(fn: Fn, x: Val) -> tuple[Val, Val, Val]:
    """(k as i64, rh, rl) with x = k*pi/2 + rh + rl, for |x| < 2**30."""
    kd, ki = shifter(fn, x, TWO_OVER_PI)
    rh, rl = sub_pio2_multiple(fn, x, kd)
    return ki, rh, rl


def sub_pio2_multiple(fn: Fn, x: Val, kd: Val) -> tuple[Val, Val]:
    """x - kd*pi/2 as hi + lo (|lo| <~ ulp(hi)) for an integer kd, |kd| < 2**31."""
    a = fn.fma(kd, -PIO2_1, x)                    # exact when |x| >~ 1 (else kd in {0, +-1})
    p, pe = fn.two_prod(kd, PIO2_2)
    hi, e = fn.two_sum(a, -p)
    lo = (e - pe) - kd * PIO2_3                   # |lo| <~ ulp(hi): no renormalisation needed
    return hi, lo


def reduce_huge(fn: Fn, x: Val, table: str) -> tuple[Val, Val, Val]:
    """Payne-Hanek for finite |x| >= 2**30 (scalar; i128 arithmetic)."""
    def i(v): return fn.const(v, "i64")

    ix = fn.bitcast(x, "i64")
    e = fn.iop("sub", fn.and_(fn.iop("lshr", ix, 52), 0x7FF), 1075)      # |x| = m * 2**e
    m = fn.or_(fn.and_(ix, (1 << 52) - 1), 1 << 52)
    start = fn.iop("add", e, 62)                  # table bit index of b_(e-1)
    wi = fn.iop("lshr", start, 6)
    sh = fn.and_(start, 63)
    words = []
    for d in range(4):
        ptr = fn.emit("ptr", f"getelementptr inbounds [{len(TWO_OVER_PI_WORDS)} x i64], ptr @{table}, "
                              f"i64 0, i64 {fn.iop('add', wi, d).ref}")
        words.append(fn.emit("i64", f"load i64, ptr {ptr.ref}"))
    w = [fn.intrinsic("fshl", words[d], words[d + 1], sh) for d in range(3)]   # bits at `sh`
    mm = fn.cast("zext", m, "i128")
    p0 = fn.iop("mul", mm, fn.cast("zext", w[2], "i128"))
    p1 = fn.iop("mul", mm, fn.cast("zext", w[1], "i128"))
    p2 = fn.iop("mul", m, w[0])                   # only its low 64 bits survive mod 2**192
    upper = fn.iop("add", fn.iop("add", fn.iop("lshr", p0, 64), p1),
                   fn.iop("shl", fn.cast("zext", p2, "i128"), 64))
    r0 = fn.cast("trunc", p0, "i64")
    # x*2/pi mod 4 = upper*2**-126 + r0*2**-190: quadrant = top 2 bits, fraction below
    frac = fn.or_(fn.iop("shl", upper, 2), fn.cast("zext", fn.iop("lshr", r0, 62), "i128"))
    q = fn.cast("trunc", fn.iop("lshr", upper, 126), "i64")
    q = fn.iop("add", q, fn.cast("trunc", fn.iop("lshr", frac, 127), "i64"))   # round to nearest
    neg = fn.icmp("slt", frac, 0)                 # as signed: fraction in [-1/2, 1/2)
    mag = fn.select(neg, fn.iop("sub", fn.const(0, "i128"), frac), frac)
    lz = fn.emit("i128", f"call i128 @llvm.ctlz.i128({mag}, i1 false)")
    lz = fn.select(fn.icmp("ugt", lz, 127), fn.const(127, "i128"), lz)
    norm = fn.iop("shl", mag, lz)
    top = fn.cast("trunc", fn.iop("lshr", norm, 64), "i64")
    nxt = fn.cast("trunc", norm, "i64")
    hi = fn.cast("uitofp", fn.iop("lshr", top, 11), F64) * 2048.0     # 53 bits: exact
    lo = fn.cast("uitofp", fn.and_(top, 0x7FF), F64) + fn.cast("uitofp", nxt, F64) * 2.0 ** -64
    scale = fn.pow2(fn.iop("sub", i(-64), fn.cast("trunc", lz, "i64")))
    fh, fl = hi * scale, lo * scale               # |fraction| = fh + fl
    rh, rl = fn.two_prod(fh, PIO2_1)
    rl = rl + (fh * PIO2_2 + fl * PIO2_1)
    rh, rl = fn.fast_two_sum(rh, rl)
    flip = fn.xor(neg, fn.fcmp("olt", x, 0.0))    # sign of the fraction times sign of x
    rh = fn.select(flip, -rh, rh)
    rl = fn.select(flip, -rl, rl)
    q = fn.select(fn.fcmp("olt", x, 0.0), fn.iop("sub", i(0), q), q)
    return q, rh, rl


# -- kernels ---------------------------------------------------------------------------
def kernel_sin(fn: Fn, x: Val, y: Val, prec: str) -> Val:
    p = SIN_P if prec == "f64" else SIN_P_F32
    z = x * x
    v = z * x
    r = fn.horner(z, p[1:])
    return x - ((z * (0.5 * y - v * r) - y) - v * p[0])


def kernel_cos(fn: Fn, x: Val, y: Val, prec: str) -> Val:
    z = x * x
    r = z * fn.horner(z, COS_C if prec == "f64" else COS_C_F32)
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


def kernel_sin_wide(fn: Fn, x: Val, y: Val) -> Val:
    """sin(x + y) for |x| <= pi/2 with one polynomial; the tail uses cos(x) ~ 1 - x^2/2,
    whose error (< 0.23 at pi/2) only scales |y| <= ulp(x)/2."""
    z = x * x
    zp = z * fn.horner(z, SIN_PI)
    return x + fn.fma(x, zp, y * fn.fma(z, -0.5, 1.0))


def sin_cos_fast(fn: Fn, which: str, x: Val) -> Val:
    """sin x = (-1)^k sin(x - k*pi) with k = round(x/pi); cos x = (-1)^(k+1) sin(x - (k+1/2)*pi)
    with k = round(x/pi - 1/2): one odd polynomial on [-pi/2, pi/2], no quadrant select."""
    if which == "sin":
        kd, ki = shifter(fn, x, INV_PI)
        jd = kd + kd                              # multiple of pi/2 to subtract
    else:
        kd, ki = shifter(fn, fn.fma(x, INV_PI, -0.5), 1.0)
        jd = fn.fma(kd, 2.0, 1.0)
        ki = fn.iop("add", ki, 1)
    hi, lo = sub_pio2_multiple(fn, x, jd)
    s = kernel_sin_wide(fn, hi, lo)
    flip = fn.iop("shl", ki, 63)                  # odd k: negate
    return fn.bitcast(fn.xor(fn.bitcast(s, "i64"), flip), F64)


def finish(fn: Fn, which: str, q: Val, rh: Val, rl: Val, prec: str) -> Val:
    """sin/cos/tan of k*pi/2 + rh + rl from the quadrant q = k (any i64; only k mod 4 counts)."""
    s = kernel_sin(fn, rh, rl, prec)
    c = kernel_cos(fn, rh, rl, prec)
    odd = fn.icmp("ne", fn.and_(q, 1), 0)
    if which == "tan":
        return fn.select(odd, -c / s, s / c)
    if which == "cos":
        q = fn.iop("add", q, 1)                   # cos(t) = sin(t + pi/2)
        odd = fn.icmp("ne", fn.and_(q, 1), 0)
    val = fn.select(odd, c, s)
    flip = fn.iop("shl", fn.and_(q, 2), 62)       # quadrants 2, 3: negate (sign bit)
    return fn.bitcast(fn.xor(fn.bitcast(val, "i64"), flip), F64)


# -- native float32 ----------------------------------------------------------------------
HUGE_F32 = 2.0 ** 16                              # float Cody-Waite stays within ~1.5 ulp below
PIO2_F1 = F(PIO2_1)
PIO2_F2 = F(PIO2_1 - PIO2_F1 + PIO2_2)
PIO2_F3 = F(PIO2_1 - PIO2_F1 - PIO2_F2 + PIO2_2)
SIN_P_F32N = tuple(F(c) for c in SIN_P_F32)
COS_C_F32N = tuple(F(c) for c in COS_C_F32)




def huge_path(fn: Fn, which: str, x: Val, rare: Val, fast: Val, prec: str = "f32") -> Val:
    """rare lanes -> `<sym>.huge(x)`: Payne-Hanek and the kernels in double (rounded once for
    float32), NaN for inf/NaN; through _slowpath.guarded_call so the loop still vectorises.
    Not optimised (optnone): it is rare, and that saves compile time."""
    sym = fn.name
    slow = Fn(f"{sym}.huge", x.ty, [(x.ty, "x")], attrs="noinline optnone nounwind willreturn")
    sx = slow.args[0] if x.ty == F64 else slow.cast("fpext", slow.args[0], F64)
    q, hi, lo = reduce_huge(slow, sx, f"{sym}.two_over_pi")
    val = slow.select(slow.fcmp("olt", slow.fabs(sx), float("inf")),
                      finish(slow, which, q, hi, lo, prec), NAN)
    slow.ret(val if x.ty == F64 else slow.cast("fptrunc", val, F32))
    fn.extra.append(_table_text(f"{sym}.two_over_pi"))
    return guarded_call(fn, rare, fast, x, slow)


def tan_f32(fn: Fn, x: Val) -> Val:
    """Lean double evaluation (tan is too steep near its poles for float arithmetic):
    r = x - k*pi/2 by two fmas, the short f32-precision sin/cos polynomials, one division."""
    rare = fn.fcmp("uge", fn.fabs(x), HUGE_F32)
    xd = fn.cast("fpext", fn.select(rare, 0.0, x), F64)
    kd, ki = shifter(fn, xd, TWO_OVER_PI)
    r = fn.fma(kd, -PIO2_2, fn.fma(kd, -PIO2_1, xd))
    z = r * r
    s = fn.fma(r, z * fn.horner(z, SIN_P_F32), r)
    c = fn.fma(z, fn.fma(z, fn.horner(z, COS_C_F32), -0.5), 1.0)
    odd = fn.icmp("ne", fn.and_(ki, 1), 0)
    res = fn.cast("fptrunc", fn.select(odd, -c / s, s / c), F32)
    res = fn.select(fn.fcmp("oeq", x, 0.0), x, res)
    return huge_path(fn, "tan", x, rare, res)


def sin_cos_f32(which: str):
    """Float arithmetic throughout: k = round(2x/pi) by the shifter, r = x - k*pi/2 by three
    fmas (the first exact), sin and cos polynomials on |r| <= pi/4 selected and negated by
    k mod 4 (a single wide polynomial would cost ~1 ulp more near |result| = 1);
    |x| >= 2**16, inf, NaN go to the double slow path."""
    def core(fn: Fn, x: Val) -> Val:
        rare = fn.fcmp("uge", fn.fabs(x), HUGE_F32)
        xs = fn.select(rare, 0.0, x)
        kd, ki = shifter(fn, xs, TWO_OVER_PI)
        r = fn.fma(kd, -PIO2_F3, fn.fma(kd, -PIO2_F2, fn.fma(kd, -PIO2_F1, xs)))
        z = r * r
        s = fn.fma(r, z * fn.horner(z, SIN_P_F32N), r)
        c = fn.fma(z, fn.fma(z, fn.horner(z, COS_C_F32N), -0.5), 1.0)
        if which == "cos":
            ki = fn.iop("add", ki, 1)             # cos t = sin(t + pi/2)
        val = fn.select(fn.icmp("ne", fn.and_(ki, 1), 0), c, s)
        res = fn.bitcast(fn.xor(fn.bitcast(val, "i32"), fn.iop("shl", fn.and_(ki, 2), 30)), F32)
        if which == "sin":
            res = fn.select(fn.fcmp("oeq", x, 0.0), x, res)
        return huge_path(fn, which, x, rare, res)
    return core


def _table_text(name: str) -> str:
    words = ", ".join(f"i64 {w}" for w in TWO_OVER_PI_WORDS)
    return f"@{name} = internal unnamed_addr constant [{len(TWO_OVER_PI_WORDS)} x i64] [{words}], align 8\n"


def trig_core(which: str):
    def core(fn: Fn, x: Val, prec: str) -> Val:
        ax = fn.fabs(x)
        rare = fn.fcmp("uge", ax, HUGE)           # also inf and NaN
        xs = fn.select(rare, 0.0, x)
        if which == "tan":
            q, rh, rl = reduce_medium(fn, xs)
            res = finish(fn, which, q, rh, rl, prec)
        else:
            res = sin_cos_fast(fn, which, xs)
        if which != "cos":
            res = fn.select(fn.fcmp("oeq", x, 0.0), x, res)   # sin(-0) = tan(-0) = -0
        return huge_path(fn, which, x, rare, res, prec)
    return core


sin_core, cos_core, tan_core = trig_core("sin"), trig_core("cos"), trig_core("tan")
sin_f32, cos_f32 = sin_cos_f32("sin"), sin_cos_f32("cos")
