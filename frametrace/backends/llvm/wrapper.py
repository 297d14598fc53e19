"""The generated Python wrapper: one straight-line function per graph.

    def run(inputs, symbol_values):
        in0, in1 = inputs
        s0, = symbol_values
        z0 = s0 * 4                                   # sizes used below
        v3 = _empty((s0, 4), _f8)                     # kernel outputs (C-contiguous)
        _call(_k0, s0, z1, _pk0(_ptr(in0), _ptr(v3), *in0.strides, *v3.strides, z0))
        v4 = _op_transpose(v3, axes=(1, 0))           # NumPy views / fallbacks
        return [v3, v4]

Names starting with `_` are the wrapper's namespace (kernels, pack functions, references).
"""
from __future__ import annotations

import re
import struct

import numpy as np
import sympy

from ...codegen.llvm_kernels import fpflags, pack_format
from ...ir.graph import IndexSlice, Node
from ...ir.ops.advanced_index import ArrayRef, ConstIndex
from ...ir.registry import get_op
from ...lower.fusion import KernelStep, WrapperStep
from ...lower.matmul import product_of
from ...lower.schedule import Plan
from ...lower.fusion import check_positions
from ...ir.ops.elementwise import scalar_operator
from ...ir.ops.loops import written_values
from ...ir.ops.raising import weak_arg
from ...shapes.printer import pycode
from . import fp_errors, runtime
from .reports import ReportCode
from .dead_values import last_uses, ufunc_donor
from .rest import RestOfCall
from .layouts import Layouts, alloc, relayout

INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1


class _Gen:
    def __init__(self, plan: Plan, module):
        self.plan, self.module = plan, module
        self.ns = {"_call": runtime.call, "_ptr": runtime.data_ptr, "_empty": np.empty, "_zeros": np.zeros,
                   "_may_share": runtime.may_share, "_empty_reduction": runtime.empty_reduction,
                   "_read_only": runtime.read_only, "_id": id, "_ndarray": np.ndarray,
                   "_asarray": np.asarray,
                   "_IndexSlice": IndexSlice}
        self.lines: list = []
        self.pre: list = []             # before the body's try (reports.ReportCode.finish)
        self._consts: dict = {}
        self.kernel_refs: dict = {}     # kernel name -> namespace name of its function
        self.by_out: dict = {}          # ufunc node -> the in-place assign it writes (in_place_ufuncs)
        self._names = None              # wrapper variable -> its node (wide_ints)
        self._computed: dict = {}       # node of a wrapper step -> the step's index (wide_ints)
        self.dying: tuple = ()          # the variables dropped after the step being written (dead_values)

    def const(self, value, hint="c") -> str:
        key = (type(value), repr(value))
        if key not in self._consts:
            name = f"_{hint}{len(self._consts)}"
            self._consts[key] = name
            self.ns[name] = value
        return self._consts[key]

    def value(self, n: Node) -> str:
        """The wrapper expression of a node's value as NumPy would hand it over."""
        v = self.plan.var[n]
        return f"{v}[()]" if n in self.plan.stored and n.scalar and n.shape == () else v

    def arg(self, a) -> str:
        if isinstance(a, Node):
            return self.value(a)
        if isinstance(a, tuple):
            inner = ", ".join(self.arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, IndexSlice):
            return f"_IndexSlice({self.arg(a.start)}, {self.arg(a.stop)}, {self.arg(a.step)})"
        if isinstance(a, sympy.Basic):
            if a in (sympy.true, sympy.false):
                return repr(bool(a))
            src = self.plan.size_source(a)
            return src if a.is_integer is not False else f"float({src})"
        if type(a) in (int, bool, str, type(None)) or (type(a) is float and np.isfinite(a)):
            return repr(a)
        return self.const(a)

    def inline(self, n: Node):
        """Python for a wrapper op that needs no call of its reference (the same NumPy
        operation, without the reference's argument conversions), or None."""
        op, x = get_op(n.op), n.args[0] if n.args else None
        if not isinstance(x, Node) or x.ndim == 0:
            return None                           # a NumPy or Python scalar: the reference
        v = self.plan.var[x]
        if n.op == "getitem":                     # getitem_ref: x[py_index(index)]
            parts = [self.index_part(e) for e in n.attr("index")]
            if None in parts:
                return None
            return f"{v}[{''.join(p + ', ' for p in parts)}]" if parts else f"{v}[()]"
        if n.op == "index":                       # index_ref: x[py_entries(entries, arrays)]
            parts = []
            for e in n.attr("entries"):
                if isinstance(e, ConstIndex):
                    return None
                parts.append(self.arg(n.args[1 + e.k]) if isinstance(e, ArrayRef) else self.index_part(e))
            if None in parts:
                return None
            return f"{v}[{''.join(p + ', ' for p in parts)}]"
        if n.op == "transpose":                   # np.transpose(x, axes)
            return f"{v}.transpose({self.arg(tuple(n.attr('axes')))})"
        if n.op == "reshape":                     # np.reshape(x, shape)
            return f"{v}.reshape({self.arg(tuple(n.attr('shape')))})"
        if op.kind == "elementwise" and op.ufunc is not None and not n.call_attrs and op.ref is not op.ufunc:
            # the reference picks Python semantics only when every operand is a Python scalar
            donor = ufunc_donor(self.plan, n, self.dying)
            out = ""
            if donor is not None:                 # NumPy's temporary elision (dead_values.py)
                self.plan.ufunc_donors[n] = donor
                out = f", out={self.plan.var[donor]}"
            return f"{self.const(op.ufunc, f'uf_{n.op}_')}({', '.join(self.arg(a) for a in n.args)}{out})"
        return None

    def index_part(self, e):
        """One canonical index entry as subscript text (py_index's value), or None."""
        if e is None:
            return "None"
        if isinstance(e, IndexSlice):
            if type(e.step) is not int or e.step <= 0 or not all(_int_size(b) for b in (e.start, e.stop)):
                return None                       # py_slice's negative-step cases
            return f"{self.arg(e.start)}:{self.arg(e.stop)}" + (f":{e.step}" if e.step != 1 else "")
        return self.arg(e) if _int_size(e) else None

    def wrapper_step(self, n: Node):
        start = len(self.lines)
        self._wrapper_step(n)
        if n.errstate:                            # NumPy runs it: under its traced np.errstate block
            self.lines[start:] = [f"    with {self.const(np.errstate, 'errstate')}(**{n.errstate!r}):"] + \
                ["    " + line for line in self.lines[start:]]

    def _wrapper_step(self, n: Node):
        op = get_op(n.op)
        if n in self.by_out.values():             # its ufunc wrote the destination (below)
            return
        dst = self.by_out[n].args[0] if n in self.by_out else None
        if dst is not None:                       # `x += y` NumPy runs: np.add(x, y, out=x)
            args = ", ".join(self.arg(a) for a in n.args)
            self.lines.append(f"    {self.plan.var[n]} = {self.const(op.ufunc, f'uf_{n.op}_')}({args}, "
                              f"out={self.plan.var[dst]})    # {n.op} into its in-place destination")
            return
        fast = self.inline(n) if n.dtype is not None else None
        if fast is not None:
            self.lines.append(f"    {self.plan.var[n]} = {fast}    # {n.op}: {n.type_str()}")
            if self.plan.cat[n] in ("fallback", "matmul") and not self.plan.by_value(n):
                v = self.plan.var[n]
                self.lines.append(f"    if type({v}) is not _ndarray: {v} = _asarray({v})")
            return
        dst = n.args[0] if n.op == "assign" else None
        if isinstance(dst, Node) and n.attr("writer") is None and not dst.scalar and not self.plan.by_value(dst):
            # assign_ref: NumPy's own error for a read-only destination is the same
            self.lines.append(f"    {self.plan.var[dst]}[...] = {self.arg(n.args[1])}    # assign")
            return
        if self.plan.cat[n] == "matmul" and product_of(n) is not None and product_of(n).mixed:
            v = self.plan.var[n]
            self.lines.append(f"    {v} = {self.matmul_call(n)}    # {n.op}: {n.type_str()}")
            if not self.plan.by_value(n):
                self.lines.append(f"    if type({v}) is not _ndarray: {v} = _asarray({v})")
            return
        ref = self.const(scalar_operator(n) or op.ref, f"op_{n.op}_")   # `a * b` on NumPy scalars
        attrs = [(k, v) for k, v in n.call_attrs if not (op.kind == "gather" and k == "size")]
        native = getattr(self.plan, "loop_natives", {}).get(n)
        driver = getattr(self.plan, "array_loops", {}).get(n)
        if native is not None:                    # a loop over elements: one kernel (loops.py)
            ref, attrs = self.const(native.entry(), "loop"), []
        elif driver is not None:                  # array work: the native driver (array_loops.py)
            ref, attrs = self.const(driver, "loop"), []
        args = [self.arg(a) for a in n.args] + [f"{k}={self.arg(v)}" for k, v in attrs]
        runner = getattr(self.plan, "loop_runners", {}).get(n)
        if runner is not None:                    # a structured loop: its body compiled on its own
            args.append(f"runner={self.const(runner, 'body')}")
        call = f"{ref}({', '.join(args)})"
        if n.op == "report_if":                   # a warning or error in NumPy's order (reports.py)
            self.lines += self.reports.report_if(n, self.arg(n.args[0]))
            return
        if n.dtype is None:
            self.lines.append(f"    {call}")
            return
        self.lines.append(f"    {self.plan.var[n]} = {call}    # {n.op}: {n.type_str()}")
        if self.plan.cat[n] in ("fallback", "matmul") and not self.plan.by_value(n):
            v = self.plan.var[n]                  # kernels read it as an ndarray object
            self.lines.append(f"    if type({v}) is not _ndarray: {v} = _asarray({v})")

    def kernel_step(self, step: KernelStep):
        k, plan = step.kernel, self.plan
        self.lines.append(f"    # {k.name}: {', '.join(f'{j.kind} {j.node.name}' for j in step.jobs)}")
        for r in step.empty_checks:
            n = 1
            for d in (r.attr("axis") if isinstance(r.attr("axis"), tuple) else
                      range(r.args[0].ndim) if r.attr("axis") is None else (r.attr("axis"),)):
                n = n * r.args[0].shape[d]
            if not isinstance(n, int):
                self.lines.append(f"    if {plan.size_source(n)} == 0: _empty_reduction({r.op!r})")
        for n, message in step.writable:
            self.lines.append(f"    if not {plan.var[n]}.flags.writeable: _read_only({message!r})")
        for v in step.copies:                     # the source reads the old contents
            self.lines.append(f"    {v}_before = {v}.copy(order='K')")   # its layout: the kernel reads both alike
        for name, like, dt in step.scratch:
            shape = "".join(f"{plan.size_source(d)}, " for d in like.shape)
            self.lines.append(f"    {name} = _empty(({shape}), {self.const(np.dtype(dt), 'dt')})")
        fill = step.zero_fill                     # allocated zeroed (calloc), np.empty as NumPy's: no kernel call
        for n in step.allocs:
            zero = fill and n.op != "empty"
            shape = "".join(f"{plan.size_source(d)}, " for d in n.shape)
            dt = self.const(n.dtype, 'dt')
            make = f"{'_zeros' if zero else '_empty'}(({shape}), {dt})"
            if n in self.layouts.index:           # NumPy's layout ("K" order): layouts.py
                make += f" if _L is None else _alloc_k(({shape}), {dt}, _L[{self.layouts.index[n]}]{', True' * zero})"
            elif n in self.layouts.late:          # ... after values the wrapper computed
                make = f"_alloc_k(({shape}), {dt}, {self.late_layout(n)}{', True' * zero})"
            self.lines.append(f"    {plan.var[n]} = {make}")
        for n, donor in step.reuse:               # (after the allocations: the donor may be one)
            self.lines.append(f"    {plan.var[n]} = {plan.var[donor]}    # in place: {donor.name} is dead")
        for n, use, when in step.products:        # the sizes pick our nest or BLAS (lower/matmul.py)
            self.lines.append(f"    {use} = 1 if {pycode(when, plan.sym_names)} else 0")
            self.lines.append(f"    if not {use}: {self.matmul_call(n, out=plan.var[n])}    # BLAS: {n.type_str()}")
        if fill:
            return
        sources = [b.source for b in k.buffers]
        for i, base in step.overlap:
            if step.after_write is not None:      # NumPy would write through a temporary output and
                self.lines.append(f"    if _may_share({sources[i]}, {base}): return _fb.run(inputs, symbol_values)")
                continue                          #   report before writing it back: its call
            tmp = f"_t{k.name}_{i}"
            self.lines.append(f"    {tmp} = {sources[i]}.copy(order='K') if _may_share({sources[i]}, {base}) "
                              f"else {sources[i]}")
            sources[i] = tmp
        obj = runtime.ARRAY_LAYOUT_OK
        pack = self.const(struct.Struct(pack_format(k, obj)).pack, f"pk_{k.name}_")
        fn = self.const(self.module.functions[k.name], f"{k.name}_")
        self.kernel_refs[k.name] = fn
        if obj:                                   # the kernel reads data and strides itself
            args = [f"_id({s})" for s in sources]
        else:
            args = [f"_ptr({s})" for s in sources]
            args += [f"*{s}.strides" for s, b in zip(sources, k.buffers) if b.ndim]
        args += [s.source for s in k.slots]
        packed = f"{pack}({', '.join(args)})"
        if step.check is not None:                # its flag check first (flag_checks.py)
            self.lines.append(f"    _pk = {packed}")
            packed = "_pk"
            sizes = [e for e in (k.split_extent, k.work) if not e.isdigit()]
            if sizes:                             # (size variables defined here, not inside the `if`)
                self.lines.append(f"    _sizes = ({', '.join(sizes)},)")
            check = self.const(self.module.functions[step.check.name], f"{step.check.name}_")
            self.kernel_refs[step.check.name] = check
            self.lines.append("    if _fb.check_wanted():")
            self.launch(step.check, check, packed, "        ")
            self.lines.append("        if _fpw.value and _fb.flagged(): return _fb.run(inputs, symbol_values)")
        self.launch(k, fn, packed, "    ")
        if step.after_write is not None:          # NumPy's reports after the write (fp_probes.py)
            self.lines.append(f"    if _fpw.value: {self.const(step.after_write.take_and_report, 'aw_')}()")
        for name, src in step.binds:              # a data-dependent size (x[mask]'s count)
            self.lines.append(f"    {name} = {src}")

    def launch(self, k, fn, packed, ind):
        """The lines calling kernel k (wrapper name fn) with its packed arguments."""
        if k.work.isdigit() and int(k.work) < runtime.PARALLEL_THRESHOLD:
            self.lines.append(f"{ind}{fn}(0, {k.split_extent}, {packed})")
        elif k.work.isdigit():
            self.lines.append(f"{ind}_call({fn}, {k.split_extent}, {k.work}, {packed})")
        elif k.tier == "quick":                   # small calls spend a budget, a large one builds the full tier
            self.lines.append(f"{ind}if {k.work} < {runtime.PARALLEL_THRESHOLD}: "
                              f"{fn}(0, {k.split_extent}, {packed}); _tier_up.spend({k.work})")
            self.lines.append(f"{ind}else: _tier_up(); _call({fn}, {k.split_extent}, {k.work}, {packed})")
        else:                                     # small calls skip the threading helper
            self.lines.append(f"{ind}if {k.work} < {runtime.PARALLEL_THRESHOLD}: {fn}(0, {k.split_extent}, {packed})")
            self.lines.append(f"{ind}else: _call({fn}, {k.split_extent}, {k.work}, {packed})")

    def matmul_call(self, n: Node, out: str | None = None) -> str:
        """NumPy's product (BLAS) of a matmul/dot node; operands of another dtype than the
        result are cast into buffers kept across calls (runtime.matmul_cast)."""
        a, b = n.args
        fn = self.const(get_op(n.op).ref if n.op == "dot" else np.matmul, f"op_{n.op}_")
        tail = "" if out is None else f", out={out}"
        if isinstance(a, Node) and isinstance(b, Node) and n.dtype.kind in "fc" and \
                not n.call_attrs and (a.dtype != n.dtype or b.dtype != n.dtype):
            cast = self.const(runtime.matmul_cast, "mm_cast_")
            return f"{cast}({fn}, {self.arg(a)}, {self.arg(b)}, {self.const(n.dtype, 'dt')}{tail})"
        return f"{fn}({self.arg(a)}, {self.arg(b)}{tail})"

    def bind_sizes(self, nodes):
        """Data-dependent sizes become known once the value carrying them exists."""
        for sym, (n, d) in self.plan.sym_binding.items():
            if n in nodes:
                self.lines.append(f"    {self.plan.sym_names[sym]} = {self.plan.var[n]}.shape[{d}]")

    def int_checks(self, checks):
        """A run-time Python int out of an integer operand's range raises as NumPy does."""
        for a, lo, hi, fn in checks:
            v = self.arg(a)
            self.lines.append(f"    if not ({lo} <= {v} <= {hi}): {self.const(fn, 'ovf')}({v})")

    def wide_ints(self, i, step, steps):
        """A Python int a wrapper step computed (a loop's final int, arithmetic on it) that this
        kernel takes by value: past int64, the rest of the call runs with the NumPy reference
        (rest.py), which keeps Python's big ints; nothing that ran runs again."""
        if self._names is None:                   # (built once: per step, quadratic in the steps)
            self._names = {v: n for n, v in self.plan.var.items()}
        names, computed = self._names, self._computed
        for slot in step.kernel.slots:
            n = names.get(slot.source)
            if n is None or n not in computed or computed[n] >= i or slot.dtype not in ("int64", "uint64") or \
                    n.dtype is None or n.dtype.kind not in "iu" or not _python_int(n):
                continue
            if "_rest" not in self.ns:
                self.ns["_rest"] = RestOfCall(self.plan, steps)
            v = self.plan.var[n]
            self.lines.append(f"    if not ({INT64_MIN} <= {v} <= {INT64_MAX}): "
                              f"return _rest({i}, inputs, symbol_values, locals())")

    def int64_escape(self, steps):
        """An int a kernel takes by value is an int64; NumPy takes the Python int (NEP 50: any
        size; `x * (k * k)` is a float for a float array, OverflowError for an int64 one).
        When a computed int of the backed sizes leaves int64, the whole call runs with the
        NumPy reference instead (checked before any effect, so nothing ran twice)."""
        backed = set(self.plan.graph.symbols)
        seen = []
        for step in steps:
            if not isinstance(step, KernelStep):
                continue
            for slot in step.kernel.slots:
                src = slot.source
                if slot.dtype not in ("int64", "uint64") or src in seen or src not in self.plan.size_exprs:
                    continue
                expr = self.plan.size_exprs[src]
                if isinstance(expr, sympy.Symbol) or not expr.free_symbols <= backed or not expr.is_integer:
                    continue                      # a bound symbol fits (its guards say so)
                seen.append(src)
        if not seen:
            return
        self.ns["_reference"] = runtime.LazyReference(self.plan.graph)
        cond = " and ".join(f"{INT64_MIN} <= {v} <= {INT64_MAX}" for v in seen)
        self.lines.append(f"    if not ({cond}): return _reference(inputs, symbol_values)")

    def late_layout(self, n) -> str:
        """The strides of allocation n, whose layout depends on values the wrapper computed
        (a loop's result, an opaque call: their real strides are leaves of the rule)."""
        lay, leaves = self.layouts.late[n]
        fn = self.const(lay, "late_layout")
        values = "".join(f"{self.plan.var[v]}, " for v in leaves)
        return f"(({fn}(inputs, symbol_values, ({values})) or (None,))[0])"

    def relayout(self, step):
        """A result written over a dead temporary gets NumPy's layout (a copy if it differs)."""
        for n, _ in step.reuse:
            v = self.plan.var[n]
            if n in self.layouts.index:
                self.lines.append(f"    if _L is not None: {v} = _relayout({v}, _L[{self.layouts.index[n]}])")
            elif n in self.layouts.late:
                self.lines.append(f"    {v} = _relayout({v}, {self.late_layout(n)})")

    def in_place_ufuncs(self, steps) -> dict:
        """ufunc wrapper step -> the in-place / out= assignment (`x += y` on a dtype the kernels
        do not lower) that follows it at once and is its only reader: the ufunc writes the
        destination itself (out=), so a cast overflow is reported as the ufunc's, as NumPy does."""
        plan, out = self.plan, {}
        for s, t in zip(steps, steps[1:]):
            if not (isinstance(s, WrapperStep) and isinstance(t, WrapperStep)):
                continue
            v, a = s.node, t.node
            op = get_op(v.op)
            if a.op != "assign" or a.attr("writer") != "ufunc" or a.args[1] is not v or plan.users[v] != [a]:
                continue
            dst = a.args[0]
            if op.kind != "elementwise" or op.ufunc is None or v.call_attrs or scalar_operator(v) is not None \
                    or v in plan.output_set or v.errstate != a.errstate or not isinstance(dst, Node) \
                    or not plan.has_value(dst) or plan.by_value(dst) or tuple(dst.shape) != tuple(v.shape):
                continue
            out[v] = a
        return out

    def generate(self, steps) -> str:
        g, plan = self.plan.graph, self.plan
        self.layouts, int_checks = Layouts(plan, steps), check_positions(plan, steps)
        if self.layouts:
            self.ns.update(_layouts=self.layouts, _alloc_k=alloc, _relayout=relayout)
        self.bind_sizes(set(g.inputs))
        self.int64_escape(steps)
        self.by_out = self.in_place_ufuncs(steps)
        plan.ufunc_donors = {}                    # ufunc step -> the dead operand it writes (native entry too)
        plan.ufunc_outs = dict(self.by_out)       # ... -> the in-place assignment it writes
        self.reports = ReportCode(plan, steps, self.flags_may_rise(steps))   # NumPy's order of reports
        dead_after = last_uses(plan, steps, self.reports.redo_reads())     # (a redo reads locals())
        kills = []
        for i, step in enumerate(steps):
            self.int_checks(int_checks.get(i, ()))
            if i == getattr(plan, "flag_test_at", None) and getattr(step, "check", None) is None:
                # every step that may report ran: test before the first write (flag_checks.py)
                self.lines.append("    if _fpw.value and _fb.flagged(): return _fb.run(inputs, symbol_values)")
            if isinstance(step, KernelStep):
                self.wide_ints(i, step, steps)
                self.kernel_step(step)
                self.relayout(step)
                self.bind_sizes({j.node for j in step.jobs})
                self.lines += self.reports.after_kernel(step)
            else:
                self._computed.setdefault(step.node, i)
                self.lines += self.reports.before(i, step.node)
                self.dying = () if "_rest" in self.ns else tuple(dead_after.get(i, ()))
                self.wrapper_step(step.node)
                self.dying = ()
                self.bind_sizes({step.node})
                self.lines += self.reports.after(i, step.node)
            if dead_after.get(i):                 # temporaries freed as NumPy's would be (dead_values.py)
                kills.append(len(self.lines))
                self.lines.append(f"    {' = '.join(dead_after[i])} = None")
        if "_rest" in self.ns:                    # the rest of a call reads the wrapper's locals(): keep all
            for k in reversed(kills):
                del self.lines[k]
        self.int_checks(int_checks.get(len(steps), ()))
        for expr, msg in getattr(g, "runtime_asserts", ()):   # facts the trace relied on
            self.lines.append(f"    if not ({self.arg(expr)}): raise AssertionError({msg!r})")
        outs = ", ".join(self.arg(o) for o in g.outputs)
        head = self.numpy_handoff(steps)
        body = self._with_sizes(self.pre + self.lines + [f"    _o = [{outs}]"])
        if self.reports.on:                       # FP flags and warnings: reports.py
            self.ns["_rp"] = self.reports.rp
            k = next((k + 1 for k, line in enumerate(body) if line.startswith("    _saved =")), 0)
            self.lines = self.reports.finish(body[:k], body[k:], self.ns["_fb"])
        else:
            self.lines = body + ["    return _o"]
        head = ["def run(inputs, symbol_values):"] + head
        if g.inputs:
            head.append(f"    {', '.join(plan.var[n] for n in g.inputs)}, = inputs")
        if g.symbols:
            head.append(f"    {', '.join(plan.sym_names[s] for s in g.symbols)}, = symbol_values")
        if self.layouts.nodes:
            head.append("    _L = _layouts(inputs, symbol_values)")
        return "\n".join(head + self.lines) + "\n"

    def kernels(self, steps) -> list:
        """The call's kernels: its own, its element loops', its array loops' (array_loops.py)."""
        return [s.kernel for s in steps if isinstance(s, KernelStep)] + \
            [nl.kernel for nl in getattr(self.plan, "loop_natives", {}).values()] + \
            [k for al in getattr(self.plan, "array_loops", {}).values() for k in al.kernels]

    def flags_may_rise(self, steps) -> bool:
        """May a kernel of the call set an FP flag (fpflags.may_raise)?"""
        return any(fpflags.may_raise(k) for k in self.kernels(steps))

    def numpy_handoff(self, steps):
        """The head lines handing the call to NumPy (fp_errors.py) when a destination input
        overlaps itself, and the snapshot of what the call writes for a NumPy redo when a kernel
        sets an FP flag (`pre`; reports.py decides on the flags)."""
        g, head = self.plan.graph, []
        mutated = fp_errors.mutated_inputs(g)
        fp = self.flags_may_rise(steps)
        if not (mutated and steps) and not fp and not self.reports.on:
            return head
        signs = any(fpflags.tracks_zero_signs(k) for k in self.kernels(steps))
        kinds = 0                 # what NumPy may report for the kernels' work (fpflags.kinds)
        for k in self.kernels(steps):
            kinds |= fpflags.kinds(k)
        checked = getattr(self.plan, "flag_test_at", None) is not None or \
            getattr(self.plan, "report_after", None) is not None         # (flag_checks.py)
        self.ns.update(_fb=fp_errors.Fallback(g, mutated, signs, kinds, checked), _fpw=fp_errors.WORD,
                       _self_overlapping=fp_errors.self_overlapping)
        for i in mutated:
            head.append(f"    if _self_overlapping(inputs[{i}]): return _fb.run(inputs, symbol_values)")
        if fp:
            # checked: flags tested before the first write, nothing to copy (a redo then finds
            # nothing saved: the writer's flags after a clean check are the check's again)
            if mutated and checked:
                self.pre.append("    _saved = None")
            else:
                regions = self.written_regions() if mutated else []
                self.pre.append(f"    _saved = _fb.snapshot(({''.join(r + ', ' for r in regions)}))")
        return head

    def written_regions(self) -> list:
        """Expressions of the memory the graph's mutations write in its inputs, for the FP
        re-run snapshot (fp_errors.py): the written view when it is a chain of basic slices
        of an input (`cache[:, pos] = k` saves a column, not the cache), else the input."""
        g, plan = self.plan.graph, self.plan
        index, getitem = set(g.inputs), self.const(get_op("getitem").ref, "op_getitem_")
        regions: dict = {}
        for d in (d for n in g.nodes for d in written_values(n)):
            chain = []
            while d not in index and get_op(d.op).kind == "view" and d.args and isinstance(d.args[0], Node):
                chain.append(d)
                d = d.args[0]
            if d not in index:
                continue                          # memory this call allocated
            expr = plan.var[d]
            if all(v.op == "getitem" and _backed(v.attr("index"), g.symbols) for v in chain):
                for v in reversed(chain):
                    parts = [self.index_part(e) for e in v.attr("index")]
                    if v.args[0].ndim and parts and None not in parts:
                        expr = f"{expr}[{''.join(p + ', ' for p in parts)}]"
                    else:
                        expr = f"{getitem}({expr}, index={self.arg(v.attr('index'))})"
            regions.setdefault(expr, plan.var[d])
        whole = {root for expr, root in regions.items() if expr == root}
        return [expr for expr, root in regions.items() if expr == root or root not in whole]

    def _with_sizes(self, lines) -> list:
        """Each size variable computed just before its first use (after the sizes it needs)."""
        from ...shapes import pycode
        out, done = [], set()
        for line in lines:
            indent = line[:len(line) - len(line.lstrip())]      # (inside a `with np.errstate` block)
            for name in dict.fromkeys(re.findall(r"\bz\d+\b", line)):
                if name not in done and name in self.plan.size_exprs:
                    out.append(f"{indent}{name} = {pycode(self.plan.size_exprs[name], self.plan.sym_names)}")
                    done.add(name)
            out.append(line)
        return out


def _python_int(n: Node) -> bool:
    """A node whose value is a Python int at run time (any size), not a NumPy integer."""
    from ...ir.builder import recorded_fake
    from ...ir.fake import FakeScalar
    fake = recorded_fake(n)
    return isinstance(fake, FakeScalar) and fake.pytype is int or weak_arg(n)


def _int_size(e) -> bool:
    """An int, or a sympy expression of integer value (a size), as a slice bound or index."""
    return type(e) is int or (isinstance(e, sympy.Basic) and e.is_integer is True)


def _backed(index, symbols) -> bool:
    """Does a canonical index use only sizes the inputs bind (known before any kernel)?"""
    parts = [p for e in index for p in ((e.start, e.stop, e.step) if isinstance(e, IndexSlice) else (e,))]
    return all(not isinstance(p, sympy.Basic) or p.free_symbols <= set(symbols) for p in parts)


def generate(plan: Plan, steps, module):
    """(source, namespace) of the wrapper for `steps`."""
    gen = _Gen(plan, module)
    source = gen.generate(steps)
    gen.ns["_kernel_refs"] = gen.kernel_refs
    return source, gen.ns


__all__ = ["generate", "WrapperStep"]
