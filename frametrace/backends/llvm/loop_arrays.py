"""Small arrays in native loop bodies: slices whose bounds move with the loop indices
(`A[i, :j]`, `A[:j, j]`, `np.flip(y[:k])`), their elementwise arithmetic, dot products and
sums of them, and writes into them (`y[:k] += alpha * np.flip(y[:k])`, `C[i, :i + 1] *= beta`)
become inner loops of the native loop kernel (loops.py): no kernel launch, allocation or
Python step per iteration.

An array value of the body is an `ArrayVal`: its extents (affine in the loop indices and
sizes) and a function from an index to the scalar expression of the element there. Nothing
is materialised where it is defined; the value is read where it is used:

    a view of a captured array   a load through its index map, at the time of use (NumPy's
                                 views see every write made before the use)
    an elementwise result        the op applied to its operands' elements; it must see the
                                 arrays as they were where it was computed, so it is refused
                                 (NotNative) when an array it reads was written in between
    dot(a, b), a @ b (1-d)       an accumulator and a loop over the common extent
    sum / prod / mean, x[mask]   an accumulator and a loop nest (loop_reductions.py)
    dst[...] = src, dst op= src  a loop nest of stores

A write whose value reads the destination array at other positions (`y[:k] = y[:k][::-1]`)
computes every value into a scratch buffer first, then copies (NumPy evaluates the right-hand
side before it writes); the scratch buffer is allocated once per call, as large as the
destination's base array.

Float dot products (`red_muladd`: one fused multiply-add per element) and sums (`red_add`) are
reassociated so they vectorise, within the tolerance
README's "What 'same result as NumPy' means" states; float32 accumulates in float64 and rounds
once. Integer ones wrap as NumPy's do.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy

from ...ir.graph import IndexSlice, Node
from ...lower.loop_ir import Acc, Affine, Const, DataLoad, Let, Load, Loop, Op, Store, Update, Var, cast, walk_exprs
from ...lower.peephole import EXPENSIVE
from ...lower.pointwise import LOOP_DTYPES, NotLowerable, lower_elementwise
from ...lower.views import broadcast_index, broadcast_ok
from ...shapes.minmax import start_if_nonempty

@dataclass(eq=False)
class ArrayVal:
    shape: tuple                 # extent per dimension (int64 expression: _extent)
    dims: tuple                  # the graph node's shape (ints / sympy): broadcasting rules
    at: Callable                 # tuple[Affine] -> the scalar expression of that element
    dtype: str
    view: tuple | None = None    # (buffer, index map): a view of a captured array (writable)
    epoch: int | None = None     # a computed value: how many writes preceded it
    whole: bool = False          # computed from a whole captured array (`h[t - 1] * w`)


class ArrayBody:
    """The builder's array methods (mixed into loops._Builder, which provides `affine`,
    `expr`, `env`, `buffers`, `_let`, `_loop_var`, `_dim_slot` and the NotNative error)."""

    # -- values -----------------------------------------------------------------------------------
    def _extent(self, d):
        """An extent as an int64 expression: affine in the loop indices and sizes, or the
        Min / Max of such (a slice clamped to its array's length: `X[i, :i]` of an n x m X)."""
        if isinstance(d, int):
            return Const(d, "int64")
        data = self.data_extent(d)          # the length of a slice bounded by array data
        if data is not None:
            return data
        d = sympy.sympify(d)
        if d.is_Integer:
            return Const(int(d), "int64")
        if isinstance(d, (sympy.Min, sympy.Max)):
            op = "minimum" if isinstance(d, sympy.Min) else "maximum"
            out = self._extent(d.args[0])
            for a in d.args[1:]:
                out = Op(op, "int64", (out, self._extent(a)))
            return out
        return Op("affine", "int64", (self.affine(d),))

    def _buffer_array(self, entry) -> ArrayVal:
        _, buf, inp = entry
        shape = []
        for d, ext in enumerate(inp.shape):
            try:
                shape.append(self._extent(ext))
            except self.NotNative:
                shape.append(self._dim_slot(self.sources[inp], d))
        dt = self.buffers[buf].dtype
        return ArrayVal(tuple(shape), inp.shape, lambda idx: Load(buf, tuple(idx), dt), dt,
                        view=(buf, tuple))

    def array_of(self, a) -> ArrayVal | None:
        """The ArrayVal of graph value `a`; None for a scalar."""
        if not isinstance(a, Node):
            return None
        e = self.env.get(a)
        if isinstance(e, ArrayVal):
            return e
        if isinstance(e, tuple) and e[0] == "buf":
            return self._buffer_array(e)
        if isinstance(e, tuple) and e[0] == "view":           # a one-element view
            return self._getitem_array(e[1])
        return None

    def _written_since(self, v: ArrayVal, value) -> None:
        """A computed value read after a write into an array it reads: refused."""
        if v.epoch is None:
            return
        since = set(self.store_log[v.epoch:])
        if since and any(isinstance(x, Load) and x.buf in since for x in walk_exprs(value)):
            raise self.NotNative("an array value read after a write into an array it was computed from")

    def captured_unchanged(self, values, written: set) -> None:
        """An inner loop reads a computed array value of the outer body in every iteration:
        refused when the inner loop writes an array that value was computed from (its later
        iterations would see the writes of the earlier ones)."""
        for a in values:
            v = self.env.get(a) if isinstance(a, Node) else None
            parts = (v.arr, v.mask) if hasattr(v, "mask") else (v,)      # a MaskedVal: x and its mask
            for v in parts:
                if written and isinstance(v, ArrayVal) and v.epoch is not None:
                    probe = v.at(tuple(Affine.var(f"_p{k}") for k in range(len(v.shape))))
                    if any(isinstance(x, Load) and x.buf in written for x in walk_exprs(probe)):
                        raise self.NotNative("an inner loop writes an array a value it reads was computed from")

    def element(self, v: ArrayVal, idx: tuple):
        value = v.at(idx)
        self._written_since(v, value)
        return value

    # -- views ------------------------------------------------------------------------------------
    def _getitem_array(self, n: Node) -> ArrayVal:
        base = self.array_of(n.args[0])
        if base is None:
            raise self.NotNative("a slice of a scalar")
        index = n.attr("index")
        if not isinstance(index, tuple):
            raise self.NotNative(f"index {index!r}")
        parts, kept = [], 0                      # per base dim: ("slice", start, step) | ("at", Affine)
        for e in index:
            if e is None:
                parts.append(("new",))
            elif isinstance(e, IndexSlice):
                if not isinstance(e.step, int) or e.start is None:
                    raise self.NotNative(f"slice {e}")
                start = start_if_nonempty(e.start, base.dims[kept], e.step)
                parts.append(("slice", Affine(const=start) if isinstance(start, int) else self.affine(start),
                              e.step))
                kept += 1
            elif isinstance(e, (int, sympy.Basic)) and not isinstance(e, bool):
                parts.append(("at", Affine(const=e) if isinstance(e, int) else self.affine(e)))
                kept += 1
            else:
                raise self.NotNative(f"index {e!r} in the body")
        if kept > len(base.shape):
            raise self.NotNative("too many indices")
        parts += [("slice", Affine(), 1)] * (len(base.shape) - kept)

        def parent(idx):
            out, k = [], 0
            for p in parts:
                if p[0] == "new":
                    k += 1
                elif p[0] == "slice":
                    out.append(p[1] + idx[k].scale(p[2]))
                    k += 1
                else:
                    out.append(p[1])
            return tuple(out)

        shape = tuple(self._extent(d) for d in n.shape)
        view = None if base.view is None else (base.view[0], lambda idx, m=base.view[1]: m(parent(idx)))
        return ArrayVal(shape, n.shape, lambda idx: base.at(parent(idx)), base.dtype, view, base.epoch)

    def _transpose_array(self, n: Node) -> ArrayVal:
        base = self.array_of(n.args[0])
        axes = n.attr("axes")

        def parent(idx):
            out = [None] * len(axes)
            for k, ax in enumerate(axes):
                out[ax] = idx[k]
            return tuple(out)
        view = None if base.view is None else (base.view[0], lambda idx, m=base.view[1]: m(parent(idx)))
        return ArrayVal(tuple(self._extent(d) for d in n.shape), n.shape, lambda idx: base.at(parent(idx)),
                        base.dtype, view, base.epoch)

    # -- computed values --------------------------------------------------------------------------
    def _operand_at(self, a, arr, n: Node, idx):
        if arr is None:
            return a
        return arr.at(broadcast_index(arr.dims, idx))

    def elementwise_array(self, n: Node, scalars: list) -> None:
        """n (elementwise, some operand an array): a computed ArrayVal. `scalars[k]` is the
        expression of a scalar operand (None for a Python constant), already range-checked."""
        arrays = [self.array_of(a) for a in n.args]
        whole = any(isinstance(a, Node) and (isinstance(self.env.get(a), tuple) and self.env[a][0] == "buf"
                                             or getattr(self.env.get(a), "whole", False)) for a in n.args)
        if whole and n.op in EXPENSIVE:
            # math on a whole captured array (`np.tanh(h[t - 1] * w + 1.0)`): 1.4x slower in a
            # nest's inner loop than in the array-loop driver's vectorised kernels (measured)
            raise self.NotNative(f"{n.op} of an array (the vectorised math library runs it in a kernel)")
        for a, arr in zip(n.args, arrays):
            if arr is not None and not broadcast_ok(a.shape, n.shape):
                raise self.NotNative(f"{n.op} broadcasting a dimension not known to be 1")
        epochs = [arr.epoch for arr in arrays if arr is not None and arr.epoch is not None]
        epoch = min(epochs + [len(self.store_log)])

        def at(idx):
            exprs = [self._operand_at(s, arr, n, idx) for s, arr in zip(scalars, arrays)]
            return lower_elementwise(n, exprs, LOOP_DTYPES)
        try:
            at(tuple(Affine.var(f"_p{k}") for k in range(n.ndim)))
        except (NotLowerable, KeyError, TypeError) as exc:
            raise self.NotNative(f"{n.op}: {exc}") from None
        self.env[n] = ArrayVal(tuple(self._extent(d) for d in n.shape), n.shape, at, n.dtype.name, None, epoch,
                               whole)

    def copy_array(self, n: Node) -> None:
        """np.copy / x.copy(): the values as they are now."""
        arr = self.array_of(n.args[0])
        self.env[n] = ArrayVal(arr.shape, arr.dims, arr.at, arr.dtype, None, len(self.store_log)
                               if arr.epoch is None else arr.epoch)

    def _acc(self, dt: str):
        acc_dt = "float64" if dt == "float32" else dt
        name = f"r{self.lets}"
        self.lets += 1
        return name, acc_dt

    def _inner_product(self, n: Node, a: ArrayVal, b: ArrayVal, ia, ib, extent) -> tuple:
        """(statements, result expression): sum over k < extent of a[ia(k)] * b[ib(k)]."""
        dt = n.dtype.name
        name, acc_dt = self._acc(dt)
        var = self._loop_var()
        k = Affine.var(var)
        x, y = cast(self.element(a, ia(k)), acc_dt), cast(self.element(b, ib(k)), acc_dt)
        if n.dtype.kind == "f":       # reassociated and fused (within the reduction tolerance)
            body = [Update(name, Op("red_muladd", acc_dt, (Var(name, acc_dt), x, y)))]
        elif n.dtype.kind == "c":     # in loop order; not BLAS's order (red_add: exact.py tells)
            body = [Update(name, Op("red_add", acc_dt, (Var(name, acc_dt), Op("multiply", acc_dt, (x, y)))))]
        else:
            body = [Update(name, Op("add", acc_dt, (Var(name, acc_dt), Op("multiply", acc_dt, (x, y)))))]
        return [Acc(name, acc_dt, Const(0, acc_dt)), Loop(var, extent, body)], cast(Var(name, acc_dt), dt)

    def dot_array(self, n: Node) -> list:
        """dot / matmul of two vectors (an accumulator over their common extent), or of a
        matrix and a vector (`v @ M`, `M @ v`: one accumulator per element of the result,
        stored into a scratch buffer as large as the matrix's array, allocated once per call)."""
        a, b = (self.array_of(x) for x in n.args[:2])
        if a is None or b is None:
            raise self.NotNative(f"{n.op} with a scalar operand")
        if n.dtype.kind not in "iufc":
            raise self.NotNative(f"{n.op} of {n.dtype.name}")
        self.float_products |= n.dtype.kind in "fc"      # NumPy's call sums in BLAS's order (exact.py)
        if len(a.shape) == 1 and len(b.shape) == 1:
            stmts, value = self._inner_product(n, a, b, lambda k: (k,), lambda k: (k,), a.shape[0])
            return stmts + self._let(n, value)
        if len(a.shape) == 2 and len(b.shape) == 2 and n.op == "matmul" and n.dtype.kind == "c":
            return self._matrix_product(n, a, b)
        if sorted((len(a.shape), len(b.shape))) != [1, 2]:
            raise self.NotNative(f"{n.op} of arrays other than vectors and matrices")
        matrix = a if len(a.shape) == 2 else b
        if matrix.view is None:
            raise self.NotNative(f"{n.op} of a computed matrix")
        dt = n.dtype.name
        out = self.scratch(n, matrix.view[0], dt)
        var = self._loop_var()
        p = Affine.var(var)
        if len(a.shape) == 2:           # M @ v: out[p] = sum_k M[p, k] v[k], along M's rows
            stmts, value = self._inner_product(n, a, b, lambda k: (p, k), lambda k: (k,), a.shape[1])
            extent = a.shape[0]
            code = [Loop(var, extent, stmts + [Store(out, (p,), value)])]
        else:                           # v @ M: out += v[k] * M[k, :] for each k, along M's rows
            extent = b.shape[1]
            kvar, vk = self._loop_var(), f"t{self.lets}"
            self.lets += 1
            k = Affine.var(kvar)
            here = Load(out, (p,), dt)
            step = Op("add", dt, (here, Op("multiply", dt, (Var(vk, dt), cast(self.element(b, (k, p)), dt)))))
            code = [Loop(var, extent, [Store(out, (p,), Const(0, dt))]),      # (sibling loops share p)
                    Loop(kvar, a.shape[0], [Let(vk, cast(self.element(a, (k,)), dt)),
                                            Loop(var, extent, [Store(out, (p,), step)])])]
        self.store_log.append(out)
        self.env[n] = ArrayVal((extent,), n.shape, lambda idx: Load(out, tuple(idx), dt), dt, None,
                               len(self.store_log))
        return code

    def _matrix_product(self, n: Node, a: ArrayVal, b: ArrayVal) -> list:
        """a @ b of two small complex matrices (`G[k, e] @ dH[i]`): one accumulator per element
        of the result, stored into an (m, p) scratch array allocated once per call (m and p
        ints or extents of captured arrays). (Float products in loop nests are the products
        area's; complex ones have no native loop otherwise.)"""
        factors = tuple(self._extent_source(d) for d in n.shape)
        dt = n.dtype.name
        if n not in self.scratches:
            self.scratches[n] = self.buffer(factors, dt, 2, True, kind="scratch_dims")
        out = self.scratches[n]
        pv, qv = self._loop_var(), self._loop_var()
        pa, qa = Affine.var(pv), Affine.var(qv)
        stmts, value = self._inner_product(n, a, b, lambda k: (pa, k), lambda k: (k, qa), a.shape[1])
        code = [Loop(pv, a.shape[0], [Loop(qv, b.shape[1], stmts + [Store(out, (pa, qa), value)])])]
        self.store_log.append(out)
        self.env[n] = ArrayVal((a.shape[0], b.shape[1]), n.shape, lambda idx: Load(out, tuple(idx), dt), dt, None,
                               len(self.store_log))
        return code

    def _extent_source(self, d):
        """An int, or (loop-node argument, dim) of a captured array with that extent."""
        if sympy.sympify(d).is_Integer:
            return int(d)
        for inp, src in self.sources.items():
            for k, e in enumerate(inp.shape):
                if sympy.sympify(e) == sympy.sympify(d):
                    return (src, k)
        raise self.NotNative(f"a matrix product of extent {d}, no captured array's extent")

    # -- writes -----------------------------------------------------------------------------------
    def _same_extents(self, src: ArrayVal, dst: ArrayVal) -> None:
        """The source of a write broadcasts to its destination. A dimension that is neither
        1 nor the same expression (`X[i, 1:i + 1] = X[i, :i]` of an n x m X: both clamped to m)
        is checked at run time (checked_range of the difference): where they differ, the
        generic path runs the iteration and NumPy raises its own error."""
        off = len(dst.dims) - len(src.dims)
        if off < 0:
            raise self.NotNative("a write of more dimensions than its destination")
        for k, d in enumerate(src.dims):
            if (isinstance(d, int) and d == 1) or _same(d, dst.dims[off + k]):
                continue
            diff = Op("subtract", "int64", (src.shape[k], dst.shape[off + k]))
            self._checked_let(self.checked("checked_range", (diff, Const(0, "int64"), Const(0, "int64"))))

    def assign_array(self, dst: ArrayVal, src, src_value) -> list:
        """dst[...] = src: a loop nest of stores. `src_value` is the expression of a scalar
        `src` (already cast to the destination's dtype), None for an array."""
        if dst.view is None:
            raise self.NotNative("a write into an array value the loop computes")
        buf, vmap = dst.view
        if not self.buffers[buf].written:
            raise self.NotNative("a write into an array the loop does not declare written")
        dt = self.buffers[buf].dtype
        vars_ = [self._loop_var() for _ in dst.shape]
        # (a dimension of extent 1 at position 0: as a source broadcast along it reads it)
        idx = tuple(Affine() if isinstance(d, int) and d == 1 else Affine.var(v) for v, d in zip(vars_, dst.dims))
        where = vmap(idx)
        if src_value is not None:
            value = src_value
        else:
            arr = self.array_of(src)
            self._same_extents(arr, dst)
            value = cast(self.element(arr, broadcast_index(arr.dims, idx)), dt)
        # a value that reads the destination elsewhere, or gathers (a checked index may leave the
        # kernel: no element of this write may be stored before every index is checked)
        overlap = any(isinstance(x, Load) and x.buf == buf and (isinstance(x, DataLoad) or x.index != where)
                      or isinstance(x, Op) and x.op.startswith("checked_") for x in walk_exprs(value))
        self.stored = True
        self.store_log.append(buf)
        if not overlap:
            return _nest(vars_, dst.shape, [Store(buf, where, value)])
        if len(dst.shape) != 1:
            raise self.NotNative("a write of a 2-d slice reading its own destination elsewhere")
        scratch = self.scratch(("write", buf), buf, dt)
        copy_var = self._loop_var()
        first = _nest(vars_, dst.shape, [Store(scratch, idx, value)])
        back = Store(buf, vmap((Affine.var(copy_var),)), Load(scratch, (Affine.var(copy_var),), dt))
        return first + _nest([copy_var], dst.shape, [back])


def _same(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return sympy.simplify(sympy.sympify(a) - sympy.sympify(b)) == 0


def _nest(vars_, extents, body) -> list:
    for v, ext in reversed(list(zip(vars_, extents))):
        body = [Loop(v, ext, body)]
    return body


__all__ = ["ArrayBody", "ArrayVal", "Let"]
