"""NumPy's layouts of the arrays a native entry allocates (native_entry.py; layouts.py decides).

Where every allocation is C order for C-contiguous inputs (layouts.Layouts.order_keeping), the
entry checks the inputs' C-contiguity and allocates in C order, nothing else. Where the layout
follows a transpose (an einsum `qhd,khd->hqk` is a sum over transposed operands: NumPy's K
order lays its result out as the operands are), or an input is not C-contiguous, the entry
asks the wrapper's own `Layouts` object, once per call, through the C API:

    L = layouts(inputs, symbol_values)     # None (all C order), or (strides or None) per allocation

and allocates each array with its strides (PyArray_New over fresh memory, as layouts.alloc
does with np.ndarray(buffer=np.empty(size)): strides that leave that memory give C order, as
alloc's fallback does); a kernel's result written over a dead temporary gets
`layouts.relayout(a, L[i])` (itself, or a copy in NumPy's layout). The layouts' size classes
make the call a few integer comparisons (a dict lookup for sizes seen before).

Allocations whose layout depends on a value the wrapper computes (Layouts.late) stay on the
Python path (NotNative).
"""
from __future__ import annotations

from csrc_free_runtime import native as rt_native

from .layouts import Layouts, relayout
from .native_ir import NotNative

NPY_ARRAY_C_CONTIGUOUS = 0x0001


class NativeLayouts:
    def __init__(self, b, plan, steps, graph, lay=None):
        """lay: the wrapper's Layouts of these steps (run.layouts), if it made one."""
        self.b, self.plan, self.graph = b, plan, graph
        self.lay = lay = lay if lay is not None else Layouts(plan, steps)
        self.L = None                       # i1 "every allocation is C order" and the result
        if not lay:
            return
        if lay.late:
            raise NotNative("an allocation whose layout follows a value NumPy computes")
        ir, at = b.ir, rt_native.ARRAY_FIELDS
        self.fast = "true" if lay.order_keeping else "false"
        for i in sorted(set(lay.c_inputs) | set(lay.stride_inputs)):
            if plan.var[graph.inputs[i]] not in b.objs:
                raise NotNative(f"layout of {plan.var[graph.inputs[i]]}")
        for i in lay.c_inputs if lay.order_keeping else ():
            flags = ir.field(b.objs[plan.var[graph.inputs[i]]], at["flags"], "i32")
            c = ir.op(f"icmp ne i32 {ir.op(f'and i32 {flags}, {NPY_ARRAY_C_CONTIGUOUS}')}, 0")
            self.fast = ir.op(f"and i1 {self.fast}, {c}")
        for s in graph.symbols:
            b.tr.as_int(b.tr.env[plan.sym_names[s]])
        b.tr.keep += [lay, relayout]

    def start(self):
        """Once the checks are over: L = layouts(inputs, symbol_values) unless all is C order
        (a null pointer then); a new reference the entry drops when it returns."""
        if not self.lay:
            return
        b, ir, plan, g = self.b, self.b.ir, self.plan, self.graph
        slow, done = ir.label("lay"), ir.label("laid")
        slot = ir.alloca("ptr")
        ir.do(f"store ptr null, ptr {slot}, align 8")
        ir.do(f"br i1 {self.fast}, label %{done}, label %{slow}")
        ir.block(slow)
        read = set(self.lay.c_inputs) | set(self.lay.stride_inputs)
        inputs = self._tuple([b.objs[plan.var[n]] if i in read else None for i, n in enumerate(g.inputs)])
        syms = self._tuple([("int", b.tr.as_int(b.tr.env[plan.sym_names[s]])) for s in g.symbols], [inputs])
        b.owned += [inputs, syms]            # (dropped if the call fails)
        r = b.py_call(self.lay, inputs, syms)
        del b.owned[-2:]
        for t in (inputs, syms):
            ir.call("void", "Py_DecRef", f"ptr {t}")
        none = ir.op(f"icmp eq ptr {r}, {ir.const_ptr(None)}")
        keep, drop = ir.label("layk"), ir.label("layn")
        ir.do(f"br i1 {none}, label %{drop}, label %{keep}")
        ir.block(drop)                       # every allocation C order after all
        ir.call("void", "Py_DecRef", f"ptr {r}")
        ir.do(f"br label %{done}")
        ir.block(keep)
        ir.do(f"store ptr {r}, ptr {slot}, align 8")
        ir.do(f"br label %{done}")
        ir.block(done)
        self.L = ir.op(f"load ptr, ptr {slot}, align 8")
        b.owned.append(self.L)               # (Py_DecRef of NULL does nothing)

    def _tuple(self, items, live=()) -> str:
        """A new tuple of object pointers, None (None) or ("int", i64 value)."""
        b, ir = self.b, self.b.ir
        t = ir.call("ptr", "PyTuple_New", f"i64 {len(items)}")
        b.null_fails(t, list(b.owned) + list(live))
        for k, it in enumerate(items):
            if isinstance(it, tuple):
                obj = ir.call("ptr", "PyLong_FromLongLong", f"i64 {it[1]}")
                b.null_fails(obj, list(b.owned) + list(live) + [t])
            else:
                obj = ir.const_ptr(None) if it is None else it
                ir.call("void", "Py_IncRef", f"ptr {obj}")
            ir.call("i32", "PyTuple_SetItem", f"ptr {t}", f"i64 {k}", f"ptr {obj}")   # steals obj
        return t

    def _item(self, node) -> str:
        """L[i] of allocation `node` (borrowed), or null when it is C order."""
        ir = self.b.ir
        if self.L is None or node not in self.lay.index:
            return "null"

        def read():
            p = ir.op(f"getelementptr inbounds i8, ptr {self.L}, i64 {24 + 8 * self.lay.index[node]}")
            item = ir.op(f"load ptr, ptr {p}, align 8")
            isnone = ir.op(f"icmp eq ptr {item}, {ir.const_ptr(None)}")
            return ir.op(f"select i1 {isnone}, ptr null, ptr {item}")
        return self._unless_null(self.L, read)

    def _unless_null(self, ptr: str, compute) -> str:
        """A pointer: null when `ptr` is null, else compute()'s (its IR emitted in a block that
        runs only then)."""
        ir = self.b.ir
        slot = ir.alloca("ptr")
        ir.do(f"store ptr null, ptr {slot}, align 8")
        some, done = ir.label("nn"), ir.label("nnd")
        ir.do(f"br i1 {ir.op(f'icmp ne ptr {ptr}, null')}, label %{some}, label %{done}")
        ir.block(some)
        ir.do(f"store ptr {compute()}, ptr {slot}, align 8")
        ir.do(f"br label %{done}")
        ir.block(done)
        return ir.op(f"load ptr, ptr {slot}, align 8")

    def strides(self, node, dims: list) -> str:
        """A pointer to allocation node's strides (i64 array), or null for C order: NumPy's
        layout when L names one that stays inside the array's dense memory."""
        item = self._item(node)
        if item == "null" or node.ndim == 0:
            return "null"
        ir = self.b.ir
        out = ir.alloca(f"[{node.ndim} x i64]")

        def read():
            over = ir.alloca("i32")
            ok, hi, total = "true", "0", str(node.dtype.itemsize)
            for d, n in enumerate(dims):
                at = ir.op(f"getelementptr inbounds i8, ptr {item}, i64 {24 + 8 * d}")
                it = ir.op(f"load ptr, ptr {at}, align 8")
                st = ir.call("i64", "PyLong_AsLongLongAndOverflow", f"ptr {it}", f"ptr {over}")
                ir.do(f"store i64 {st}, ptr {ir.op(f'getelementptr inbounds i64, ptr {out}, i64 {d}')}, align 8")
                big = ir.op(f"icmp sgt i64 {n}, 1")
                small, up = ir.op(f"xor i1 {big}, true"), ir.op(f"icmp sge i64 {st}, 0")
                ok = ir.op(f"and i1 {ok}, {ir.op(f'or i1 {small}, {up}')}")
                last = ir.op(f"sub i64 {n}, 1")
                span = ir.op(f"mul i64 {ir.op(f'select i1 {big}, i64 {last}, i64 0')}, {st}")
                hi = ir.op(f"add i64 {hi}, {span}")
                total = ir.op(f"mul i64 {total}, {n}")
            inside = ir.op(f"icmp sle i64 {ir.op(f'add i64 {hi}, {node.dtype.itemsize}')}, {total}")
            empty = ir.op(f"icmp eq i64 {total}, 0")
            ok = ir.op(f"and i1 {ok}, {ir.op(f'or i1 {inside}, {empty}')}")
            return ir.op(f"select i1 {ok}, ptr {out}, ptr null")
        return self._unless_null(item, read)

    def relayout(self, node, var: str):
        """A kernel's result written over a dead temporary, in NumPy's layout (relayout)."""
        item = self._item(node)
        if item == "null":
            return
        b, ir = self.b, self.b.ir
        slot = ir.alloca("ptr")
        go, keep, done = ir.label("rl"), ir.label("rlk"), ir.label("rld")
        ir.do(f"br i1 {ir.op(f'icmp ne ptr {item}, null')}, label %{go}, label %{keep}")
        ir.block(keep)                       # the entry owns one more reference to the donor
        ir.call("void", "Py_IncRef", f"ptr {b.objs[var]}")
        ir.do(f"store ptr {b.objs[var]}, ptr {slot}, align 8")
        ir.do(f"br label %{done}")
        ir.block(go)                         # itself (a new reference) or a copy
        ir.do(f"store ptr {b.py_call(relayout, b.objs[var], item)}, ptr {slot}, align 8")
        ir.do(f"br label %{done}")
        ir.block(done)
        value = ir.op(f"load ptr, ptr {slot}, align 8")
        b.owned.append(value)
        b.objs[var] = value


__all__ = ["NativeLayouts"]
