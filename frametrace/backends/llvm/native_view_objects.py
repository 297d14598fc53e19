"""Views as array objects inside the native entry (native_entry.py).

A graph hands NumPy views of the values it computes to the next step: `(x @ wq).reshape(n, h, hd)`,
`out.transpose(1, 0, 2)`, `h[-1]` of a kernel's output. Kernels and NumPy calls read arrays
as objects (their data, dims and strides), so the wrapper's `v9 = v8.reshape((1, 6, 48))`
must be an object here too. The entry makes it through NumPy's C API, the same functions
the wrapper's methods end in:

    reshape, expand_dims     PyArray_Newshape(x, dims, NPY_CORDER)    (ndarray.reshape; a copy
                             where NumPy makes one; np.expand_dims is a reshape)
    transpose                PyArray_Transpose(x, axes)
    getitem, squeeze         PyArray_NewFromDescr over x's memory (native_views.Desc: a basic
                             index's pointer arithmetic) + PyArray_SetBaseObject(view, x)

    vo = ViewObjects(builder)
    vo.plan(plan, n)        # before anything is allocated: False for a basic view of an input
                            # (native_views.py keeps those as descriptors), NotNative if unsupported
    vo.emit(plan, n)        # at the step: the view, owned by the entry until it returns

Parents are values the entry computes (arrays it allocated, NumPy calls' results, earlier
view objects), or inputs for reshape/transpose/expand_dims. A view keeps its parent alive
(its base), so a returned view outlives the entry's own references. `root(var)` names the
array whose memory a view object shares: an assignment reading a view of an input is not
a copy from fresh memory.
"""
from __future__ import annotations

import numpy as np

from csrc_free_runtime import native as rt_native

from ...ir.graph import IndexSlice, Node
from .native_ir import NotNative
from .native_views import Desc

VIEW_OPS = ("reshape", "transpose", "expand_dims", "squeeze", "getitem")
NPY_CORDER = 0


class ViewObjects:
    def __init__(self, builder):
        self.b = builder
        self.planned: dict = {}      # view node -> its parent's wrapper variable
        self.roots: dict = {}        # view variable -> the variable whose memory it shares

    def root(self, var: str) -> str:
        return self.roots.get(var, var)

    def plan(self, plan, n: Node) -> bool:
        """Will the entry make view `n` as an object? (Its sizes are computed now.)"""
        b = self.b
        x = n.args[0] if n.args else None
        if n.op not in VIEW_OPS or not isinstance(x, Node) or x.ndim == 0 or plan.by_value(x):
            return False
        var = plan.var.get(x)
        if var not in b.will_own and n.op in ("getitem", "squeeze"):
            # a basic view of an input: a descriptor (native_views.py), made an object too when
            # more than assignments into it and views of it read it
            b.descs[plan.var[n]] = self._desc(plan, n, b.input_desc(plan, x))
            if self._only_written(plan, n):
                return True
        elif var not in b.will_own and var not in b.objs:
            return False
        if n.scalar and n.shape == ():
            raise NotNative("an element read (a NumPy scalar)")
        if n.dtype is None or n.dtype.hasobject:
            raise NotNative(f"a view of {n.dtype}")
        for d in n.shape:
            b.size(plan, plan.size_source(d))
        if n.op == "getitem":        # the index's starts and ints, computed before anything runs
            for e in n.attr("index"):
                if isinstance(e, IndexSlice):
                    if not isinstance(e.step, int) or e.start is None:
                        raise NotNative(f"slice {e}")
                    b.size(plan, plan.size_source(e.start))
                elif e is not None:
                    b.size(plan, plan.size_source(e))
        self.planned[n] = var
        self.roots[plan.var[n]] = b.descs[plan.var[n]].root if plan.var[n] in b.descs else self.root(var)
        b.will_own.add(plan.var[n])
        return True

    @staticmethod
    def _only_written(plan, n) -> bool:
        """Is view n only written into (`a[3] = r`) or viewed again, never read as an array?"""
        return n not in plan.output_set and all(
            (u.op == "assign" and u.args[0] is n) or u.op == "getitem" for u in plan.users[n])

    def _desc(self, plan, n, parent: Desc) -> Desc:
        """The descriptor of view n (getitem, squeeze) of `parent`'s memory."""
        if n.op == "getitem":
            return self.b.vw.getitem(plan, n, parent)
        axes = set(n.attr("axis"))               # squeeze: the other axes keep their strides
        keep = [i for i in range(len(parent.dims)) if i not in axes]
        return Desc(parent.data, tuple(parent.dims[i] for i in keep), tuple(parent.strides[i] for i in keep),
                    parent.itemsize, parent.root, parent.key + (("squeeze",) + tuple(sorted(axes)),))

    def emit(self, plan, n: Node):
        b = self.b
        parent = b.objs.get(self.planned[n])
        if n.op in ("reshape", "expand_dims"):
            view = self._dims_call("PyArray_Newshape", parent, [b.size(plan, plan.size_source(d)) for d in n.shape],
                                   f", i32 {NPY_CORDER}")
        elif n.op == "transpose":
            view = self._dims_call("PyArray_Transpose", parent, [str(a) for a in n.attr("axes")], "")
        elif plan.var[n] in b.descs:             # a view of an input's memory
            d = b.descs[plan.var[n]]
            view = self._over(b.objs[d.root], d)
        else:
            view = self._over(parent, self._desc(plan, n, b.vw.of_obj(plan, self.planned[n], n.args[0])))
        b.owned.append(view)
        b.objs[plan.var[n]] = view

    def _dims_call(self, fn: str, parent: str, values: list, tail: str) -> str:
        """fn(parent, &PyArray_Dims{values, len}, ...): a new reference, or NULL (we fail)."""
        ir = self.b.ir
        arr = ir.alloca(f"[{max(len(values), 1)} x i64]")
        for i, v in enumerate(values):
            ir.do(f"store i64 {v}, ptr {ir.op(f'getelementptr inbounds i64, ptr {arr}, i64 {i}')}, align 8")
        dims = ir.alloca("{ptr, i32}")              # PyArray_Dims
        ptr_field = ir.op(f"getelementptr inbounds {{ptr, i32}}, ptr {dims}, i32 0, i32 0")
        len_field = ir.op(f"getelementptr inbounds {{ptr, i32}}, ptr {dims}, i32 0, i32 1")
        ir.do(f"store ptr {arr}, ptr {ptr_field}, align 8")
        ir.do(f"store i32 {len(values)}, ptr {len_field}, align 8")
        r = ir.call("ptr", fn, f"ptr {parent}", f"ptr {dims}{tail}")
        self.b.null_fails(r, self.b.owned)
        return r

    def _over(self, parent: str, d: Desc) -> str:
        """An ndarray of d's dims and strides over parent's memory (its dtype; writeable when
        parent is), parent its base."""
        b, ir, at = self.b, self.b.ir, rt_native.ARRAY_FIELDS
        nd = len(d.dims)
        dims, strides = ir.alloca(f"[{max(nd, 1)} x i64]"), ir.alloca(f"[{max(nd, 1)} x i64]")
        for i, (n, st) in enumerate(zip(d.dims, d.strides)):
            ir.do(f"store i64 {n}, ptr {ir.op(f'getelementptr inbounds i64, ptr {dims}, i64 {i}')}, align 8")
            ir.do(f"store i64 {st}, ptr {ir.op(f'getelementptr inbounds i64, ptr {strides}, i64 {i}')}, align 8")
        descr = ir.field(parent, at["descr"], "ptr")
        ir.call("void", "Py_IncRef", f"ptr {descr}")         # NewFromDescr steals it
        flags = ir.op(f"and i32 {ir.field(parent, at['flags'], 'i32')}, {rt_native.NPY_ARRAY_WRITEABLE}")
        view = ir.call("ptr", "PyArray_NewFromDescr", f"ptr {ir.const_ptr(np.ndarray)}", f"ptr {descr}",
                       f"i32 {nd}", f"ptr {dims}", f"ptr {strides}", f"ptr {ir.op(f'inttoptr i64 {d.data} to ptr')}",
                       f"i32 {flags}", "ptr null")
        b.null_fails(view, b.owned)
        ir.call("void", "Py_IncRef", f"ptr {parent}")        # SetBaseObject steals it (on failure too)
        rc = ir.call("i32", "PyArray_SetBaseObject", f"ptr {view}", f"ptr {parent}")
        ok = ir.label("based")
        ir.do(f"br i1 {ir.op(f'icmp eq i32 {rc}, 0')}, label %{ok}, label %{b._cleanup(tuple(b.owned) + (view,))}")
        ir.block(ok)
        return view


__all__ = ["ViewObjects", "VIEW_OPS"]
