"""The graph IR: a straight-line program of NumPy array operations with symbolic sizes.

A `Graph` is a list of `Node`s in program order. Every node names a registered op
(`frametrace.ir.registry`), its arguments, and the shape/dtype that op's meta rule
derived when the node was created; backends read those and never re-derive them.

Arguments of a node are:
  * another `Node` (an array or NumPy-scalar value),
  * a Python constant (int, float, bool, complex, None, str, np.generic, np.dtype),
  * a sympy expression over the graph's size symbols (a size or an int computed from sizes;
    the backend evaluates it from the symbol values bound at call time),
  * a tuple of the above (shapes, axes, index tuples), or an `IndexSlice`.

Program order matters: mutation nodes (op kind "mutation") write into the buffer of an
earlier value (an input or a view of one); everything after them sees the new contents.

A node recorded inside a traced `with np.errstate(...)` block whose op may report an FP error
carries the block's modes as its `errstate` attribute (ERRSTATE: ((kind, mode), ...)); a
Python operator on NumPy scalars (`x[0] * x[1]`) is marked SCALAR_MATH: NumPy's scalar math
computes it, which reports integer overflow ("overflow encountered in scalar multiply") where
the ufunc does not. A node lowered from a NumPy function that adds up in an order of its own
(np.einsum's contractions as `multiply` and `sum`) is marked OWN_ORDER (the function's name):
its value agrees with NumPy's up to rounding, and backends/llvm/exact.py never claims it is
NumPy's bits. None is an argument of the op (`call_attrs` leaves them out); the backends run
the node under them.

Graph inputs are nodes with op "input": arrays (`kind="array"`) and Python scalars that are
inputs rather than constants (`kind="scalar"`, e.g. a float argument). Size symbols are not
nodes: `Graph.symbols` maps each symbol to the source expression that binds it at run time.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

_ids = itertools.count()
ERRSTATE = "errstate"      # the attribute of nodes recorded inside a traced `with np.errstate` block
SCALAR_MATH = "scalar_math"    # a Python operator on NumPy scalars: NumPy's scalar math runs it
OWN_ORDER = "own_order"    # a value NumPy computes in another order of operations (np.einsum's sums)
ANNOTATIONS = (ERRSTATE, SCALAR_MATH, OWN_ORDER)     # attributes that are not parameters of the op


@dataclass(frozen=True)
class IndexSlice:
    """A `start:stop:step` slice whose parts may be ints, sympy expressions or None."""
    start: Any = None
    stop: Any = None
    step: Any = None

    def __str__(self):
        parts = ["" if p is None else str(p) for p in (self.start, self.stop, self.step)]
        return ":".join(parts[:2]) if self.step is None else ":".join(parts)


@dataclass(frozen=True, eq=False)
class Node:
    """One value of the graph. Compared by identity; `name` is for printing only."""
    op: str
    args: tuple = ()
    attrs: tuple = ()                 # sorted ((name, value), ...), hashable
    shape: tuple = ()                 # int | sympy.Expr per dimension
    dtype: np.dtype | None = None     # None for nodes without a value (mutations)
    scalar: bool = False              # NumPy returns a scalar (np.float64), not a 0-d array
    name: str = field(default_factory=lambda: f"v{next(_ids)}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def attr(self, key, default=None):
        for k, v in self.attrs:
            if k == key:
                return v
        return default

    @property
    def kwargs(self) -> dict:
        return dict(self.call_attrs)

    @property
    def call_attrs(self) -> tuple:
        """The attributes the op's meta rule and reference take (not the ANNOTATIONS)."""
        return tuple(kv for kv in self.attrs if kv[0] not in ANNOTATIONS)

    @property
    def errstate(self) -> dict | None:
        """The np.errstate modes this node runs under (a traced block), or None: the caller's."""
        modes = self.attr(ERRSTATE)
        return dict(modes) if modes else None

    def inputs(self):
        """The Node arguments, in order (also found inside tuples)."""
        return [a for a in flatten_args(self.args) if isinstance(a, Node)]

    def type_str(self) -> str:
        if self.dtype is None:
            return "none"
        dims = ", ".join(str(d) for d in self.shape)
        kind = "scalar " if self.scalar else ""
        return f"{kind}{_dtype_short(self.dtype)}[{dims}]"

    def __repr__(self):
        return f"%{self.name}"


def fold_operands_first(node: "Node", memo, needs, compute):
    """memo[node], computing memo[n] = compute(n) for `node` and every operand `needs(a)`
    selects, operands first, without recursion (a loop of Python arithmetic is a long chain
    of nodes). `memo` keeps the answers (a WeakKeyDictionary across graphs)."""
    if node in memo:
        return memo[node]
    stack = [node]
    while stack:
        n = stack[-1]
        todo = [a for a in n.args if isinstance(a, Node) and needs(a) and a not in memo]
        if todo:
            stack.extend(todo)
            continue
        stack.pop()
        memo[n] = compute(n)
    return memo[node]


def flatten_args(args):
    """The leaves of node arguments: inside tuples, and an IndexSlice's three parts."""
    for a in args:
        if isinstance(a, tuple):
            yield from flatten_args(a)
        elif isinstance(a, IndexSlice):
            yield from (a.start, a.stop, a.step)
        else:
            yield a


_SHORT = {"float64": "f64", "float32": "f32", "float16": "f16", "int64": "i64", "int32": "i32",
          "int16": "i16", "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32",
          "uint64": "u64", "bool": "b8", "complex128": "c128", "complex64": "c64"}


def _dtype_short(dt) -> str:
    return _SHORT.get(np.dtype(dt).name, np.dtype(dt).name)


def format_arg(a, names=None) -> str:
    if isinstance(a, Node):
        return f"%{names[a]}" if names and a in names else repr(a)
    if isinstance(a, tuple):
        inner = ", ".join(format_arg(x, names) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, np.dtype):
        return a.name
    if isinstance(a, np.generic):
        return f"{type(a).__name__}({a!r})" if not repr(a).startswith("np.") else repr(a)
    if isinstance(a, sympy.Basic):
        return str(a)
    if isinstance(a, IndexSlice):
        return str(a)
    return repr(a)


@dataclass
class Graph:
    """Inputs, nodes in program order, outputs, and the size symbols with their sources."""
    inputs: list = field(default_factory=list)     # Node(op="input")
    nodes: list = field(default_factory=list)      # every non-input node, program order
    outputs: tuple = ()                            # Nodes whose values leave the graph
    symbols: dict = field(default_factory=dict)    # sympy.Symbol -> source name, e.g. "L['x'].shape[0]"
    runtime_asserts: list = field(default_factory=list)  # (sympy bool, message): ft.check on unbacked sizes
    hints: dict = field(default_factory=dict)      # backed Symbol -> its value in the call being compiled

    def add_input(self, *, source: str, kind: str, shape=(), dtype=None, scalar=False) -> Node:
        n = Node("input", (), (("kind", kind), ("source", source)), tuple(shape),
                 None if dtype is None else np.dtype(dtype), scalar, name=_input_name(source, len(self.inputs)))
        self.inputs.append(n)
        return n

    def add(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def __str__(self):
        return format_graph(self)


def _input_name(source: str, index: int) -> str:
    clean = "".join(ch if ch.isalnum() else "_" for ch in source).strip("_")
    clean = "_".join(p for p in clean.split("_") if p)
    return clean or f"in{index}"


def format_graph(g: Graph, name: str = "graph") -> str:
    """A stable, readable listing, tested verbatim in golden tests (values numbered in order)."""
    names = {n: n.name for n in g.inputs}
    names.update({n: str(i) for i, n in enumerate(g.nodes)})
    syms = "".join(f"  # {s} = {src}\n" for s, src in g.symbols.items())
    ins = ", ".join(f"%{n.name}: {n.type_str()}" for n in g.inputs)
    lines = [f"{name}({ins}):"]
    if syms:
        lines.append(syms.rstrip("\n"))
    for n in g.nodes:
        args = ", ".join(format_arg(a, names) for a in n.args)
        attrs = "".join(f", {k}={format_arg(v, names)}" for k, v in n.attrs)
        lhs = f"%{names[n]} = " if n.dtype is not None else ""
        typ = f"  : {n.type_str()}" if n.dtype is not None else ""
        lines.append(f"  {lhs}{n.op}({args}{attrs}){typ}")
        body = n.attr("body") if n.op == "loop" else None
        if body is not None:                   # a structured loop (ir/ops/loops.py): its body
            inner = format_graph(body.graph, f"{body.kind}_body")
            lines.extend("    " + line for line in inner.splitlines())
    outs = ", ".join(format_arg(o, names) for o in g.outputs)
    lines.append(f"  return ({outs})")
    return "\n".join(lines)
