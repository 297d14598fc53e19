"""Loop-IR ops -> LLVM instructions with NumPy's exact semantics: a rule table per operand
kind ('f' float, 'i' signed, 'u' unsigned, 'b' bool). Each rule is (e, t, *args) -> value,
where `e` is the emitter, `t` the operand dtype, args are LLVM values of that type.
Everything is branch-free (selects), so loops stay vectorisable.
"""
from __future__ import annotations

import math

from ...ir import ops as _registered  # noqa: F401  (registers every op the query below reads)
from ...ir.registry import Loop, lowered_as
from ..llvm_math.exp_log import EXP_ZERO_BELOW, EXP_ZERO_BELOW_F32
from .complex_ops import COMPLEX, FLOAT_RULES as _COMPLEX_PARTS
from .fpflags import BIT, ZERO_SIGNS
from .types import bits, const, reg

# ----------------------------------------------------------------------------- helpers


def _ins(op):
    return lambda e, t, a, b: e.emit(f"{op} {reg(t)} {a}, {b}", reg(t))


def _cmp(pred, result="i1"):
    ins = "fcmp" if pred in ("oeq", "une", "olt", "ole", "ogt", "oge", "uno", "ord", "one") else "icmp"
    return lambda e, t, a, b: e.emit(f"{ins} {pred} {reg(t)} {a}, {b}", "i1")


def _sel(e, t, c, a, b):
    return e.emit(f"select i1 {c}, {reg(t)} {a}, {reg(t)} {b}", reg(t))


_SUFFIX_OF = {"double": "f64", "float": "f32"}


def _intr(name):
    return lambda e, t, *xs: e.intrinsic(name, t, *xs)


def _math(name):
    return lambda e, t, *xs: e.math(name, t, *xs)


def _math_with_domain(name, pole, below):
    """A vectorised math function whose domain errors NumPy reports: "divide" at the pole
    (log(0) = -inf), "invalid" below the domain (log(-1) = nan). The library computes the
    values; these flags are what NumPy's own loops would raise."""
    def rule(e, t, x):
        T = reg(t)
        r = e.math(name, t, x)
        r = raise_flag_if(e, t, e.emit(f"fcmp oeq {T} {x}, {_fc(t, pole)}", "i1"), r, "divide")
        return raise_flag_if(e, t, e.emit(f"fcmp olt {T} {x}, {_fc(t, below)}", "i1"), r, "invalid")
    return rule


def _f_exp(e, t, x):
    """np.exp by the vectorised math library, which gives +0 below EXP_ZERO_BELOW without
    scaling into underflow (an FP assist per vector on x86): the underflow NumPy's loop reports
    there is raised here (a conservative "ask NumPy" for exp(-inf) = 0, as the scaling was)."""
    below = EXP_ZERO_BELOW if reg(t) == "double" else EXP_ZERO_BELOW_F32
    r = e.math("exp", t, x)
    return raise_flag_if(e, t, e.emit(f"fcmp olt {reg(t)} {x}, {_fc(t, below)}", "i1"), r, "under")


def _f_power(e, t, x, y):
    """x ** y by the vectorised math library, reporting what NumPy's loop reports beyond the
    hardware's over/underflow: "divide" for 0 ** negative (inf), "invalid" for a NaN result
    of non-NaN operands ((-2) ** 0.5)."""
    T = reg(t)
    r = e.math("power", t, x, y)
    pole = e.emit(f"and i1 {e.emit(f'fcmp oeq {T} {x}, 0.0', 'i1')}, "
                  f"{e.emit(f'fcmp olt {T} {y}, 0.0', 'i1')}", "i1")
    r = raise_flag_if(e, t, pole, r, "divide")
    made_nan = e.emit(f"and i1 {_isnan(e, t, r)}, {e.emit(f'fcmp ord {T} {x}, {y}', 'i1')}", "i1")
    return raise_flag_if(e, t, made_nan, r, "invalid")


# log-family poles and domains: (pole, smallest valid argument)
_DOMAINS = {"log": (0.0, 0.0), "log2": (0.0, 0.0), "log10": (0.0, 0.0), "log1p": (-1.0, -1.0)}


def _isnan(e, t, x):
    return e.emit(f"fcmp uno {reg(t)} {x}, {x}", "i1")


def _or(e, a, b):
    return e.emit(f"or i1 {a}, {b}", "i1")


def _and(e, a, b):
    return e.emit(f"and i1 {a}, {b}", "i1")


def _not(e, a):
    return e.emit(f"xor i1 {a}, true", "i1")


def _nonzero(e, t, x):
    if t == "bool":
        return x
    if reg(t) in ("float", "double"):
        return e.emit(f"fcmp une {reg(t)} {x}, 0.0", "i1")
    return e.emit(f"icmp ne {reg(t)} {x}, 0", "i1")


def _logical(op):
    return lambda e, t, a, b: e.emit(f"{op} i1 {_nonzero(e, t, a)}, {_nonzero(e, t, b)}", "i1")


def _fc(t, v):
    return const(v, t)

# ----------------------------------------------------------------------------- float rules


def _f_maximum(e, t, a, b):                  # NumPy: (a > b || isnan(a)) ? a : b (0.0 vs -0.0: b)
    return _sel(e, t, _or(e, e.emit(f"fcmp ogt {reg(t)} {a}, {b}", "i1"), _isnan(e, t, a)), a, b)


def _f_minimum(e, t, a, b):                  # NumPy: (a < b || isnan(a)) ? a : b
    return _sel(e, t, _or(e, e.emit(f"fcmp olt {reg(t)} {a}, {b}", "i1"), _isnan(e, t, a)), a, b)


def _f_fmax(e, t, a, b):                     # NumPy: (a >= b || isnan(b)) ? a : b
    return _sel(e, t, _or(e, e.emit(f"fcmp oge {reg(t)} {a}, {b}", "i1"), _isnan(e, t, b)), a, b)


def _f_fmin(e, t, a, b):
    return _sel(e, t, _or(e, e.emit(f"fcmp ole {reg(t)} {a}, {b}", "i1"), _isnan(e, t, b)), a, b)


def _f_divmod(e, t, a, b):
    """NumPy's npy_divmod (floor quotient, Python-style remainder), incl. b == 0."""
    T = reg(t)
    mod = e.emit(f"frem {T} {a}, {b}", T)
    div = e.emit(f"fdiv {T} {e.emit(f'fsub {T} {a}, {mod}', T)}, {b}", T)
    fix = _and(e, e.emit(f"fcmp une {T} {mod}, 0.0", "i1"),
               e.emit(f"xor i1 {e.emit(f'fcmp olt {T} {b}, 0.0', 'i1')}, "
                      f"{e.emit(f'fcmp olt {T} {mod}, 0.0', 'i1')}", "i1"))
    mod2 = _sel(e, t, fix, e.emit(f"fadd {T} {mod}, {b}", T),
                _sel(e, t, e.emit(f"fcmp une {T} {mod}, 0.0", "i1"), mod,
                     e.intrinsic("copysign", t, _fc(t, 0.0), b)))
    div = _sel(e, t, fix, e.emit(f"fsub {T} {div}, {_fc(t, 1.0)}", T), div)
    fl = e.intrinsic("floor", t, div)
    up = e.emit(f"fcmp ogt {T} {e.emit(f'fsub {T} {div}, {fl}', T)}, {_fc(t, 0.5)}", "i1")
    fl = _sel(e, t, up, e.emit(f"fadd {T} {fl}, {_fc(t, 1.0)}", T), fl)
    q = e.emit(f"fdiv {T} {a}, {b}", T)
    fl = _sel(e, t, e.emit(f"fcmp une {T} {div}, 0.0", "i1"), fl, e.intrinsic("copysign", t, _fc(t, 0.0), q))
    bz = e.emit(f"fcmp oeq {T} {b}, 0.0", "i1")
    return _sel(e, t, bz, q, fl), _sel(e, t, bz, mod, mod2)


def _f_sign(e, t, x):
    T = reg(t)
    r = _sel(e, t, e.emit(f"fcmp oeq {T} {x}, 0.0", "i1"), _fc(t, 0.0), x)
    r = _sel(e, t, e.emit(f"fcmp olt {T} {x}, 0.0", "i1"), _fc(t, -1.0), r)
    return _sel(e, t, e.emit(f"fcmp ogt {T} {x}, 0.0", "i1"), _fc(t, 1.0), r)


def _f_logaddexp(base2):
    def rule(e, t, a, b):
        T = reg(t)
        d = e.emit(f"fsub {T} {a}, {b}", T)
        pos = e.emit(f"fcmp ogt {T} {d}, 0.0", "i1")
        big = _sel(e, t, pos, a, b)
        nd = e.emit(f"fneg {T} {e.intrinsic('fabs', t, d)}", T)
        if base2:
            tail = e.emit(f"fmul {T} {e.math('log1p', t, e.math('exp2', t, nd))}, "
                          f"{_fc(t, 1 / math.log(2))}", T)
        else:
            tail = e.math("log1p", t, _f_exp(e, t, nd))      # (its underflow reported, as NumPy's)
        r = _sel(e, t, _isnan(e, t, d), d, e.emit(f"fadd {T} {big}, {tail}", T))
        same = e.emit(f"fcmp oeq {T} {a}, {b}", "i1")       # equal (incl. infinities)
        return _sel(e, t, same, e.emit(f"fadd {T} {a}, {_fc(t, 1.0 if base2 else math.log(2))}", T), r)
    return rule


def _f_heaviside(e, t, x, h0):
    T = reg(t)
    r = _sel(e, t, e.emit(f"fcmp oeq {T} {x}, 0.0", "i1"), h0, x)
    r = _sel(e, t, e.emit(f"fcmp olt {T} {x}, 0.0", "i1"), _fc(t, 0.0), r)
    return _sel(e, t, e.emit(f"fcmp ogt {T} {x}, 0.0", "i1"), _fc(t, 1.0), r)


def _f_signbit(e, t, x):
    it = "i64" if t == "float64" else "i32"
    return e.emit(f"icmp slt {it} {e.emit(f'bitcast {reg(t)} {x} to {it}', it)}, 0", "i1")


def _f_clip(e, t, x, lo, hi):                # NumPy: min(max(x, lo), hi), NaN in x wins
    T = reg(t)
    m = _sel(e, t, _or(e, _isnan(e, t, x), e.emit(f"fcmp ogt {T} {x}, {lo}", "i1")), x, lo)
    return _sel(e, t, _or(e, _isnan(e, t, m), e.emit(f"fcmp olt {T} {m}, {hi}", "i1")), m, hi)


def _f_clip_scalar(e, t, x, lo, hi):         # NumPy's loop over fixed bounds: ties keep x,
    T = reg(t)                                   # a NaN bound gives NaN, NaN in x wins
    m = _sel(e, t, e.emit(f"fcmp olt {T} {x}, {lo}", "i1"), lo, x)
    r = _sel(e, t, e.emit(f"fcmp ogt {T} {m}, {hi}", "i1"), hi, m)
    nan = e.emit(f"fadd {T} {lo}, {hi}", T)
    return _sel(e, t, _or(e, _isnan(e, t, lo), _isnan(e, t, hi)), nan, r)


def _f_argbetter(pred):                      # first max/min wins; the first NaN wins over all
    def rule(e, t, x, best):
        T = reg(t)
        nan_first = _and(e, _isnan(e, t, x), e.emit(f"fcmp ord {T} {best}, {best}", "i1"))
        return _or(e, e.emit(f"fcmp {pred} {T} {x}, {best}", "i1"), nan_first)
    return rule


def _f_red_nonan(name):
    """max / min combiner over elements that are never NaN (lower/reductions.py replaces NaN by
    the identity, mask_nan, and tracks it apart): `nnan nsz` llvm.maxnum, one vmaxpd per vector;
    no NaN reaches vmaxpd, so no "invalid" in the status register. Zero signs are not tracked
    here: the reduction decides them after the loop, only when the result is a zero
    (fix_zero_sign)."""
    def rule(e, t, acc, x):
        T = reg(t)
        return e.emit(f"call nnan nsz {T} @llvm.{name}.{_SUFFIX_OF[T]}({T} {acc}, {T} {x})", T)
    return rule


def _f_fix_zero_sign(e, t, m, neg, pos):
    """fix_zero_sign(m, neg, pos): the extreme `m` of a float max / min reduction, made a zero of
    the sign its zeros had when it is a zero: neg / pos say the reduced elements held -0.0 /
    +0.0, and the reduction only looks (its zero-sign pass runs) when m is a zero, whose sign
    the `nsz` max leaves to chance. With both signs seen, NumPy's answer depends on the order
    its SIMD loop combines them: the fpflags.ZERO_SIGNS bits make NumPy redo the call. (No
    compare of m here: `select(m == 0, zero, m)` lets InstCombine drop the max's `nnan`, and
    the reduction loop stays scalar.)"""
    both = _and(e, neg, pos)
    e.raise_bits(e.emit(f"select i1 {both}, i32 {BIT['neg_zero'] | BIT['pos_zero']}, i32 0", "i32"))
    zero = _sel(e, t, _and(e, neg, e.emit(f"xor i1 {pos}, true", "i1")), _fc(t, -0.0), _fc(t, 0.0))
    return _sel(e, t, _or(e, neg, pos), zero, m)


_NAN_BITS = {"float64": 0x7FF8000000000000, "float32": 0x7FC00000}    # np.nan's bits
_KEY_TYPE = {"float64": ("i64", 63), "float32": ("i32", 31)}


def _lanes(ty, items) -> str:
    """An LLVM vector constant (without its type) of `items` of element type `ty`."""
    return f"<{', '.join(f'{ty} {v}' for v in items)}>"


def _sort_layers(n: int) -> list:
    """Batcher's odd-even merge network for n (a power of two) as layers of disjoint pairs."""
    layers, p = [], 1
    while p < n:
        k = p
        while k >= 1:
            layers.append([(i + j, i + j + k) for j in range(k % p, n - k, 2 * k)
                           for i in range(min(k, n - j - k)) if (i + j) // (2 * p) == (i + j + k) // (2 * p)])
            k //= 2
        p *= 2
    return layers


def _network(e, v, n, ty, lo_op, hi_op):
    """The row vector `v` (<n x ty>) sorted: per layer one shuffle to the partners, a min, a
    max, and a select of the max where the lane is a pair's upper index."""
    vt = f"<{n} x {ty}>"
    for pairs in _sort_layers(n):
        partner, upper = list(range(n)), [False] * n
        for i, j in pairs:
            partner[i], partner[j], upper[j] = j, i, True
        other = e.emit(f"shufflevector {vt} {v}, {vt} poison, <{n} x i32> {_lanes('i32', partner)}", vt)
        lo = e.emit(f"call {vt} @llvm.{lo_op}.v{n}{ty}({vt} {v}, {vt} {other})", vt)
        hi = e.emit(f"call {vt} @llvm.{hi_op}.v{n}{ty}({vt} {v}, {vt} {other})", vt)
        mask = _lanes("i1", ["true" if u else "false" for u in upper])
        v = e.emit(f"select <{n} x i1> {mask}, {vt} {hi}, {vt} {lo}", vt)
    return v


def _row(e, t, xs, fill):
    """The row's values as an <N x t> vector, N the next power of two, lanes past the row `fill`."""
    n = 1 << max(len(xs) - 1, 0).bit_length()
    ty = reg(t)
    v = f"{_lanes(ty, [fill] * n)}"
    for k, x in enumerate(xs):
        v = e.emit(f"insertelement <{n} x {ty}> {v}, {ty} {x}, i64 {k}", f"<{n} x {ty}>")
    return v, n


def _f_sort_vec(e, t, *xs):
    """A row of floats sorted in registers (lower/sorting.py), as a vector of integer keys:
    the bits with the magnitude bits flipped for a set sign bit, a total order with -0.0
    before 0.0 and np.nan after +inf; lanes past the row hold the largest key. Flags where
    NumPy's order may differ: zeros (their signs: both seen, NumPy sorts again), a NaN but
    np.nan's bits (both zero-sign bits at once)."""
    it, w = _KEY_TYPE[t]
    v, n = _row(e, t, xs, _fc(t, 1.0))
    ft, vt, bt, wt = f"<{n} x {reg(t)}>", f"<{n} x {it}>", f"<{n} x i1>", f"<{n} x i32>"

    def splat(ty, c):
        return _lanes(ty, [c] * n)
    b = e.emit(f"bitcast {ft} {v} to {vt}", vt)
    flip = e.emit(f"lshr {vt} {e.emit(f'ashr {vt} {b}, {splat(it, w)}', vt)}, {splat(it, 1)}", vt)
    key = e.emit(f"xor {vt} {b}, {flip}", vt)
    zero = e.emit(f"fcmp oeq {ft} {v}, zeroinitializer", bt)
    neg = e.emit(f"icmp slt {vt} {b}, zeroinitializer", bt)
    sign = e.emit(f"select {bt} {neg}, {wt} {splat('i32', BIT['neg_zero'])}, {wt} {splat('i32', BIT['pos_zero'])}",
                  wt)
    odd = e.emit(f"and {bt} {e.emit(f'fcmp uno {ft} {v}, {v}', bt)}, "
                 f"{e.emit(f'icmp ne {vt} {b}, {splat(it, _NAN_BITS[t])}', bt)}", bt)
    flags = e.emit(f"select {bt} {zero}, {wt} {sign}, {wt} zeroinitializer", wt)
    flags = e.emit(f"select {bt} {odd}, {wt} {splat('i32', ZERO_SIGNS)}, {wt} {flags}", wt)
    e.raise_bits(e.emit(f"call i32 @llvm.vector.reduce.or.v{n}i32({wt} {flags})", "i32"))
    if len(xs) < n:                              # lanes past the row: the largest key
        lanes = _lanes("i1", ["true" if k < len(xs) else "false" for k in range(n)])
        key = e.emit(f"select {bt} {lanes}, {vt} {key}, {vt} {splat(it, (1 << w) - 1)}", vt)
    return _network(e, key, n, it, "smin", "smax")


def _f_sort_pick(e, t, v, k, n):
    """Element k of a row sorted by _f_sort_vec, as the float of that key."""
    it, w = _KEY_TYPE[t]
    key = e.emit(f"extractelement <{n} x {it}> {v}, i64 {k}", it)
    flip = e.emit(f"lshr {it} {e.emit(f'ashr {it} {key}, {w}', it)}, 1", it)
    return e.emit(f"bitcast {it} {e.emit(f'xor {it} {key}, {flip}', it)} to {reg(t)}", reg(t))


def _i_sort_vec(signed):
    def rule(e, t, *xs):
        """A row of integers sorted in registers; lanes past the row hold the largest value."""
        top = (1 << (bits(t) - 1)) - 1 if signed else -1
        v, n = _row(e, t, xs, top)
        s = "s" if signed else "u"
        return _network(e, v, n, reg(t), f"{s}min", f"{s}max")
    return rule


def _i_gather_pos(signed):
    def rule(e, t, v, n):
        """The in-bounds int64 position of index v along an axis of n elements (v < 0 counts
        from the end, as NumPy's indexing does); out of bounds: 0, flagged so that NumPy
        redoes the call and raises its IndexError (both zero-sign bits: fpflags.py)."""
        ty = reg(t)
        w = v if ty == "i64" else e.emit(f"{'sext' if signed else 'zext'} {ty} {v} to i64", "i64")
        if signed:
            neg = e.emit(f"icmp slt i64 {w}, 0", "i1")
            w = e.emit(f"select i1 {neg}, i64 {e.emit(f'add i64 {w}, {n}', 'i64')}, i64 {w}", "i64")
        bad = e.emit(f"icmp uge i64 {w}, {n}", "i1")
        e.raise_bits(e.emit(f"select i1 {bad}, i32 {ZERO_SIGNS}, i32 0", "i32"))
        return e.emit(f"select i1 {bad}, i64 0, i64 {w}", "i64")
    return rule


def _i_sort_pick(e, t, v, k, n):
    return e.emit(f"extractelement <{n} x {reg(t)}> {v}, i64 {k}", reg(t))


def _scale(c):
    return lambda e, t, x: e.emit(f"fmul {reg(t)} {x}, {_fc(t, c)}", reg(t))


FLOAT = {
    "add": _ins("fadd"), "subtract": _ins("fsub"), "multiply": _ins("fmul"),
    "true_divide": _ins("fdiv"), "fmod": _ins("frem"),
    "floor_divide": lambda e, t, a, b: _f_divmod(e, t, a, b)[0],
    "remainder": lambda e, t, a, b: _f_divmod(e, t, a, b)[1],
    "maximum": _f_maximum, "minimum": _f_minimum, "fmax": _f_fmax, "fmin": _f_fmin,
    "copysign": _intr("copysign"), "logaddexp": _f_logaddexp(False), "logaddexp2": _f_logaddexp(True),
    "heaviside": _f_heaviside,
    "equal": _cmp("oeq"), "not_equal": _cmp("une"), "less": _cmp("olt"), "less_equal": _cmp("ole"),
    "greater": _cmp("ogt"), "greater_equal": _cmp("oge"),
    "logical_and": _logical("and"), "logical_or": _logical("or"), "logical_xor": _logical("xor"),
    "negative": lambda e, t, x: e.emit(f"fneg {reg(t)} {x}", reg(t)),
    "absolute": _intr("fabs"), "fabs": _intr("fabs"), "sqrt": _intr("sqrt"),
    "floor": _intr("floor"), "ceil": _intr("ceil"), "trunc": _intr("trunc"), "rint": _intr("roundeven"),
    "deg2rad": _scale(math.pi / 180), "rad2deg": _scale(180 / math.pi), "sign": _f_sign,
    "isnan": _isnan, "isinf": lambda e, t, x: e.emit(f"fcmp oeq {reg(t)} {e.intrinsic('fabs', t, x)}, "
                                                     f"{_fc(t, math.inf)}", "i1"),
    "isfinite": lambda e, t, x: e.emit(f"fcmp one {reg(t)} {e.intrinsic('fabs', t, x)}, "
                                       f"{_fc(t, math.inf)}", "i1"),
    "signbit": _f_signbit, "logical_not": lambda e, t, x: e.emit(f"fcmp oeq {reg(t)} {x}, 0.0", "i1"),
    "clip": _f_clip, "clip_scalar": _f_clip_scalar,
    "red_add": lambda e, t, a, b: e.emit(f"fadd reassoc {reg(t)} {a}, {b}", reg(t)),
    "red_mul": lambda e, t, a, b: e.emit(f"fmul reassoc {reg(t)} {a}, {b}", reg(t)),
    # acc + a * b of a dot product (loop_arrays.py): reassociable and contractible (one FMA)
    "red_muladd": lambda e, t, acc, a, b: e.emit(
        f"call reassoc contract {reg(t)} @llvm.fmuladd.{_SUFFIX_OF[reg(t)]}({reg(t)} {a}, {reg(t)} {b}, "
        f"{reg(t)} {acc})", reg(t)),
    # (float red_max / red_min / red_fmax / red_fmin have no rule: lower/reductions.py runs them as
    # red_max_nonan / red_min_nonan over NaN-masked elements, with their NaN and zero-sign rules)
    "red_max_nonan": _f_red_nonan("maxnum"), "red_min_nonan": _f_red_nonan("minnum"),
    "red_peak_max": _f_red_nonan("maxnum"), "red_peak_min": _f_red_nonan("minnum"),
    "fix_zero_sign": _f_fix_zero_sign,
    "sort_vec": _f_sort_vec, "sort_pick": _f_sort_pick,
    "argbetter_max": _f_argbetter("ogt"), "argbetter_min": _f_argbetter("olt"),
}
for _n, _lw in lowered_as(Loop).items():     # float bodies calling the vectorised math library
    if _lw.math:
        FLOAT[_n] = _math_with_domain(_n, *_DOMAINS[_n]) if _n in _DOMAINS else _math(_n)
FLOAT.update(_COMPLEX_PARTS)                 # make_complex(re, im): complex_ops.py
FLOAT["power"] = _f_power
FLOAT["exp"] = _f_exp

# ----------------------------------------------------------------------------- integer rules


def raise_flag_if(e, t, cond, value, flag="divide"):
    """`value`, after reporting the FP error kind `flag` ("divide" by zero, "over"flow,
    "invalid", "under"flow; fpflags.py) wherever `cond` holds, as NumPy's loops would. The
    report is an integer OR into the kernel's flag accumulator (FunctionEmitter.raise_flag),
    not an FP operation: the optimiser cannot fold it away, whatever it knows of the sizes."""
    e.raise_flag(cond, flag)
    return value


def _i_divmod(signed, want):
    """NumPy's integer floor_divide (want 0) / remainder (want 1): Python-style,
    x // 0 == x % 0 == 0, reporting divide by zero (and MIN // -1 overflow) as NumPy does."""
    def rule(e, t, a, b):
        value = _i_divmod_values(signed, e, t, a, b)[want]
        value = raise_flag_if(e, t, e.emit(f"icmp eq {reg(t)} {b}, 0", "i1"), value)
        if signed and want == 0:
            lo = str(-(1 << (bits(t) - 1)))
            wraps = _and(e, e.emit(f"icmp eq {reg(t)} {b}, -1", "i1"), e.emit(f"icmp eq {reg(t)} {a}, {lo}", "i1"))
            value = raise_flag_if(e, t, wraps, value, "over")
        return value
    return rule


def _i_divmod_values(signed, e, t, a, b):
    """(floor quotient, remainder) with x // 0 == x % 0 == 0 and MIN // -1 wrapping."""
    T = reg(t)
    zero = e.emit(f"icmp eq {T} {b}, 0", "i1")
    if not signed:
        safe = _sel(e, t, zero, "1", b)
        q = e.emit(f"udiv {T} {a}, {safe}", T)
        r = e.emit(f"urem {T} {a}, {safe}", T)
        return _sel(e, t, zero, "0", q), _sel(e, t, zero, "0", r)
    m1 = e.emit(f"icmp eq {T} {b}, -1", "i1")
    safe = _sel(e, t, _or(e, zero, m1), "1", b)
    q = e.emit(f"sdiv {T} {a}, {safe}", T)
    r = e.emit(f"srem {T} {a}, {safe}", T)
    adj = _and(e, e.emit(f"icmp ne {T} {r}, 0", "i1"),
               e.emit(f"icmp ne i1 {e.emit(f'icmp slt {T} {r}, 0', 'i1')}, "
                      f"{e.emit(f'icmp slt {T} {b}, 0', 'i1')}", "i1"))
    q = _sel(e, t, adj, e.emit(f"sub {T} {q}, 1", T), q)
    r = _sel(e, t, adj, e.emit(f"add {T} {r}, {b}", T), r)
    q = _sel(e, t, m1, e.emit(f"sub {T} 0, {a}", T), q)   # x // -1 wraps like NumPy
    return _sel(e, t, zero, "0", q), _sel(e, t, _or(e, zero, m1), "0", r)


def _i_fmod(signed):
    def rule(e, t, a, b):
        T = reg(t)
        bad = e.emit(f"icmp eq {T} {b}, 0", "i1")
        if signed:
            bad = _or(e, bad, e.emit(f"icmp eq {T} {b}, -1", "i1"))
        r = e.emit(f"{'srem' if signed else 'urem'} {T} {a}, {_sel(e, t, bad, '1', b)}", T)
        return raise_flag_if(e, t, e.emit(f"icmp eq {T} {b}, 0", "i1"), _sel(e, t, bad, "0", r))
    return rule


def _i_shift(op, signed):
    def rule(e, t, a, b):
        T, n = reg(t), bits(t)
        ok = e.emit(f"icmp ult {T} {b}, {n}", "i1")
        if op == "ashr":                      # oversize: all sign bits
            return e.emit(f"ashr {T} {a}, {_sel(e, t, ok, b, str(n - 1))}", T)
        return _sel(e, t, ok, e.emit(f"{op} {T} {a}, {_sel(e, t, ok, b, '0')}", T), "0")
    return rule


def _i_sign(signed):
    pred = "sgt" if signed else "ugt"

    def rule(e, t, x):
        T = reg(t)
        gt = e.emit(f"zext i1 {e.emit(f'icmp {pred} {T} {x}, 0', 'i1')} to {T}", T)
        if not signed:
            return gt
        lt = e.emit(f"zext i1 {e.emit(f'icmp slt {T} {x}, 0', 'i1')} to {T}", T)
        return e.emit(f"sub {T} {gt}, {lt}", T)
    return rule


def _i_clip(s):
    def rule(e, t, x, lo, hi):
        T = reg(t)
        m = _sel(e, t, e.emit(f"icmp {s}gt {T} {x}, {lo}", "i1"), x, lo)
        return _sel(e, t, e.emit(f"icmp {s}lt {T} {m}, {hi}", "i1"), m, hi)
    return rule


def _i_checked(name):
    """`a <op> b` on NumPy integer scalars: the wrapped result, reporting "over"flow as
    NumPy's scalar math does (its ufunc loops wrap silently)."""
    def rule(e, t, a, b):
        T = reg(t)
        pair = e.emit(f"call {{{T}, i1}} @llvm.{name}.with.overflow.{T}({T} {a}, {T} {b})", f"{{{T}, i1}}")
        return raise_flag_if(e, t, e.emit(f"extractvalue {{{T}, i1}} {pair}, 1", "i1"),
                             e.emit(f"extractvalue {{{T}, i1}} {pair}, 0", T), "over")
    return rule


def _i_scalar_negative(signed):
    def rule(e, t, x):
        T = reg(t)                      # -MIN wraps; -x of an unsigned x != 0 wraps too
        bad = e.emit(f"icmp eq {T} {x}, {_int_min(t)}", "i1") if signed else e.emit(f"icmp ne {T} {x}, 0", "i1")
        return raise_flag_if(e, t, bad, e.emit(f"sub {T} 0, {x}", T), "over")
    return rule


def _i_scalar_absolute(signed):
    def rule(e, t, x):
        T = reg(t)
        if not signed:
            return x
        bad = e.emit(f"icmp eq {T} {x}, {_int_min(t)}", "i1")
        return raise_flag_if(e, t, bad, e.emit(f"call {T} @llvm.abs.{T}({T} {x}, i1 false)", T), "over")
    return rule


def _int_min(t) -> int:
    return -(1 << (int(reg(t)[1:]) - 1))


def _integer(signed):
    s = "s" if signed else "u"
    return {
        "scalar_add": _i_checked(f"{s}add"), "scalar_subtract": _i_checked(f"{s}sub"),
        "scalar_multiply": _i_checked(f"{s}mul"), "scalar_negative": _i_scalar_negative(signed),
        "scalar_absolute": _i_scalar_absolute(signed),
        "add": _ins("add"), "subtract": _ins("sub"), "multiply": _ins("mul"),
        "floor_divide": _i_divmod(signed, 0), "remainder": _i_divmod(signed, 1),
        "fmod": _i_fmod(signed),
        "maximum": _intr(f"{s}max"), "minimum": _intr(f"{s}min"),
        "fmax": _intr(f"{s}max"), "fmin": _intr(f"{s}min"),
        "red_max": _intr(f"{s}max"), "red_min": _intr(f"{s}min"),
        "red_fmax": _intr(f"{s}max"), "red_fmin": _intr(f"{s}min"),
        "red_peak_max": _intr(f"{s}max"), "red_peak_min": _intr(f"{s}min"),
        "red_max_nonan": _intr(f"{s}max"), "red_min_nonan": _intr(f"{s}min"),
        "red_add": _ins("add"), "red_mul": _ins("mul"),
        "bitwise_and": _ins("and"), "bitwise_or": _ins("or"), "bitwise_xor": _ins("xor"),
        "left_shift": _i_shift("shl", signed), "right_shift": _i_shift("ashr" if signed else "lshr", signed),
        "equal": _cmp("eq"), "not_equal": _cmp("ne"), "less": _cmp(f"{s}lt"),
        "less_equal": _cmp(f"{s}le"), "greater": _cmp(f"{s}gt"), "greater_equal": _cmp(f"{s}ge"),
        "logical_and": _logical("and"), "logical_or": _logical("or"), "logical_xor": _logical("xor"),
        "negative": lambda e, t, x: e.emit(f"sub {reg(t)} 0, {x}", reg(t)),
        "absolute": (lambda e, t, x: e.emit(f"call {reg(t)} @llvm.abs.{reg(t)}({reg(t)} {x}, i1 false)",
                                            reg(t))) if signed else (lambda e, t, x: x),
        "sign": _i_sign(signed), "invert": lambda e, t, x: e.emit(f"xor {reg(t)} {x}, -1", reg(t)),
        "logical_not": lambda e, t, x: e.emit(f"icmp eq {reg(t)} {x}, 0", "i1"),
        "isnan": lambda e, t, x: "false", "isinf": lambda e, t, x: "false",
        "isfinite": lambda e, t, x: "true", "clip": _i_clip(s), "clip_scalar": _i_clip(s),
        "argbetter_max": _cmp(f"{s}gt"), "argbetter_min": _cmp(f"{s}lt"),
    }

# ----------------------------------------------------------------------------- bool rules


def _b(op):
    return lambda e, t, a, b: e.emit(f"{op} i1 {a}, {b}", "i1")


BOOL = {
    "add": _b("or"), "maximum": _b("or"), "fmax": _b("or"), "bitwise_or": _b("or"),
    "logical_or": _b("or"), "red_or": _b("or"), "red_max": _b("or"), "red_fmax": _b("or"),
    "red_max_nonan": _b("or"), "red_peak_max": _b("or"), "red_min_nonan": _b("and"), "red_peak_min": _b("and"),
    "multiply": _b("and"), "minimum": _b("and"), "fmin": _b("and"), "bitwise_and": _b("and"),
    "logical_and": _b("and"), "red_and": _b("and"), "red_min": _b("and"), "red_fmin": _b("and"),
    "bitwise_xor": _b("xor"), "logical_xor": _b("xor"), "not_equal": _b("xor"),
    "equal": lambda e, t, a, b: _not(e, e.emit(f"xor i1 {a}, {b}", "i1")),
    "less": lambda e, t, a, b: _and(e, _not(e, a), b),
    "less_equal": lambda e, t, a, b: _or(e, _not(e, a), b),
    "greater": lambda e, t, a, b: _and(e, a, _not(e, b)),
    "greater_equal": lambda e, t, a, b: _or(e, a, _not(e, b)),
    "logical_not": lambda e, t, x: _not(e, x), "invert": lambda e, t, x: _not(e, x),
    "isnan": lambda e, t, x: "false", "isinf": lambda e, t, x: "false",
    "isfinite": lambda e, t, x: "true",
    "clip": lambda e, t, x, lo, hi: _and(e, _or(e, x, lo), hi),
    "clip_scalar": lambda e, t, x, lo, hi: _and(e, _or(e, x, lo), hi),
    "argbetter_max": lambda e, t, x, best: _and(e, x, _not(e, best)),
    "argbetter_min": lambda e, t, x, best: _and(e, _not(e, x), best),
}

RULES = {"f": FLOAT,
         "i": {**_integer(True), "sort_vec": _i_sort_vec(True), "sort_pick": _i_sort_pick,
               "gather_pos": _i_gather_pos(True)},
         "u": {**_integer(False), "sort_vec": _i_sort_vec(False), "sort_pick": _i_sort_pick,
               "gather_pos": _i_gather_pos(False)},
         "b": BOOL, "c": COMPLEX}
