"""Native array loops: a loop node whose body works on arrays runs as ONE native loop that calls
the body's fused kernels, with no Python between iterations.

The body graph is compiled with the normal pipeline (its own plan, fusion, kernels: the
`runner`). When every step of that compiled body is a kernel or a step the driver runs itself
(loop_scalars.py: Python int / float / bool arithmetic such as `it + 1`, `it < limit`,
`t + dt`, `a if c else b` on scalars, `x[i] = value` element stores) and nothing the kernels take
changes per iteration except the loop index and the carried values, a call runs:

    iterations 0..      the body's own wrapper (runner), NATIVE_MIN_TRIPS times (at least
                        once): its checks (read-only destinations, empty reductions, overflow),
                        its FP handling, and carried results in NumPy's layout (layouts.py): P0
    P1 = empty_like(P0) the second buffer of every carried value (same layout); carried NumPy
                        scalars and Python scalars live in 0-d arrays (int64 for Python
                        ints and bools, float64 for Python floats)
    the rest            the driver (loop_driver.py): iteration j reads P[j % 2] and writes
                        P[(j + 1) % 2]; temporaries allocated once; each kernel gets its
                        argument block built once, patched per iteration (the carried arrays'
                        pointers, slots affine in the loop index, carried scalars loaded from
                        their 0-d arrays); `<var>_before` copies are memcpys; Python scalar ops
                        are driver ops; a `while` stops when the condition's buffer is False
    result              P[iterations % 2], already in NumPy's layout: no copy out

Views that move with the loop index (`x[t - 1]`, `x[:, j]`, `x[i:i + k]`) need nothing of their
own: the kernels read a view's start as a slot affine in the index (patched per iteration like
any such slot), provided its shape does not depend on the index (a window's clamp `Min(n, i + k)`
is proved away by the tracer over the loop's range: shapes/helpers.py, shapes/loop_index.py).

Invariants checked once per call hold for every iteration because nothing they read depends
on the iteration: sizes, captured arrays, a destination's writeable flag. Python ints stay
Python ints: add/subtract only of constants, values bounded between chunks (INT_LIMIT), else
the remaining iterations run in Python; a body with Python int * // % runs every int arithmetic
op as a CHECKED op instead (any operands: int64 overflow or a zero divisor abandons the
iteration and Python runs the rest, raising or growing the int as Python does; such ops must
come before the kernels when the body writes into captured arrays; Python floats: FLOAT ops,
x / 0.0 abandons the iteration likewise). What cannot run natively keeps the generic path (the
body's wrapper once per iteration): at compile time a body with other wrapper steps (an opaque
call such as `@`), data-dependent sizes, narrow carried scalars,
index-dependent shapes or kernel extents (NotNative, logged under `loops`); at run time kernels
large enough for the thread pool, carried or captured arrays that share memory, copies of
non-contiguous arrays. FP flags the driver's kernels set are read by the outer wrapper
(wrapper.numpy_handoff), which lets NumPy redo the whole call, as for any kernel.

    runs["native"], runs["generic"]       calls of each kind, for tests and benchmarks
"""
from __future__ import annotations

import ctypes
import struct
from collections import Counter

import numpy as np
import sympy

from ...codegen.llvm_kernels import fpflags, pack_format
from ...ir.graph import Node
from ...ir.registry import size_warnings
from ...lower.fusion import KernelStep
from ...lower.fusion import check_positions
from ...shapes import pycode
from . import reports, runtime
from .fp_errors import self_overlapping
from .loop_driver import CHECKED_OPS, Table, load_patch
from .loop_scalars import ScalarSteps
from .loops import NotNative

runs: Counter = Counter()
WHILE_LIMIT = 1 << 62
# iterations below which the body's wrapper runs them (~1.2 us each for a small body) rather
# than the driver, whose per-call set-up costs ~8 us; a `while` runs that many before switching
NATIVE_MIN_TRIPS = 8
# Python ints the driver keeps in int64 words: |value| below INT_LIMIT at the start of each chunk
# of iterations, and add/subtract only of a constant below ADD_LIMIT, so no chunk can overflow
INT_LIMIT = 1 << 40                  # ADD_LIMIT: loop_scalars.py


class _KernelCall:
    """What one kernel step needs per call: its buffers' wrapper names, its slots' code."""

    def __init__(self, step: KernelStep, gen: "ArrayLoop", address: int):
        k = step.kernel
        self.kernel, self.address = k, address
        self.fmt = pack_format(k, runtime.ARRAY_LAYOUT_OK)
        self.sources = [b.source for b in k.buffers]
        self.ndims = [b.ndim for b in k.buffers]
        self.slots = []                      # (code, index coefficient code or None, is float)
        self.loads = {}                      # slot -> the 0-d buffer (env name) it is loaded from
        for j, s in enumerate(k.slots):
            expr = gen.size_expr(s.source)
            coef = None
            name = gen.unwrapped(s.source)
            if expr is not None:
                coef = gen.index_coefficient(expr, f"argument {s.source}")
            elif name in gen.scalar_carried or name in gen.int_nodes:
                n = gen.int_nodes[name] if name in gen.int_nodes else gen.body.graph.inputs[gen.scalar_carried[name]]
                python_int = name in gen.int_nodes or gen.scalar_carried[name] in gen.py_carried
                if n.dtype.kind == "f" and python_int:           # a Python float word (SELECT)
                    bad = s.dtype != "float64"
                else:
                    bad = (s.dtype.startswith("float") or s.dtype == "uint64") if python_int else \
                        s.dtype != n.dtype.name
                if bad:
                    raise NotNative(f"carried scalar {s.source} converted for a kernel")
                self.loads[j] = name
            elif not gen.captured_name(s.source):     # a captured scalar: fixed per call
                raise NotNative(f"kernel argument {s.source} is computed per iteration")
            self.slots.append((gen.code(s.source), coef, s.dtype.startswith("float")))
        self.hi = gen.code(gen.invariant(k.split_extent, "a kernel extent"))
        self.work = gen.code(gen.invariant(k.work, "a kernel's work"))
        self.allocs = [(gen.plan.var[n], [gen.code(gen.invariant(d, "a shape")) for d in n.shape], n.dtype)
                       for n in step.allocs]
        self.reuse = [(gen.plan.var[n], gen.plan.var[d]) for n, d in step.reuse]
        self.scratch = [(name, [gen.code(gen.invariant(d, "a shape")) for d in like.shape], np.dtype(dt))
                        for name, like, dt in step.scratch]
        self.copies = list(step.copies)
        self.overlap = [(self.sources[i], base) for i, base in step.overlap]


def _may_abandon(c) -> bool:
    """A driver op that may give the iteration to Python (checked int, x / 0.0, x ** y)."""
    return isinstance(c, tuple) and (c[0] == "checked" or c[:2] in (("float", "true_divide"), ("float", "power")))


def _scalars_first(program: list) -> list:
    """The Python scalar ops that read no value a kernel or a store of this iteration computes
    (`dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2))` of captured floats, a counter) moved before
    the iteration's first kernel, in their order: they are pure, so only where they may abandon
    the iteration changes, and abandoning before any write is what lets the driver hand the
    iteration to Python whole (the body's wrapper interleaves them with the kernels)."""
    made = set()                              # names kernels and stores of this iteration write
    early, late = [], []
    for c in program:
        if isinstance(c, _KernelCall):
            made.update(c.sources)
            late.append(c)
            continue
        kind, _, name, operands = c
        reads = [o for o in _flat_names(operands)]
        if kind in ("int", "checked", "float", "select") and not any(r in made for r in reads):
            early.append(c)
        else:
            made.add(name)
            late.append(c)
    return early + late


def _flat_names(operands):
    """The wrapper names a driver op reads (its operand words)."""
    for o in operands:
        if isinstance(o, str):
            yield o
        elif isinstance(o, (list, tuple)) and o and o[0] not in ("const", "captured", "size", "int"):
            yield from _flat_names(o)
        elif isinstance(o, tuple) and o and o[0] == "int":
            yield o[1]


class ArrayLoop(ScalarSteps):
    """A loop node whose compiled body runs under the native driver (see module doc)."""

    def __init__(self, node: Node, runner):
        self.node, self.body, self.runner = node, node.attr("body"), runner
        if self.body.kind not in ("for", "while"):            # a `for_break` body carries `go` too
            raise NotNative(f"a {self.body.kind} body")
        if self.body.carried_sizes:                          # buffers are sized once per call
            raise NotNative("a carried array changes its size in the loop")
        plan, steps, module = (getattr(runner, a, None) for a in ("plan", "steps", "module"))
        if plan is None or module is None:
            raise NotNative("the body has no kernels")
        self.plan, g = plan, self.body.graph
        if plan.sym_binding:
            raise NotNative("a data-dependent size in the body")
        self.index = self.body.index if self.body.kind == "for" else None
        for expr, _ in getattr(g, "runtime_asserts", ()):
            if self.index is not None and self.index in getattr(expr, "free_symbols", ()):
                raise NotNative("a run-time assertion on the loop index")
        self.nc = self.body.ncarried
        self.names = {}                      # wrapper name -> code object, evaluated per call
        self.input_names = [plan.var[n] for n in g.inputs]
        self.scalar_carried = {}             # wrapper name -> carried index: NumPy scalars, Python ints
        self.py_carried = set()              # carried indices of Python scalars (8-byte words)
        self.float_carried = set()           # those of them that are Python floats
        for k, inp in enumerate(g.inputs[:self.nc]):
            if inp.attr("kind") == "scalar":
                if inp.dtype.kind not in "bif":
                    raise NotNative(f"a carried Python {inp.dtype.name} scalar")
                if inp.dtype.kind == "f":
                    self.float_carried.add(k)
                self.py_carried.add(k)
                self.scalar_carried[plan.var[inp]] = k
            elif plan.by_value(inp):         # kernels read it as a slot: an 8-byte load
                if inp.dtype.itemsize != 8 or inp.dtype.kind not in "fiu":
                    raise NotNative(f"a carried {inp.dtype} scalar")
                self.scalar_carried[plan.var[inp]] = k
        self.int_nodes = {}                  # wrapper name -> node: Python ints computed per iteration
        # Python int * // % run as CHECKED ops (int64 overflow, division by zero: the rest of the
        # loop runs in Python); with them, + and - are checked too (a product may be near the limit)
        self.checked = any(not isinstance(s, KernelStep) and s.node.op in CHECKED_OPS[:3] and
                           s.node.dtype is not None and s.node.dtype.kind in "bi" for s in steps)
        self.program = []                    # in run order: _KernelCall, or (kind, op, name, operands)
        self.views = {}                      # wrapper name -> view node only a STORE writes through
        for s in steps:
            if not isinstance(s, KernelStep):
                entry = self._wrapper_op(s.node)
                if entry is not None:
                    self.program.append(entry)
                continue
            if s.binds:
                raise NotNative("a data-dependent size in the body")
            if any(size_warnings(j.node) for j in s.jobs):
                raise NotNative("a reduction of the body may warn (np.mean over nothing: reports.py)")
            self.program.append(_KernelCall(s, self, module.address(s.kernel.name)))
        self.program = _scalars_first(self.program)
        for checks in check_positions(plan, steps).values():
            for a, *_ in checks:             # NumPy's OverflowError for an int out of a dtype's range
                if isinstance(a, Node) and (plan.var.get(a) in self.int_nodes or plan.var.get(a) in
                                            self.scalar_carried):
                    raise NotNative("a Python int counter meets a narrow integer dtype (range checks)")
        for c in self.program:
            if isinstance(c, _KernelCall) and any(src in self.views for src in c.sources):
                raise NotNative("a kernel reads a view the body's wrapper makes")
        if self.body.writes:                 # an abandoned iteration must not have written yet
            first_call = next((k for k, c in enumerate(self.program) if isinstance(c, _KernelCall) or
                               c[0] == "store"), None)
            if first_call is not None and any(_may_abandon(c) for c in self.program[first_call:]):
                raise NotNative("a checked Python int operation after a kernel writing into a captured array")
        self.roots = self._carried_roots(steps)
        self.go = None
        if self.body.kind == "while":
            go = g.outputs[-1]
            if isinstance(go, Node) and plan.var.get(go) in self.int_nodes:
                self.go = plan.var[go]
            elif not isinstance(go, Node) or go not in plan.stored or go.dtype != np.bool_:
                raise NotNative("the loop condition is not computed by a kernel")
            else:
                self.go = self._root(plan.var[go])
            if self.go in self.roots or self.go in self.input_names:
                raise NotNative("the loop condition is a carried value")
        self.kernels = [c.kernel for c in self.program if isinstance(c, _KernelCall)]
        self.size_code = {name: self.code(pycode(e, plan.sym_names)) for name, e in plan.size_exprs.items()}
        self.symbol_names = [plan.sym_names[s] for s in g.symbols]

    # -- compile time -----------------------------------------------------------------------------
    def unwrapped(self, source: str) -> str:
        return source[4:-1] if source.startswith("int(") and source.endswith(")") else source

    def _reuse_map(self, steps) -> dict:
        return {self.plan.var[n]: self.plan.var[d] for s in steps if isinstance(s, KernelStep) for n, d in s.reuse}

    def _carried_roots(self, steps) -> list:
        """The allocation each carried result is written into (distinct, allocated by a kernel step)."""
        self._reuse = self._reuse_map(steps)
        allocated = {self.plan.var[n]: n for s in steps if isinstance(s, KernelStep) for n in s.allocs}
        roots = []
        for k, out in enumerate(self.body.graph.outputs[:self.nc]):
            name = self.plan.var.get(out) if isinstance(out, Node) else None
            if k in self.py_carried and not (k in self.float_carried and name not in self.int_nodes):
                root = name
                if root not in self.int_nodes or root in roots:
                    raise NotNative("a carried Python int the body does not compute")
                roots.append(root)
                continue
            if not isinstance(out, Node) or out not in self.plan.stored:
                raise NotNative("a carried result that no kernel computes")
            root = self._root(self.plan.var[out])
            n = allocated.get(root)
            if n is None or root in roots or n.dtype != out.dtype or tuple(n.shape) != tuple(out.shape):
                raise NotNative("a carried result that is an input or another carried result")
            roots.append(root)
        return roots

    def _root(self, var: str) -> str:
        while var in self._reuse:
            var = self._reuse[var]
        return var

    def size_expr(self, source: str):
        """The sympy expression of a wrapper size source, None when it is not a size."""
        if source.lstrip("-").isdigit():
            return sympy.Integer(int(source))
        try:
            return sympy.sympify(self.plan.expr_of(source))
        except StopIteration:
            return None

    def captured_name(self, source: str) -> bool:
        return self.unwrapped(source) in self.input_names[self.nc:]

    def invariant(self, d, what: str) -> str:
        """Wrapper source of a size that must not change per iteration."""
        if isinstance(d, str):
            expr = self.size_expr(d)
            source = d
        else:
            expr, source = sympy.sympify(d), self.plan.size_source(d)
        if expr is None or (self.index is not None and self.index in expr.free_symbols):
            raise NotNative(f"{what} depends on the loop index")
        return source

    def index_coefficient(self, expr, what: str):
        """Code of d(expr)/d(index) when `expr` is affine in the loop index; None if constant."""
        if self.index is None or self.index not in expr.free_symbols:
            return None
        b = sympy.expand(sympy.diff(expr, self.index))
        if self.index in b.free_symbols or not b.is_integer:
            raise NotNative(f"{what} is not affine in the loop index")
        return self.code(pycode(b, self.plan.sym_names))

    def code(self, source: str):
        if source not in self.names:
            self.names[source] = compile(source, "<array loop>", "eval")
        return self.names[source]

    # -- run time ---------------------------------------------------------------------------------
    def __call__(self, *args):
        body, runner = self.body, self.runner
        head, carried, captured, sizes = body.split_args(args)
        reported = reports.reported[0]
        if body.kind == "for":
            rng = range(*head)
            if len(rng) <= NATIVE_MIN_TRIPS:
                for i in rng:
                    carried = runner(carried + captured, [i] + sizes)
                return tuple(carried)
            carried = list(runner(carried + captured, [rng[0]] + sizes))
            symbols, rest = [rng[1]] + sizes, len(rng) - 1
        else:
            go = head[0]
            for _ in range(NATIVE_MIN_TRIPS):
                if not go:
                    return tuple(carried)
                out = runner(carried + captured, sizes)
                carried, go = list(out[:-1]), out[-1]
            if not go:
                return tuple(carried)
            symbols, rest = sizes, WHILE_LIMIT
        # an iteration that reported (a NumPy redo, a warning): the driver would leave its FP
        # flags to the wrapper, whose NumPy redo of the call would report that one again
        state = self._setup(carried, captured, symbols, head) if reports.reported[0] == reported else None
        if state is None:
            runs["generic"] += 1
            return self._generic(carried, captured, symbols, sizes, head)
        runs["native"] += 1
        table, pair, _alive, go_address = state
        check = None
        ints = self.py_carried - self.float_carried if not self.checked else ()   # CHECKED: no bound needed
        if ints:                             # between chunks: the Python ints stay far from int64's limits
            def check():                     # chunks start at even iterations: the state is in P0
                return all(abs(int(pair[0][k])) < INT_LIMIT for k in ints)
        ran = table.run(rest, go_address, check)
        carried = self._values(pair[ran % 2])
        if self.body.kind == "for" and ran < rest:
            runs["generic"] += 1             # the rest in Python, with Python's ints
            return self._generic_after_native(carried, captured, [symbols[0] + head[2] * ran] + sizes, sizes,
                                              head)
        if self.body.kind == "while" and ran < rest and (table.abandoned or
                                                         ctypes.c_bool.from_address(go_address).value):
            runs["generic"] += 1
            return self._generic_after_native(carried, captured, symbols, sizes, head)
        return tuple(carried)

    def _generic_after_native(self, *args):
        """_generic after native iterations, whose FP flags stay the wrapper's (the body's own
        wrapper takes only its own: reports.py)."""
        flags = fpflags.take()
        try:
            return self._generic(*args)
        finally:
            fpflags.WORD.value |= flags

    def _values(self, buffers) -> list:
        """The carried values as the body's wrapper hands them over, from the driver's buffers."""
        out = []
        for k, a in enumerate(buffers):
            if k in self.float_carried:
                out.append(float(a))
            elif k in self.py_carried:
                v = int(a)
                out.append(bool(v) if self.body.graph.inputs[k].dtype.kind == "b" else v)
            elif k in self.scalar_carried.values():
                out.append(a[()])
            else:
                out.append(a)
        return out

    def _generic(self, carried, captured, symbols, sizes, head):
        """The rest of the loop (after iteration 0), the body's wrapper once per iteration."""
        runner = self.runner
        if self.body.kind == "for":
            for i in range(symbols[0], head[1], head[2]):
                carried = list(runner(carried + captured, [i] + sizes))
            return tuple(carried)
        go = True
        while go:
            out = runner(carried + captured, sizes)
            carried, go = list(out[:-1]), out[-1]
        return tuple(carried)

    def _setup(self, first, captured, symbols, head):
        """(driver table, (P0, P1), objects to keep alive, go address) for this call, or None
        when this call cannot run natively."""
        ns = dict(zip(self.symbol_names, symbols))
        for name, c in self.size_code.items():
            ns[name] = eval(c, ns)
        ns.update(zip(self.input_names[self.nc:], captured))
        scalars = set(self.scalar_carried.values())
        if not self.checked and any(abs(int(first[k])) >= INT_LIMIT for k in self.py_carried - self.float_carried):
            return None
        if any(not -2 ** 63 <= int(first[k]) < 2 ** 63 for k in self.py_carried - self.float_carried):
            return None
        p0 = [np.array(float(a), np.float64) if k in self.float_carried else
              np.array(int(a), np.int64) if k in self.py_carried else
              np.array(a, self.body.graph.inputs[k].dtype) if k in scalars else a for k, a in enumerate(first)]
        if not all(type(a) is np.ndarray and a.flags.writeable for a in p0):
            return None
        arrays = [a for a in captured if isinstance(a, np.ndarray)]
        for a, b in ((a, b) for k, a in enumerate(p0) for b in arrays + p0[k + 1:]):
            if np.may_share_memory(a, b):
                return None
        for k in self.body.writes:
            if isinstance(captured[k], np.ndarray) and self_overlapping(captured[k]):
                return None
        p1 = [np.empty_like(a) for a in p0]
        env = {}
        for k, name in enumerate(self.input_names):
            env[name] = (p0[k], p1[k]) if k < self.nc else (captured[k - self.nc],) * 2
        for name in self.int_nodes:
            a = np.zeros((), np.int64)
            env[name] = (a, a)
        for k, root in enumerate(self.roots):
            env[root] = (p1[k], p0[k])
        step = head[2] if self.body.kind == "for" else 0
        table, alive = Table(), [p0, p1, env]      # the kernels read these by address
        trips = len(range(symbols[0], head[1], step)) if self.body.kind == "for" else 1
        for c in self.program:
            if isinstance(c, _KernelCall):
                ok = self._add_call(c, ns, env, table, alive, step)
            elif c[0] == "select":
                ok = self._add_select(c, ns, env, table, alive)
            elif c[0] == "store":
                ok = self._add_store(c, ns, env, table, step, trips)
            elif c[0] == "float":
                ok = self._add_float_op(c, ns, env, table, alive)
            else:
                ok = self._add_int_op(c, ns, env, table, alive)
            if not ok:
                return None
        go_address = 0
        if self.go is not None:
            a, b = env[self.go]
            if a is not b or a.dtype not in (np.bool_, np.int64):
                return None
            go_address = runtime.data_ptr(a)
        return table, (p0, p1), alive, go_address

    def _add_call(self, c: _KernelCall, ns, env, table, alive, step) -> bool:
        if eval(c.work, ns) >= runtime.PARALLEL_THRESHOLD:
            return False                     # the wrapper's threaded call does better
        for var, shape, dt in c.allocs:
            if var not in env:
                a = np.empty(tuple(eval(d, ns) for d in shape), dt)
                env[var] = (a, a)
        for var, donor in c.reuse:
            env[var] = env[donor]
        for name, shape, dt in c.scratch:
            a = np.empty(tuple(eval(d, ns) for d in shape), dt)
            env[name] = (a, a)
        for var in c.copies:
            s0, s1 = env[var]
            if s0.strides != s1.strides or not (s0.flags.c_contiguous or s0.flags.f_contiguous) or \
                    not (s1.flags.c_contiguous or s1.flags.f_contiguous):
                return False
            d = np.empty_like(s0)
            if d.strides != s0.strides:
                return False
            env[f"{var}_before"] = (d, d)
            alive.append(d)                  # (a later kernel's copy of the same array rebinds the name)
            table.copy(s0.nbytes, (runtime.data_ptr(d),) * 2, (runtime.data_ptr(s0), runtime.data_ptr(s1)))
        for src, base in c.overlap:
            if any(np.may_share_memory(env[src][p], env[base][p]) for p in (0, 1)):
                return False
        bufs = [env[s] for s in c.sources]
        patches = []
        if runtime.ARRAY_LAYOUT_OK:          # the kernel reads data and strides from the object
            fields = [id(a) for a, _ in bufs]
            patches += [(8 * i, id(a), id(b), 0) for i, (a, b) in enumerate(bufs) if a is not b]
        else:
            fields = [runtime.data_ptr(a) for a, _ in bufs]
            patches += [(8 * i, runtime.data_ptr(a), runtime.data_ptr(b), 0)
                        for i, (a, b) in enumerate(bufs) if a is not b]
            for (a, b), nd in zip(bufs, c.ndims):
                if nd and a.strides != b.strides:
                    return False
                fields += list(a.strides) if nd else []
        first_slot = len(fields)
        for s, (code, coef, is_float) in enumerate(c.slots):
            if s in c.loads:                 # a carried scalar: read from its buffer per iteration
                a, b = env[c.loads[s]]
                fields.append(0.0 if is_float else 0)
                patches.append((load_patch(8 * (first_slot + s)), runtime.data_ptr(a), runtime.data_ptr(b), 0))
                continue
            value = eval(code, ns)
            fields.append(float(value) if is_float else int(value))
            if coef is not None:
                patches.append((8 * (first_slot + s), int(value), int(value), int(eval(coef, ns)) * step))
        block = np.frombuffer(bytearray(struct.pack(c.fmt, *fields)), np.int64)
        alive.append(block)
        table.call(c.address, int(eval(c.hi, ns)), block.ctypes.data, patches)
        return True


def array_loop(node: Node, runner) -> ArrayLoop:
    """The native array loop of `node` (its body compiled as `runner`), or NotNative."""
    return ArrayLoop(node, runner)


__all__ = ["ArrayLoop", "array_loop", "runs"]
