"""Which nodes may raise at run time (registry.may_raise, ir/ops/raising.py), and dead-code
elimination keeping them: NumPy evaluates every statement, used or not."""
import numpy as np
import sympy

import frametrace.ir.ops  # noqa: F401  (registers the ops)
from frametrace.ir.builder import GraphBuilder
from frametrace.ir.graph import Graph, Node
from frametrace.ir.interpret import interpret
from frametrace.ir.registry import may_raise
from frametrace.passes.dce import eliminate_dead_code


def _input(g, name, shape, dtype, kind="array"):
    return g.add_input(source=name, kind=kind, shape=shape, dtype=dtype, scalar=kind == "scalar")


def _node(op, *args, dtype, shape=(3,), scalar=False, **attrs):
    return Node(op, args, tuple(sorted(attrs.items())), shape, np.dtype(dtype), scalar)


def test_elementwise_may_raise():
    g = Graph()
    xi = _input(g, "xi", (3,), np.int64)
    xu = _input(g, "xu", (3,), np.uint8)
    xf = _input(g, "xf", (3,), np.float64)
    x32 = _input(g, "x32", (3,), np.int32)
    s = _input(g, "s", (), np.float64, kind="scalar")
    n = sympy.Symbol("s0", integer=True)
    assert may_raise(_node("power", xi, xi, dtype=np.int64))            # 2 ** -1 raises
    assert may_raise(_node("power", xi, n, dtype=np.int64))             # a dynamic int exponent
    assert not may_raise(_node("power", xi, xu, dtype=np.int64))        # unsigned: never negative
    assert not may_raise(_node("power", xi, 2, dtype=np.int64))
    assert not may_raise(_node("power", xf, xi, dtype=np.float64))
    assert may_raise(_node("true_divide", 1, s, dtype=np.float64, shape=(), scalar=True))   # 1 / 0.0
    assert may_raise(_node("power", s, 1000.0, dtype=np.float64, shape=(), scalar=True))    # overflow
    assert not may_raise(_node("add", s, 1.0, dtype=np.float64, shape=(), scalar=True))
    assert not may_raise(_node("true_divide", xf, xf, dtype=np.float64))   # NumPy warns only
    assert not may_raise(_node("floor_divide", xi, xi, dtype=np.int64))
    assert may_raise(_node("multiply", x32, n, dtype=np.int32))          # NEP 50 OverflowError
    assert not may_raise(_node("multiply", xf, n, dtype=np.float64))
    assert may_raise(_node("clip", x32, 0, n, dtype=np.int32))
    assert not may_raise(_node("sin", xf, dtype=np.float64))


def test_gather_and_reduction_may_raise():
    g = Graph()
    x = _input(g, "x", (3,), np.float64)
    idx = _input(g, "i", (2,), np.int64)
    u = sympy.Symbol("u0", integer=True, nonnegative=True)
    xu = _input(g, "xu", (u,), np.float64)
    assert may_raise(_node("take", x, idx, dtype=np.float64, shape=(2,)))
    assert not may_raise(_node("max", x, dtype=np.float64, shape=(), scalar=True, axis=None, keepdims=False))
    assert may_raise(_node("max", xu, dtype=np.float64, shape=(), scalar=True, axis=None, keepdims=False))
    assert may_raise(_node("argmin", xu, dtype=np.int64, shape=(), scalar=True, axis=None, keepdims=False))
    assert not may_raise(_node("sum", xu, dtype=np.float64, shape=(), scalar=True, axis=None, keepdims=False))


def test_dce_keeps_nodes_that_may_raise():
    b = GraphBuilder()
    x = b.input_array("x", (3,), np.int64)
    y = b.input_array("y", (3,), np.int64)
    b.emit("power", x, y)                 # unused, may raise
    b.emit("add", x, y)                   # unused, cannot raise
    b.graph.outputs = (x.node,)
    assert eliminate_dead_code(b.graph) == 1
    assert [n.op for n in b.graph.nodes] == ["power"]
    try:
        interpret(b.graph, {"x": np.arange(3), "y": np.array([1, -1, 2])})
    except ValueError as exc:
        assert "negative integer powers" in str(exc)
    else:
        raise AssertionError("the kept power did not raise")
