"""Helpers called in a loop body are inlined into it: branches on Python ints the trace knows
are decided once; branches on values that change per iteration (the loop index, array data)
are if-converted inside the helper, including helpers that `return` from both sides of an `if`
(trace/branches.py). Compared with plain Python on random inputs, both backends; the loop stays
one node (no unrolling, no graph break)."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_identical


def loop_nodes_and_breaks(fn, *args):
    ft.reset()
    out = ft.explain(fn, *args)
    return sum(1 for g in out.graphs for n in g.nodes if n.op == "loop"), out.graph_break_count


def boundary(b, x):                 # branches on a Python int
    if b == 1:
        x[0] = -x[1]
    else:
        x[0] = x[1]
    x[-1] = x[-2]


def smooth(x, trips, parity):
    for k in range(trips):
        x[1:-1] = 0.5 * (x[:-2] + x[2:])
        boundary(k % 2 if parity else 1, x)     # an int that changes with the index, or a constant
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("parity", [False, True])
def test_a_helper_branching_on_an_int_in_a_time_loop(backend, parity):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(24)
    assert loop_nodes_and_breaks(smooth, x.copy(), 40, parity) == (1, 0)
    for trips in (40, 41, 90):
        ft.reset()
        assert_identical(ft.compile(smooth, backend=backend)(x.copy(), trips, parity),
                         smooth(x.copy(), trips, parity))


def sign(v):
    if v > 0:
        return 1.0
    elif v < 0:
        return -1.0
    return 0.0


def shrink(v, t):
    if v > t:
        return v - t
    if v < -t:
        return v + t
    return v * 0


def at_least(v, lo):
    if v < lo:
        return v * 0 + lo
    return v


def denoise(x, t, lo):
    total = 0.0
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        total = total + sign(x[i])
        out[i] = at_least(shrink(x[i], t), lo)
    return total, out


@pytest.mark.parametrize("backend", BACKENDS)
def test_helpers_that_return_from_both_sides_of_an_if_on_data(backend):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(40)
    x[:3] = (0.0, 0.5, -0.5)                    # ties of every comparison
    assert loop_nodes_and_breaks(denoise, x, 0.5, -0.2) == (1, 0)
    ft.reset()
    f = ft.compile(denoise, backend=backend, dynamic=True)
    for n in (3, 17, 64):
        y = rng.standard_normal(n)
        y[0] = 0.0
        assert_identical(f(y, 0.5, -0.2), denoise(y, 0.5, -0.2))


def test_a_helper_returning_values_of_two_types_is_not_merged():
    def pick(v):
        if v > 0:
            return v                             # np.float64
        return 0.0                               # float: the type depends on the data

    def f(x):
        s = np.float64(0.0)
        for i in range(x.shape[0]):
            s = s + pick(x[i])
        return s
    x = np.random.default_rng(2).standard_normal(40)
    ft.reset()
    assert_identical(ft.compile(f)(x), f(x))
