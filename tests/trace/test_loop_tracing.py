"""Python loops traced once into loop nodes (trace/loops.py, ir/ops/loops.py): every program is
checked against plain Python/NumPy on both backends, with compile counts, over trip counts that
include zero and one."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import assert_identical
from frametrace.ir.graph import Graph

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean():
    ft.reset()
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


same = assert_identical


def run(fn, make, sizes, backend, dynamic=True):
    compiled = ft.compile(fn, backend=backend, dynamic=dynamic, fullgraph=True)
    for n in sizes:
        args = make(n)
        want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        got = compiled(*args)
        same(got, want)
    return compiled


def loop_nodes(fn, *args, dynamic=True):
    """The loop nodes of the (first) graph of fn."""
    ft.reset()
    out = ft.explain(ft.compile(fn, dynamic=dynamic), *args)
    return [n for g in out.graphs for n in g.nodes if n.op == "loop"]


# ------------------------------------------------------------------------------ recurrences

def cumulative(x):
    out = np.empty_like(x)
    acc = x[0] - x[0]
    for i in range(x.shape[0]):
        acc = acc + x[i]
        out[i] = acc
    return out, acc


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "int8", "uint8", "uint64"])
def test_carried_values_of_every_dtype(backend, dtype):
    rng = np.random.default_rng(0)
    make = lambda n: (rng.integers(0, 100, n).astype(dtype),)    # noqa: E731
    run(cumulative, make, (3, 17, 1, 40), backend)
    assert ft.stats().unique_graphs <= 2          # n == 1 is specialised (0/1 specialisation)


def countdown(x, start):
    total = 0.0
    for i in range(start, -1, -1):
        total = total * 0.5 + x[i]
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_step(backend):
    x = np.linspace(-1, 1, 50)
    compiled = ft.compile(countdown, backend=backend, dynamic=True, fullgraph=True)
    for start in (49, 10, 3, 0):
        same(compiled(x, start), countdown(x, start))


def tail_sum(x, lo):
    total = x[0] * 0
    for i in range(lo, x.shape[0]):
        total += x[i]
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_trip_loops_leave_the_carried_values_alone(backend):
    x = np.arange(40.0)
    compiled = ft.compile(tail_sum, backend=backend, dynamic=True, fullgraph=True)
    for lo in (5, 39, 40, 45, 2):
        same(compiled(x, lo), tail_sum(x, lo))


def py_float_becomes_numpy(x):
    total = 0.0                                   # a Python float; np.float64 after one iteration
    for i in range(x.shape[0]):
        total += x[i]
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_carried_type_that_changes_once_is_peeled(backend):
    x = np.random.default_rng(1).standard_normal(60)
    run(py_float_becomes_numpy, lambda n: (x[:n].copy(),), (60, 33, 20), backend)
    assert ft.stats().unique_graphs == 1
    (node,) = loop_nodes(py_float_becomes_numpy, x)
    assert node.attr("body").ncarried == 1


def grows(x):
    parts = []
    for i in range(x.shape[0]):
        parts.append(x[i] * 2)                    # a Python list per iteration: not a loop node
    return tuple(parts)


def test_a_body_with_python_side_effects_is_unrolled():
    x = np.arange(5.0)
    assert loop_nodes(grows, x, dynamic=False) == []
    compiled = ft.compile(grows, fullgraph=True)
    same(compiled(x), grows(x))


def changes_dtype(x):
    acc = x[:0]                                   # grows by one element per iteration: never stable
    for i in range(x.shape[0]):
        acc = np.concatenate([acc, x[i:i + 1] * 2])
    return acc


def test_a_carried_value_whose_shape_changes_is_unrolled():
    x = np.arange(6.0)
    assert loop_nodes(changes_dtype, x, dynamic=False) == []
    compiled = ft.compile(changes_dtype)
    np.testing.assert_array_equal(compiled(x), changes_dtype(x))


# ------------------------------------------------------------------------------ control flow

def with_continue(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if i % 2 == 0:
            continue
        total += x[i]
    return total


def with_break(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            break
        total += x[i]
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_continue_and_break_give_python_answers(backend):
    rng = np.random.default_rng(2)
    for fn in (with_continue, with_break):
        ft.reset()
        compiled = ft.compile(fn, backend=backend, dynamic=True)
        for n in (40, 41, 7):
            x = rng.random(n)
            same(compiled(x), fn(x))


def clipped_running(x, lo, hi):
    out = np.empty_like(x)
    state = x[0]
    for i in range(x.shape[0]):
        v = x[i]
        if v < lo:
            state = state * 0.5
        elif v > hi:
            state = state + v
            out[i] = -1.0
            continue
        else:
            state = max(state, v)
        out[i] = state
    return out, state


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_dependent_branches_in_a_body_are_if_converted(backend):
    rng = np.random.default_rng(3)
    run(clipped_running, lambda n: (rng.standard_normal(n), -0.5, 0.8), (50, 64, 9), backend)
    assert ft.stats().unique_graphs == 1


def nested_triangle(a):
    n = a.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i, n):
            out[i, j] = a[i] * a[j] + out[i - 1, j] if i > 0 else a[j]
    return out


def triangle_sum(a):
    s = a[0, 0] * 0
    for i in range(a.shape[0]):
        for j in range(i):                        # the inner bound is the outer index
            s += a[i, j] * (j + 1)
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_inner_range_bounded_by_the_outer_index(backend):
    rng = np.random.default_rng(8)
    run(triangle_sum, lambda n: (rng.standard_normal((n, n)),), (5, 12, 40), backend)
    assert ft.stats().unique_graphs == 1
    (node,) = loop_nodes(triangle_sum, rng.standard_normal((40, 40)))
    assert any(n.op == "loop" for n in node.attr("body").graph.nodes)


def nested(a):
    n, m = a.shape
    out = np.zeros_like(a)
    for i in range(1, n):
        for j in range(m):
            out[i, j] = out[i - 1, j] + a[i, j] * (j + 1)
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_loops(backend):
    rng = np.random.default_rng(4)
    run(nested, lambda n: (rng.standard_normal((n, n + 3)),), (6, 11, 30), backend)
    assert ft.stats().unique_graphs == 1


def minmax_python(x):
    lo = x[0]
    hi = x[0]
    for i in range(1, x.shape[0]):
        lo = min(lo, x[i])
        hi = max(x[i], hi)
    return lo, hi


@pytest.mark.parametrize("backend", BACKENDS)
def test_min_and_max_keep_pythons_nan_rules(backend):
    x = np.array([3.0, np.nan, 1.0, 7.0, np.nan, -2.0] * 8)
    compiled = ft.compile(minmax_python, backend=backend, dynamic=True, fullgraph=True)
    for n in (48, 40, 5):
        for start in (0, 1):
            y = x[start:start + n].copy()
            same(compiled(y), minmax_python(y))


def bounds(x, k):
    total = x[0] * 0
    for i in range(k):
        total += x[i]                             # IndexError once k > len(x)
    return total


def test_an_index_not_proved_in_range_is_not_a_silent_read():
    x = np.arange(10.0)
    compiled = ft.compile(bounds, dynamic=True)
    same(compiled(x, 5), bounds(x, 5))
    with pytest.raises(IndexError):
        compiled(x, 12)


def newton(a, tol):
    x = a.copy()
    steps = 0
    while np.abs(x * x - a).max() > tol:
        x = 0.5 * (x + a / x)
        steps += 1
    return x, steps


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_on_array_data_is_one_graph(backend):
    rng = np.random.default_rng(5)
    run(newton, lambda n: (rng.random(n) + 0.5, 1e-12), (8, 20, 33), backend)
    assert ft.stats().unique_graphs == 1


def while_zero_trips(a):
    x = a.copy()
    while x.max() > 10.0:
        x = x * 0.5
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_that_never_runs(backend):
    compiled = ft.compile(while_zero_trips, backend=backend, dynamic=True, fullgraph=True)
    for a in (np.arange(5.0), np.arange(40.0), np.arange(12.0)):
        same(compiled(a), while_zero_trips(a))


def with_graph_break(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        print(end="")                              # a graph break in the body
        total += x[i]
    return total


def test_a_graph_break_in_the_body_keeps_todays_behaviour():
    x = np.arange(5.0)
    compiled = ft.compile(with_graph_break, dynamic=True)
    same(compiled(x), with_graph_break(x))
    with pytest.raises(ft.GraphBreakError if hasattr(ft, "GraphBreakError") else Exception):
        ft.compile(with_graph_break, fullgraph=True)(x)


def layer_stack(x, ws):
    for w in ws:                                  # a list: unrolled, as before
        x = np.tanh(x @ w)
    for _ in range(3):                            # a small constant range: unrolled too
        x = x * 0.5
    return x


def test_lists_and_small_constant_ranges_stay_unrolled():
    rng = np.random.default_rng(6)
    ws = [rng.standard_normal((4, 4)) for _ in range(3)]
    x = rng.standard_normal((2, 4))
    assert loop_nodes(layer_stack, x, ws) == []
    np.testing.assert_allclose(ft.compile(layer_stack)(x, ws), layer_stack(x, ws))


def test_loop_nodes_can_be_switched_off():
    x = np.arange(40.0)
    with ft.config.patch(loop_nodes=False):
        assert loop_nodes(py_float_becomes_numpy, x, dynamic=False) == []
    assert len(loop_nodes(py_float_becomes_numpy, x, dynamic=False)) == 1


def test_the_loops_log_says_what_happened(caplog):
    import logging
    x = np.arange(40.0)
    with caplog.at_level(logging.INFO, logger="frametrace.loops"):
        ft.compile(py_float_becomes_numpy, dynamic=True)(x)
    text = caplog.text
    assert "peel" in text and "changes type" in text and "for-loop node" in text


# ------------------------------------------------------------------------------ hypothesis

def recurrence(x, a, b):
    out = np.empty_like(x)
    prev = x[0]
    for i in range(x.shape[0]):
        cur = a * prev + b * x[i]
        if cur > 1.0:
            cur = cur - 1.0
        out[i] = cur
        prev = cur
    return out


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 60), a=st.floats(-2, 2), b=st.floats(-2, 2),
       special=st.sampled_from([None, np.nan, np.inf, -0.0]), seed=st.integers(0, 10))
def test_recurrences_match_python(n, a, b, special, seed):
    x = np.random.default_rng(seed).standard_normal(n)
    if special is not None:
        x[seed % n] = special
    compiled = ft.compile(recurrence, dynamic=True)
    with np.errstate(all="ignore"):
        want = recurrence(x.copy(), a, b)
        got = compiled(x, a, b)
    np.testing.assert_array_equal(got, want)


def strided(x):
    out = np.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * 0.9 + x[i, 1]
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_non_contiguous_and_negative_stride_inputs(backend):
    base = np.random.default_rng(7).standard_normal((40, 6))
    compiled = ft.compile(strided, backend=backend, dynamic=True)
    for x in (base[::2], base[::-1], np.asfortranarray(base), base[::-3, ::-1]):
        same(compiled(x), strided(x))


_ = Graph
