"""Native entry of a cache entry: guards + sizes + output allocation + kernel launch in one
METH_FASTCALL builtin generated as LLVM IR (no C anywhere). ISSUE 3 part 6; the ABI half
(builtin creation, C-API addresses, layout checks) is csrc_free_runtime/native.py.

    native = build_native_entry(argnames, guards, bindings, graph_call, input_codes,
                                return_code, namespace, graph, run, name)   # None: Python only
    native.fn(*frame_values)    # the result, or csrc_free_runtime.native.NATIVE_MISS

The generated function does exactly what the Python entry (trace/entry.py) and the LLVM
wrapper (wrapper.py) do, in the same order, for the subset it accepts:

    check nargs; type guards; ndim guards; every other guard      (native_guards.py)
    bind the symbols; compute the size variables; check the kernels' preconditions
        (empty reductions, writeable destinations, runtime asserts)
    allocate outputs and scratch (PyArray_New = np.empty, in NumPy's layout: native_layouts.py),
        call the kernels by address (the GIL released from GIL_WORK on; from
        runtime.PARALLEL_THRESHOLD on through runtime.call, which splits them over the pool)
    build the return value (an array, a NumPy scalar of a 0-d result, an input, an int,
        None/bools, or a tuple of those), drop the temporaries, count the hit

Basic-slice views of inputs and copies into them, same dtype or a safe cast (`a[3] = r`,
`a[:2, :2] = 0.0`: wrapper steps "getitem" and "assign") are done here natively
(native_views.py); views of values the call computes are array objects made through NumPy's C
API (native_view_objects.py). Pure NumPy calls (np.matmul, opaque functions) are made through
the C API (native_calls.py). Anything else (graph breaks, other NumPy fallback steps, unbacked
sizes, overlap copies, assignments into values the call computes, globals/attributes as graph
inputs, float arithmetic in guards) raises NotNative (FRAMETRACE_LOGS=native says which) and
the entry keeps its Python path only. Every check that fails at run time
returns the miss sentinel *before* anything is allocated, so a miss has no side effects.
Inputs are borrowed from the caller (alive until we return); outputs are owned by us until
handed to the result, so every array the kernels touch outlives the kernel call.
"""
from __future__ import annotations

import ast
import ctypes
import logging

import numpy as np
import sympy

from csrc_free_runtime import native as rt_native

from ...config import config
from ...ir.graph import Node
from ...ir.registry import get_op, size_warnings
from ...logs import get_logger
from ...stats import counters
from ...lower.fusion import KernelStep
from ...sources import AttrSource, ChainedSource, GetItemSource
from ...lower.views import broadcast_ok
from ...lower.weak_ints import range_checks
from ...codegen.llvm_kernels import fpflags
from . import fp_errors, native_calls, native_fp, runtime, strict
from .native_layouts import NativeLayouts
from .native_check import CheckTranslator, emit_release, ordered
from .native_guards import _FUNCTION_MEMBERS, IR, OVERFLOW_DECLS, NotNative, Translator, V
from .native_launch import Launch
from .native_return import ReturnValue
from .native_views import COPY_KINDS, Views, constant_bytes, safe_cast
from .native_view_objects import ViewObjects

_log = get_logger("output_code")
_why = get_logger("native")

NPY_ARRAY_C_CONTIGUOUS = 0x0001
NPY_ARRAY_F_CONTIGUOUS = 0x0002
# PyObject_CallFunctionObjArgs(callable, arg, ..., NULL): calls into fp_errors.py
_CALL_OBJ_ARGS = ctypes.cast(ctypes.pythonapi.PyObject_CallFunctionObjArgs, ctypes.c_void_p).value
OPT_LEVEL = 0          # straight-line code calling optimised kernels: O0 builds in ~5 ms (O2: ~25 ms), runs as fast


def build_native_entry(argnames, guards, bindings, graph_call, input_codes, return_code, namespace,
                       graph, run, name="entry", input_sources=None, where=""):
    """A csrc_free_runtime.native.NativeEntry for this cache entry, or None (Python path only).
    input_sources: the graph inputs' Sources (their codes are `input_codes`); inputs reached
    through attributes and items (a model's weights) are read by the guards' walk. `where`: the
    user's file:line, for the `native` log channel's line saying why there is no native entry."""
    if not getattr(config, "native_dispatch", False) or not rt_native.AVAILABLE or not runtime.ARRAY_LAYOUT_OK:
        return None
    try:
        walk = walks(guards, input_sources or ())
        return _Builder(argnames, namespace, walk).build(guards, bindings, graph_call, input_codes, return_code,
                                                         graph, run, name, input_sources)
    except NotNative as exc:
        _why.info("no native entry for %s%s: %s (each call runs the Python wrapper: guards in Python, "
                  "one ctypes call per kernel)", name, f" ({where})" if where else "", exc)
        return None
    except Exception as exc:                  # a bug here must not cost the user the entry
        if strict():
            raise
        _why.warning("native entry for %s failed (%s: %s); the Python path serves it", name,
                     type(exc).__name__, exc, exc_info=True)
        counters.bump("internal_errors")
        return None


def walks(guards, input_sources) -> bool:
    """Does the entry read inside frame values beyond arrays' fields (attributes, items)?
    Then it is built on the native check's translator (native_check.py: each source read once,
    the references it takes released at every exit)."""
    for src in [g.source for g in guards] + list(input_sources):
        while isinstance(src, ChainedSource):
            if isinstance(src, GetItemSource) or (isinstance(src, AttrSource) and src.member not in _FUNCTION_MEMBERS):
                return True
            src = src.base
    return False


class _Builder(Launch, ReturnValue):
    def __init__(self, argnames, namespace, walk=False):
        self.ir = IR()
        self.walk = walk
        self.tr = (CheckTranslator if walk else Translator)(self.ir, argnames, namespace)
        self.argnames = tuple(argnames)
        self.objs: dict = {}          # wrapper variable -> ptr of its array
        self.owned: list = []         # arrays we allocated (decref'd before returning)
        self.slots: dict = {}         # (kernel, slot index) -> (llvm type, value)
        self.will_own: set = set()    # wrapper variables that will hold arrays we allocate
        self.vw = Views(self)
        self.vo = ViewObjects(self)   # views of computed values as array objects
        self.descs: dict = {}         # wrapper variable -> native_views.Desc of an input or its view
        self.copies: dict = {}        # assign node (a wrapper step) -> (dst Desc, source, cast)
        self.calls: dict = {}         # NumPy-call step node -> (callable, args): native_calls.py
        self.out_calls: set = set()   # in-place assignments a planned ufunc call writes itself (out=)
        self.products: dict = {}      # product node -> (NumPy's product, a var, b var, i1 our nest, cast dtype)
        self.scalar_args: dict = {}   # var of a by-value input -> its object (native_fp.numpy_or_check)
        self.layouts = None           # NativeLayouts of the graph's allocations
        self._cleanups: dict = {}     # owned pointers -> label of the block dropping them (_cleanup)
        self._pending_cleanups: list = []

    # -- the whole function ----------------------------------------------------------------
    def build(self, guards, bindings, graph_call, input_codes, return_code, graph, run, name, input_sources=None):
        ir, tr = self.ir, self.tr
        ir.require(ir.op(f"icmp eq i64 %nargs, {len(self.argnames)}"))
        # guard records (guards/records.py); a walk reads every object it reaches first (type,
        # identity guards), then ranks and lengths, then fields (native_check.ordered)
        if self.walk:
            tr.want([g.source for g in guards] + list(input_sources or ()) + [src for _, src in bindings])
        for guard in ordered(guards) if self.walk else tr.hoisted(guards):
            tr.require_top(guard)
        for local, source in bindings:             # (local, the Source of a symbol)
            tr.env[local] = tr.source_size(source)
        steps, plan = [], None
        if graph_call is not None:
            plan, steps = getattr(run, "plan", None), getattr(run, "steps", None)
            if plan is None or steps is None or (any(isinstance(s, KernelStep) for s in steps)
                                                 and run.module is None):
                raise NotNative("not an LLVM-compiled graph")
            if fp_errors.ErrorModes.of(graph) is not None:
                raise NotNative("a traced np.errstate block (the wrapper decides what its flags report)")
            self._bind_graph(plan, graph, bindings, input_sources or input_codes)
            self._prechecks(plan, steps, graph)
            self._layout_and_range_checks(plan, steps, graph, getattr(run, "layouts", None))
            self._numpy_handoff_checks(plan, steps, graph)
            self._spend_tier_budget(plan, steps, run)
        result = self._plan_return(ast.parse(return_code, mode="eval").body, plan, graph)
        flags = fp_errors.GraphFlags(0)   # what NumPy may report for the kernels' work
        for s in steps:
            if isinstance(s, KernelStep):
                flags.kinds |= fpflags.kinds(s.kernel)
        fp = flags.kinds != 0
        regions = native_fp.written_regions(self, plan, graph) if fp else []
        ir.fail = None                 # from here on, nothing may miss
        if plan is not None:
            self.layouts.start()
        test_at = getattr(plan, "flag_test_at", None) if plan is not None else None   # (flag_checks.py)
        after = getattr(plan, "report_after", None) if plan is not None else None
        saved = native_fp.snapshot(self, regions if test_at is None and after is None else [], flags) \
            if fp else None
        for i, step in enumerate(steps):
            if i == after:                       # NumPy's reports after the write (fp_probes.py)
                self._launch(plan, step, run)
                native_fp.report_after_write(self, step.after_write)
                continue
            if i == test_at and saved is not None and getattr(step, "check", None) is not None:
                k = step.check
                small = k.work.isdigit() and int(k.work) <= native_fp.SMALL_CHECK
                lone = self._lone_ufunc(plan, step)
                least = native_fp.lone_ufunc_min(step.numpy_call) if lone is not None else 0
                if lone is not None and not (k.work.isdigit() and int(k.work) < least):
                    done = ir.label("lonedone")    # NumPy's own call where the check must run
                    def numpy_or_check(pack, k=k, lone=lone, done=done, least=least):
                        native_fp.numpy_or_check(self, flags, lone, self.size(plan, k.work), k.work.isdigit(),
                                                 lambda: self._call_kernel(plan, k, run, pack), done, least)
                    self._launch(plan, step, run, check=numpy_or_check)
                    ir.do(f"br label %{done}")
                    ir.block(done)
                    continue
                self._launch(plan, step, run, check=lambda pack, k=k, small=small: native_fp.test_before_writing(
                    self, flags, lambda: self._call_kernel(plan, k, run, pack), small))
                continue
            if i == test_at and saved is not None:
                native_fp.test_before_writing(self, flags)
            self._launch(plan, step, run)
        if fp:
            native_fp.miss_on_fp_flags(self, saved, flags)
        out = self._make(result)
        for p in self.owned:
            ir.call("void", "Py_DecRef", f"ptr {p}")
        return self._finish(out, run, name)

    def _finish(self, out, run, name):
        ir = self.ir
        entry = rt_native.NativeEntry()
        c = ir.op(f"inttoptr i64 {entry.counter_address} to ptr")
        hits = ir.op(f"load i64, ptr {c}, align 8")
        fname = "ft_native_" + "".join(ch if ch.isalnum() else "_" for ch in name)
        # a walk's references (native_check.CheckTranslator) are dropped at every exit: the
        # result, a miss, an error (NULL)
        release = f"  call void @{fname}.release(ptr %own)" if self.walk else None
        n = max(getattr(self.tr, "owned", 0), 1)
        ir.do(f"store i64 {ir.op(f'add i64 {hits}, 1')}, ptr {c}, align 8")
        if release:
            ir.lines.append(release)
        ir.do(f"ret ptr {out}")
        for label, p, then in self._pending_cleanups:
            ir.block(label)
            if p is None:
                if release:
                    ir.lines.append(release)
                ir.do("ret ptr null")
            else:
                ir.call("void", "Py_DecRef", f"ptr {p}")
                ir.do(f"br label %{then}")
        head, start, miss = [], [], []
        if release:
            head = emit_release(f"{fname}.release", n)
            start = [f"  %own = alloca [{n} x ptr], align 8",
                     f"  call void @llvm.memset.p0.i64(ptr %own, i8 0, i64 {8 * n}, i1 false)"]
            miss = [release]
        text = "\n".join(head + [f"define ptr @{fname}(ptr %self, ptr %args, i64 %nargs) {{", "entry:"] + ir.allocas
                         + start + ["  br label %start", "start:"] + ir.lines
                         + ["miss:"] + miss + [f"  %missinc = inttoptr i64 {rt_native.C_ADDRESSES['Py_IncRef']} to ptr",
                            "  call void %missinc(ptr %self)", "  ret ptr %self", "}", "", OVERFLOW_DECLS]
                         + (["declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)"] if release else []) + [""])
        from ...codegen.llvm_jit import compile_ir
        module = compile_ir(text, [fname], opt=OPT_LEVEL)
        if _log.isEnabledFor(logging.INFO):
            _log.info("native entry %s:\n%s", fname, text)
        keep = (module, run, dict(self.tr.namespace), tuple(self.tr.keep))
        return entry.attach(module.address(fname), fname, keep, text)

    # -- graph inputs, symbols and sizes --------------------------------------------------
    def _bind_graph(self, plan, graph, bindings, inputs):
        """inputs: the graph inputs' Sources (or their codes: then only frame values)."""
        tr = self.tr
        if plan.sym_binding:
            raise NotNative("data-dependent (unbacked) sizes")
        if len(bindings) != len(graph.symbols):
            raise NotNative("symbols and bindings differ")
        for s, (local, _) in zip(graph.symbols, bindings):
            tr.env[plan.sym_names[s]] = tr.env[local]
        for node, src in zip(graph.inputs, inputs):
            code = src if isinstance(src, str) else src.code
            var = plan.var[node]
            if code in tr.argindex:
                if plan.by_value(node):
                    tr.env[var] = tr.number(code)
                    self.scalar_args[var] = tr.arg(code).ref
                elif tr.types.get(code) is np.ndarray:
                    self.objs[var] = tr.arg(code).ref
                else:
                    raise NotNative(f"graph input {code} is not a guarded ndarray")
            elif not self.walk or isinstance(src, str):
                raise NotNative(f"graph input {code} is not a frame value")
            elif plan.by_value(node):             # an attribute's int/float (its type guarded)
                tr.env[var] = tr.source_number(src)
                self.scalar_args[var] = tr.source_obj(src)
            elif tr.types.get(code) is np.ndarray:   # read by the walk, held until we return
                self.objs[var] = tr.source_obj(src)
            else:
                raise NotNative(f"graph input {code} is not a guarded ndarray")

    def size(self, plan, src) -> str:
        """i64 value of a wrapper size source: a literal, a symbol or a size variable."""
        src = str(src)
        if src.lstrip("-").isdigit():
            return src
        env = self.tr.env
        if src not in env:
            if plan is None or src not in plan.size_exprs:
                raise NotNative(f"size {src}")
            expr = plan.size_exprs[src]
            if expr.is_integer is not True:
                raise NotNative(f"non-integer size {expr}")
            env[src] = V("int", self.tr.sym_int(expr, lambda s: self.tr.named(plan.sym_names.get(s))))
        return self.tr.as_int(env[src])

    def _prechecks(self, plan, steps, graph):
        """Everything that may miss, before the first allocation."""
        ir, tr = self.ir, self.tr
        will_own = self.will_own
        for expr, _ in getattr(graph, "runtime_asserts", ()):
            if expr is not sympy.true:
                ir.require(tr.sym_bool(expr, lambda s: tr.named(plan.sym_names.get(s))))
        for step in steps:
            if not isinstance(step, KernelStep):
                self._wrapper_step(plan, step.node)
                continue
            if any(size_warnings(j.node) for j in step.jobs):
                raise NotNative("a reduction may warn (np.var with ddof >= the count: reports.py)")
            for n, use, when in step.products:     # our nest or BLAS, as the sizes say
                self._plan_product(plan, n, use, when)
            for v in step.copies:                   # the source reads the old contents: a copy
                node = self._node_of(plan, v)
                if v not in self.objs and v not in will_own:
                    raise NotNative(f"a copy of {v}")
                if node.dtype.kind not in COPY_KINDS:
                    raise NotNative(f"a copy of {node.dtype}")
                for d in node.shape:
                    self.size(plan, plan.size_source(d))
            for i, base in step.overlap:            # the wrapper copies when np.may_share_memory
                self._require_disjoint(plan, step.kernel.buffers[i].source, base)
            for r in step.empty_checks:
                axis = r.attr("axis")
                axes = axis if isinstance(axis, tuple) else range(r.args[0].ndim) if axis is None else (axis,)
                n = 1
                for d in axes:
                    n = n * r.args[0].shape[d]
                if not isinstance(n, int):
                    ir.require(ir.op(f"icmp ne i64 {self.size(plan, plan.size_source(n))}, 0"))
            for n, _ in step.writable:
                var = plan.var[n]
                if var in will_own:
                    continue                       # a fresh array: writeable
                if var not in self.objs:
                    raise NotNative(f"writeable check of {var}")
                flags = ir.field(self.objs[var], rt_native.ARRAY_FIELDS["flags"], "i32")
                bit = ir.op(f"and i32 {flags}, {rt_native.NPY_ARRAY_WRITEABLE}")
                ir.require(ir.op(f"icmp ne i32 {bit}, 0"))
            for n, _ in step.reuse:
                will_own.add(plan.var[n])
            for name, like, _ in step.scratch:
                will_own.add(name)
                for d in like.shape:
                    self.size(plan, plan.size_source(d))
            for n in step.allocs:
                will_own.add(plan.var[n])
                for d in n.shape:
                    self.size(plan, plan.size_source(d))
            k = step.kernel
            work = self.size(plan, k.work)
            if not k.work.isdigit() and k.tier == "quick":   # the Python path starts the full tier's build
                ir.require(ir.op(f"icmp slt i64 {work}, {runtime.PARALLEL_THRESHOLD}"))
            self.size(plan, k.split_extent)
            for j, s in enumerate(k.slots):
                self.slots[(k.name, j)] = self._slot_value(plan, s)

    def _spend_tier_budget(self, plan, steps, run):
        """Quick-tier kernels spend their work from the tier-up budget (tiers.py); the call that
        would exhaust it misses, and the Python path starts the full tier's build. (Last of the
        checks that may miss: a call missing for another reason spends nothing.)"""
        up = getattr(run, "tiers", None)
        works = [self.size(plan, s.kernel.work) for s in steps
                 if isinstance(s, KernelStep) and s.kernel.tier == "quick"]
        if up is None or not works:
            return
        ir = self.ir
        cell = ir.op(f"inttoptr i64 {ctypes.addressof(up.cells)} to ptr")
        left = ir.op(f"load i64, ptr {cell}, align 8")
        for w in works:
            left = ir.op(f"sub i64 {left}, {w}")
        ir.do(f"store i64 {left}, ptr {cell}, align 8")
        ir.require(ir.op(f"icmp sgt i64 {left}, 0"))

    def _plan_product(self, plan, n, use, when):
        """A product a kernel computes when `when` holds (lower/matmul.py), else BLAS before the
        kernel into its output (wrapper.py: `use`, the kernel's flag, and np.matmul(..., out=));
        the sizes decide, before anything is allocated."""
        a, b = n.args
        if not (isinstance(a, Node) and isinstance(b, Node)) or n.call_attrs:
            raise NotNative("a product with keyword arguments")
        mixed = a.dtype != n.dtype or b.dtype != n.dtype
        if mixed and n.dtype.kind not in "fc":
            raise NotNative("a product BLAS computes from operands cast to its dtype")
        for x in (a, b):
            var = plan.var.get(x)
            if var not in self.objs and var not in self.will_own:
                raise NotNative(f"a product of {var}, which the entry does not hold")
        tr = self.tr
        cond = "true" if when is sympy.true else "false" if when is sympy.false else \
            tr.sym_bool(when, lambda s: tr.named(plan.sym_names.get(s)))
        tr.env[use] = V("bool", cond)
        fn = get_op(n.op).ref if n.op == "dot" else np.matmul      # (wrapper.matmul_call)
        tr.keep += [fn, n.dtype]
        self.products[n] = (fn, plan.var[a], plan.var[b], cond, n.dtype if mixed else None)

    def _node_of(self, plan, var):
        nodes = getattr(self, "_nodes", None) or {v: n for n, v in plan.var.items()}
        self._nodes = nodes
        if var not in nodes:
            raise NotNative(f"no node for {var}")
        return nodes[var]

    def input_desc(self, plan, x):
        """The Desc of a graph input or of a native view of one."""
        var = plan.var.get(x) if isinstance(x, Node) else None
        if var in self.descs:
            return self.descs[var]
        if var not in self.objs or var in self.will_own or plan.cat[x] != "input":
            raise NotNative(f"a view or copy of {var}, which this call computes")
        self.descs[var] = self.vw.of_obj(plan, var, x)
        return self.descs[var]

    def _wrapper_step(self, plan, n):
        """Prechecks of a wrapper step done natively: a view (native_view_objects.py; a basic
        view of an input only written into: a descriptor), an assignment into a view of an
        input (same dtype or a safe cast; NumPy's checks: writeable, overlap), a NumPy call."""
        ir = self.ir
        if self.vo.plan(plan, n):
            return
        if n.op == "getitem":
            self.descs[plan.var[n]] = self.vw.getitem(plan, n, self.input_desc(plan, n.args[0]))
            return
        if n.op != "assign":
            if not native_calls.plan_call(self, plan, n):   # np.matmul, an opaque call: made here
                raise NotNative(f"wrapper step {n.op}")
            return
        if n in self.out_calls:                          # its ufunc wrote the destination (out=)
            return
        dst, src = n.args
        d = self.input_desc(plan, dst)
        if dst.dtype.kind not in COPY_KINDS:
            raise NotNative(f"assignment into {dst.dtype}")
        flags = ir.field(self.objs[d.root], rt_native.ARRAY_FIELDS["flags"], "i32")
        ir.require(ir.op(f"icmp ne i32 {ir.op(f'and i32 {flags}, {rt_native.NPY_ARRAY_WRITEABLE}')}, 0"))
        if not isinstance(src, Node):
            bits = constant_bytes(src, dst.dtype)
            if bits is None:
                raise NotNative(f"assignment of {type(src).__name__} into {dst.dtype}")
            self.copies[n] = (d, ("const", bits), None)
            return
        extra = max(src.ndim - dst.ndim, 0)
        cast = safe_cast(src.dtype, dst.dtype)
        if (src.dtype != dst.dtype and cast is None) or plan.by_value(src) or \
                not broadcast_ok(src.shape[extra:], dst.shape):
            raise NotNative("an assignment that casts (not safely) or broadcasts at run time")
        var = plan.var[src]
        if var in self.will_own and self.vo.root(var) not in self.objs:   # fresh memory: disjoint from dst's input
            for size in src.shape:
                self.size(plan, plan.size_source(size))
            self.copies[n] = (d, ("owned", src), cast)
            return
        s = self.vw.broadcast(self.input_desc(plan, src), src.shape, d)
        if cast is None and s.key == d.key and s.strides == d.strides:
            self.copies[n] = (d, None, None)       # x[i] = x[i]: nothing changes
            return
        self.vw.require_copyable(d, s, same_ok=cast is None)
        self.copies[n] = (d, s, cast)

    def _layout_and_range_checks(self, plan, steps, graph, layouts=None):
        """NumPy's layouts of the allocations (native_layouts.py), and a miss (the Python path
        decides) unless every run-time int operand fits the integer dtype it meets (else NumPy
        raises OverflowError: lower/weak_ints.py)."""
        ir, tr = self.ir, self.tr
        self.layouts = NativeLayouts(self, plan, steps, graph, layouts)
        for n in plan.nodes:
            checks = range_checks(n) if plan.cat[n] == "pw" else None
            if checks == "numpy":
                raise NotNative("a NumPy comparison with a run-time int")
            for a, lo, hi, _ in checks or ():
                if isinstance(a, Node) and plan.cat[a] == "input" and plan.var[a] in tr.env:
                    v = tr.as_int(tr.env[plan.var[a]])
                elif isinstance(a, sympy.Basic):
                    v = self.size(plan, plan.size_source(a))
                else:
                    raise NotNative(f"range check of {a}")
                ir.require(ir.op(f"icmp sge i64 {v}, {lo}"))
                ir.require(ir.op(f"icmp sle i64 {v}, {hi}"))

    def _numpy_handoff_checks(self, plan, steps, graph):
        """What the wrapper hands to NumPy (fp_errors.py): miss unless every input the graph
        writes is contiguous (a self-overlapping one needs NumPy's buffering)."""
        ir = self.ir
        for i in fp_errors.mutated_inputs(graph):
            var = plan.var[graph.inputs[i]]
            if var not in self.objs:
                raise NotNative(f"overlap check of {var}")
            flags = ir.field(self.objs[var], rt_native.ARRAY_FIELDS["flags"], "i32")
            dense = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_F_CONTIGUOUS
            ir.require(ir.op(f"icmp ne i32 {ir.op(f'and i32 {flags}, {dense}')}, 0"))

    def py_call(self, fn, *args: str) -> str:
        """fn(*args) (a new reference, or NULL with an exception set: then we return NULL)."""
        ir = self.ir
        call = ir.op(f"inttoptr i64 {_CALL_OBJ_ARGS} to ptr")
        argv = ", ".join([f"ptr {ir.const_ptr(fn)}"] + [f"ptr {a}" for a in args] + ["ptr null"])
        r = ir.op(f"call ptr (ptr, ...) {call}({argv})")
        self.null_fails(r, self.owned)
        return r

    def _require_disjoint(self, plan, a, b):
        """Miss unless the memory bounds of arrays a and b are disjoint (np.may_share_memory's
        default test: bounds only); the Python path then copies the source as NumPy would."""
        nodes = {v: n for n, v in plan.var.items()}
        if a not in self.objs or b not in self.objs or a not in nodes or b not in nodes:
            raise NotNative(f"overlap check of {a} and {b}")
        ir = self.ir
        (alo, ahi, aempty), (blo, bhi, bempty) = (self._bounds(self.objs[v], nodes[v]) for v in (a, b))
        cross = ir.op(f"and i1 {ir.op(f'icmp ult i64 {alo}, {bhi}')}, {ir.op(f'icmp ult i64 {blo}, {ahi}')}")
        empty = ir.op(f"or i1 {aempty}, {bempty}")
        ir.require(ir.op(f"or i1 {empty}, {ir.op(f'xor i1 {cross}, true')}"))

    def _bounds(self, arr, node):
        """(lowest byte, one past the highest byte, is empty) of an array's memory."""
        ir, at = self.ir, rt_native.ARRAY_FIELDS
        data = ir.op(f"ptrtoint ptr {ir.field(arr, at['data'], 'ptr')} to i64")
        lo, hi, empty = data, ir.op(f"add i64 {data}, {node.dtype.itemsize}"), "false"
        dims, strides = ir.field(arr, at["dimensions"], "ptr"), ir.field(arr, at["strides"], "ptr")
        for d in range(node.ndim):
            n = ir.op(f"load i64, ptr {ir.op(f'getelementptr inbounds i64, ptr {dims}, i64 {d}')}, align 8")
            st = ir.op(f"load i64, ptr {ir.op(f'getelementptr inbounds i64, ptr {strides}, i64 {d}')}, align 8")
            empty = ir.op(f"or i1 {empty}, {ir.op(f'icmp eq i64 {n}, 0')}")
            span = ir.op(f"mul i64 {ir.op(f'sub i64 {n}, 1')}, {st}")     # no overflow: it is memory
            neg = ir.op(f"icmp slt i64 {span}, 0")
            lo = ir.op(f"add i64 {lo}, {ir.op(f'select i1 {neg}, i64 {span}, i64 0')}")
            hi = ir.op(f"add i64 {hi}, {ir.op(f'select i1 {neg}, i64 0, i64 {span}')}")
        return lo, hi, empty

    def _slot_value(self, plan, slot) -> tuple:
        """(llvm type, value) of a kernel's by-value argument."""
        src, env = slot.source, self.tr.env
        if src.startswith("int(") and src.endswith(")"):
            src = src[4:-1]
        v = env.get(src)
        kind = "d" if np.dtype(slot.dtype).kind in "fc" else ("Q" if slot.dtype == "uint64" else "q")
        if v is not None and v.kind == "float":
            if kind != "d":
                raise NotNative(f"float into integer slot {slot.source}")
            return "double", v.ref
        value = self.size(plan, src)
        if kind == "d":
            return "double", self.ir.op(f"sitofp i64 {value} to double")
        if kind == "Q":                # struct.pack("Q", negative) raises: Python decides
            self.ir.require(self.ir.op(f"icmp sge i64 {value}, 0"))
        return "i64", value
