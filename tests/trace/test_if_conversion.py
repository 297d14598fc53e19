"""Data-dependent `if`s inside loop bodies (trace/branches.py): locals merged across the two
branches, including arguments the trace reads for the first time inside one branch."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same

rng = np.random.default_rng(3)


def gauss_seidel(A, b):
    x = np.zeros_like(b)
    n = b.shape[0]
    for i in range(n):
        s = b[i]
        for j in range(n):
            if j != i:
                s -= A[i, j] * x[j]          # `A` is first read here, in one branch only
        x[i] = s / A[i, i]
    return x


def first_read_in_else(x, y, w):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            acc = acc + x[i]
        else:
            acc = acc - w[i] * y[i]         # `w` and `y` are first read here
    return acc + w[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 2, 33, 40])
def test_argument_first_read_inside_one_branch(backend, n):
    A = rng.random((n, n)) + n * np.eye(n)
    b = rng.random(n)
    f = ft.compile(gauss_seidel, backend=backend, fullgraph=True)
    assert_same(f(A, b), gauss_seidel(A, b))
    x, y, w = rng.random(n), rng.random(n), rng.random(n)
    g = ft.compile(first_read_in_else, backend=backend, fullgraph=True)
    assert_same(g(x, y, w), first_read_in_else(x, y, w))
    assert ft.stats().graph_breaks == 0


def bubble_sort(a):
    a = a.copy()
    n = a.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                t = a[j]
                a[j] = a[j + 1]
                a[j + 1] = t
    return a


def layer_stack(x, ws):
    for w in ws:                            # a list: unrolled, its `if` is a graph break as before
        x = x @ w
        if x.sum() > 0:
            x = -x
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 12])
def test_short_constant_range_with_a_data_dependent_if_becomes_a_loop_node(backend, n):
    """A short range is unrolled, but an `if` on array data inside makes it a loop node (the
    `if` is if-converted there) instead of a graph break."""
    a = rng.standard_normal(n)
    f = ft.compile(bubble_sort, backend=backend, fullgraph=True)
    assert_same(f(a), bubble_sort(a))
    assert ft.stats().graph_breaks == 0


def test_a_list_loop_with_a_data_dependent_if_still_breaks():
    x, ws = rng.standard_normal((2, 2)), [rng.standard_normal((2, 2)) for _ in range(3)]
    f = ft.compile(layer_stack)
    assert_same(f(x, ws), layer_stack(x, ws))
    assert ft.stats().graph_breaks >= 1


def index_conditions(A, b):
    n = b.shape[0]
    out = np.zeros_like(b)
    for i in range(n):
        s = 0.0
        for j in range(n):
            if j != i and (j < i or i == 0):
                s += A[i, j] * b[j]
            elif j > i + 1:
                s -= A[i, j]
        out[i] = s
    return out


@pytest.mark.parametrize("n", [0, 1, 3, 40])
def test_conditions_on_loop_indices_are_native(n, caplog):
    """`if j != i:` on loop indices is a bool expression of the element-loop kernel (was: the
    body's graph run per iteration, 20x slower than Python for Gauss-Seidel)."""
    import logging
    A, b = rng.standard_normal((n, n)), rng.standard_normal(n)
    for backend in BACKENDS:
        f = ft.compile(index_conditions, backend=backend, fullgraph=True)
        assert_same(f(A, b), index_conditions(A, b))
    ft.reset()
    with caplog.at_level(logging.INFO, logger="frametrace.loops"):
        ft.compile(gauss_seidel, backend="llvm")(A + n * np.eye(n), b)
    if n >= 32:
        assert "the wrapper runs it" not in caplog.text and "loop node" in caplog.text
