"""Scheduling, part 1: which values become real arrays (materialisation) and where.

Every node starts lazy if it can (an elementwise value is recomputed inside each kernel
that reads it; a view is an index map). `MATERIALIZE_RULES` says when a value must exist
as an array or scalar in the wrapper instead; `fusion.py` then groups the jobs (stored
values, reductions, scans, assignments) into kernels.

    plan = Plan(graph)          # categories, users, materialisation, names
    steps = group(plan)         # fusion.py: WrapperStep / KernelStep list in run order
"""
from __future__ import annotations

import bisect
import math
import warnings

import numpy as np
import sympy

from ..ir.graph import Graph, Node
from ..ir.ops.loops import written_values
from ..ir.ops.opaque import OPAQUE
from ..ir.registry import get_op, lowering, may_raise, may_warn, reports_fp, size_warnings, warns_unused
from .classify import categorize, view_is_inlinable
from .matmul import choice as product_choice
from .pointwise import SUPPORTED_DTYPES
from .views import broadcast_ok, is_one

WRAPPER = ("fallback", "matmul", "scalar")       # computed by NumPy / Python in the wrapper
# a lazy value reads at most this many lazy values in a row: every walk of a kernel expression
# (lowering, hashing, emission) recurses once per level, and an unrolled chain of thousands of
# elementwise steps exceeded Python's recursion limit (the graph then ran on NumPy). Storing
# one value every 24 steps costs a store and a load per 24 operations, and bounds what a kernel
# recomputes (a lazy value is recomputed by each reduction reading it): 1000 unrolled steps of
# `x = x / (x.sum() + 1)` compile in 4.7 s instead of 18 s with 48, and run 2.4x faster
MAX_LAZY_DEPTH = 24
_IMPURE_KINDS = ("mutation", "other")            # fallbacks of these kinds are barriers


def node_args(node: Node):
    return node.inputs()


def _written_between(positions: list, lo, hi) -> bool:
    """Is there a write at a position strictly between lo and hi (positions ascending)?"""
    i = bisect.bisect_right(positions, lo)
    return i < len(positions) and positions[i] < hi


def _wrapper_assign(plan, n: Node) -> bool:
    """assign whose source is not computed by a kernel: NumPy's `dst[...] = src`."""
    return not kernel_assign(plan, n)


def kernel_assign(plan, n: Node) -> bool:
    """assign(dst, src) with src computed by a kernel that writes straight into dst: an
    elementwise value or reduction, a view of memory read in place (`p[-1, :] = p[-2, :]`: NumPy's
    copy, overlap handled as for any source reading its destination), or a constant NumPy converts
    to dst's dtype without an error or a warning (`u[0, :] = 0`: converted here, assigned_constant)."""
    dst, src = n.args
    if dst.dtype.name not in SUPPORTED_DTYPES:
        return False
    if not isinstance(src, Node):
        return assigned_constant(src, dst.dtype) is not None
    if plan.cat[src] not in ("pw", "red", "view") or src.ndim == 0 or src.dtype.name not in SUPPORTED_DTYPES:
        return False                  # a scalar source: NumPy's checks (NaN into ints raises)
    if plan.cat[src] == "view" and _view_root_cat(plan, src) not in ("input", "fallback"):
        return False                  # a view of a computed value: computed once, then NumPy's copy
    extra = max(src.ndim - dst.ndim, 0)
    return all(is_one(d) for d in src.shape[:extra]) and broadcast_ok(src.shape[extra:], dst.shape)


def _view_root_cat(plan, n: Node) -> str:
    """The category of the value a chain of views reads (memory: an input, a NumPy result)."""
    while plan.cat.get(n) == "view" and n.args and isinstance(n.args[0], Node):
        n = n.args[0]
    return plan.cat.get(n)


def assigned_constant(value, dtype):
    """The element `dst[...] = value` writes into an array of `dtype`, as NumPy converts the
    Python or NumPy scalar (its own conversion, run here once), or None when NumPy raises or
    warns doing it (NaN or inf into an integer dtype, an int out of range: NEP 50's
    OverflowError) or value is no real number: the wrapper then assigns, and NumPy reports."""
    if type(value) not in (bool, int, float) and not (isinstance(value, np.generic) and value.dtype.kind in "biuf"):
        return None
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            out = np.empty((), dtype)
            out[()] = value
    except Exception:
        return None
    return out[()]


def _concat_depth(plan, n: Node) -> int:
    """Concatenates nested in n's expression (through elementwise values and views)."""
    memo = plan.__dict__.setdefault("_concat_depth", {})
    if n not in memo:
        memo[n] = 0                                   # (a cycle cannot occur: a DAG)
        below = [_concat_depth(plan, a) for a in node_args(n) if plan.cat.get(a) in ("pw", "view")]
        memo[n] = max(below, default=0) + (n.op == "concatenate")
    return memo[n]


def _deep_concatenate(plan, n: Node) -> bool:
    """Each lazy concatenate doubles the expression of what reads it (a branch per piece, each
    reading the pieces below at its own index): every third level is stored, so a kernel sees
    at most two nested (np.pad of a 2-d array: one per axis)."""
    if n.op != "concatenate" or plan.cat[n] != "pw":
        return False
    d = _concat_depth(plan, n)
    return d >= 3 and d % 2 == 1


def _recomputed_math(plan, n: Node) -> bool:
    """A math-library value (`mag = np.hypot(gx, gy)`, np.exp, ...) that two or more
    reductions read (`mag.mean() + mag.std()`, `mag.min()`, `mag.max()`): lazy, every pass of
    each would call the math function again (np.std alone reads it twice); stored once, the
    passes read it back (kernels after the one storing it: depth_cuts), as NumPy's own
    evaluation does."""
    if plan.cat[n] != "pw" or get_op(n.op).cost != "expensive":
        return False
    passes = sum(2 if u.op in ("var", "std") else 1 for u in plan.users[n] if plan.cat.get(u) == "red")
    return passes >= 3


# rule name -> predicate(plan, node): node must exist as an array/scalar in the wrapper.
MATERIALIZE_RULES = {
    "output": lambda p, n: n in p.output_set,                     # it leaves the graph
    "numpy_operand": lambda p, n: any(p.cat[u] in WRAPPER for u in p.users[n]),  # NumPy reads it
    "scan": lambda p, n: p.cat[n] == "scan",                      # scans always store
    "wrapper_assign": lambda p, n: any(                           # NumPy assigns into / from it
        p.cat[u] == "assign" and _wrapper_assign(p, u) for u in p.users[n]),
    "binds_size": lambda p, n: n in p.binders,                    # a data-dependent size is read off it
    "general_reshape": lambda p, n: p.cat[n] == "view" and not view_is_inlinable(n),  # NumPy view/copy
    "operand_of_wrapper_view": lambda p, n: any(                  # a NumPy view needs its base
        p.cat[u] == "view" and p.need.get(u) for u in p.users[n]),
    "deep_concatenate": _deep_concatenate,                        # bounded nesting of segments
    "warns_unused": lambda p, n: not p.users[n] and n not in p.output_set and warns_unused(n),  # NumPy warns
    "recomputed_math": _recomputed_math,                          # several reductions read it
    "gathered": lambda p, n: any(                                 # take_along loads it at data positions
        p.cat[u] == "pw" and getattr(lowering(u.op), "indexed", False) and u.args[0] is n for u in p.users[n]),
}


class Plan:
    """Per-graph scheduling facts shared by fusion, the kernel builder and the wrapper."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.nodes = list(graph.nodes)
        self.pos = {n: i for i, n in enumerate(self.nodes)}
        for n in graph.inputs:
            self.pos[n] = -1
        self.cat = {n: categorize(n) for n in list(graph.inputs) + self.nodes}
        self.output_set = set(o for o in graph.outputs if isinstance(o, Node))
        self.sym_names = {s: f"s{i}" for i, s in enumerate(graph.symbols)}
        self.sym_binding = self._unbacked()
        self.binders = {n for n, _ in self.sym_binding.values()}
        self.live = self._live()
        self.users = {n: [] for n in self.cat}
        for n in self.nodes:
            if n in self.live:
                for a in node_args(n):
                    self.users[a].append(n)
        self.need: dict = {}
        self.stored: set = set()              # kernel-stored values (filled by fusion)
        self.read_copies: set = set()         # assigns reading a copy of their destination
        self.depth_cuts: set = set()          # values stored and read back, never recomputed by a kernel
                                              # (_bound_lazy_depth, recomputed_math)
        self.math_cuts: set = set()           # the recomputed_math ones: later phases of the kernel
                                              # storing a row read it back (kernels.py)
        self._materialize()
        self.var = self._names()
        self.size_exprs: dict = {}            # wrapper size variable -> sympy expr
        self._size_vars: dict = {}

    # -- analysis ----------------------------------------------------------------------
    def _unbacked(self) -> dict:
        """Size symbols no input binds (data-dependent sizes such as a mask's count): each
        is read off the first value that has it as a dimension, once that value exists."""
        binding = {}
        for n in list(self.graph.inputs) + self.nodes:
            for d, e in enumerate(n.shape):
                if isinstance(e, sympy.Symbol) and e not in self.sym_names and e not in binding:
                    binding[e] = (n, d)
                    self.sym_names[e] = f"u{len(binding) - 1}"
        return binding

    def _live(self) -> set:
        live = set(self.output_set) | self.binders   # binders: data-dependent sizes come from them
        for n in reversed(self.nodes):
            if n in live or self.cat[n] == "assign" or (
                    self.cat[n] == "fallback" and get_op(n.op).kind in _IMPURE_KINDS) or (
                    self.cat[n] in WRAPPER and may_raise(n) and not self._raised_by_twin(n, live)) or (
                    warns_unused(n)):
                live.add(n)                                        # (unused, but NumPy would raise / warn)
                live.update(node_args(n))
        return live

    def _raised_by_twin(self, n: Node, live: set) -> bool:
        """Does a live node call the same NumPy function on the same arguments (the bin counts
        of np.histogram for its unused edges: one call, two results)? It raises what n would."""
        fn = OPAQUE.get(n.op)
        if fn is None:
            return False
        if not hasattr(self, "_calls_of"):
            self._calls_of: dict = {}
            for m in self.nodes:
                if OPAQUE.get(m.op) is not None:
                    self._calls_of.setdefault(id(OPAQUE[m.op]), []).append(m)
        return any(m in live and m.args == n.args and m.call_attrs == n.call_attrs
                   for m in self._calls_of[id(fn)])

    def _materialize(self):
        for n in reversed(self.nodes):        # consumers first: rules may look at users' need
            if n in self.live and self.cat[n] not in ("input",):
                self.need[n] = self.cat[n] in WRAPPER or any(
                    rule(self, n) for rule in MATERIALIZE_RULES.values())
                if self.need[n] and _recomputed_math(self, n):
                    self.depth_cuts.add(n)    # its readers load it, after the kernel storing it
                    self.math_cuts.add(n)
        for n in self.nodes:
            if self.cat[n] == "assign" and n in self.live:
                self.need[self.assign_base(n)[0]] = True
        self._bound_lazy_depth()
        self._mutation_hazards()
        self._reports_order()
        for n in reversed(self.nodes):        # wrapper views need their operand
            if self.need.get(n) and self.cat[n] == "view":
                x = n.args[0]
                if isinstance(x, Node) and self.cat[x] != "input":
                    self.need[x] = True

    def _bound_lazy_depth(self):
        """Store every value that would read MAX_LAZY_DEPTH lazy values in a row (see there);
        a kernel reads it back from memory, never recomputes it inside the kernel storing it
        (as it does other stored values: those count as lazy here)."""
        depth: dict = {}
        for n in self.nodes:
            if self.cat[n] not in ("pw", "view") or n not in self.live:
                continue
            if self.cat[n] == "view" and self.need.get(n):      # a NumPy view in the wrapper
                depth[n] = 0
                continue
            d = 1 + max((depth.get(a, 0) for a in node_args(n)), default=0)
            if d > MAX_LAZY_DEPTH:
                deepest = max(node_args(n), key=lambda a: depth.get(a, 0))
                cut = n if self.cat[n] == "pw" else deepest    # a view stays an index map
                self.need[cut] = True
                self.depth_cuts.add(cut)
                depth[cut] = 0
                d = 0 if cut is n else 1 + max((depth.get(a, 0) for a in node_args(n)), default=0)
            depth[n] = d

    def _reports_order(self):
        """NumPy reports a value's FP errors where the program computes it. A lazy value that
        may report, whose first consumer comes after a NumPy step that may warn, would be
        computed (and flagged) after that step: it is stored before it instead
        (backends/llvm/reports.py: reports in NumPy's order)."""
        steps = [self.pos[n] for n in self.nodes if n in self.live and self.warns_in_wrapper(n)]
        if not steps:
            return
        computed: dict = {}                   # node -> program position of the job computing it
        for n in reversed(self.nodes):
            if n not in self.live:
                continue
            if self.cat[n] not in ("pw", "view") or self.need.get(n):
                computed[n] = self.pos[n]
                continue
            at = min((computed.get(u, self.pos[u]) for u in self.users[n]), default=self.pos[n])
            k = bisect.bisect_right(steps, self.pos[n])        # the first such step after n
            if self.cat[n] == "pw" and k < len(steps) and steps[k] < at and reports_fp(n):
                self.need[n] = True
                at = self.pos[n]
            computed[n] = at

    def warns_in_wrapper(self, n: Node) -> bool:
        """Is n a NumPy step of the wrapper that may warn as it runs (a fallback, BLAS matmul,
        NumPy's `dst[...] = src`)? Python scalar arithmetic ("scalar") never warns."""
        c = self.cat[n]
        return may_warn(n) and (c == "fallback" or (c == "matmul" and product_choice(n) != "kernel") or (
            c == "assign" and _wrapper_assign(self, n)))

    def may_report(self, n: Node) -> bool:
        """May computing n in a kernel (with the lazy values it reads) report an FP error or a
        size warning?"""
        memo = self.__dict__.setdefault("_may_report", {})
        if n not in memo:
            memo[n] = False                   # (no cycles in a graph; guards the recursion)
            memo[n] = bool(size_warnings(n)) or reports_fp(n) or any(
                self.may_report(a) for a in node_args(n) if self.cat.get(a) in ("pw", "view")
                and not self.need.get(a))
        return memo[n]

    def assign_base(self, n: Node):
        """(base node, [views]) of an assign destination: views walked down to real memory."""
        dst, chain = n.args[0], []
        while self.cat[dst] == "view" and view_is_inlinable(dst) and isinstance(dst.args[0], Node):
            chain.append(dst)
            dst = dst.args[0]
        return dst, chain

    def alias_class(self, n: Node):
        """Values that may share memory have the same class ("in": inputs and their views)."""
        while self.cat.get(n) == "view":
            n = n.args[0]
        if self.cat[n] == "input" or (self.cat[n] == "fallback" and (
                get_op(n.op).kind in ("view", "other", "mutation") or get_op(n.op).aliases)):
            return "in"
        return n

    def lazy_reads(self, n: Node) -> set:
        """Arrays read when `n` is evaluated lazily (through unmaterialised pw/views)."""
        out, stack, seen = set(), [n], set()
        while stack:
            x = stack.pop()
            for a in node_args(x):
                if a in seen:
                    continue
                seen.add(a)
                if self.cat[a] in ("pw", "view") and not self.need.get(a):
                    stack.append(a)
                elif self.cat[a] != "red":
                    out.add(a)
        return out

    def last_use(self, n: Node) -> float:
        """Program position of the last step that reads `n` (through lazy values)."""
        if not hasattr(self, "_last_memo"):
            self._last_memo = {}
        return self._last_use(n, self._last_memo)

    def _last_use(self, n: Node, memo: dict) -> float:
        if n in memo:
            return memo[n]
        last = math.inf if n in self.output_set else self.pos[n]
        for u in self.users[n]:
            lazy = self.cat[u] in ("pw", "view") and not self.need.get(u)
            last = max(last, self._last_use(u, memo) if lazy else self.pos[u])
        memo[n] = last
        return last

    def _mutation_hazards(self):
        """A lazy value defined before a write to memory it reads, and used after it, is
        stored before the write (NumPy computed it then)."""
        writes: dict = {}                     # alias class -> program positions of writes to it
        for n in self.nodes:
            if n in self.live and (self.cat[n] == "assign" or (
                    self.cat[n] == "fallback" and get_op(n.op).kind in _IMPURE_KINDS)):
                for w in self._written(n):
                    writes.setdefault(self.alias_class(w), []).append(self.pos[n])
        if not writes:
            return
        # consumers first: a value whose every reader after the write is now stored is read
        # before the write (inside its readers' kernels) and stays lazy, so that in a chain
        # `N = a + b + c ...; Z[...] = 0; ... N ...` only N is stored, not each partial sum.
        # (_last_use(n) depends only on the `need` of n's users, all decided before n.)
        memo: dict = {}
        leaves: dict = {}                     # node -> alias classes of what it reads lazily
        for n in reversed(self.nodes):        # values, and element reads (x[1] is a copy)
            value = self.cat[n] == "pw" or (self.cat[n] == "view" and n.scalar)
            if not value or self.need.get(n) or n not in self.live:
                continue
            classes = self._lazy_read_classes(n, leaves) | {self.alias_class(n)}
            last = self._last_use(n, memo)
            if any(_written_between(writes.get(c, ()), self.pos[n], last) for c in classes):
                self.need[n] = True

    def _lazy_read_classes(self, n: Node, memo: dict) -> frozenset:
        """The alias classes of lazy_reads(n), memoised (asked consumers first, by
        _mutation_hazards: a node's entry is made and read while its operands are undecided)."""
        out = memo.get(n)
        if out is None:
            parts = []
            for a in node_args(n):
                if self.cat[a] in ("pw", "view") and not self.need.get(a):
                    parts.append(self._lazy_read_classes(a, memo))
                elif self.cat[a] != "red":
                    parts.append(frozenset((self.alias_class(a),)))
            out = memo[n] = frozenset().union(*parts) if len(parts) != 1 else parts[0]
        return out

    def _written(self, n: Node) -> list:
        """The values whose memory a write step may change: an assign's base; an impure
        fallback itself and what it writes into (a structured loop's captured arrays)."""
        if self.cat[n] == "assign":
            return [self.assign_base(n)[0]]
        return [n] + written_values(n)

    # -- facts used by fusion ----------------------------------------------------------
    def readers(self) -> dict:
        """reduction -> job nodes whose kernel expression may read it: through lazy elementwise
        values and views. A stored value's readers are not its reduction's: in another kernel
        they load the array, and in the same kernel they recompute it, but then its own job,
        a reader too, is in that kernel. Memoised per lazy value: linear in the graph."""
        if getattr(self, "_readers", None) is None:
            self._readers = {}
            reach: dict = {}                  # lazy value -> reductions its expression reads
            for n in self.nodes:
                job = self.cat[n] in ("red", "scan") or (self.cat[n] == "pw" and self.need.get(n)) \
                    or (self.cat[n] == "assign" and kernel_assign(self, n)) or self.cat[n] == "compact"
                if n not in self.live or not job:
                    continue
                for r in self._reductions_read(n, reach):
                    self._readers.setdefault(r, set()).add(n)
        return self._readers

    def _reductions_read(self, n: Node, reach: dict) -> frozenset:
        """The reductions n's expression reads through lazy values (memo: `reach`)."""
        parts = []
        for a in node_args(n):
            if self.cat[a] == "red":
                parts.append(frozenset((a,)))
            elif self.cat[a] in ("pw", "view") and not self.need.get(a):
                if a not in reach:
                    reach[a] = self._reductions_read(a, reach)
                parts.append(reach[a])
        return frozenset().union(*parts) if len(parts) != 1 else parts[0]

    def red_stored(self, r: Node, jobs) -> bool:
        """A reduction is stored when anything outside its kernel reads it."""
        inside = {j.node for j in jobs}
        return bool(self.need.get(r)) or any(u not in inside for u in self.readers().get(r, ()))

    def is_barrier(self, n: Node) -> bool:
        """Steps that write memory: nothing may be reordered across them."""
        return self.cat[n] == "assign" or (self.cat[n] == "fallback"
                                           and get_op(n.op).kind in _IMPURE_KINDS)

    def overlap_checks(self, assign: Node, builder) -> list:
        """Buffers of an assign kernel that may overlap the destination: the wrapper copies
        them first when np.may_share_memory says so (NumPy evaluates the source first)."""
        base = self.assign_base(assign)[0]
        cls = self.alias_class(base)
        out = []
        for i, node in enumerate(builder.buffer_nodes):
            if node is not base and not builder.buffers[i].written and self.alias_class(node) == cls:
                out.append((i, self.var[base]))
        return out

    # -- queries used by the kernel builder and the wrapper --------------------------------
    def has_value(self, n: Node) -> bool:
        return self.cat[n] == "input" or n in self.stored or (
            bool(self.need.get(n)) and self.cat[n] not in ("pw", "red"))

    def by_value(self, n: Node) -> bool:
        """Passed to kernels as a scalar argument (a Python or NumPy scalar in the wrapper)."""
        if self.cat[n] == "input":                 # Python scalars and NumPy scalars
            return n.attr("kind") == "scalar" or (n.scalar and n.shape == ())
        if self.cat[n] == "scalar":
            return True
        if self.cat[n] == "matmul" and n in self.stored:
            return False                           # a 0-d product our kernel stored: read from its array
        return self.cat[n] in ("fallback", "matmul", "view") and n.scalar and n.shape == ()

    def scalar_source(self, n: Node) -> str:
        v = self.var[n]
        return f"int({v})" if n.dtype.name == "bool" else v

    def _names(self) -> dict:
        names = {n: f"in{i}" for i, n in enumerate(self.graph.inputs)}
        for i, n in enumerate(self.nodes):
            names[n] = f"v{i}"
        return names

    def size_var(self, expr) -> str:
        """Wrapper variable holding a symbolic size (computed once per call)."""
        expr = sympy.sympify(expr)
        if expr not in self._size_vars:
            name = f"z{len(self._size_vars)}"
            self._size_vars[expr] = name
            self.size_exprs[name] = expr
        return self._size_vars[expr]

    def expr_of(self, source: str):
        """The sympy expression behind a size source (inverse of size_source)."""
        if source in self.size_exprs:
            return self.size_exprs[source]
        return next(s for s, name in self.sym_names.items() if name == source)

    def size_source(self, d) -> str:
        """Python source of a size: an int literal or a size variable."""
        if isinstance(d, int) or (isinstance(d, sympy.Basic) and d.is_Integer):
            return str(int(d))
        if d in self.sym_names:
            return self.sym_names[d]
        return self.size_var(d)

    def expr_source(self, expr) -> str:
        return self.size_source(sympy.sympify(expr))
