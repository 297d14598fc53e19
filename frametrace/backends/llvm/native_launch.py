"""Allocation and kernel launch of a native entry (native_entry.py): outputs and scratch by
PyArray_New (np.empty), the failure paths that drop what the entry owns (shared by prefixes),
and each kernel's call over its split extent, without the GIL when its work is large."""
from __future__ import annotations

import numpy as np

from ...lower.fusion import KernelStep
from . import native_calls, runtime
from .native_ir import NotNative

# kernels with at least this much work run with the GIL released (a release costs ~25 ns)
GIL_WORK = 1 << 15


class Launch:
    """Mixin of native_entry._Builder (uses its ir, tr, objs, owned, slots, copies, calls, products, vw,
    scalar_args, size, _node_of, _cleanups, _pending_cleanups)."""

    def _alloc(self, plan, var, shape, dtype, node=None):
        """np.empty(shape, dtype) as `var`; allocation `node` in NumPy's layout (native_layouts.py)."""
        ir = self.ir
        dims = ir.alloca(f"[{max(len(shape), 1)} x i64]")
        values = [self.size(plan, plan.size_source(d)) for d in shape]
        for i, v in enumerate(values):
            p = ir.op(f"getelementptr inbounds i64, ptr {dims}, i64 {i}")
            ir.do(f"store i64 {v}, ptr {p}, align 8")
        strides = "null" if node is None or self.layouts is None else self.layouts.strides(node, values)
        arr = ir.call("ptr", "PyArray_New", f"ptr {ir.const_ptr(np.ndarray)}", f"i32 {len(shape)}", f"ptr {dims}",
                      f"i32 {np.dtype(dtype).num}", f"ptr {strides}", "ptr null", "i32 0", "i32 0", "ptr null")
        self.null_fails(arr, self.owned)
        self.owned.append(arr)
        self.objs[var] = arr

    def null_fails(self, value, live):
        """NULL (an exception is set): drop what we own, return NULL."""
        ir = self.ir
        ok = ir.label("ok")
        ir.do(f"br i1 {ir.op(f'icmp eq ptr {value}, null')}, label %{self._cleanup(tuple(live))}, label %{ok}")
        ir.block(ok)

    def _cleanup(self, live: tuple) -> str:
        """The label of a block that drops `live` (the last first) and returns NULL, emitted
        after the function's body (_finish). Blocks are shared by prefixes: the failure paths of
        N allocations take N blocks, not N * N decrefs (a graph of 700 allocations made an entry
        of 250,000 lines that LLVM took 37 s to build)."""
        label = self._cleanups.get(live)
        if label is None:
            label = self._cleanups[live] = self.ir.label("err")
            self._pending_cleanups.append((label, live[-1] if live else None,
                                           self._cleanup(live[:-1]) if live else None))
        return label

    def _launch(self, plan, step, run, check=None):
        """Emit step: a copy, or a kernel's allocations and call (after `check(pack)`, the
        flag check of a writing kernel, given the packed arguments both calls share)."""
        ir = self.ir
        if not isinstance(step, KernelStep):       # a view (nothing to do), a copy or a NumPy call
            if step.node in self.calls:
                native_calls.emit_call(self, plan, step.node)
                return
            if step.node in self.vo.planned:
                self.vo.emit(plan, step.node)
                return
            d, src, cast = self.copies.get(step.node, (None, None, None))
            if isinstance(src, tuple) and src[0] == "owned":
                src = self.vw.broadcast(self.vw.of_obj(plan, plan.var[src[1]], src[1]), src[1].shape, d)
            if src is not None:
                self.vw.copy(d, src, cast)
            return
        for v in step.copies:                      # `{v}_before = v.copy()` (wrapper.py)
            node = self._node_of(plan, v)
            self._alloc(plan, f"{v}_before", node.shape, node.dtype)
            self.vw.copy(self.vw.of_obj(plan, f"{v}_before", node), self.vw.of_obj(plan, v, node))
        for name, like, dt in step.scratch:
            self._alloc(plan, name, like.shape, dt)
        for n in step.allocs:
            self._alloc(plan, plan.var[n], n.shape, n.dtype, n)
        for n, donor in step.reuse:                # (after the allocations: the donor may be one)
            self.objs[plan.var[n]] = self.objs[plan.var[donor]]
        for n, _, _ in step.products:              # BLAS where the sizes say (its out: n's array)
            self._blas(plan, n)
        k = step.kernel
        pack = ir.alloca(f"[{max(len(k.buffers) + len(k.slots), 1)} x i64]")
        for i, b in enumerate(k.buffers):
            if b.source not in self.objs:
                raise NotNative(f"buffer {b.source}")
            p = ir.op(f"getelementptr inbounds i64, ptr {pack}, i64 {i}")
            ir.do(f"store ptr {self.objs[b.source]}, ptr {p}, align 8")
        for j in range(len(k.slots)):
            ty, value = self.slots[(k.name, j)]
            p = ir.op(f"getelementptr inbounds i64, ptr {pack}, i64 {len(k.buffers) + j}")
            ir.do(f"store {ty} {value}, ptr {p}, align 8")
        relaid = [n for n, _ in step.reuse if self.layouts is not None and n in self.layouts.lay.index]
        if check is not None:
            if relaid:
                raise NotNative("a flag check before a result that may need NumPy's layout")
            check(pack)
        self._call_kernel(plan, k, run, pack)
        for n in relaid:                           # NumPy's layout: itself or a copy (layouts.relayout)
            self.layouts.relayout(n, plan.var[n])

    def _blas(self, plan, n):
        """`fn(a, b, out)` unless our nest computes product n (native_entry._plan_product);
        operands of another dtype through runtime.matmul_cast (cast into buffers kept across
        calls), as the wrapper's matmul_call. NumPy's exception, if any, propagates (NULL) as
        from the wrapper's call."""
        ir = self.ir
        fn, a, b, ours, cast = self.products[n]
        blas, done = ir.label("blas"), ir.label("blasdone")
        ir.do(f"br i1 {ours}, label %{done}, label %{blas}")
        ir.block(blas)
        if cast is not None:
            r = self.py_call(runtime.matmul_cast, ir.const_ptr(fn), self.objs[a], self.objs[b], ir.const_ptr(cast),
                             self.objs[plan.var[n]])
        else:
            r = self.py_call(fn, self.objs[a], self.objs[b], self.objs[plan.var[n]])
        ir.call("void", "Py_DecRef", f"ptr {r}")
        ir.do(f"br label %{done}")
        ir.block(done)

    def _lone_ufunc(self, plan, step):
        """(ufunc, operand pointers) of a graph that is one in-place ufunc (step.numpy_call,
        flag_checks.py), its output passed positionally as NumPy's `out`; None when an
        operand is not an object the entry holds."""
        if getattr(step, "numpy_call", None) is None:
            return None
        ufunc, operands, dst, _ = step.numpy_call
        self.tr.keep.append(ufunc)
        ptrs = []
        for x in list(operands) + [dst]:
            if isinstance(x, tuple):
                self.tr.keep.append(x[1])
                ptrs.append(self.ir.const_ptr(x[1]))
            elif plan.var.get(x) in self.objs:
                ptrs.append(self.objs[plan.var[x]])
            elif plan.var.get(x) in self.scalar_args:     # a Python scalar argument, as NumPy gets it
                ptrs.append(self.scalar_args[plan.var[x]])
            else:
                return None
        return ufunc, ptrs

    def _call_kernel(self, plan, k, run, pack):
        """The call of kernel k over its split extent, without the GIL when its work is large;
        from runtime.PARALLEL_THRESHOLD on (a full-tier kernel: a quick one misses there, see
        native_entry._prechecks), through runtime.call, which splits it over the thread pool
        as the wrapper does (or runs it on this thread: config.num_threads, FRAMETRACE_THREADS)."""
        ir = self.ir
        up = getattr(run, "tiers", None)
        if k.tier == "quick" and up is not None:   # through the cell the full tier's build rewrites
            cell = ir.op(f"inttoptr i64 {up.cell(k.name, run.module.address(k.name))} to ptr")
            fn = ir.op(f"load ptr, ptr {cell}, align 8")
        else:
            fn = ir.op(f"inttoptr i64 {run.module.address(k.name)} to ptr")
        extent = self.size(plan, k.split_extent)
        call = f"call void {fn}(i64 0, i64 {extent}, ptr {pack})"
        work = self.size(plan, k.work)
        if k.work.isdigit():
            if int(k.work) >= runtime.PARALLEL_THRESHOLD and not (extent.isdigit() and int(extent) < 2):
                self._pool_call(plan, k, run, pack, extent, work)
            elif int(k.work) >= GIL_WORK:
                self._without_gil(call)
            else:
                ir.do(call)
            return
        big, small, done = ir.label("gil"), ir.label("nogil"), ir.label("ran")
        ir.do(f"br i1 {ir.op(f'icmp sge i64 {work}, {GIL_WORK}')}, label %{big}, label %{small}")
        ir.block(big)
        if k.tier == "quick":
            self._without_gil(call)
        else:
            pool, alone = ir.label("pool"), ir.label("alone")
            ir.do(f"br i1 {ir.op(f'icmp sge i64 {work}, {runtime.PARALLEL_THRESHOLD}')}, label %{pool}, label %{alone}")
            ir.block(pool)
            self._pool_call(plan, k, run, pack, extent, work)
            ir.do(f"br label %{done}")
            ir.block(alone)
            self._without_gil(call)
        ir.do(f"br label %{done}")
        ir.block(small)
        ir.do(call)
        ir.do(f"br label %{done}")
        ir.block(done)

    def _pool_call(self, plan, k, run, pack, extent, work):
        """runtime.call(kernel, extent, work, packed arguments as bytes): the wrapper's call of
        a kernel large enough for the thread pool (ctypes releases the GIL around each piece)."""
        ir = self.ir
        fn = run.module.functions[k.name]
        self.tr.keep.append(fn)
        n = max(len(k.buffers) + len(k.slots), 1)
        args = ir.call("ptr", "PyBytes_FromStringAndSize", f"ptr {pack}", f"i64 {8 * n}")
        self.null_fails(args, self.owned)
        live = self.owned + [args]
        objs = []
        for v in (extent, work):
            o = ir.call("ptr", "PyLong_FromLongLong", f"i64 {v}")
            self.null_fails(o, live + objs)
            objs.append(o)
        self.owned += [args] + objs              # (dropped if the call fails)
        r = self.py_call(runtime.call, ir.const_ptr(fn), *objs, args)
        del self.owned[-3:]
        for o in [r, args] + objs:
            ir.call("void", "Py_DecRef", f"ptr {o}")

    def _without_gil(self, call):
        ts = self.ir.call("ptr", "PyEval_SaveThread")
        self.ir.do(call)
        self.ir.call("void", "PyEval_RestoreThread", f"ptr {ts}")
