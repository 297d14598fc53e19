"""Build one kernel's loop IR from a group of jobs (see schedule.py for how groups form).

A job is a node whose value a kernel produces: a stored elementwise value, a reduction, a
scan, or an assignment. All jobs of a group share the outer loops (`L` leading dims); each
job adds phases inside them. `value(node, idx)` is the heart: the expression of any graph
value at an index, recomputing fusible producers, reading materialised ones from their
buffers, and taking a reduction computed earlier in this kernel from its Let.
"""
from __future__ import annotations

import numpy as np
import sympy

from ..ir.graph import Node
from ..ir.registry import Sort, lowering
from . import accumulate, peephole, sorting
from .classify import view_is_inlinable
from .loop_ir import (Affine, Arg, Buffer, Const, Gather, Kernel, Load, Loop, Op, Slot, Store, Var, cast, nested,
                      walk_exprs)
from .matmul import add_product, product_work
from .pointwise import constant, kind, lower_elementwise, operand
from .reductions import Phase, outer_of_result, reduction_phases, result_index
from .schedule import assigned_constant
from .segments import has_segments, segment, split_body
from .views import broadcast_index, offset as _offset, view_index


class Conflict(Exception):
    """The job cannot join this kernel (it reads a reduction at another index)."""


class KernelBuilder:
    def __init__(self, plan, jobs: list, L: int, outer: tuple, name: str = "k"):
        self.plan, self.jobs, self.L, self.name = plan, jobs, L, name
        self.outer = outer
        self.outer_vars = tuple(f"o{d}" for d in range(L))
        self.buffers, self.slots, self.buffer_nodes = [], [], []
        self.read_copies: set = set()
        self.inline_views_of = None
        self.scratch_arrays: list = []          # (source, like node, dtype): wrapper temporaries
        self._buf, self._slot, self.memo = {}, {}, {}
        self.red_vals: dict = {}
        self.in_group = {j.node for j in jobs}
        self.phases: list[Phase] = []
        self.lets: set = set()
        self._storing = None                    # the value add_store is storing
        self._stored: set = set()               # math_cuts values a committed phase of this kernel stored
        self.extra_work: list = []              # sympy work of matrix products (their inner loops)
        self._n = 0

    # -- arguments ---------------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def buffer(self, node: Node, written: bool = False, source: str | None = None) -> int:
        src = source or self.plan.var[node]
        if not written and node in self.read_copies:
            src += "_before"                     # reads see a copy taken before the kernel
        if src not in self._buf:
            self._buf[src] = len(self.buffers)
            self.buffers.append(Buffer(src, node.dtype.name, node.ndim))
            self.buffer_nodes.append(node)
        i = self._buf[src]
        self.buffers[i].written |= written
        return i

    def slot(self, source: str, dtype: str) -> Arg:
        if (source, dtype) not in self._slot:
            self._slot[(source, dtype)] = len(self.slots)
            self.slots.append(Slot(source, dtype))
        return Arg(self._slot[(source, dtype)], dtype)

    def size(self, d):
        """An extent/count (int or sympy) as an int64 expression."""
        if isinstance(d, (int, np.integer)) or (isinstance(d, sympy.Basic) and d.is_Integer):
            return Const(int(d), "int64")
        return self.slot(self.plan.size_source(d), "int64")

    def size_arg(self, expr) -> Arg:
        return self.slot(self.plan.size_source(expr), "int64")

    # -- values ------------------------------------------------------------------------
    def value(self, a, idx: tuple):
        if isinstance(a, sympy.Basic):
            if a.is_integer is False:
                return self.slot(self.plan.size_var(a), "float64")
            return self.size(a)
        if a in self._stored and all(x == Affine.var(v) for x, v in zip(idx[:self.L], self.outer_vars)):
            return Load(self.buffer(a), idx, a.dtype.name)   # a later phase reads back this row's store
        if a in self.plan.depth_cuts and a in self.in_group and a is not self._storing:
            raise Conflict(f"{a} is read from its stored array, after this kernel")   # bounded depth
        key = (a, idx)
        if key not in self.memo:
            self.memo[key] = self._value(a, idx)
        return self.memo[key]

    def _value(self, node: Node, idx: tuple):
        plan, cat = self.plan, self.plan.cat[node]
        if node in self.red_vals:
            outer = outer_of_result(node, idx)
            if len(outer) != self.L or not all(
                    a == Affine.var(v) or (a == Affine() and _is_one(d))
                    for a, v, d in zip(outer, self.outer_vars, self.outer)):
                raise Conflict(f"{node} read at {outer}")
            return self.red_vals[node]
        if cat == "matmul" and node in self.in_group:     # a product's rows, computed by this kernel
            if not all(a == Affine.var(v) or (a == Affine() and _is_one(d))
                       for a, v, d in zip(idx[:self.L], self.outer_vars, self.outer)):
                raise Conflict(f"{node} read at another row than the one this kernel computes")
            return Load(self.buffer(node), idx, node.dtype.name)
        if cat == "view" and self.inline_views_of is not None and view_is_inlinable(node) and \
                self._view_of(node, self.inline_views_of):      # (a general reshape base is loaded below)
            return self.value(node.args[0], view_index(node, idx, self.size_arg))
        if cat == "pw" and node in self.in_group and node.op == "concatenate" and \
                node is not self._storing:       # stored to bound the segments' nesting
            raise Conflict(f"{node} is read from its stored array, after this kernel")
        if plan.has_value(node) and not (cat == "pw" and node in self.in_group):
            if plan.by_value(node):
                return self.slot(plan.scalar_source(node), node.dtype.name)
            return Load(self.buffer(node), idx, node.dtype.name)
        if cat == "pw":
            return self._pointwise(node, idx)
        if cat == "view":
            return self.value(node.args[0], view_index(node, idx, self.size_arg))
        if any(j.node is node for j in self.jobs):   # produced by this very kernel
            raise Conflict(f"{node} is computed by this kernel, not available to it")
        raise AssertionError(f"{node} ({cat}) has no value in kernel {self.name}")

    def _view_of(self, node: Node, base: Node) -> bool:
        """node is a chain of index-map views ending at base."""
        while self.plan.cat.get(node) == "view" and view_is_inlinable(node):
            node = node.args[0]
        return node is base

    def _pointwise(self, node: Node, idx: tuple):
        dt, op = node.dtype.name, node.op
        if op in ("zeros", "empty"):
            return Const(0.0 if kind(dt) == "f" else (False if dt == "bool" else 0), dt)
        if op == "ones":
            return Const(1.0 if kind(dt) == "f" else (True if dt == "bool" else 1), dt)
        if op == "full":
            fill = node.args[0]
            return operand(fill, self.value(fill, ()) if isinstance(fill, (Node, sympy.Basic)) else None, dt)
        if op == "arange":
            start, _, step = node.args
            i = Op("affine", "int64", (idx[0].scale(int(step)),))
            return cast(Op("add", "int64", (cast(self.value(sympy.sympify(start), ()), "int64"), i)), dt)
        if op == "copy":
            return cast(self.value(node.args[0], idx), dt)
        if op == "concatenate":
            return self._concatenate(node, idx)
        if getattr(lowering(op), "indexed", False):
            return self._take_along(node, idx)
        exprs = [self.value(a, broadcast_index(a.shape, idx)) if isinstance(a, Node)
                 else self.value(a, ()) if isinstance(a, sympy.Basic) else None for a in node.args]
        return lower_elementwise(node, exprs)

    def _take_along(self, node: Node, idx: tuple):
        """arr at the position indices[idx] names along the axis (a Gather load of arr's
        array: schedule.py stores arr), in bounds by gather_pos."""
        arr, ind = node.args
        ax = node.attr("axis")
        pos = Op("gather_pos", "int64", (self.value(ind, broadcast_index(ind.shape, idx)), self.size(arr.shape[ax])))
        at = broadcast_index(arr.shape, idx[:ax] + (Affine(),) + idx[ax + 1:])
        if arr in self.in_group or any(j.node is arr for j in self.jobs):
            raise Conflict(f"{arr} is gathered from its stored array, after this kernel")
        if not self.plan.has_value(arr) or self.plan.by_value(arr):
            raise AssertionError(f"{arr} gathered by {node} has no array (schedule.py stores it)")
        return Gather(self.buffer(arr), at, arr.dtype.name, ax, pos)

    def _concatenate(self, node: Node, idx: tuple):
        """The piece holding idx along the axis: nested segments (lower/segments.py)."""
        axis, dt = node.attr("axis"), node.dtype.name
        pieces, offsets, off = node.args, [], 0
        for x in pieces:
            offsets.append(off)
            off = off + x.shape[axis]

        def at(k):
            shifted = idx[axis] + self._bound(offsets[k]).scale(-1)
            return cast(self.value(pieces[k], idx[:axis] + (shifted,) + idx[axis + 1:]), dt)
        expr = at(len(pieces) - 1)
        for k in range(len(pieces) - 2, -1, -1):
            expr = segment(idx[axis], self._bound(offsets[k + 1]), at(k), expr, dt)
        return expr

    def _bound(self, size) -> Affine:
        """A size as integer multiples of symbolic terms plus a constant (n + 2: arg(n) + 2;
        -n - 1: -arg(n) - 1), so that the segments of nested concatenates compare."""
        out = Affine()
        for term in sympy.Add.make_args(sympy.sympify(size)):
            coef, base = term.as_coeff_Mul()
            if not coef.is_Integer:
                return _offset(size, self.size_arg)
            out = out + (Affine(const=int(term)) if base == 1 else
                         Affine(syms=((self.size_arg(base), int(coef)),)))
        return out

    # -- phases ------------------------------------------------------------------------
    def new_phase(self, extents) -> Phase:
        return Phase(tuple(self.size(e) for e in extents), tuple(f"i{k}" for k in range(len(extents))))

    def commit(self, ph: Phase):
        """Append a phase, merging it into the previous loop nest when that is legal."""
        self.lets |= ph.defines
        last = self.phases[-1] if self.phases else None
        if last is not None and last.extents == ph.extents and ph.extents and last.guard is None \
                and ph.guard is None and last.pairwise == ph.pairwise and not (_reads(ph) & last.defines) \
                and not _stores_read(last, ph):
            last.pre += ph.pre
            last.body += ph.body
            last.post += ph.post
            last.defines |= ph.defines
            last.splittable &= ph.splittable
        else:
            self.phases.append(ph)

    def outer_index(self, extra_vars) -> tuple:
        return tuple(Affine.var(v) for v in self.outer_vars + tuple(extra_vars))

    # -- jobs --------------------------------------------------------------------------
    def add_store(self, node: Node, target: Node | None = None):
        ph = self.new_phase(node.shape[self.L:])
        idx = self.outer_index(ph.vars)
        self._storing = node
        ph.body.append(Store(self.buffer(target or node, written=True), idx,
                             cast(self.value(node, idx), node.dtype.name)))
        ph.splittable = True
        self.commit(ph)
        if node in self.plan.math_cuts:         # its row is stored before the next phase runs (a depth
            self._stored.add(node)              # cut of a long chain: the next kernel reads it instead)

    def add_reduction(self, node: Node, stored: bool):
        phases, var = reduction_phases(self, node, self.outer_vars)
        self.red_vals[node] = var
        if stored:
            phases[-1].post.append(Store(self.buffer(node, written=True),
                                         result_index(node, self.outer_index(())), var))
        for ph in phases:
            self.commit(ph)

    def scratch(self, like: Node, dtype: str, tag: str) -> int:
        """A temporary array shaped like `like`, allocated by the wrapper for this kernel."""
        src = f"{self.plan.var[like]}_{tag}"
        self.scratch_arrays.append((src, like, dtype))
        self._buf[src] = len(self.buffers)
        self.buffers.append(Buffer(src, dtype, like.ndim, written=True))
        self.buffer_nodes.append(like)
        return self._buf[src]

    def add_reductions_rmw(self, nodes: list):
        accumulate.reductions_in_place(self, nodes)

    def add_scan(self, node: Node):
        if isinstance(lowering(node.op), Sort):
            sorting.sort_rows(self, node)
        else:
            accumulate.scan(self, node)

    def add_assign(self, dst_base: Node, dst_map, dst_shape, src):
        """dst[...] = src where dst[idx] is dst_base[dst_map(idx)]."""
        ph = self.new_phase(dst_shape[self.L:])
        idx = self.outer_index(ph.vars)
        if not isinstance(src, Node):             # a constant, converted as NumPy converts it
            value = constant(assigned_constant(src, dst_base.dtype), dst_base.dtype.name)
        else:
            extra = src.ndim - len(idx)
            sidx = (Affine(),) * max(extra, 0) + broadcast_index(src.shape[max(extra, 0):], idx)
            self.inline_views_of = dst_base       # y[1:] += ...: read y[1:] as y itself
            value = cast(self.value(src, sidx), dst_base.dtype.name)
        ph.body.append(Store(self.buffer(dst_base, written=True), dst_map(idx), value))
        ph.splittable = True
        self.commit(ph)

    def add_matmul(self, node: Node, use: str | None = None):
        """A matrix product for the current outer index (lower/matmul.py); `use`: the wrapper
        variable saying whether the nest runs this call (0: BLAS computed it already)."""
        if use is not None and any(x in self.in_group for x in node.args):
            raise Conflict(f"{node}: BLAS may compute it, before this kernel stores its operand")
        ph = Phase((), ())
        ph.body = add_product(self, node, None if use is None else self.slot(use, "int64"))
        self.commit(ph)
        self.extra_work.append(product_work(node))

    def kernel(self) -> Kernel:
        body = []
        for ph in peephole.optimize(self.phases):
            body += ph.pre + _nest(ph.vars, ph.extents, ph.body, ph.guard, ph.pairwise) + ph.post
        split = "1"
        for d in reversed(range(self.L)):
            body = [Loop(self.outer_vars[d], self.size(self.outer[d]), body, split=d == 0)]
        if self.L:
            split = self.plan.size_source(self.outer[0])
        elif len(self.phases) == 1 and self.phases[0].splittable and self.phases[0].extents:
            body = [s if not isinstance(s, Loop) else Loop(s.var, s.stop, s.body, s.start, True)
                    for s in body]
            e = self.phases[0].extents[0]
            split = str(e.value) if isinstance(e, Const) else self.slots[e.slot].source
        if has_segments(body):                 # pieces of concatenates: loops per piece
            body = split_body(body)
        k = Kernel(self.name, body, self.buffers, self.slots, split)
        k.work = self._work()
        k.wide = bool(self.extra_work)         # a product nest: 512-bit vectors (matmul.py "Vectors")
        for b in k.buffers:
            b.noalias = True
        return k

    def _work(self) -> str:
        """Python expression estimating the kernel's cost (elements x weight)."""
        total = sum(self.extra_work, sympy.Integer(0))
        for ph in self.phases:
            n = 1
            for e in list(self.outer) + [_graph_size(self, e) for e in ph.extents]:
                n = n * e
            total = total + n
        weight = 1
        for ph in self.phases:
            for e in _stmt_exprs(ph.body):
                if isinstance(e, Op) and e.op in peephole.EXPENSIVE:
                    weight += 8
        return self.plan.expr_source(sympy.sympify(total) * weight)


def _is_one(d) -> bool:
    return isinstance(d, int) and d == 1 or (isinstance(d, sympy.Basic) and d == 1)


def _graph_size(b: KernelBuilder, e):
    if isinstance(e, Const):
        return int(e.value)
    return b.plan.expr_of(b.slots[e.slot].source)


def _nest(vars_, extents, body, guard=None, pairwise=False):
    """The loops over `extents` around `body`; with a `guard`, the outermost one runs no
    iteration unless the guard holds; `pairwise` (a one-loop phase): its float sums in NumPy's
    order (reductions.py)."""
    for k, (v, e) in reversed(list(enumerate(zip(vars_, extents)))):
        if k == 0 and guard is not None:
            e = Op("where", "int64", (guard, e, Const(0, "int64")))
        body = [Loop(v, e, body, pairwise=pairwise and len(extents) == 1)]
    return list(body)


def _stmt_exprs(stmts):
    for s in stmts:
        for attr in ("value", "init", "cond"):
            e = getattr(s, attr, None)
            if e is not None:
                yield from walk_exprs(e)
        for inner in nested(s):
            yield from _stmt_exprs(inner)


def _exprs(ph: Phase):
    yield from _stmt_exprs(ph.pre + ph.body)


def _stores(stmts) -> set:
    out = set()
    for s in stmts:
        if isinstance(s, Store):
            out.add(s.buf)
        for inner in nested(s):
            out |= _stores(inner)
    return out


def _reads(ph: Phase) -> set:
    return {e.name for e in _exprs(ph) if isinstance(e, Var)}


def _stores_read(last: Phase, ph: Phase) -> bool:
    """ph loads a buffer that last stores into (also inside nested loops: a matrix product's
    rows): keep them in separate loops."""
    stored = _stores(last.body)
    return any(isinstance(e, Load) and e.buf in stored for e in _exprs(ph))


__all__ = ["KernelBuilder", "Conflict"]
