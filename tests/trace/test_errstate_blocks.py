"""`with np.errstate(...)` inside compiled code is traced (trace/errstate.py): one graph, no
split, and NumPy's reports (warnings, FloatingPointError, silence) exactly as eager code gives
them, inside and outside the block, under any error state of the caller."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import BACKENDS, assert_same

rng = np.random.default_rng(7)
MODES = ("ignore", "warn", "raise")


def log_in_block(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
    return y * 2.0


def log_after_block(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = x / y
    return r + np.log(x)            # outside: the caller's mode


def nested(x, y):
    with np.errstate(all="raise", divide="ignore"):
        a = x / y                   # divide ignored
        with np.errstate(invalid="ignore"):
            b = np.sqrt(x - 2.0)    # invalid ignored here
        c = np.exp(x * 800.0)       # overflow raises
    return a + b + c


def block_with_as(x):
    with np.errstate(over="ignore") as e:
        y = np.exp(x * 1000.0)
    return y, e


def inplace_in_block(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        x /= y
    return x.sum()


def break_inside_block(x):
    with np.errstate(divide="ignore"):
        y = np.log(x)
        print("", end="")           # a graph break inside the block: it is split out
    return y + 1.0


def loop_in_block(x, n):
    acc = np.zeros_like(x)
    with np.errstate(divide="ignore"):
        for i in range(n):
            acc = acc + np.log(x * i)
    return acc


def block_in_loop(x, n):
    acc = np.zeros_like(x)
    for i in range(n):
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = acc + np.log(x * (i - 3))
    return acc + np.log(x - 0.5)


def run_recording(fn, *args):
    """(result or exception type, [warning messages])"""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except FloatingPointError as exc:
            out = type(exc)
    return out, sorted(str(w.message) for w in rec if issubclass(w.category, RuntimeWarning))


def same_reports(fn, args, backend, fullgraph=True):
    g = ft.compile(fn, backend=backend, fullgraph=fullgraph)
    got, got_w = run_recording(g, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    want, want_w = run_recording(fn, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert got_w == want_w
    if want is FloatingPointError:
        assert got is FloatingPointError
    else:
        assert_same(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_block_is_traced_into_one_graph(backend):
    g = ft.compile(log_in_block, backend=backend, dynamic=True)
    for n in (3, 5, 8, 13):
        x = rng.random(n)
        x[0] = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert_same(g(x), log_in_block(x))
    s = ft.stats()
    assert (s.graph_breaks, s.unique_graphs, s.recompiles) == (0, 1, 0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("caller", MODES)
def test_inside_and_outside_the_block(backend, caller):
    x = np.array([0.0, 1.0, 2.0, -1.0])
    y = np.array([0.0, 0.0, 1.0, 2.0])
    with np.errstate(all=caller):
        same_reports(log_after_block, (x, y), backend)
        same_reports(log_after_block, (x + 3.0, y + 1.0), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x0", [0.5, 1.0, 3.0])
def test_nested_blocks_and_all(backend, x0):
    x = np.array([x0, 2.5, 0.0])
    y = np.array([0.0, 1.0, 0.0])
    same_reports(nested, (x, y), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_as_target_is_none_and_inplace_writes(backend):
    with np.errstate(all="raise"):
        same_reports(block_with_as, (np.array([1.0, -1.0]),), backend)
        same_reports(inplace_in_block, (np.array([1.0, 0.0, 2.0]), np.array([0.0, 0.0, 4.0])), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_graph_break_inside_splits_the_block(backend):
    x = np.array([0.0, 1.0, 2.0])
    with np.errstate(divide="raise"):
        same_reports(break_inside_block, (x,), backend, fullgraph=False)
        g = ft.compile(break_inside_block, backend=backend)
        for _ in range(3):
            assert_same(g(x), break_inside_block(x))
    assert ft.stats().recompiles == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_inside_block(backend):
    x = rng.random(6)
    same_reports(loop_in_block, (x, 40), backend)


ES = np.errstate(divide="ignore")


def global_errstate(x):
    with ES:
        return np.log(x)


def test_errstate_object_from_outside_behaves_as_numpy():
    """NumPy refuses to enter one errstate object twice: the second call raises TypeError."""
    g = ft.compile(global_errstate)
    x = np.array([0.0, 1.0])
    with np.errstate(divide="ignore"):
        want = np.log(x)
    assert_same(g(x), want)                  # enters ES once
    with pytest.raises(TypeError, match="twice"):
        g(x)
    with pytest.raises(TypeError, match="twice"):
        global_errstate(x)


def made_then_entered(x, s):
    es = np.errstate(divide=s)
    y = np.log(x)
    with es:
        z = np.log(x)
    return y + z


def test_errstate_kinds_and_modes_are_guarded_as_constants():
    x = np.array([0.0, 1.0])
    g = ft.compile(made_then_entered)
    with np.errstate(divide="ignore"):
        for s in ("ignore", "raise", "ignore"):
            same_reports(made_then_entered, (x, s), "llvm")
            assert run_recording(g, x, s)[0] is not None


@settings(max_examples=40, deadline=None)
@given(caller=st.sampled_from(MODES), block=st.sampled_from(MODES + (None,)), data=st.data())
def test_random_modes_match_numpy(caller, block, data):
    kind_ops = {"divide": lambda v: np.log(v), "invalid": lambda v: np.sqrt(v),
                "over": lambda v: np.exp(v * 100.0)}
    kind = data.draw(st.sampled_from(sorted(kind_ops)))
    op = kind_ops[kind]
    backend = data.draw(st.sampled_from(BACKENDS))

    def fn(x):
        with np.errstate(**({kind: block} if block else {})):
            y = op(x)
        return op(x + 1.0) + y

    x = np.array(data.draw(st.lists(st.sampled_from([0.0, -1.0, 1.0, 9.0, -0.0]), min_size=1, max_size=5)))
    with np.errstate(all=caller):
        same_reports(fn, (x,), backend)
    ft.reset()


@pytest.mark.parametrize("backend", BACKENDS)
def test_block_inside_a_loop_body_keeps_the_loop_node(backend):
    x = rng.random(6)
    for n in (40, 57):
        same_reports(block_in_loop, (x, n), backend)
    ft.reset()
    g = ft.compile(block_in_loop, backend=backend, fullgraph=True, dynamic=True)
    for n in (40, 57, 90):
        g(x, n)
    s = ft.stats()
    assert (s.unique_graphs, s.recompiles) == (1, 0)
