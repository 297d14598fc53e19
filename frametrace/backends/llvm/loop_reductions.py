"""Reductions of small arrays in native loop bodies (the loop-nest builder's, loops.py):
`sum` / `prod` / `mean` of a body array (a slice moving with the loop indices, an elementwise
result), and of a boolean selection of one, `x[mask].mean()` with `mask` computed in the body
(`np.logical_and(r1 <= radius, radius < r2)`), without materialising the mask or the
selection: one loop over x's extents accumulates `where(mask, x, 0)` (and, for a mean, the
count of true elements), so no mask array, no gather, no allocation per iteration.

    sum / prod (x)          acc = identity; for p: acc = red(acc, x[p])
    sum / prod (x[mask])    acc = identity; for p: acc = red(acc, where(mask[p], x[p], identity))
    mean (x), mean(x[mask]) the sum as above and cnt += mask[p] (1 for x), then sum / cnt

The mean's division is NumPy's (numpy/_core/_methods.py _mean): the sum (float64 for integer
and bool inputs, float32 summed in float64 and rounded once for float32) divided by the count
in the result's dtype. A mean over nothing (an empty selection) is NumPy's business: the
count is a checked op (`checked_range(cnt, 1, ...)`, codegen/llvm_kernels/checked.py), so
that iteration and the rest of the loop run on the generic path, where NumPy warns "Mean of
empty slice", then "invalid value encountered in scalar divide", and returns nan.

Float sums are reassociated (`red_add`: vectorised) within README's reduction tolerance, as
the whole-array reductions are; integer ones wrap as NumPy's.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.graph import Node
from ...lower.loop_ir import Acc, Affine, Const, Op, Update, Var, cast
from .loop_arrays import ArrayVal, _nest, _same

_REDUCERS = {"sum": ("red_add", "add", 0), "prod": ("red_mul", "multiply", 1), "mean": ("red_add", "add", 0)}
INT64_MAX = (1 << 63) - 1


@dataclass(eq=False)
class MaskedVal:
    """x[mask] (mask of x's shape) in a loop body: only ever reduced, never materialised."""
    arr: ArrayVal
    mask: ArrayVal


class ReductionBody:
    """The builder's reductions (mixed into loops._Builder with loop_arrays.ArrayBody)."""

    def masked_array(self, n: Node) -> None:
        """mask_select(x, mask): a MaskedVal when mask has x's shape (a reduction must follow)."""
        x, mask = (self.array_of(a) for a in n.args[:2])
        if x is None or mask is None:
            raise self.NotNative("a boolean selection of a scalar")
        if n.args[1].dtype.kind != "b" or len(mask.dims) != len(x.dims) or \
                not all(_same(a, b) for a, b in zip(mask.dims, x.dims)):
            raise self.NotNative("a boolean selection whose mask is not of its array's shape")
        self.env[n] = MaskedVal(x, mask)

    def reduce_array(self, n: Node) -> list:
        """sum / prod / mean of a whole body array or of a boolean selection of one."""
        value = self.env.get(n.args[0]) if isinstance(n.args[0], Node) else None
        masked = value if isinstance(value, MaskedVal) else None
        arr = masked.arr if masked is not None else self.array_of(n.args[0])
        axis = n.attr("axis")
        if arr is None or n.shape != () or (axis is not None and tuple(sorted(
                (axis,) if isinstance(axis, int) else axis)) != tuple(range(len(arr.shape)))) or \
                any(n.attr(k) is not None for k in ("initial", "where", "out")):
            raise self.NotNative(f"{n.op} other than of a whole array")
        dt = n.dtype.name
        if n.op in ("max", "min"):
            if masked is not None:
                raise self.NotNative(f"{n.op} of a boolean selection")
            return self._extreme(n, arr)
        if n.dtype.kind not in "iuf" or n.op == "mean" and (n.attr("dtype") is not None or
                                                              dt not in ("float32", "float64")):
            raise self.NotNative(f"{n.op} of {dt}")
        red_f, red_i, identity = _REDUCERS[n.op]
        name, acc_dt = self._acc(dt)
        vars_ = [self._loop_var() for _ in arr.shape]
        idx = tuple(Affine.var(v) for v in vars_)
        x = cast(self.element(arr, idx), acc_dt)
        keep = cast(self.element(masked.mask, idx), "bool") if masked is not None else None
        if keep is not None:
            x = Op("where", acc_dt, (keep, x, Const(identity, acc_dt)))
        body = [Update(name, Op(red_f if acc_dt[0] == "f" else red_i, acc_dt, (Var(name, acc_dt), x)))]
        stmts = [Acc(name, acc_dt, Const(identity, acc_dt))]
        if n.op != "mean":
            return self._take_checks() + stmts + _nest(vars_, arr.shape, body) + \
                self._let(n, cast(Var(name, acc_dt), dt))
        cnt, _ = self._acc("int64")
        one = cast(keep, "int64") if keep is not None else Const(1, "int64")
        body.append(Update(cnt, Op("add", "int64", (Var(cnt, "int64"), one))))
        stmts.append(Acc(cnt, "int64", Const(0, "int64")))
        pre = self._take_checks()
        stmts += _nest(vars_, arr.shape, body)
        count = self._checked_let(self.checked("checked_range", (Var(cnt, "int64"), Const(1, "int64"),
                                                                  Const(INT64_MAX, "int64"))))
        total = cast(Var(name, acc_dt), dt)
        mean = Op("true_divide", dt, (total, cast(count, dt)))
        return pre + stmts + self._take_checks() + self._let(n, mean)

    def _extreme(self, n: Node, arr: ArrayVal) -> list:
        """max / min of a whole body array (`v[p[i]:p[i + 1]].max()`): NumPy's `maximum` /
        `minimum` folded in element order from -inf / +inf (the integer type's bound), so a NaN
        anywhere is the result. An empty array leaves the kernel (a checked op on its extents,
        which read nothing the iteration writes: that iteration and the rest of the loop run on
        the generic path, where NumPy raises its ValueError). A float zero takes the sign its
        zeros had; with both signs, which one NumPy returns depends on its SIMD order, so the
        call is NumPy's (fix_zero_sign: fp_errors.py, "Signed zeros")."""
        dt = n.dtype.name
        if n.dtype.kind not in "iuf":
            raise self.NotNative(f"{n.op} of {dt}")
        top = n.op == "max"
        if n.dtype.kind == "f":
            start = Const(float("-inf") if top else float("inf"), dt)
        else:
            info = np.iinfo(dt)
            start = Const(int(info.min if top else info.max), dt)
        extents = list(arr.shape)
        smallest = extents[0] if extents else Const(1, "int64")
        for e in extents[1:]:
            smallest = Op("minimum", "int64", (smallest, e))
        self._checked_let(self.checked("checked_range", (cast(smallest, "int64"), Const(1, "int64"),
                                                          Const(INT64_MAX, "int64"))))
        name = f"r{self.lets}"
        self.lets += 1
        vars_ = [self._loop_var() for _ in arr.shape]
        x = cast(self.element(arr, tuple(Affine.var(v) for v in vars_)), dt)
        body = [Update(name, Op("maximum" if top else "minimum", dt, (x, Var(name, dt))))]
        stmts = [Acc(name, dt, start)]
        signs = []
        if n.dtype.kind == "f":                  # which signs of zero occur
            zero = Op("equal", "bool", (x, Const(0.0, dt)))
            neg = Op("signbit", "bool", (x,))
            for sign, cond in (("m", Op("logical_and", "bool", (zero, neg))),
                               ("p", Op("logical_and", "bool", (zero, Op("logical_not", "bool", (neg,)))))):
                zname = f"{name}_{sign}"
                stmts.append(Acc(zname, "int64", Const(0, "int64")))
                body.append(Update(zname, Op("maximum", "int64", (Var(zname, "int64"), cast(cond, "int64")))))
                signs.append(Var(zname, "int64"))
        out = self._take_checks() + stmts + _nest(vars_, arr.shape, body)
        value = Var(name, dt)
        if signs:
            is_zero = Op("equal", "bool", (value, Const(0.0, dt)))
            neg, pos = (Op("logical_and", "bool", (is_zero, cast(z, "bool"))) for z in signs)
            value = Op("fix_zero_sign", dt, (value, neg, pos))
        return out + self._let(n, value)


__all__ = ["MaskedVal", "ReductionBody"]
