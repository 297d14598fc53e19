"""Reductions as accumulator phases: one pass per phase over the reduced dims, per outer index.

A reduction node over input x keeps some dims (the kernel's outer loops) and reduces the
rest (a phase's inner loops). Each kind is a rule: its accumulators, the update per
element and the result after the loop, with NumPy's dtypes:

  sum/prod    acc in the result dtype (NumPy's accumulator dtype), elements cast to it
  max/min     NaN-propagating, identity -inf/+inf or the int limits; floats as a `nnan` max
              (vmaxpd) over NaN-masked elements and a separate "NaN seen" flag (_nan_apart);
              nanmax/nanmin the same max and a "non-NaN seen" flag (_nan_skipping); the sign
              of a zero result is decided after the loop, by a second pass over the reduced
              elements that runs only when the result is a zero (_zero_sign_phase)
  any/all     or/and of `x != 0`
  mean        sum / count in the result dtype
  var/std     two passes (NumPy's algorithm): mean, then sum((x - mean)**2) / max(n - ddof, 0)
  argmax/min  NumPy's rules (first maximum, first NaN wins) in two vectorised passes: the
              extreme m (NaN-propagating), then the least index k with x[k] == m or x[k] NaN
              (NaN only occurs when m is NaN; -0.0 == 0.0, so the first zero of either sign);
              bool: one pass of (best, index) selects

Float sums (sum, mean, var/std) over one axis that is the input's last (after dropping axes
of static size 1: a 1-d array, `x.sum(axis=-1)`, an (n, 1) column), whose input already has the
accumulator dtype, run in NumPy's own order, bit for bit (`Phase.pairwise`: the phase's loop
adds up its iterations as NumPy's pairwise_sum does, codegen/llvm_kernels/pairwise.py): a
float32 sum is a float32 sum, as NumPy's. This is NumPy's order when the reduced axis is the
one NumPy's iterator runs innermost: C-ordered, sliced and negative-stride inputs (a 1-d array
always). An F-ordered or transposed input reduced along its last axis is summed sequentially
per row by NumPy: ours then still differs by rounding.
Other float sums and products are reassociated (`fadd reassoc`) so they vectorise: results
differ from NumPy's by rounding only. There (a cast to the accumulator: `sum(dtype=)`, an int
mean, which NumPy sums in buffers of 8192 elements; several reduced axes) float32 sums, means
and var/std accumulate in float64 (`_ACC_DTYPE`) and round once at the end: a register
accumulator does not always vectorise (fused with argmin/argmax the loop stays scalar), and a
scalar float32 running sum over 2e6 elements is ~500x less accurate than NumPy's pairwise sum;
in float64 the result is within one float32 rounding of the exact sum, so it differs from
NumPy's by at most NumPy's own error (relative ~1e-7 x log2(n) for float32; ~1e-15 for float64
in typical cases). Tolerance the tests use: rtol 1e-5 for float32, 1e-10 for float64.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy

from ..ir import ops as _registered  # noqa: F401  (registers every op the tables below read)
from ..ir.graph import Node
from ..ir.registry import Reduction, lowered_as
from .loop_ir import Acc, Affine, Const, Op, Update, Var, cast
from .pointwise import kind
from . import arg_reductions
from .phase_values import limits, phase_let

# argmax / argmin of numbers: one pass over blocks, then one block (arg_reductions.py); False:
# the two whole passes below (_arg_two_pass)
ARG_BLOCKED = True


@dataclass
class Phase:
    """One loop nest inside the outer loops: `pre`, loops over `extents` running `body`, `post`."""
    extents: tuple
    vars: tuple
    pre: list = field(default_factory=list)
    body: list = field(default_factory=list)
    post: list = field(default_factory=list)
    defines: set = field(default_factory=set)    # Let names the post defines
    splittable: bool = False                     # stores only: may be cut into thread chunks
    pairwise: bool = False                       # one loop whose float sums take NumPy's order
    guard: object = None                         # bool expression: run the loops only when it holds


def red_axes(node: Node) -> tuple:
    x = node.args[0]
    axis = node.attr("axis")
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    # ascending and non-negative: loop nests and index maps walk the reduced dims in order
    return tuple(sorted(a % x.ndim if x.ndim else a for a in axes))


def kept_dims(node: Node) -> tuple:
    axes = red_axes(node)
    return tuple(d for d in range(node.args[0].ndim) if d not in axes)


def result_index(node: Node, outer_idx: tuple) -> tuple:
    """Index into the reduction's result for the outer (kept-dim) index."""
    if not node.attr("keepdims"):
        return outer_idx
    axes, it = red_axes(node), iter(outer_idx)
    return tuple(Affine() if d in axes else next(it) for d in range(node.args[0].ndim))


def outer_of_result(node: Node, idx: tuple) -> tuple:
    """Inverse of result_index: the kept-dim entries of an index into the result."""
    if not node.attr("keepdims"):
        return idx
    axes = red_axes(node)
    return tuple(i for d, i in enumerate(idx) if d not in axes)


def count_expr(node: Node):
    """Number of reduced elements per result element (int or sympy)."""
    n = 1
    for d in red_axes(node):
        n = n * node.args[0].shape[d]
    return n


_limits = limits


# a reduction's identity (registry.Reduction.identity) in accumulator dtype dt; one line each
IDENTITY = {
    "zero": lambda dt: False if kind(dt) == "b" else 0,
    "one": lambda dt: True if kind(dt) == "b" else 1,
    "lowest": lambda dt: _limits(dt)[0],
    "highest": lambda dt: _limits(dt)[1],
    "nan_lowest": lambda dt: float("nan") if kind(dt) == "f" else _limits(dt)[0],    # fmax(NaN, x) = x
    "nan_highest": lambda dt: float("nan") if kind(dt) == "f" else _limits(dt)[1],
}
# name -> (combine op, identity(dtype)) of the reductions with a register accumulator
# (mean: sum's, then a division; registry: ir/ops/reductions.py)
SIMPLE = {n: (r.combiner, IDENTITY[r.identity]) for n, r in lowered_as(Reduction).items()
          if r.combiner is not None}
_BOOL_COMBINE = {"red_add": "red_or", "red_mul": "red_and", "red_max": "red_or", "red_min": "red_and",
                 "red_fmax": "red_or", "red_fmin": "red_and"}


# NaN-skipping float extremes (nanmax, fmax.reduce) -> the combiner and identity they run as,
# over the elements with NaN replaced by the identity (_nan_skipping)
_NAN_SKIPPING = {"red_fmax": ("red_max_nonan", "lowest"), "red_fmin": ("red_min_nonan", "highest")}
# NaN-propagating float extremes -> the combiner they run as: a `nnan` max (one vmaxpd per
# vector, ~2.5x faster than llvm.maximum's expansion) with NaN tracked in a bool accumulator.
# The elements reach the max unmasked (_nan_apart mask=False): replacing NaN by the identity
# first (a compare and a blend per vector) made a row max of a 4096x1024 float64 matrix
# 0.88x NumPy's speed on one thread, unmasked 1.02x. The price: vmaxpd sets "invalid" on a
# NaN, so a kernel that also reads the status register for other work hands a call whose
# data hold a NaN to NumPy (same results, NumPy's time); a max alone never reads it.
_NAN_APART = {"red_max": "red_max_nonan", "red_min": "red_min_nonan"}


# accumulator dtype of a sum-like reduction whose result dtype is the key (see module doc)
_ACC_DTYPE = {"float32": "float64"}


def _const(v, dt):
    if kind(dt) == "f":
        return Const(float(v), dt)
    return Const(bool(v) if kind(dt) == "b" else int(v), dt)


def _accumulate(b, name, dt, combine, value, phase, identity):
    acc = b.fresh(name)
    if kind(dt) == "b":
        combine = _BOOL_COMBINE.get(combine, combine)
    phase.pre.append(Acc(acc, dt, _const(identity, dt)))
    phase.body.append(Update(acc, Op(combine, dt, (Var(acc, dt), cast(value, dt)))))
    return Var(acc, dt)


def _nan_skipping(b, op, dt, combine, element, phase, extents):
    """A NaN-skipping extreme: the extreme of the non-NaN elements (identity substituted for a
    NaN), and NaN when no element is not NaN. Returns (phases, its value)."""
    combine, identity = _NAN_SKIPPING[combine]
    fill = IDENTITY[identity](dt)
    v = element(phase)
    isnan = Op("isnan", "bool", (v,))
    acc = _accumulate(b, op, dt, combine, Op("mask_nan", dt, (v, _const(fill, dt))), phase, fill)
    seen = _accumulate(b, "seen", "bool", "red_or", Op("logical_not", "bool", (isnan,)), phase, False)
    m = _let(b, phase, acc, "m")
    z, signed = _zero_sign_phase(b, dt, m, seen, element, extents)
    return [phase, z], _let(b, z, Op("where", dt, (seen, signed, Const(float("nan"), dt))))


def _nan_apart(b, op, dt, combine, v, phase, identity, mask=True):
    """A NaN-propagating extreme: a `nnan` combiner over the elements with NaN replaced by the
    identity (the max never sees a NaN: no poison, and no "invalid" from vmaxpd in the status
    register a kernel may read), and whether a NaN came by (returned: the bool accumulator).
    mask=False (argmax's first pass: ~10% faster): NaN elements reach the combiner and make its
    value poison, which the caller's select on the NaN flag discards; vmaxpd then sets
    "invalid" on a NaN, a spurious "ask NumPy" in a kernel that reads the status register."""
    isnan = Op("isnan", "bool", (v,))
    x = Op("mask_nan", dt, (v, _const(identity, dt))) if mask else v
    acc = _accumulate(b, op, dt, combine, x, phase, identity)
    return acc, _accumulate(b, "nan", "bool", "red_or", isnan, phase, False)


def _zero_sign_phase(b, dt, m, ok, element, extents, m_poison=False):
    """(phase, value): `m`, the `nsz` extreme of a float max / min (a zero of either sign when
    the extreme is a zero), made a zero of the sign NumPy returns. A zero result is rare, so
    the signs are not tracked in the hot loop: a second pass over the reduced elements runs
    only when `ok` (the result is m, not NaN) and m is a zero, and records which zero signs
    occur (fix_zero_sign: both -> NumPy redoes the call, fpflags.ZERO_SIGNS)."""
    z = b.new_phase(extents)
    # (x == 0 as logical_not: a quiet compare, no "maybe invalid" for the FP flag analysis)
    # (m_poison: m may be poison where `ok` is false: a select, not an `and`, which would be poison)
    z.guard = Op("where", "bool", (ok, Op("logical_not", "bool", (m,)), Const(False, "bool"))) if m_poison \
        else Op("logical_and", "bool", (ok, Op("logical_not", "bool", (m,))))
    v = element(z)
    zero = Op("logical_not", "bool", (v,))
    sign = Op("signbit", "bool", (v,))
    neg = _accumulate(b, "zneg", "bool", "red_or", Op("logical_and", "bool", (zero, sign)), z, False)
    pos = _accumulate(b, "zpos", "bool", "red_or",
                      Op("logical_and", "bool", (zero, Op("logical_not", "bool", (sign,)))), z, False)
    return z, Op("fix_zero_sign", dt, (m, neg, pos))


_let = phase_let


def divisor(b, node: Node, dt: str, ddof=0):
    """max(n - ddof, 0) as a `dt` value, n the count of reduced elements; a float ddof (NumPy
    accepts 2.5) is subtracted in floating point."""
    n = count_expr(node)
    if float(ddof).is_integer():
        if ddof:
            n = sympy.Max(sympy.sympify(n) - int(ddof), 0)
        return cast(b.size(n), dt)
    diff = Op("subtract", dt, (cast(b.size(n), dt), Const(float(ddof), dt)))
    return Op("maximum", dt, (diff, Const(0.0, dt)))


def _static_one(e) -> bool:
    return isinstance(e, (int, sympy.Integer)) and int(e) == 1


def pairwise_axis(node: Node):
    """The one axis a float sum-like reduction adds up in NumPy's pairwise order (module doc),
    or None. NumPy drops axes of size 1, then runs its pairwise sum along the innermost axis
    when that is the reduced one; a cast to the accumulator (sum(dtype=), int means) goes
    through buffers of 8192 elements, summed one by one: not this order."""
    x = node.args[0]
    if node.op not in ("sum", "mean", "var", "std") or node.dtype.name not in ("float32", "float64") \
            or x.dtype.name != node.dtype.name:
        return None
    axes = [d for d in red_axes(node) if not _static_one(x.shape[d])]
    if len(axes) != 1 or not all(_static_one(x.shape[d]) for d in range(axes[0] + 1, x.ndim)):
        return None
    return axes[0]


def reduction_phases(b, node: Node, outer_vars: tuple) -> tuple[list, Var]:
    """The phases computing `node` at the current outer index, and the Var of its value.

    `b` is the kernel builder: b.fresh(prefix) names, b.new_phase(extents) opens a phase
    (reusing the previous phase's loop vars when the extents match), b.value(x, idx)
    builds an operand's expression, b.size(expr) an extent/count expression.
    """
    x, op, dt = node.args[0], node.op, node.dtype.name
    axes = red_axes(node)
    pw = pairwise_axis(node)
    looped = axes if pw is None else (pw,)       # (the reduced axes of size 1 read at 0)
    extents = tuple(x.shape[d] for d in looped)

    def element(phase):
        it_outer, it_inner = iter(outer_vars), iter(phase.vars)
        idx = tuple(Affine.var(next(it_inner)) if d in looped else Affine() if d in axes
                    else Affine.var(next(it_outer)) for d in range(x.ndim))
        return b.value(x, idx)

    def count(minus=0):
        return divisor(b, node, dt, minus)

    p = b.new_phase(extents)
    p.pairwise = pw is not None
    # float32 sums accumulate in float64, but in NumPy's order, where they are float32 as NumPy's
    wide = dt if p.pairwise else _ACC_DTYPE.get(dt, dt)
    if op in SIMPLE:
        combine, identity = SIMPLE[op]
        if combine in _NAN_SKIPPING and kind(dt) == "f":
            return _nan_skipping(b, op, dt, combine, element, p, extents)
        if combine in _NAN_APART and kind(dt) == "f":
            acc, nan = _nan_apart(b, op, dt, _NAN_APART[combine], element(p), p, identity(dt), mask=False)
            m = _let(b, p, acc, "m")            # poison when a NaN came by: read only under `not nan`
            z, signed = _zero_sign_phase(b, dt, m, Op("logical_not", "bool", (nan,)), element, extents,
                                         m_poison=True)
            return [p, z], _let(b, z, Op("where", dt, (nan, Const(float("nan"), dt), signed)))
        v = element(p)
        if op in ("any", "all"):
            v = cast(v, "bool")
        adt = wide if op in ("sum", "mean") else dt
        acc = _accumulate(b, op, adt, combine, cast(v, dt), p, identity(adt))
        if op == "mean":                         # NumPy: float32 sum / count in float32
            return [p], _let(b, p, Op("true_divide", dt, (cast(acc, dt), count())))
        return [p], _let(b, p, cast(acc, dt))
    if op in ("var", "std"):
        s = _accumulate(b, "sum", wide, "red_add", cast(element(p), dt), p, 0)
        mean = _let(b, p, Op("true_divide", wide, (s, divisor(b, node, wide))), "mean")
        q = b.new_phase(extents)
        q.pairwise = p.pairwise
        d = Op("subtract", wide, (cast(cast(element(q), dt), wide), mean))
        ss = _accumulate(b, "ssq", wide, "red_add", Op("multiply", wide, (d, d)), q, 0)
        var = Op("true_divide", wide, (ss, divisor(b, node, wide, node.attr("ddof") or 0)))
        return [p, q], _let(b, q, cast(Op("sqrt", wide, (var,)) if op == "std" else var, dt))
    if op in ("argmax", "argmin"):
        if kind(x.dtype.name) == "b":
            return _arg_select(b, op, x.dtype.name, element(p), p)
        if ARG_BLOCKED and arg_reductions.worth_blocking(extents):
            def at(red_index):
                it_outer, it_red = iter(outer_vars), iter(red_index)
                return b.value(x, tuple(next(it_red) if d in axes else Affine.var(next(it_outer))
                                        for d in range(x.ndim)))
            flat = Phase((), ())                # (its loops are its body: their work counted here)
            b.extra_work.append(sympy.Mul(*[sympy.sympify(d) for d in x.shape]))
            return [flat], arg_reductions.blocked(b, op, x.dtype.name, axes, extents, at, flat)
        return _arg_two_pass(b, op, x.dtype.name, element, p, b.new_phase(extents))
    raise NotImplementedError(op)


def _arg_select(b, op, xdt, v, p):
    """argmax / argmin in one pass of (best, index) selects: a loop-carried chain that stays
    scalar (bool inputs only, where the extreme is found in a few elements)."""
    lo, hi = _limits(xdt)
    best, bidx, k = b.fresh("best"), b.fresh("bidx"), b.fresh("k")
    p.pre += [Acc(best, xdt, _const(lo if op == "argmax" else hi, xdt)),
              Acc(bidx, "int64", Const(0, "int64")), Acc(k, "int64", Const(0, "int64"))]
    better = Op("argbetter_max" if op == "argmax" else "argbetter_min", "bool", (v, Var(best, xdt)))
    p.body += [Update(bidx, Op("where", "int64", (better, Var(k, "int64"), Var(bidx, "int64")))),
               Update(best, Op("where", xdt, (better, v, Var(best, xdt)))),
               Update(k, Op("add", "int64", (Var(k, "int64"), Const(1, "int64"))))]
    return [p], _let(b, p, Var(bidx, "int64"), "arg")


def _arg_two_pass(b, op, xdt, element, p, q):
    """argmax / argmin as two reductions LLVM vectorises (module doc): a NaN-propagating extreme
    in phase p, then in phase q the least flat index whose element equals it (or is NaN)."""
    lo, hi = _limits(xdt)
    peak = "red_peak_max" if op == "argmax" else "red_peak_min"
    ident = lo if op == "argmax" else hi
    if kind(xdt) == "f":         # the first NaN's index when a NaN came by: no zero signs needed
        acc, nan = _nan_apart(b, "peak", xdt, peak, element(p), p, ident, mask=False)
        m = _let(b, p, Op("where", xdt, (nan, Const(float("nan"), xdt), acc)), "peak")
    else:
        m = _let(b, p, _accumulate(b, "peak", xdt, peak, element(p), p, ident), "peak")
    k = b.fresh("k")
    q.pre.append(Acc(k, "int64", Const(0, "int64")))
    v = element(q)
    hit = Op("equal", "bool", (v, m))
    if kind(xdt) == "f":
        hit = Op("logical_or", "bool", (hit, Op("isnan", "bool", (v,))))
    last = int(np.iinfo(np.int64).max)
    idx = _accumulate(b, "first", "int64", "red_min", Op("where", "int64", (hit, Var(k, "int64"),
                                                                           Const(last, "int64"))), q, last)
    q.body.append(Update(k, Op("add", "int64", (Var(k, "int64"), Const(1, "int64")))))
    return [p, q], _let(b, q, idx, "arg")
