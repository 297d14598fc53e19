"""Data-dependent sizes can be reused downstream (issue 12, item 5).

A mask's count (an unbacked symbol u<N>) that only a later node's size, a slice bound or a
Python scalar uses must still be computed: dead-code elimination keeps the node defining it,
and the IR verifier (on in tests) checks every symbol a node uses is bound before it.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.ir.graph import Graph, Node
from frametrace.ir.verify import IRVerifyError, verify_graph
from frametrace.passes.dce import eliminate_dead_code
from soundness_helpers import run

REUSE = [
    lambda a: np.ones_like(a[a > 0]),
    lambda a: a[: a[a > 0].shape[0]],
    lambda a: np.zeros(a[a > 0].shape[0]) + a[a > 0],
    lambda a: np.flatnonzero(a > 0) / len(np.flatnonzero(a > 0)),
    lambda a: np.full(len(a[a < 0]), 2.0) * len(a[a > 0]),
    lambda a: a[len(a[a > 0]):] * 2,
    lambda a: np.arange(a[a > 0].size) + a[a > 0].size,
    lambda a: (a[a > 0].shape[0], np.empty_like(a[a > 1]).shape),
    lambda a: a.reshape(-1)[: len(np.nonzero(a)[0])].sum(),
]

# `zeros(count1) + a[mask2]` broadcasts two unrelated counts: deciding u0 == u1 needs the data,
# so it is a graph break (the rest still compiles), never a guess
BREAKS = {2}

ARRAYS = [np.array([1.0, -1.0, 2.0, 3.0]), np.array([-1.0, 5.0]), np.array([2.0, 1.0, 3.0, 4.0, -8.0]),
          np.array([-1.0, -2.0, -3.0])]


@pytest.mark.parametrize("dynamic", [None, True, False])
@pytest.mark.parametrize("case", range(len(REUSE)))
def test_data_dependent_sizes_can_be_reused(backend, dynamic, case):
    fn = REUSE[case]
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    for a in ARRAYS:
        run(fn, a, compiled=f)
    s = ft.stats()
    if case in BREAKS:
        assert s.graph_breaks >= 1
        return
    assert s.graph_breaks == 0
    # one graph per input size when static; the counts never cause a recompile
    assert s.unique_graphs == {None: 2, True: 1, False: len(ARRAYS)}[dynamic]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=12), st.sampled_from(range(len(REUSE))),
       st.sampled_from(["numpy", "llvm"]))
def test_reuse_on_random_masks(values, case, backend):
    ft.reset()
    fn = REUSE[case]
    run(fn, np.array(values), compiled=ft.compile(fn, backend=backend, dynamic=True))


def _count_graph():
    import sympy
    u0 = sympy.Symbol("u0", integer=True, nonnegative=True)
    g = Graph()
    x = g.add_input(source="L['a']", kind="array", shape=(4,), dtype=np.float64)
    m = g.add(Node("greater", (x, 0), (), (4,), np.dtype(bool)))
    sel = g.add(Node("mask_select", (x, m), (("size", u0),), (u0,), np.dtype(np.float64)))
    ones = g.add(Node("ones", (), (("dtype", np.dtype(np.float64)), ("shape", (u0,))), (u0,), np.dtype(np.float64)))
    g.outputs = (ones,)
    return g, sel


def test_dce_keeps_the_definition_of_a_used_size():
    g, sel = _count_graph()
    verify_graph(g)
    eliminate_dead_code(g)
    assert sel in g.nodes
    verify_graph(g, "after dce")


def test_verifier_rejects_a_size_used_before_its_definition():
    g, sel = _count_graph()
    g.nodes.remove(sel)
    with pytest.raises(IRVerifyError, match="u0"):
        verify_graph(g)
