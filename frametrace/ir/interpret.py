"""The reference interpreter: run a Graph node by node with each op's NumPy reference.

This is the living definition of what a graph means; the NumPy backend is this plus
bookkeeping, and every other backend is tested against it.

    outs = interpret(graph, {"L['x']": x}, {s0: 10})

Size arguments (sympy expressions) are evaluated with the symbol binding: an integer
result is passed as a Python int, anything else (a SymFloat's expression) as a Python float.
"""
from __future__ import annotations

import contextlib

import numpy as np
import sympy

from .graph import Graph, IndexSlice, Node
from .ops.elementwise import scalar_operator
from .registry import get_op


def evaluate_size(expr, binding: dict):
    """The Python value of a size expression under `binding` (Symbol -> sympy Integer)."""
    value = expr.xreplace(binding) if binding else expr
    if value.free_symbols:
        raise KeyError(f"unbound size symbols {sorted(map(str, value.free_symbols))} in {expr}")
    if value in (sympy.true, sympy.false):
        return bool(value)
    if value.is_Integer:
        return int(value)
    if value.is_real:
        return float(value)
    return complex(value)


def interpret(graph: Graph, inputs: dict, symbols: dict | None = None) -> list:
    """Evaluate `graph` on concrete inputs (source -> value) and sizes (Symbol -> int)."""
    binding = {s: sympy.Integer(int(v)) for s, v in (symbols or {}).items()}
    env: dict = {}

    def value(a):
        if isinstance(a, Node):
            return env[a]
        if isinstance(a, tuple):
            return tuple(value(v) for v in a)
        if isinstance(a, IndexSlice):
            return IndexSlice(value(a.start), value(a.stop), value(a.step))
        if isinstance(a, sympy.Basic):
            return evaluate_size(a, binding)
        return a

    for node in graph.inputs:
        env[node] = inputs[node.attr("source")]
    for node in graph.nodes:
        op = get_op(node.op)
        # a gather's `size` is the unbacked symbol its own result defines
        attrs = {k: value(v) for k, v in node.call_attrs if not (op.kind == "gather" and k == "size")}
        modes = node.errstate                 # a node of a traced `with np.errstate` block
        fn = scalar_operator(node) or op.ref   # `a * b` on NumPy scalars: their scalar math
        with np.errstate(**modes) if modes else contextlib.nullcontext():
            env[node] = fn(*(value(a) for a in node.args), **attrs)
        for d, dim in enumerate(node.shape if node.dtype is not None else ()):
            if isinstance(dim, sympy.Symbol) and dim not in binding:
                binding[dim] = sympy.Integer(env[node].shape[d])
    return [value(o) for o in graph.outputs]
