"""Scheduling, part 1: which values become real arrays (materialisation) and where.

Every node starts lazy if it can (an elementwise value is recomputed inside each kernel
that reads it; a view is an index map). `MATERIALIZE_RULES` says when a value must exist
as an array or scalar in the wrapper instead; `fusion.py` then groups the jobs (stored
values, reductions, scans, assignments) into kernels.

    plan = Plan(graph)          # categories, users, materialisation, names
    steps = group(plan)         # fusion.py: WrapperStep / KernelStep list in run order
"""
from __future__ import annotations

import math

import sympy

from ..ir.graph import Graph, Node
from ..ir.ops.loops import written_values
from ..ir.ops.opaque import OPAQUE
from ..ir.registry import get_op, lowering, may_raise
from .classify import categorize, view_is_inlinable
from .pointwise import SUPPORTED_DTYPES
from .views import broadcast_ok, is_one

WRAPPER = ("fallback", "matmul", "scalar")       # computed by NumPy / Python in the wrapper
_IMPURE_KINDS = ("mutation", "other")            # fallbacks of these kinds are barriers


def node_args(node: Node):
    return node.inputs()


def _wrapper_assign(plan, n: Node) -> bool:
    """assign whose source is not computed by a kernel: NumPy's `dst[...] = src`."""
    return not kernel_assign(plan, n)


def kernel_assign(plan, n: Node) -> bool:
    """assign(dst, src) with src computed by a kernel that writes straight into dst."""
    dst, src = n.args
    if not (isinstance(src, Node) and plan.cat[src] in ("pw", "red")) or \
            dst.dtype.name not in SUPPORTED_DTYPES or src.ndim == 0:
        return False                  # a scalar source: NumPy's checks (NaN into ints raises)
    extra = max(src.ndim - dst.ndim, 0)
    return all(is_one(d) for d in src.shape[:extra]) and broadcast_ok(src.shape[extra:], dst.shape)


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
                    self.cat[n] in WRAPPER and may_raise(n) and not self._raised_by_twin(n, live)):
                live.add(n)                                        # (unused, but NumPy would raise)
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
        for n in self.nodes:
            if self.cat[n] == "assign" and n in self.live:
                self.need[self.assign_base(n)[0]] = True
        self._mutation_hazards()
        for n in reversed(self.nodes):        # wrapper views need their operand
            if self.need.get(n) and self.cat[n] == "view":
                x = n.args[0]
                if isinstance(x, Node) and self.cat[x] != "input":
                    self.need[x] = True

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
        writes = [(self.pos[n], self.alias_class(w)) for n in self.nodes
                  if n in self.live and (self.cat[n] == "assign" or (
                      self.cat[n] == "fallback" and get_op(n.op).kind in _IMPURE_KINDS))
                  for w in self._written(n)]
        if not writes:
            return
        # consumers first: a value whose every reader after the write is now stored is read
        # before the write (inside its readers' kernels) and stays lazy, so that in a chain
        # `N = a + b + c ...; Z[...] = 0; ... N ...` only N is stored, not each partial sum.
        # (_last_use(n) depends only on the `need` of n's users, all decided before n.)
        memo: dict = {}
        for n in reversed(self.nodes):        # values, and element reads (x[1] is a copy)
            value = self.cat[n] == "pw" or (self.cat[n] == "view" and n.scalar)
            if not value or self.need.get(n) or n not in self.live:
                continue
            classes = {self.alias_class(r) for r in self.lazy_reads(n) | {n}}
            last = self._last_use(n, memo)
            if any(self.pos[n] < p < last and c in classes for p, c in writes):
                self.need[n] = True

    def _written(self, n: Node) -> list:
        """The values whose memory a write step may change: an assign's base; an impure
        fallback itself and what it writes into (a structured loop's captured arrays)."""
        if self.cat[n] == "assign":
            return [self.assign_base(n)[0]]
        return [n] + written_values(n)

    # -- facts used by fusion ----------------------------------------------------------
    def readers(self) -> dict:
        """reduction -> job nodes whose kernel expression may read it (over-approximated:
        through every elementwise producer, stored or not)."""
        if getattr(self, "_readers", None) is None:
            self._readers = {}
            for n in self.nodes:
                job = self.cat[n] in ("red", "scan") or (self.cat[n] == "pw" and self.need.get(n)) \
                    or (self.cat[n] == "assign" and kernel_assign(self, n)) or self.cat[n] == "compact"
                if n not in self.live or not job:
                    continue
                stack, seen = list(node_args(n)), set()
                while stack:
                    a = stack.pop()
                    if a in seen:
                        continue
                    seen.add(a)
                    if self.cat[a] == "red":
                        self._readers.setdefault(a, set()).add(n)
                    elif self.cat[a] == "pw" or (self.cat[a] == "view" and not self.need.get(a)):
                        stack.extend(node_args(a))
        return self._readers

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
