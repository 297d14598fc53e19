"""Element reads and writes in a native loop nest's body (loops.py's _Builder): `x[i, j]` at
affine indices, `x[idx]` at positions read in the body (NumPy's negative wrap and bounds check as
checked_index lets; in inner loops gather_pos, which hands an out-of-bounds call to NumPy), and
sub-arrays at such positions (`G[k, idx[a, b]]`, read where they are used), one-element
stores with NumPy's casts and, for a Python int into a narrower integer array, its range check
(checked_range: NumPy raises OverflowError where int64 wraps)."""
from __future__ import annotations

import numpy as np
import sympy

from ...ir.graph import IndexSlice, Node
from ...ir.ops.advanced_index import ArrayRef
from ...lower.loop_ir import Affine, Const, DataLoad, Let, Load, Op, Store, Var, cast
from ...shapes.minmax import start_if_nonempty
from .loop_arrays import ArrayVal
from .loop_call import NotNative
from .loop_ints import _constant, _py_int


class ElementBody:
    """Mixin of loops._Builder: needs env, buffers, sources, pre, lets, depth, free, stored,
    store_log and the builder's affine / expr / checked / _free / _dim_slot."""

    def _element(self, n: Node, base, index, store=False) -> Load:
        """The element `base[index]` reads (or, `store`: writes: `x[i] = v` is the one-element
        view `x[i:i+1]` in the graph)."""
        entry = self.env.get(base)
        if not (isinstance(entry, tuple) and entry[0] == "buf"):
            raise NotNative("indexing a value that is not a captured array")
        _, buf, inp = entry
        if not isinstance(index, tuple) or len(index) != inp.ndim or \
                not all(d == 1 for d in n.shape) or (n.shape and not store):
            raise NotNative("a slice or a partial index (array work in the body)")
        idx = []
        for e in index:
            if isinstance(e, IndexSlice) and store and e.step in (None, 1) and e.start is not None and \
                    e.stop is not None and sympy.simplify(sympy.sympify(e.stop) - sympy.sympify(e.start)) == 1:
                e = e.start
            if isinstance(e, bool) or not isinstance(e, (int, sympy.Basic)):
                raise NotNative(f"index {e!r}")
            idx.append(Affine(const=e) if isinstance(e, int) else self.affine(e))
        return Load(buf, tuple(idx), self.buffers[buf].dtype)

    def _data_element(self, base, arrays, entries) -> DataLoad:
        """The element `base[entries]` where some entries are values read in the body (an
        index node): NumPy's negative wrap and bounds check as checked_index ops."""
        entry = self.env.get(base)
        if not (isinstance(entry, tuple) and entry[0] == "buf"):
            raise NotNative("indexing a value that is not a captured array")
        _, buf, inp = entry
        if len(entries) != inp.ndim or any(e is None for e in entries):
            raise NotNative("a data index with new axes")
        idx, pos = [], []
        for d, e in enumerate(entries):
            if isinstance(e, ArrayRef):
                pos.append((d, self._position(arrays[e.k], inp, d)))
                idx.append(Affine())
            elif isinstance(e, (int, sympy.Basic)) and not isinstance(e, bool):
                idx.append(Affine(const=e) if isinstance(e, int) else self.affine(e))
            else:
                raise NotNative(f"index {e!r}")
        return DataLoad(buf, tuple(idx), self.buffers[buf].dtype, tuple(pos))

    def data_array(self, n: Node):
        """`x[k, idx[a, b], :]` (an index node) or `x[idx[i, j]]` (take): integer scalars read
        in the body among the entries and slices for the rest, selecting more than one element:
        an array value whose elements are loads at the checked positions (an ArrayVal), read
        where it is used and refused there once a write into `x` came between (a copy in NumPy
        for 0-d arrays, a view for scalars: the value is the same until then)."""
        base, arrays = n.args[0], n.args[1:]
        entries = (ArrayRef(0),) if n.op == "take" else n.attr("entries")      # take: x[i] along axis 0
        entry = self.env.get(base)
        if not (isinstance(entry, tuple) and entry[0] == "buf"):
            raise NotNative("indexing a value that is not a captured array")
        _, buf, inp = entry
        if len(entries) > inp.ndim or any(e is None for e in entries):
            raise NotNative("a data index with new axes")
        if not all(isinstance(arrays[e.k], Node) and arrays[e.k].shape == () for e in entries
                   if isinstance(e, ArrayRef)):
            raise NotNative("advanced indexing by arrays (array work in the body)")
        parts, pos = [], []
        whole = tuple(IndexSlice(0, inp.shape[d], 1) for d in range(len(entries), inp.ndim))
        for d, e in enumerate(tuple(entries) + whole):
            if isinstance(e, ArrayRef):
                pos.append((d, self._position(arrays[e.k], inp, d)))
                parts.append(("at", Affine()))
            elif isinstance(e, IndexSlice):
                if not isinstance(e.step, int) or e.start is None:
                    raise NotNative(f"slice {e}")
                start = start_if_nonempty(e.start, inp.shape[d], e.step)
                parts.append(("slice", Affine(const=start) if isinstance(start, int) else self.affine(start), e.step))
            elif isinstance(e, (int, sympy.Basic)) and not isinstance(e, bool):
                parts.append(("at", Affine(const=e) if isinstance(e, int) else self.affine(e)))
            else:
                raise NotNative(f"index {e!r}")
        if sum(p[0] == "slice" for p in parts) != len(n.shape):
            raise NotNative("a data index that reorders dimensions")
        dt, pos = self.buffers[buf].dtype, tuple(pos)

        def at(idx):
            it = iter(idx)
            return DataLoad(buf, tuple(p[1] if p[0] == "at" else p[1] + next(it).scale(p[2]) for p in parts),
                            dt, pos)
        return ArrayVal(tuple(self._extent(d) for d in n.shape), n.shape, at, dt, None, len(self.store_log))

    def _position(self, value, inp: Node, d: int):
        """The checked position along dim `d` of `inp` that the integer scalar `value` names."""
        if not (isinstance(value, Node) and value.shape == () and value.dtype.kind in "iu"
                and value.dtype.name != "uint64"):
            raise NotNative("a data index that is not an integer scalar")
        extent = inp.shape[d]
        if isinstance(extent, int):
            size = Const(extent, "int64")
        else:
            try:
                size = Op("affine", "int64", (self.affine(extent),))
            except NotNative:
                size = self._dim_slot(self.sources[inp], d)
        if self.depth:
            # in an inner loop a checked op could only leave the kernel when the loop writes no
            # array (loops.py): NumPy's wrap, and an out-of-bounds position reads element 0 and
            # sets both zero-sign bits instead (gather_pos): the wrapper then restores what the
            # call wrote and NumPy runs it, raising its own IndexError (fp_errors.py)
            return Op("gather_pos", "int64", (self.expr(value), size))
        return self._checked_let(self.checked("checked_index", (cast(self.expr(value), "int64"), size)))

    def _checked_let(self, op: Op) -> Var:
        """`op` as a let of its own, before the statement that uses it (_take_checks): free, it
        moves before the iteration's first write even when that statement cannot (_hoist)."""
        name = f"t{self.lets}"
        self.lets += 1
        if not self.depth and self._free(op):
            self.free.add(name)
        self.pre.append(Let(name, op))
        return Var(name, op.dtype)

    def _take_checks(self) -> list:
        pre, self.pre = self.pre, []
        return pre

    def _data_store(self, n: Node) -> list:
        """x[entries] = value at positions read in the body (index_put of one element)."""
        if n.attr("masked"):
            raise NotNative("a masked write")
        dst, src, arrays = n.args[0], n.args[1], n.args[2:]
        load = self._data_element(dst, arrays, n.attr("entries"))
        _, buf, _inp = self.env[dst]
        if not self.buffers[buf].written:
            raise NotNative("a write into an array the loop does not declare written")
        if isinstance(src, Node) and src.shape != ():
            raise NotNative("a write of an array at a data index")
        value = self._stored_value(src, load.dtype)
        self.stored = True
        self.store_log.append(buf)
        return self._take_checks() + [Store(buf, load.index, value, pos=load.pos)]

    def _stored_value(self, src, dt):
        """`src` cast to the destination's dtype `dt`. A Python int value stored into a narrower
        integer array is range-checked (checked_range, a let before the write: _checked_let):
        out of range, NumPy raises OverflowError on the generic path, where int64 would wrap."""
        if isinstance(src, int) and not isinstance(src, bool) and dt not in ("int64", "float64"):
            raise NotNative("a Python int stored into a narrow array")
        value = self.expr(src)
        if value is None:
            return _constant(src, dt)
        py_int = isinstance(src, sympy.Expr) or (isinstance(src, Node) and _py_int(src) and src.dtype.kind != "b")
        if py_int and dt not in ("int64", "bool") and np.dtype(dt).kind in "iu":     # (a size expression too)
            info = np.iinfo(dt)
            value = self._checked_let(self.checked("checked_range", (
                cast(value, "int64"), Const(max(int(info.min), -2 ** 63), "int64"),
                Const(min(int(info.max), 2 ** 63 - 1), "int64"))))
        return cast(value, dt)
