"""What a loop node leaves behind (trace/loops.py): the loop index keeps its last value after
the loop as in Python (the binding before the loop when it does not run, unbound when there was
none), and an `if` on data that leaves the peeled first iteration falls back to unrolling."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same


def index_after(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return x, i


def index_after_prebound(x, step):
    i = -7
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -1) if step < 0 else range(0, x.shape[0], 2):
        s += x[i]
    return s, i


def index_after_peel(x):
    s = 0                                   # a Python int that becomes np.float64: the loop is peeled
    for i in range(x.shape[0]):
        s += x[i]
    return s, i


def early_break_with_type_change(x, t):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < t:
            break
        total += x[i]
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_index_after_the_loop(backend):
    f = ft.compile(index_after, backend=backend, dynamic=True)
    g = ft.compile(index_after_peel, backend=backend, dynamic=True)
    for n in (40, 41, 77, 2, 3):
        x = np.arange(float(n))
        (a, i), (b, j) = f(x.copy()), index_after(x.copy())
        assert_same(a, b)
        assert i == j and type(i) is type(j)
        assert g(x) == index_after_peel(x)
    with pytest.raises(UnboundLocalError):
        index_after(np.zeros(0))
    with pytest.raises(UnboundLocalError):
        f(np.zeros(0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("step", [-1, 2])
def test_index_after_prebound_and_strided_loops(backend, step):
    f = ft.compile(index_after_prebound, backend=backend)
    for n in (0, 1, 40, 45):
        x = np.arange(float(n)) + 0.5
        assert f(x, step) == index_after_prebound(x, step)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 5, 40])
def test_break_in_a_peeled_iteration_unrolls(backend, n):
    x = np.random.default_rng(n).random(n) + 0.2
    f = ft.compile(early_break_with_type_change, backend=backend)
    for t in (0.1, 0.3, 0.9):
        got, want = f(x, t), early_break_with_type_change(x, t)
        assert got == want and type(got) is type(want)
