"""Kernels that accumulate in memory rather than in registers.

reductions_in_place: reductions that keep the innermost dim (x.sum(axis=0)) update their
result row by row, vectorised along the kept dim, in NumPy's own order (exact for sums):
    sum/prod/max/min/any/all   out = identity; out[kept] = combine(out[kept], x)
    mean                       ... then out /= count
    var/std                    mean into a scratch array, then a second pass of squares
    argmax/argmin              best values in a scratch array, indices in out
scan: cumsum/cumprod, a running accumulator along the last axis, or row by row
(out[i + 1] = out[i] + x[i + 1]) along an earlier one.
`b` is the KernelBuilder (kernels.py).
"""
from __future__ import annotations

import sympy

from ..ir.graph import Node
from ..ir.registry import Reduction, Scan, lowered_as
from .loop_ir import Acc, Affine, Const, Load, Op, Store, Update, Var, cast
from .pointwise import kind
from .reductions import SIMPLE, _limits, count_expr, divisor, red_axes, result_index

# reduction -> the elementwise op updating its result in memory (registry.Reduction.rmw),
# for a non-bool and for a bool result
_RMW_COMBINE = {n: r.rmw for n, r in lowered_as(Reduction).items() if r.rmw is not None}
_RMW_BOOL = {n: r.rmw_bool or r.rmw for n, r in lowered_as(Reduction).items() if r.rmw is not None}
_SCAN_COMBINE = {n: s.combiner for n, s in lowered_as(Scan).items()}


def reductions_in_place(b, nodes: list):
    """Reductions keeping the inner dim, over the same axes of same-shaped inputs, as
    passes over x in C order that update the result in place (vectorised along the
    kept inner dim; NumPy's own order for sums):
      sum/prod/max/min/any/all   out = identity; out[kept] = combine(out[kept], x)
      mean                       ... then out /= count
      var/std                    mean into a scratch array, then a second pass of squares
      argmax/argmin              best values in a scratch array, indices in out
    The kernel's outer loops are the leading kept dims."""
    x0 = nodes[0].args[0]
    axes = red_axes(nodes[0])
    rest = list(range(b.L, x0.ndim))
    kept_rest = [d for d in rest if d not in axes]

    def phase(dims):
        ph = b.new_phase([x0.shape[d] for d in dims])
        full = dict(zip(range(b.L), b.outer_index(())))
        full.update({d: Affine.var(v) for d, v in zip(dims, ph.vars)})
        return ph, full
    passes = [[phase(kept_rest), phase(rest), phase(kept_rest)] for _ in range(2)]
    for node in nodes:
        _one(b, node, axes, passes)
    b.phases += [ph for p in passes for ph, _ in p if ph.body]

def _one(b, node: Node, axes, passes):
    x, dt, op = node.args[0], node.dtype.name, node.op
    out = b.buffer(node, written=True)
    (init, fi), (acc, fa), (fin, ff) = passes[0]

    def at(full):
        return result_index(node, tuple(full[d] for d in range(x.ndim) if d not in axes))

    def const(v, t):
        return Const(float(v) if kind(t) == "f" else v, t)
    xv = b.value(x, tuple(fa[d] for d in range(x.ndim)))
    if op in ("argmax", "argmin"):
        xdt = x.dtype.name
        best = b.scratch(node, xdt, "best")
        lo, hi = _limits(xdt)
        init.body += [Store(best, at(fi), const(lo if op == "argmax" else hi, xdt)),
                      Store(out, at(fi), Const(0, "int64"))]
        b = Load(best, at(fa), xdt)
        better = Op(f"argbetter_{op[3:]}", "bool", (xv, b))
        i = Op("affine", "int64", (fa[axes[0]],))
        acc.body += [Store(out, at(fa), Op("where", "int64", (better, i, Load(out, at(fa), "int64")))),
                     Store(best, at(fa), Op("where", xdt, (better, xv, b)))]
        return
    if op in ("var", "std"):
        mean = b.scratch(node, dt, "mean")
        count = cast(b.size(count_expr(node)), dt)
        init.body.append(Store(mean, at(fi), const(0, dt)))
        acc.body.append(Store(mean, at(fa), Op("add", dt, (Load(mean, at(fa), dt), cast(xv, dt)))))
        fin.body.append(Store(mean, at(ff), Op("true_divide", dt, (Load(mean, at(ff), dt), count))))
        (init2, fi2), (acc2, fa2), (fin2, ff2) = passes[1]
        xv2 = cast(b.value(x, tuple(fa2[d] for d in range(x.ndim))), dt)
        d = Op("subtract", dt, (xv2, Load(mean, at(fa2), dt)))
        init2.body.append(Store(out, at(fi2), const(0, dt)))
        acc2.body.append(Store(out, at(fa2), Op("add", dt, (Load(out, at(fa2), dt), Op("multiply", dt, (d, d))))))
        var = Op("true_divide", dt, (Load(out, at(ff2), dt), divisor(b, node, dt, node.attr("ddof") or 0)))
        fin2.body.append(Store(out, at(ff2), Op("sqrt", dt, (var,)) if op == "std" else var))
        return
    combine = (_RMW_BOOL if dt == "bool" else _RMW_COMBINE)[op]
    ident = SIMPLE[op][1](dt)
    init.body.append(Store(out, at(fi), const(ident, dt)))
    acc.body.append(Store(out, at(fa), Op(combine, dt, (Load(out, at(fa), dt), cast(xv, dt)))))
    if combine in _EXTREMA and kind(dt) == "f":
        _zero_signs(b, node, at, passes[0], xv, out, dt)
    if op == "mean":
        count = cast(b.size(count_expr(node)), dt)
        fin.body.append(Store(out, at(ff), Op("true_divide", dt, (Load(out, at(ff), dt), count))))



# the elementwise ops a float max / min / nanmax / nanmin accumulates with in memory
_EXTREMA = ("maximum", "minimum", "fmax", "fmin")


def _zero_signs(b, node, at, passes, xv, out, dt):
    """A float max / min kept in memory returns NumPy's zero: which of 0.0 and -0.0 NumPy keeps on
    a tie depends on its loop (np.fmin.reduce along axis 0 keeps the first, np.fmin of two
    arrays the second), so the signs of the zeros each result element saw are recorded (an int8
    per result: 1 for -0.0, 2 for +0.0), and a zero result takes the one sign it saw; with both
    it is ambiguous and NumPy redoes the call (fix_zero_sign, fpflags.ZERO_SIGNS)."""
    (init, fi), (acc, fa), (fin, ff) = passes
    zs = b.scratch(node, "int8", "zs")
    init.body.append(Store(zs, at(fi), Const(0, "int8")))
    sign = Op("where", "int8", (Op("signbit", "bool", (xv,)), Const(1, "int8"), Const(2, "int8")))
    seen = Op("where", "int8", (Op("logical_not", "bool", (xv,)), sign, Const(0, "int8")))
    acc.body.append(Store(zs, at(fa), Op("bitwise_or", "int8", (Load(zs, at(fa), "int8"), seen))))
    m, z = Load(out, at(ff), dt), Load(zs, at(ff), "int8")
    zero = Op("logical_not", "bool", (m,))

    def saw(bit):
        return Op("logical_and", "bool", (zero, Op("not_equal", "bool", (
            Op("bitwise_and", "int8", (z, Const(bit, "int8"))), Const(0, "int8")))))
    fin.body.append(Store(out, at(ff), Op("fix_zero_sign", dt, (m, saw(1), saw(2)))))


def scan(b, node: Node):
    x, axis, dt = node.args[0], node.attr("axis") or 0, node.dtype.name
    combine = _SCAN_COMBINE[node.op]
    out = b.buffer(node, written=True)
    n = x.shape[axis]
    if axis == x.ndim - 1:                   # running accumulator along the inner loop
        ph = b.new_phase((n,))
        idx = b.outer_index(ph.vars)
        acc = b.fresh("scan")
        ph.pre.append(Acc(acc, dt, Const(0 if combine == "add" else 1, dt) if kind(dt) != "f"
                          else Const(-0.0 if combine == "add" else 1.0, dt)))   # -0.0 + x is x, even -0.0
        if dt == "bool":
            combine = "logical_or" if combine == "add" else "logical_and"
            ph.pre[-1] = Acc(acc, dt, Const(combine == "logical_and", dt))
        ph.body += [Update(acc, Op(combine, dt, (Var(acc, dt), cast(b.value(x, idx), dt)))),
                    Store(out, idx, Var(acc, dt))]
        b.commit(ph)
        return
    rest = x.shape[axis + 1:]                # out[i+1, rest] = out[i, rest] + x[i+1, rest]
    first = b.new_phase((sympy.Min(n, 1) if not isinstance(n, int) else min(n, 1),) + rest)
    idx = b.outer_index(first.vars)
    first.body.append(Store(out, idx, cast(b.value(x, idx), dt)))
    b.phases.append(first)
    nxt = b.new_phase((sympy.Max(n - 1, 0) if not isinstance(n, int) else max(n - 1, 0),) + rest)
    idx = b.outer_index(nxt.vars)
    shifted = (idx[axis] + Affine(const=1),)
    nidx = idx[:axis] + shifted + idx[axis + 1:]
    if dt == "bool":
        combine = "logical_or" if combine == "add" else "logical_and"
    nxt.body.append(Store(out, nidx, Op(combine, dt, (Load(out, idx, dt),
                                                      cast(b.value(x, nidx), dt)))))
    b.phases.append(nxt)

# -- result ------------------------------------------------------------------------
