"""The IR verifier: what every well-formed Graph satisfies, checked after tracing, after each
pass and at backend entry (`config.verify_ir`, on in tests).

    verify_graph(graph, "after dce")      # raises IRVerifyError naming the node and the rule

Rules:
  * definitions before uses: every Node argument of a node is a graph input or an earlier node;
    every output is an input or a node of the graph;
  * symbols covered: every size symbol a node mentions (in its arguments, attributes or shape) is
    bound by an input source (`graph.symbols`) or is an unbacked size defined by an earlier node
    (a data-dependent op: its `size` attribute); runtime asserts likewise;
  * meta rules agree: each node's op meta rule, re-run on the recorded argument types with every
    backed size at its hint, gives the node's recorded dtype and shape (nodes whose sizes
    depend on data are checked for dtype and rank only: no value of an unbacked size is known,
    and a stand-in could break facts the trace relied on).

`used_symbols` and `unbacked_definitions` are also what dead-code elimination needs: a node
that defines an unbacked size is live while a live node uses that size.
"""
from __future__ import annotations

import numpy as np
import sympy

from .builder import recorded_fake
from .fake import FakeArray, FakeScalar
from .graph import Graph, IndexSlice, Node, flatten_args
from .interpret import evaluate_size
from .registry import get_op


class IRVerifyError(AssertionError):
    """A graph broke a well-formedness rule: a compiler bug, never a user error."""


def _expr_symbols(a, out: set):
    if isinstance(a, sympy.Basic):
        out.update(a.free_symbols)
    elif isinstance(a, tuple):
        for x in a:
            _expr_symbols(x, out)
    elif isinstance(a, IndexSlice):
        for x in (a.start, a.stop, a.step):
            _expr_symbols(x, out)


def used_symbols(node: Node) -> set:
    """Size symbols `node` needs bound before it runs: in its arguments, attributes and shape."""
    out: set = set()
    _expr_symbols(node.args, out)
    _expr_symbols(tuple(v for _, v in node.attrs), out)
    _expr_symbols(node.shape, out)
    return out


def unbacked_definitions(graph: Graph) -> dict:
    """Unbacked symbol -> the node that defines it: a data-dependent op (mask_select, argwhere,
    unique) names the size of its result in its `size` attribute; the value a loop leaves
    along a carried size (ir/ops/loops.py) has the size its last iteration gave it."""
    defs: dict = {}
    for node in graph.nodes:
        sizes = [node.attr("size")]
        if node.op == "loop_out" and node.attr("body").carried_sizes:
            sizes = list(node.shape)
        for size in sizes:
            if isinstance(size, sympy.Symbol) and size not in graph.symbols and size not in defs:
                defs[size] = node
    return defs


def verify_graph(graph: Graph, where: str = "") -> None:
    """Raise IRVerifyError if `graph` breaks a rule of the module doc."""
    at = f" ({where})" if where else ""
    defined = set(graph.inputs)
    bound = set(graph.symbols)
    defs = unbacked_definitions(graph)
    for node in graph.inputs:
        missing = used_symbols(node) - bound
        if missing:
            raise IRVerifyError(f"input {node!r} has unbound sizes {sorted(map(str, missing))}{at}")
    for node in graph.nodes:
        for arg in node.inputs():
            if arg not in defined:
                raise IRVerifyError(f"{node.op} node {node!r} uses {arg!r} before its definition{at}")
        own = {s for s, d in defs.items() if d is node}
        missing = used_symbols(node) - bound - own
        if missing:
            raise IRVerifyError(f"{node.op} node {node!r} uses sizes {sorted(map(str, missing))} that nothing "
                                f"binds before it{at}")
        bound |= own
        defined.add(node)
        body = node.attr("body")
        if node.op == "loop" and body is not None:
            verify_graph(body.graph, f"{where} in the loop body at {body.location}".strip())
    for out in graph.outputs:
        if out not in defined:
            raise IRVerifyError(f"output {out!r} is not a value of the graph{at}")
    for expr, _ in getattr(graph, "runtime_asserts", ()):
        missing = set(getattr(expr, "free_symbols", ())) - bound
        if missing:
            raise IRVerifyError(f"runtime assert {expr} uses unbound sizes {sorted(map(str, missing))}{at}")
    _verify_meta(graph, at)


# -- meta rules re-run at the hints --------------------------------------------------------------

def _binding(graph: Graph) -> dict | None:
    hints = getattr(graph, "hints", {}) or {}
    binding = {}
    for s in graph.symbols:
        if s not in hints:
            return None                      # no hint to re-run at (a graph built by hand)
        binding[s] = sympy.Integer(int(hints[s]))
    return binding


def _concrete(a, binding, fakes):
    if isinstance(a, Node):
        return fakes[a]
    if isinstance(a, tuple):
        return tuple(_concrete(x, binding, fakes) for x in a)
    if isinstance(a, IndexSlice):
        return IndexSlice(*(_concrete(x, binding, fakes) for x in (a.start, a.stop, a.step)))
    if isinstance(a, sympy.Basic):
        return evaluate_size(a, binding)
    return a


def _fake_of(node: Node, binding):
    shape = tuple(evaluate_size(sympy.sympify(d), binding) for d in node.shape)
    fake = recorded_fake(node)
    if isinstance(fake, FakeScalar):
        return FakeScalar(fake.pytype)
    if node.op == "input" and node.attr("kind") == "scalar":
        return FakeScalar({"b": bool, "i": int, "f": float, "c": complex}[node.dtype.kind])
    return FakeArray(shape, node.dtype, node.scalar)


def _verify_meta(graph: Graph, at: str) -> None:
    binding = _binding(graph)
    if binding is None:
        return
    fakes = {n: _fake_of(n, binding) for n in graph.inputs}
    for node in graph.nodes:
        if used_symbols(node) - binding.keys() or any(
                isinstance(a, Node) and fakes.get(a) is None for a in flatten_args(node.args)):
            fakes[node] = None               # sizes that depend on data: no concrete re-run
            continue
        op = get_op(node.op)
        attrs = {k: _concrete(v, binding, fakes) for k, v in node.call_attrs}
        result = op.meta(*_concrete(node.args, binding, fakes), **attrs)
        if node.dtype is None:
            if result is not None:
                raise IRVerifyError(f"{node.op} node {node!r} has no value but its meta rule gives one{at}")
            continue
        want = _fake_of(node, binding)
        if isinstance(result, FakeScalar):
            got_dtype, got_shape = np.dtype({bool: np.bool_, int: np.int64, float: np.float64,
                                             complex: np.complex128}[result.pytype]), ()
        else:
            got_dtype = result.dtype
            got_shape = tuple(int(evaluate_size(sympy.sympify(d), binding)) for d in result.shape)
        want_shape = () if isinstance(want, FakeScalar) else want.shape
        if got_dtype != node.dtype or got_shape != want_shape:
            raise IRVerifyError(f"{node.op} node {node!r}: recorded {node.type_str()} at sizes "
                                f"{want_shape}, its meta rule now gives {got_dtype}{list(got_shape)}{at}")
        fakes[node] = want
