"""Meta rules on symbolic sizes: one graph built with SymInts serves every size that satisfies
its guards. Run against a small fake ShapeEnv (tests/ir/symfake.py) and the real one."""
import types

import numpy as np
import pytest
import sympy

from frametrace.errors import NumpyError
from frametrace.ir.builder import GraphBuilder, Proxy
from frametrace.ir.interpret import evaluate_size, interpret
from frametrace.ir.numpy_api import (array_attribute, binary_op, compare_op, getitem, lookup_function,
                                     lookup_method, setitem)
from frametrace.ir.ops import symbolic
from ir_helpers import assert_same_value
import symfake


@pytest.fixture(params=["fake", "real"])
def env(request, monkeypatch):
    if request.param == "fake":
        e = symfake.FakeShapeEnv()
        monkeypatch.setattr(symbolic, "_helpers", symfake.helpers)
        return types.SimpleNamespace(make=lambda name, hint: e.size(name, hint),
                                     guards=lambda: list(e.guards))
    shapes = pytest.importorskip("frametrace.shapes")
    e = shapes.ShapeEnv(duck_shape=False)
    return types.SimpleNamespace(make=lambda name, hint: e.create_symbol(hint, f"L['{name}'].size"),
                                 guards=lambda: list(e.guards))


def sym_check(env, build, eager, specs, sizes_list, dtype=np.float64):
    """Trace `build` once on symbolic shapes (hints: sizes_list[0]), then run the graph for every
    size assignment and compare with NumPy eager; node shapes are checked against the data."""
    hints = sizes_list[0]
    syms = {name: env.make(name, h) for name, h in hints.items()}
    b = GraphBuilder()
    proxies = []
    for i, spec in enumerate(specs):
        shape = tuple(syms[d] if isinstance(d, str) else d for d in spec)
        proxies.append(b.input_array(f"L['a{i}']", shape, dtype))
    result = build(b, *proxies, **syms)
    b.graph.outputs = (result.node,)
    rng = np.random.default_rng(0)
    for sizes in sizes_list:
        arrays = [rng.standard_normal(tuple(sizes.get(d, d) for d in spec)).astype(dtype)
                  for spec in specs]
        binding = {syms[n].expr: v for n, v in sizes.items()}
        got = interpret(b.graph, {f"L['a{i}']": a for i, a in enumerate(arrays)}, binding)[0]
        want = eager(*arrays, **sizes)
        assert_same_value(got, want)
        sb = {s: sympy.Integer(v) for s, v in binding.items()}
        for node in b.graph.nodes:
            if node.dtype is not None:
                assert all(evaluate_size(sympy.sympify(d), sb) >= 0 for d in node.shape)
        assert tuple(evaluate_size(sympy.sympify(d), sb) for d in result.node.shape) == np.shape(want)
    return b, result


def F(np_fn):
    return lookup_function(np_fn)


def test_elementwise_and_broadcast(env):
    b, r = sym_check(env, lambda b, x, y, n, m: binary_op(b, "+", binary_op(b, "*", x, n), y),
                     lambda x, y, n, m: x * n + y, [("n", "m"), ("m",)],
                     [{"n": 3, "m": 5}, {"n": 7, "m": 2}, {"n": 2, "m": 9}])
    assert env.guards() == []


def test_slices_and_guarded_broadcast(env):
    def build(b, x, y, n, m):
        return binary_op(b, "+", getitem(b, x, (slice(1, None), slice(None, None, 2))),
                         getitem(b, y, (slice(None, -1), slice(1, None, 2))))
    sym_check(env, build, lambda x, y, n, m: x[1:, ::2] + y[:-1, 1::2], [("n", "m"), ("n", "m")],
              [{"n": 5, "m": 8}, {"n": 3, "m": 4}, {"n": 9, "m": 2}])
    assert len(env.guards()) >= 1          # (m + 1) // 2 == m // 2: m is even


def test_negative_steps_and_int_indices(env):
    def build(b, x, n, m):
        v = getitem(b, x, (slice(None, None, -1), -1))
        w = getitem(b, x, (slice(-2, None, -3), 0))
        return F(np.concatenate)(b, [v, w])
    sym_check(env, build, lambda x, n, m: np.concatenate([x[::-1, -1], x[-2::-3, 0]]),
              [("n", "m")], [{"n": 5, "m": 3}, {"n": 2, "m": 4}, {"n": 11, "m": 2}])


def test_symbolic_slice_bounds(env):
    def build(b, x, n, m):
        return getitem(b, x, slice(1, m))
    sym_check(env, build, lambda x, n, m: x[1:m], [("n",)],
              [{"n": 9, "m": 4}, {"n": 12, "m": 5}, {"n": 3, "m": 3}])


def test_reshape_minus_one_and_creation(env):
    def build(b, x, n, m):
        flat = lookup_method("reshape")(b, x, -1)
        back = F(np.reshape)(b, flat, (n, -1))
        z = F(np.zeros)(b, n * m)
        s = binary_op(b, "+", lookup_method("reshape")(b, back, n * m), z)
        return binary_op(b, "+", s, binary_op(b, "*", F(np.arange)(b, n * m), m + n))
    sym_check(env, build, lambda x, n, m: x.reshape(-1) + np.zeros(n * m) + np.arange(n * m) * (m + n),
              [("n", "m")], [{"n": 3, "m": 4}, {"n": 5, "m": 7}, {"n": 8, "m": 2}])
    assert env.guards() == []


def test_reductions_softmax_layernorm(env):
    def build(b, x, n, m):
        mx = lookup_method("max")(b, x, axis=1, keepdims=True)
        e = F(np.exp)(b, binary_op(b, "-", x, mx))
        sm = binary_op(b, "/", e, lookup_method("sum")(b, e, axis=-1, keepdims=True))
        mu = lookup_method("mean")(b, x, axis=-1, keepdims=True)
        var = lookup_method("var")(b, x, axis=-1, keepdims=True)
        ln = binary_op(b, "/", binary_op(b, "-", x, mu), F(np.sqrt)(b, binary_op(b, "+", var, 1e-5)))
        return F(np.stack)(b, [sm, ln, F(np.cumsum)(b, x, axis=0)])

    def eager(x, n, m):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        sm = e / e.sum(axis=-1, keepdims=True)
        ln = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
        return np.stack([sm, ln, np.cumsum(x, axis=0)])
    sym_check(env, build, eager, [("n", "m")], [{"n": 4, "m": 6}, {"n": 9, "m": 2}])
    assert env.guards() == []


def test_matmul_transpose_argmax(env):
    def build(b, x, y, n, k, m):
        p = binary_op(b, "@", x, array_attribute(b, y, "T"))
        return F(np.argmax)(b, F(np.maximum)(b, binary_op(b, "+", p, 1.0), 0.0), axis=1)
    sym_check(env, build, lambda x, y, n, k, m: np.argmax(np.maximum(x @ y.T + 1.0, 0.0), axis=1),
              [("n", "k"), ("m", "k")], [{"n": 3, "k": 4, "m": 5}, {"n": 6, "k": 2, "m": 3}])


def test_mismatch_guards_then_raises(env):
    b = GraphBuilder()
    n, m = env.make("n", 4), env.make("m", 5)
    x = b.input_array("x", (n,), np.float64)
    y = b.input_array("y", (m,), np.float64)
    with pytest.raises(NumpyError) as info:
        binary_op(b, "+", x, y)
    assert isinstance(info.value.error, ValueError)
    assert env.guards()                    # the decision n != m is a guard


def test_index_bounds_are_guarded(env):
    b = GraphBuilder()
    n = env.make("n", 4)
    x = b.input_array("x", (n,), np.float64)
    r = getitem(b, x, 3)
    assert isinstance(r, Proxy) and r.scalar
    assert env.guards()                    # 3 < n
    with pytest.raises(NumpyError) as info:
        getitem(b, x, 10)
    assert isinstance(info.value.error, IndexError)


def test_setitem_and_compare_on_symbolic_shapes(env):
    def build(b, x, n, m):
        c = F(np.copy)(b, x)
        setitem(b, c, (slice(1, None), -1), 0.0)
        return F(np.where)(b, compare_op(b, ">", c, 0.5), c, -1.0)

    def eager(x, n, m):
        c = x.copy()
        c[1:, -1] = 0.0
        return np.where(c > 0.5, c, -1.0)
    sym_check(env, build, eager, [("n", "m")], [{"n": 3, "m": 4}, {"n": 6, "m": 2}])


def test_sizes_are_never_hashed_or_specialised(env):
    """The fake SymInt raises on hash/int; the real one records int() as a guard."""
    def build(b, x, n, m):
        t = lookup_method("transpose")(b, x)
        s = lookup_method("squeeze")(b, F(np.expand_dims)(b, t, (0, 2)))
        bt = F(np.broadcast_to)(b, getitem(b, s, (None, Ellipsis)), (3, m, n))
        return lookup_method("sum")(b, bt, axis=(0, 2))
    sym_check(env, build, lambda x, n, m: np.broadcast_to(x.T[None], (3, m, n)).sum(axis=(0, 2)),
              [("n", "m")], [{"n": 3, "m": 4}, {"n": 5, "m": 2}])
    assert env.guards() == []


def test_unbacked_sizes_broadcast_against_one_without_guards():
    shapes = pytest.importorskip("frametrace.shapes")
    from frametrace.errors import DataDependentError
    e = shapes.ShapeEnv()
    u = e.create_unbacked_symint()
    s = e.create_symbol(5, "L['y'].shape[0]")
    b = GraphBuilder()
    x = b.input_array("x", (u,), np.float64)
    one = b.input_array("one", (1,), np.float64)
    y = b.input_array("y", (s,), np.float64)
    r = binary_op(b, "+", x, one)
    assert r.shape[0] is u and e.guards == []
    r = lookup_method("sum")(b, F(np.broadcast_to)(b, one, (u,)))
    assert r.scalar
    with pytest.raises(DataDependentError):
        binary_op(b, "+", x, y)
