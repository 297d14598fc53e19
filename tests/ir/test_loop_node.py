"""The structured loop node (ir/ops/loops.py) built by hand: the reference interpreter, both
backends (LLVM: the native element-loop kernel and the generic per-iteration path), the
printer and the verifier agree."""
import numpy as np
import pytest
import sympy

from frametrace.backends import llvm, numpy_backend
from frametrace.backends.llvm import loops as native
from frametrace.ir.builder import GraphBuilder, Proxy
from frametrace.ir.fake import FakeArray, FakeScalar
from frametrace.ir.graph import Graph
from frametrace.ir.interpret import interpret
from frametrace.ir.ops.loops import LoopBody
from frametrace.ir.subgraph import SubgraphBuilder
from frametrace.ir.verify import IRVerifyError, verify_graph

N = sympy.Symbol("s0", integer=True, positive=True)
IDX = sympy.Symbol("i0", integer=True)


def weighted_prefix(dtype="float64", step=1):
    """out[i] = out[i - step] * 0.5 + x[i] * 2; acc = max over the loop (a select); returns (out, acc)."""
    g = Graph(symbols={N: "L['x'].shape[0]"})
    b = GraphBuilder(g)
    x = b.input_array("L['x']", (N,), dtype)
    out = b.emit("zeros", shape=(N,), dtype=np.dtype(dtype))
    acc0 = b.emit("getitem", x, index=(0,))
    body = SubgraphBuilder(b, "loop0")
    acc = Proxy(body.body_input("carried_acc", acc0.fake), acc0.fake)
    xi = body.emit("getitem", x, index=(IDX,))
    prev = body.emit("getitem", out, index=((IDX - step) if step == 1 else (IDX + 1),))
    half = body.emit("multiply", prev, 0.5)
    scaled = body.emit("multiply", xi, 2.0)
    value = body.emit("add", half, scaled)
    dst = body.emit("getitem", out, index=(IndexSlice(IDX, IDX + 1, 1),))
    body.emit("assign", dst, value)
    better = body.emit("greater", xi, acc)
    new_acc = body.emit("select", better, xi, acc)
    body.graph.outputs = (new_acc.node,)
    body.graph.symbols = {IDX: "loop index", N: "s0"}
    loop = LoopBody(body.graph, "for", 1, len(body.captured), (N,), IDX, writes=(1,), location="test:1")
    start, stop = (1, N) if step == 1 else (N - 2, -1)
    state = b.emit("loop", start, stop, step, acc0, *body.captured, N, body=loop)
    final = b.emit("loop_out", state, 0, body=loop)
    g.outputs = (out.node, final.node)
    return g


from frametrace.ir.graph import IndexSlice  # noqa: E402


def reference(x, step=1):
    out = np.zeros_like(x)
    acc = x[0]
    idx = range(1, len(x)) if step == 1 else range(len(x) - 2, -1, -1)
    for i in idx:
        prev = out[i - 1] if step == 1 else out[i + 1]
        out[i] = prev * 0.5 + x[i] * 2.0
        acc = x[i] if x[i] > acc else acc
    return out, acc


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("step", [1, -1])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16"])
def test_loop_node_on_every_backend(n, step, dtype):
    if n == 0:
        return                                    # x[0] before the loop raises, as in NumPy
    g = weighted_prefix(dtype, step)
    verify_graph(g, "hand-built")
    x = (np.random.default_rng(n).standard_normal(n) * 10).astype(dtype)
    with np.errstate(all="ignore"):
        want = reference(x.copy(), step)
        got_ref = interpret(g, {"L['x']": x.copy()}, {N: n})
        run_np = numpy_backend.compile_graph(g)
        got_np = run_np([x.copy()], [n])
        run_llvm = llvm.compile_graph(g)
        got_llvm = run_llvm([x.copy()], [n])
    assert run_llvm.plan.loop_natives, "an element loop gets a native kernel"
    for got in (got_ref, got_np, got_llvm):
        np.testing.assert_array_equal(got[0], want[0])
        assert type(got[1]) is type(want[1]) and (got[1] == want[1] or np.isnan(want[1]))


def test_array_body_is_not_an_element_loop_but_a_native_array_loop():
    g = Graph(symbols={N: "L['x'].shape[0]"})
    b = GraphBuilder(g)
    x = b.input_array("L['x']", (N,), "float64")
    body = SubgraphBuilder(b, "loop0")
    fake = FakeArray((N,), np.dtype("float64"))
    y = Proxy(body.body_input("carried_y", fake), fake)
    new = body.emit("add", body.emit("multiply", y, 0.5), x)     # array work: not an element loop
    body.graph.outputs = (new.node,)
    body.graph.symbols = {IDX: "loop index", N: "s0"}
    loop = LoopBody(body.graph, "for", 1, len(body.captured), (N,), IDX, location="test:2")
    state = b.emit("loop", 0, 5, 1, x, *body.captured, N, body=loop)
    g.outputs = (b.emit("loop_out", state, 0, body=loop).node,)
    xv = np.arange(6.0)
    want = xv.copy()
    for _ in range(5):
        want = want * 0.5 + xv
    run = llvm.compile_graph(g)
    assert not run.plan.loop_natives and not run.plan.loop_runners and run.plan.array_loops
    np.testing.assert_array_equal(run([xv], [6])[0], want)
    np.testing.assert_array_equal(interpret(g, {"L['x']": xv}, {N: 6})[0], want)
    with pytest.raises(native.NotNative):
        native.native_loop(state.node, "k", True)


def test_printer_shows_the_body():
    text = str(weighted_prefix())
    assert "loop(1, s0, 1," in text and "for_body(" in text and "# i0 = loop index" in text
    assert "select(" in text and "loop_out(" in text


def test_verifier_checks_the_body():
    g = weighted_prefix()
    body = next(n for n in g.nodes if n.op == "loop").attr("body")
    body.graph.nodes.reverse()                   # uses before definitions inside the body
    with pytest.raises(IRVerifyError, match="loop body"):
        verify_graph(g, "broken")


def test_python_scalar_results_keep_their_type():
    g = Graph(symbols={N: "L['x'].shape[0]"})
    b = GraphBuilder(g)
    x = b.input_array("L['x']", (N,), "float64")
    body = SubgraphBuilder(b, "loop0")
    count = Proxy(body.body_input("carried_count", FakeScalar(int)), FakeScalar(int))
    pos = body.emit("greater", body.emit("getitem", x, index=(IDX,)), 0.0)
    new = body.emit("select", pos, 1, 0)                          # a Python int
    keep = body.emit("select", pos, new, count)
    body.graph.outputs = (keep.node,)
    body.graph.symbols = {IDX: "loop index", N: "s0"}
    loop = LoopBody(body.graph, "for", 1, len(body.captured), (N,), IDX, location="test:3")
    state = b.emit("loop", 0, N, 1, 7, *body.captured, N, body=loop)
    g.outputs = (b.emit("loop_out", state, 0, body=loop).node,)
    xv = np.array([-1.0, -2.0, -3.0])
    for run in (numpy_backend.compile_graph(g), llvm.compile_graph(g)):
        (got,) = run([xv], [3])
        assert type(got) is int and got == 7          # no x[i] > 0: the count keeps its start
    (got,) = run([np.array([1.0, 2.0])], [2])
    assert type(got) is int and got == 1
