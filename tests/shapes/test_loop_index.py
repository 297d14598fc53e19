"""Comparisons over a loop index's whole range (shapes/loop_index.py): linear forms at both
ends, equalities as two comparisons, Min/Max sides as and/or of their arguments (a sliding
window `x[i:i + k]` has length k for every i in range(n - k + 1), and not for range(n))."""
import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.shapes import ShapeEnv
from helpers import BACKENDS, assert_same




@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(-3, 3), st.integers(-3, 3),
       st.sampled_from(["Eq", "Ne", "Le", "Lt", "Ge", "Gt"]), st.booleans(), st.integers(0, 3))
def test_decisions_agree_with_every_index(hi, a, c, rel, use_min, m):
    """A decided answer holds at every index of the range; None is always allowed."""
    env = ShapeEnv()
    i = env.enter_loop_index(0, hi)
    f = sympy.Min(m + 5, a * i + c) if use_min else sympy.Max(m, a * i + c)
    expr = getattr(sympy, rel)(f, m + 2, evaluate=False)
    got = env.decide_over_loop_indices(expr)
    if got is not None:
        assert all(bool(expr.xreplace({i: v})) == got for v in range(hi + 1)), (expr, got)
    env.exit_loop_index(i)


def windows(x, w):
    k = w.shape[0]
    out = np.zeros(x.shape[0] - k + 1)
    for i in range(x.shape[0] - k + 1):
        out[i] = (x[i:i + k] * w).sum()          # length k for every i: one loop node
    return out


def ragged_windows(x, k):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i:i + k].sum()                # shorter at the end: not one length
    return out


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [4, 5, 9, 40, 77])
def test_sliding_windows(backend, n):
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal(n), rng.standard_normal(4)
    f = ft.compile(windows, backend=backend, dynamic=True)
    assert_same(f(x, w), windows(x, w))
    g = ft.compile(ragged_windows, backend=backend)
    assert_same(g(x, 3), ragged_windows(x, 3))


def test_a_window_loop_is_one_loop_node():
    x, w = np.random.default_rng(0).standard_normal(50), np.ones(4)
    out = ft.explain(ft.compile(windows, dynamic=True), x, w)
    assert [n.op for g in out.graphs for n in g.nodes].count("loop") == 1
