"""The rest of a call run by the NumPy reference, from a step the kernels cannot take.

A kernel takes a Python int by value as an int64. A Python int the wrapper computed at run
time (the final value of a loop's int counter, which leaves int64 when the loop's native code
hands its big-int iterations to Python) may not fit, where NumPy (and Python) take any int.
The wrapper checks such a value before the kernel that takes it (wrapper.wide_ints); out of
int64, `RestOfCall` evaluates every node the steps before it did not, with each op's NumPy
reference (ir/interpret.py's rules), from the values the wrapper has computed so far. Nodes
the earlier kernels computed without storing them (fused into a kernel) are computed again
from their operands, which is safe: those are pure (elementwise, views, reductions).
Nothing that ran is run again, so effects happen once.
"""
from __future__ import annotations

import contextlib

import numpy as np
import sympy

from ...ir.graph import IndexSlice, Node
from ...ir.interpret import evaluate_size
from ...ir.ops.elementwise import scalar_operator
from ...ir.registry import get_op
from ...lower.fusion import KernelStep


def evaluated_before(plan, steps) -> list:
    """[nodes the steps before step i evaluate, for i in 0..len(steps)] (fused interiors included)."""
    out, done = [frozenset()], set()
    for s in steps:
        roots = [j.node for j in s.jobs] if isinstance(s, KernelStep) else [s.node]
        stack = list(roots)
        while stack:
            x = stack.pop()
            if x in done:
                continue
            done.add(x)
            stack += [a for a in x.inputs() if plan.cat.get(a) in ("pw", "view") and not plan.need.get(a)]
        out.append(frozenset(done))
    return out


class RestOfCall:
    """`rest(i, inputs, symbol_values, scope)`: the graph's outputs, the steps before step i
    having run (their values in `scope`, the wrapper's locals, by variable name)."""

    def __init__(self, plan, steps):
        self.graph = plan.graph
        self.names = {n: v for n, v in plan.var.items()}
        self.before = evaluated_before(plan, steps)

    def __call__(self, i, inputs, symbol_values, scope):
        g = self.graph
        binding = {s: sympy.Integer(int(v)) for s, v in zip(g.symbols, symbol_values)}
        env: dict = dict(zip(g.inputs, inputs))
        for n, name in self.names.items():
            if n not in env and name in scope and n in self.before[i]:
                v = scope[name]
                env[n] = v[()] if n.scalar and n.shape == () and isinstance(v, np.ndarray) else v
        for n, v in env.items():
            for d, dim in enumerate(n.shape if n.dtype is not None and hasattr(v, "shape") else ()):
                if isinstance(dim, sympy.Symbol) and dim not in binding:
                    binding[dim] = sympy.Integer(v.shape[d])
        done = self.before[i]

        def value(a):
            if isinstance(a, Node):
                if a not in env:
                    if get_op(a.op).kind in ("mutation", "other") and a in done:
                        raise RuntimeError(f"the value of {a.name} ({a.op}) ran and was not kept")
                    compute(a)
                return env[a]
            if isinstance(a, tuple):
                return tuple(value(v) for v in a)
            if isinstance(a, IndexSlice):
                return IndexSlice(value(a.start), value(a.stop), value(a.step))
            if isinstance(a, sympy.Basic):
                return evaluate_size(a, binding)
            return a

        def compute(node):
            op = get_op(node.op)
            attrs = {k: value(v) for k, v in node.call_attrs if not (op.kind == "gather" and k == "size")}
            fn = scalar_operator(node) or op.ref
            with np.errstate(**node.errstate) if node.errstate else contextlib.nullcontext():
                env[node] = fn(*(value(a) for a in node.args), **attrs)
            for d, dim in enumerate(node.shape if node.dtype is not None else ()):
                if isinstance(dim, sympy.Symbol) and dim not in binding:
                    binding[dim] = sympy.Integer(env[node].shape[d])

        for node in g.nodes:
            if node not in env and node not in done:
                compute(node)
        return [value(o) for o in g.outputs]
