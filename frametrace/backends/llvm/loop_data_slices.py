"""Slices bounded by array data and integer gathers in native loop bodies (the loop-nest
builder's, loops.py): the compressed-row loops of sparse matrices and ragged arrays,

    for i in range(n):
        cols = A_col[A_row[i]:A_row[i + 1]]          # slice_by_values: bounds read in the body
        y[i] = A_val[A_row[i]:A_row[i + 1]] @ x[cols]  # take: a gather read inside the product
        seg[i] = vals[p[i]:p[i + 1]].sum()

become inner loops of the one loop kernel, as the slices moving with the loop indices do
(loop_arrays.py), with nothing materialised:

    x[lo:hi]    lets of the bounds clamped exactly as Python clamps a slice (a negative bound
                counts from the end once, then both are clipped to [0, len]), and of the
                length max(hi - lo, 0): the slice's unbacked size symbol (the tracer gives
                slices with equal bounds along equal lengths one symbol: ir/numpy_api/
                data_dependent.py) is that let wherever an extent names it; element k is
                read at lo + k (a DataLoad), at the time of use, as NumPy's view is
    x[idx]      element p reads x at idx[p], wrapped once if negative and bounds-checked
                (checked_index) where it is read: inside the dot product's or the sum's inner
                loop. It is a copy in NumPy, so it is refused when read after a write into x
                (loop_arrays._written_since)

An index out of bounds leaves the kernel (the iteration and the rest of the loop run on the
generic path, where NumPy raises its IndexError after the earlier iterations' writes), so no
write of the iteration may precede the check: a gather read after a write has its indices
checked by a loop of their own before that write (their bounds may read nothing the iteration
writes, else NotNative), and a write whose value gathers goes through a scratch buffer first
(loop_arrays.assign_array).
"""
from __future__ import annotations

import sympy

from ...ir.graph import Node
from ...lower.loop_ir import Affine, Const, DataLoad, Gather, Let, Load, Loop, Op, Var, cast
from .loop_arrays import ArrayVal
from .loop_call import NotNative

_I64 = "int64"


class DataBody:
    """Mixin of loops._Builder: needs env, lets, stored, checks, inner_checks, data_sizes,
    store_log and the builder's array_of / element / expr / affine."""

    # -- sizes ------------------------------------------------------------------------------------
    def data_extent(self, d):
        """An extent that names the unbacked size of a data-bounded slice (`u0`, `u0 - 1`,
        `Min(u0, n)`) as an int64 expression of its length let; None when it names none."""
        d = sympy.sympify(d)
        if not self.data_sizes or not (d.free_symbols & set(self.data_sizes)):
            return None
        return self._size_expr(d)

    def _size_expr(self, d):
        if d.is_Integer:
            return Const(int(d), _I64)
        if d in self.data_sizes:
            return self.data_sizes[d]
        if isinstance(d, (sympy.Min, sympy.Max, sympy.Add)):
            op = {sympy.Min: "minimum", sympy.Max: "maximum", sympy.Add: "add"}[type(d)]
            out = self._size_expr(d.args[0])
            for a in d.args[1:]:
                out = Op(op, _I64, (out, self._size_expr(a)))
            return out
        if isinstance(d, sympy.Mul):
            coef, rest = d.as_coeff_Mul()
            if coef.is_Integer:
                return Op("multiply", _I64, (Const(int(coef), _I64), self._size_expr(rest)))
        if d.free_symbols & set(self.data_sizes):
            raise NotNative(f"an extent {d} of a data-bounded slice")
        return Op("affine", _I64, (self.affine(d),))

    # -- for j in range(lo, hi) -------------------------------------------------------------------
    def data_range(self, stmts, start, stop, step):
        """An inner `for j in range(p[i], p[i + 1], step)` (step +-1): lets of its start and of
        its trip count, max(stop - start, 0) (or start - stop going down), as Python's range
        counts them (no clamping: a stop before the start is an empty range, a negative bound a
        plain int). The index `j` is the value start + step * k (loops._inner_loop)."""
        lo = self._named(stmts, self._range_bound(start))
        hi = self._range_bound(stop)
        span = Op("subtract", _I64, (hi, lo) if step == 1 else (lo, hi))
        return lo, self._named(stmts, Op("maximum", _I64, (span, Const(0, _I64))))

    def _range_bound(self, bound):
        if isinstance(bound, Node):
            if bound.shape != () or bound.dtype is None or bound.dtype.kind not in "iu" or bound.dtype.name == "uint64":
                raise NotNative(f"a range bound of dtype {bound.dtype}")         # (uint64: beyond int64)
            return cast(self.expr(bound), _I64)
        return Op("affine", _I64, (self.affine(bound) if isinstance(bound, sympy.Basic) else Affine(const=bound),))

    # -- x[lo:hi] ---------------------------------------------------------------------------------
    def data_slice_array(self, n: Node) -> list:
        """slice_by_values(x, start, stop): lets of the clamped bounds and the length."""
        x, start, stop = n.args[:3]
        axis, size = n.attr("axis"), n.attr("size")
        base = self.array_of(x)
        if base is None:
            raise NotNative("a data-bounded slice of a scalar")
        stmts = []
        extent = self._named(stmts, base.shape[axis])
        lo = self._clamped(stmts, start, extent, Const(0, _I64))
        hi = self._clamped(stmts, stop, extent, extent)
        length = self._named(stmts, Op("maximum", _I64, (Op("subtract", _I64, (hi, lo)), Const(0, _I64))))
        self.data_sizes[sympy.sympify(size)] = length

        def at(idx):
            return self.at_position(base, axis, Op("add", _I64, (lo, Op("affine", _I64, (idx[axis],)))), idx)
        shape = base.shape[:axis] + (length,) + base.shape[axis + 1:]
        self.env[n] = ArrayVal(shape, n.shape, at, base.dtype, None, base.epoch)
        return stmts

    def _clamped(self, stmts, bound, extent, default):
        """A slice bound as Python clamps it for a step of 1 (PySlice_AdjustIndices)."""
        if bound is None:
            return default
        if isinstance(bound, Node) and (bound.dtype is None or bound.dtype.kind not in "iu" or
                                        bound.dtype.name == "uint64" or bound.shape != ()):
            raise NotNative(f"a slice bound of dtype {bound.dtype}")        # NumPy's TypeError, or > int64
        e = self.expr(bound)
        if e is None:
            if isinstance(bound, bool) or not isinstance(bound, int):
                raise NotNative(f"a slice bound {bound!r}")
            e = Const(int(bound), _I64)
        e = cast(e, _I64)
        wrapped = Op("maximum", _I64, (Op("add", _I64, (e, extent)), Const(0, _I64)))
        clipped = Op("minimum", _I64, (e, extent))
        neg = Op("less", "bool", (e, Const(0, _I64)))
        return self._named(stmts, Op("where", _I64, (neg, wrapped, clipped)))

    def _named(self, stmts, value):
        if isinstance(value, (Const, Var)):
            return value
        name = f"t{self.lets}"
        self.lets += 1
        if not self.depth and self._free(value):
            self.free.add(name)
        stmts.append(Let(name, value))
        return Var(name, value.dtype)

    def at_position(self, base: ArrayVal, axis: int, pos, idx):
        """The element of `base` at data position `pos` (an int64 expression, in bounds) along
        `axis` and at the affine `idx` elsewhere: a DataLoad of the buffer base views."""
        probe = Affine.var("_data")
        e0 = base.at(idx[:axis] + (Affine(),) + tuple(idx[axis + 1:]))
        e1 = base.at(idx[:axis] + (probe,) + tuple(idx[axis + 1:]))
        if not (isinstance(e0, Load) and isinstance(e1, Load)) or isinstance(e0, Gather) or \
                isinstance(e1, Gather) or e0.buf != e1.buf:
            raise NotNative("a data-bounded slice or a gather of a computed array")
        moved = []
        for d, a in enumerate(e1.index):
            c = a.coef("_data")
            if c:
                moved.append((d, pos if c == 1 else Op("multiply", _I64, (pos, Const(c, _I64)))))
        before = e0.pos if isinstance(e0, DataLoad) else ()
        return DataLoad(e0.buf, e0.index, e0.dtype, before + tuple(moved))

    # -- x[idx] -----------------------------------------------------------------------------------
    def gather_array(self, n: Node) -> None:
        """take(x, idx) with an integer index array `idx` of the body: read lazily, each
        element's index checked where it is read."""
        x, index = n.args[:2]
        xa, ia = self.array_of(x), self.array_of(index)
        if xa is None or ia is None:
            raise NotNative("a gather of a scalar")
        if index.dtype.kind not in "iu" or index.dtype.name == "uint64":
            raise NotNative(f"a gather by {index.dtype} indices")
        k = len(ia.shape)
        extent = xa.shape[0]

        def at(p):
            value = cast(self.element(ia, tuple(p[:k])), _I64)
            if self.stored:                   # checked before the iteration's first write instead
                self._prechecked(n, ia, extent)
                wrapped = Op("add", _I64, (value, extent))
                pos = Op("where", _I64, (Op("less", "bool", (value, Const(0, _I64))), wrapped, value))
            else:
                pos = self.inline_checked("checked_index", (value, extent))
            return self.at_position(xa, 0, pos, (Affine(),) + tuple(p[k:]))
        epochs = [e for e in (xa.epoch, ia.epoch) if e is not None]
        self.env[n] = ArrayVal(tuple(ia.shape) + tuple(xa.shape[1:]), n.shape, at, xa.dtype, None,
                               min(epochs + [len(self.store_log)]))

    def _prechecked(self, n: Node, ia: ArrayVal, extent) -> None:
        """The indices of gather `n`, read after a write of the iteration, checked by a loop of
        their own placed before that write (loops._hoist: after the lets it reads, which must
        read nothing the iteration writes), so that the gather itself cannot leave the kernel."""
        if n in self.prechecks:
            return
        if self.depth or len(ia.shape) != 1:
            raise NotNative("a gather after a write in the same iteration, in an inner loop or by a 2-d index")
        var = self._loop_var()
        chk = Op("checked_index", _I64, (cast(ia.at((Affine.var(var),)), _I64), extent))
        if not (self._free(chk) and self._free(ia.shape[0])):
            raise NotNative("a gather after a write in the same iteration, its indices depend on that write")
        name = f"t{self.lets}"
        self.lets += 1
        self.checks += 1
        self.prechecks[n] = Loop(var, ia.shape[0], [Let(name, chk)])

    def inline_checked(self, op: str, args) -> Op:
        """A checked op evaluated where its value is used (inside an inner loop): it may leave
        the kernel, so no write of the iteration may precede it."""
        if self.stored:
            raise NotNative(f"{op} inside an inner loop after a write in the same iteration")
        self.checks += 1
        self.inner_checks += 1
        return Op(op, _I64, tuple(args))


__all__ = ["DataBody"]
