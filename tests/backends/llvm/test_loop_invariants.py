"""Loop-invariant code motion (passes/licm.py): invariant body work moves before the loop node,
so bodies with Python scalar arithmetic on captured values (`1 - a`, `0.5 * dt`, `dt / 6`) run
as native array loops; compared with the plain Python loop on both backends, zero trips
included, with compile counts and the native-path count (array_loops.runs)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import array_loops, loops

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    ft.reset()
    array_loops.runs.clear()
    loops.runs.clear()
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 1)
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


def fresh(args):
    return [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]


def run_both(fn, args, backend):
    compiled = ft.compile(fn, backend=backend, dynamic=True)
    want = fn(*fresh(args))
    got = compiled(*fresh(args))
    return compiled, got, want


def same(got, want):
    assert type(got) is type(want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    else:
        assert got == want


def graph_text(fn, *args) -> str:
    """The traced graph (after the passes) with every size and int argument dynamic."""
    with ft.config.patch(assume_static_by_default=False):
        return str(ft.explain(fn, *fresh(args)).graphs[0])


def outside_loop(text: str, needle: str) -> bool:
    """`needle` occurs in the listing before the first loop node (at the outer level)."""
    head = text.split(" = loop(", 1)[0]
    return needle in head


# ------------------------------------------------------------------------------ programs

def ewma(x, a):
    out = np.empty_like(x)
    out[0] = x[0]
    for t in range(1, x.shape[0]):
        out[t] = a * x[t] + (1 - a) * out[t - 1]
    return out


def rk4(y, dt, n):
    for _ in range(n):
        k1 = -y
        k2 = -(y + 0.5 * dt * k1)
        k3 = -(y + 0.5 * dt * k2)
        k4 = -(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def divide_in_body(y, a, n):
    for _ in range(n):
        y = y + 1.0 / a                  # ZeroDivisionError only when the body runs
    return y


def reads_what_it_writes(x):
    for i in range(x.shape[0]):
        s = x * 2.0                      # reads x, which the body writes: not invariant
        x[i] = s.sum()
    return x


def fresh_array_per_iteration(acc, m):
    for i in range(acc.shape[0]):
        t = np.zeros(m)                  # written below: each iteration needs its own
        t[0] = t[0] + i
        acc[i] = t.sum()
    return acc


def overflowing_invariant(y, c, n):
    for _ in range(n):
        y = y + np.exp(c)                # warns (overflow) only when the body runs
    return y


# ------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rows", [1, 2, 9, 300])
def test_ewma(backend, rows):
    rng = np.random.default_rng(rows)
    compiled, got, want = run_both(ewma, (rng.standard_normal((rows, 4)), 0.3), backend)
    same(got, want)
    for r in (rows + 5, 2 * rows + 7):                # never 4: the column count (duck sizing)
        x = rng.standard_normal((r, 4))
        same(compiled(x.copy(), 0.7), ewma(x.copy(), 0.7))
    assert ft.stats().frames_compiled == (1 if rows >= 2 else 2)      # sizes 0 and 1 are specialised
    if backend == "llvm":
        assert array_loops.runs["native"] + loops.runs["native"] >= 2     # a native loop nest now


def test_ewma_invariant_is_hoisted():
    text = graph_text(ewma, np.ones((6, 4)), 0.3)
    assert outside_loop(text, "subtract(1, %L_a)")
    assert "subtract" not in text.split(" = loop(", 1)[1].split("return ()", 1)[0]


@settings(max_examples=20, deadline=None)
@given(rows=st.integers(1, 60), cols=st.integers(1, 5), a=st.floats(-2, 2))
def test_ewma_random(rows, cols, a):
    ft.reset()
    x = np.random.default_rng(rows * 7 + cols).standard_normal((rows, cols))
    _, got, want = run_both(ewma, (x, a), "llvm")
    same(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 5, 40])
def test_rk4(backend, n):
    rng = np.random.default_rng(n)
    compiled, got, want = run_both(rk4, (rng.standard_normal(50), 0.01, n), backend)
    same(got, want)
    y = rng.standard_normal(70)
    for m in (n + 3, n + 4):
        same(compiled(y.copy(), 0.02, m), rk4(y.copy(), 0.02, m))
    if n >= 2:                                                         # 0 and 1 are specialised
        assert ft.stats().frames_compiled == 1
    if backend == "llvm":
        assert array_loops.runs["native"] >= 1


def test_rk4_invariants_are_hoisted():
    text = graph_text(rk4, np.ones(8), 0.01, 4)
    assert outside_loop(text, "multiply(0.5, %L_dt)")
    assert outside_loop(text, "true_divide(%L_dt, 6)")


@pytest.mark.parametrize("backend", BACKENDS)
def test_division_by_zero_only_when_the_body_runs(backend):
    compiled = ft.compile(divide_in_body, backend=backend, dynamic=True)
    y = np.ones(5)
    same(compiled(y.copy(), 0.0, 0), divide_in_body(y.copy(), 0.0, 0))      # zero trips: no error
    with pytest.raises(ZeroDivisionError):
        divide_in_body(y.copy(), 0.0, 3)
    with pytest.raises(ZeroDivisionError):
        compiled(y.copy(), 0.0, 3)
    same(compiled(y.copy(), 4.0, 3), divide_in_body(y.copy(), 4.0, 3))
    assert not outside_loop(graph_text(divide_in_body, y, 2.0, 2), "true_divide")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 4, 17])
def test_reads_of_written_arrays_stay_in_the_body(backend, n):
    x = np.random.default_rng(n).standard_normal(n)
    _, got, want = run_both(reads_what_it_writes, (x,), backend)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    assert not outside_loop(graph_text(reads_what_it_writes, np.ones(n + 2)), "multiply")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 3, 12])
def test_written_fresh_array_stays_in_the_body(backend, n):
    _, got, want = run_both(fresh_array_per_iteration, (np.zeros(n), 4), backend)
    same(got, want)
    assert not outside_loop(graph_text(fresh_array_per_iteration, np.zeros(n + 2), 4), "zeros")


@pytest.mark.parametrize("backend", BACKENDS)
def test_warning_op_is_not_hoisted_over_zero_trips(backend):
    compiled = ft.compile(overflowing_invariant, backend=backend, dynamic=True)
    y, c = np.ones(4), np.full(4, 1000.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(compiled(y.copy(), c, 0), overflowing_invariant(y.copy(), c, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(compiled(y.copy(), c, 3), overflowing_invariant(y.copy(), c, 3))
    assert not outside_loop(graph_text(overflowing_invariant, y, c, 2), "exp")


def nested(x, a, m):
    for i in range(x.shape[0]):
        for j in range(m):
            x[i] = x[i] * (1 - a) + a * j     # 1 - a leaves both loops
    return x


def while_invariant(y, a):
    while np.abs(y).max() > 1e-3:
        y = y * (0.5 * a)
    return y


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rows,m", [(1, 0), (3, 2), (12, 5), (40, 17)])
def test_nested_loops(backend, rows, m):
    x = np.random.default_rng(rows).standard_normal((rows, 3))
    _, got, want = run_both(nested, (x, 0.25, m), backend)
    same(got, want)


def test_nested_invariant_leaves_both_loops():
    text = graph_text(nested, np.ones((5, 3)), 0.25, 4)
    assert outside_loop(text, "subtract(1, %L_a)")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a", [0.5, 1.0, 1.5])
def test_while_loop_invariant(backend, a):
    y = np.random.default_rng(3).standard_normal(7)
    _, got, want = run_both(while_invariant, (y, a), backend)
    same(got, want)
    assert outside_loop(graph_text(while_invariant, y, a), "multiply(0.5, %L_a)")
