"""Branches on loop indices in loop bodies stay loop nodes (trace/loop_split.py, trace/branches.py).

A condition linear in one loop's index (`E - w >= 0`, `k < i`, `i == j`) splits that loop into
consecutive loop nodes where the condition is decided; others (`(i + j) % 2`) are if-converted.
Never unrolled: the graph is the same for every size, one compile serves two sizes, and the
results are those of plain Python/NumPy (sizes 0 and 1 too, both backends).
"""
import copy

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
import index_branch_programs as ib
from helpers import BACKENDS, assert_same


def graph_shape(fn, *args, **kw):
    """(graphs, loop nodes, graph lines) of fn compiled fresh with dynamic sizes."""
    ft.reset()
    out = ft.explain(ft.compile(fn, dynamic=True, **kw), *copy.deepcopy(args))
    assert out.graph_break_count == 0, out.break_reasons
    loops = sum(1 for g in out.graphs for n in _all_nodes(g) if n.op == "loop")
    return out.graph_count, loops, sum(len(str(g).splitlines()) for g in out.graphs)


def _all_nodes(g):
    for n in g.nodes:
        yield n
        body = n.attr("body") if hasattr(n, "attr") else None
        if body is not None and hasattr(body, "graph"):
            yield from _all_nodes(body.graph)


def run_both(f, fn, *args):
    eager = copy.deepcopy(args)
    got, want = f(*args), fn(*eager)
    assert_same(got, want)
    for a, b in zip(args, eager):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def self_energy_args(rng, K, NE, NW, NA, m=5):
    return rng.random((K, NE, m)), rng.random((NW, NA, m)), rng.random((K, NE, NA))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shifted_index_guarded_by_its_condition_splits_the_loop(backend):
    """`if E - w >= 0: ... G[k, E - w]`: the w loop runs as range(0, Min(NW, E + 1)) and the
    rest, each a loop node; before, the nest was unrolled (the index could be negative)."""
    rng = np.random.default_rng(0)
    model = ib.SelfEnergy(1.5)
    small = graph_shape(model.accumulate, *self_energy_args(rng, 2, 4, 3, 6), backend=backend)
    large = graph_shape(model.accumulate, *self_energy_args(rng, 3, 9, 7, 8), backend=backend)
    assert small == large and small[1] >= 5, (small, large)
    ft.reset()
    f = ft.compile(model.accumulate, backend=backend)
    # every size changes at the second call; NE < NW from the third on: no guard relates them
    for dims in ((2, 4, 3, 6), (3, 9, 7, 8), (4, 6, 8, 3), (6, 7, 9, 2), (3, 2, 4, 7)):
        run_both(f, model.accumulate, *self_energy_args(rng, *dims))
    assert ft.stats().frames_compiled == 2, ft.stats()       # static, then one dynamic graph for all sizes
    for dims in ((1, 1, 1, 1), (0, 3, 2, 2), (2, 3, 0, 2), (2, 0, 3, 1), (2, 1, 3, 2), (2, 3, 1, 0)):
        run_both(f, model.accumulate, *self_energy_args(rng, *dims))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [ib.lower_upper, ib.diagonal, ib.parity, ib.with_helper],
                         ids=lambda f: f.__name__)
def test_branches_on_indices_are_loop_nodes(fn, backend):
    rng = np.random.default_rng(1)
    shapes = [graph_shape(fn, rng.random((n, n)), np.zeros((n, n)), backend=backend) for n in (6, 11)]
    assert shapes[0] == shapes[1] and shapes[0][1] >= 2, shapes
    ft.reset()
    f = ft.compile(fn, backend=backend)
    for n in (6, 11, 9, 4):
        run_both(f, fn, rng.random((n, n)), rng.random((n, n)))
    assert ft.stats().frames_compiled == 2, ft.stats()       # static, then one dynamic graph
    for n in (1, 0, 2):
        run_both(f, fn, rng.random((n, n)), rng.random((n, n)))


def test_equality_splits_into_three_nodes():
    rng = np.random.default_rng(2)
    _, loops, _ = graph_shape(ib.diagonal, rng.random((5, 5)), np.zeros((5, 5)))
    assert loops == 4                                       # the i loop, and j in three pieces


def test_a_monotone_condition_splits_into_two_nodes():
    rng = np.random.default_rng(2)
    _, loops, _ = graph_shape(ib.lower_upper, rng.random((5, 5)), np.zeros((5, 5)))
    assert loops == 4                                       # i, j, and k in two pieces


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 9), m=st.integers(-3, 12), seed=st.integers(0, 2 ** 16))
def test_carried_values_and_the_target_across_the_pieces(backend, n, m, seed):
    """A carried float, an int bound, the loop target after the loop: as Python leaves them."""
    x = np.random.default_rng(seed).standard_normal(n)
    for fn in (ib.running, ib.running_break, ib.backwards):
        got, want = _compiled(fn, backend)(x.copy(), m), fn(x.copy(), m)
        assert_same(got, want)


_CACHE = {}


def _compiled(fn, backend):
    key = (fn, backend)
    if key not in _CACHE:
        _CACHE[key] = ft.compile(fn, backend=backend, dynamic=True)
    return _CACHE[key]


def test_running_is_one_graph_for_every_length_and_bound():
    ft.reset()
    f = ft.compile(ib.running, dynamic=True)
    rng = np.random.default_rng(3)
    for n, m in ((7, 3), (12, 5), (4, 9), (9, 1)):   # (m <= 0 is the other side of the peeled iteration)
        x = rng.standard_normal(n)
        assert_same(f(x, m), ib.running(x, m))
    assert ft.stats().frames_compiled == 1, ft.stats()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_one_iteration_piece_is_not_unrolled_under_the_budget(backend):
    """range(0, 1) and range(1, n): the constant piece does not make the loop 'small' (that
    would unroll the whole loop, one graph per length)."""
    ft.reset()
    f = ft.compile(ib.recurrence, backend=backend, dynamic=True)
    rng = np.random.default_rng(4)
    for n in (5, 9, 2, 13):
        run_both(f, ib.recurrence, rng.random(n), np.zeros(n))
    assert ft.stats().frames_compiled == 1, ft.stats()
    for n in (1, 0):
        run_both(f, ib.recurrence, rng.random(n), np.zeros(n))
    _, loops, _ = graph_shape(ib.recurrence, rng.random(7), np.zeros(7), backend=backend)
    assert loops == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_argument_read_in_the_body_is_the_split_point(backend):
    """The retrace finds `m` by its source (L['m']) and wraps it before the loop: one graph for
    every length and every m, m past the end too."""
    ft.reset()
    f = ft.compile(ib.shifted, backend=backend, dynamic=True)
    rng = np.random.default_rng(5)
    for n, m in ((7, 3), (9, 4), (5, 8), (6, 2), (4, 4)):
        run_both(f, ib.shifted, rng.random(n), np.zeros(n), m)
    assert ft.stats().frames_compiled == 1, ft.stats()
    for n, m in ((1, 0), (0, 3), (3, 0), (2, 1)):
        run_both(f, ib.shifted, rng.random(n), np.zeros(n), m)
