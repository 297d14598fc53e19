"""`while` loops on array data (trace/while_loops.py, trace/paths.py): one loop node whose body is
one iteration with its data branches if-converted, whatever the trip count; compared with plain
Python on random inputs (zero trips, one trip, NaN), with the frames, graphs and breaks counted."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
import while_programs as wp
from helpers import assert_identical, assert_same

BACKENDS = ["llvm", "numpy"]
RNG = np.random.default_rng(20)


def copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run_both(fn, *args, f=None, backend="llvm"):
    """fn compiled (or `f`) and eager on copies of args: the results and the arguments after the
    call are identical."""
    f = f or ft.compile(fn, backend=backend)
    eager, compiled = copied(args), copied(args)
    want = fn(*eager)
    got = f(*compiled)
    assert_identical(got, want)
    for a, b in zip(compiled, eager):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return f


def loop_bodies(fn, *args):
    """The kinds of the loop nodes of fn's graphs."""
    ft.reset()
    out = ft.explain(ft.compile(fn), *copied(args))
    kinds = []

    def walk(g):
        for n in g.nodes:
            if n.op == "loop":
                kinds.append(n.attr("body").kind)
                walk(n.attr("body").graph)          # loops nested in a body (a `while` in a `for`)
    for g in out.graphs:
        walk(g)
    ft.reset()
    return kinds


# ------------------------------------------------------------------ one graph, no break

CASES = [
    (wp.jacobi, lambda: (np.ones(20), np.full(20, 1e-3), 1e-6)),
    (wp.halve_until_small, lambda: (RNG.standard_normal(6) * 10, 1e-3)),
    (wp.shrink_until, lambda: (RNG.random(5) * 10, 1.0)),
    (wp.count_signs, lambda: (RNG.standard_normal(9), 40)),
    (wp.first_crossing, lambda: (np.sort(RNG.random(30)), 0.5)),
    (wp.damped, lambda: (RNG.random(5) * 3, RNG.random(5) * 3)),
    (wp.walrus_peak, lambda: (RNG.random(5) * 5,)),
    (wp.nested, lambda: (RNG.random(12) * 100, 12)),
    (wp.smooth_until, lambda: (RNG.random(10), 1e-3)),
    (wp.clipped_step, lambda: (RNG.random(8) * 10, 1.0)),
    (wp.integrate_clipped, lambda: (RNG.standard_normal(7) * 3, np.float64(1.5), 2.0)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_while_on_data_is_one_graph_without_breaks(fn, make, backend):
    f = ft.compile(fn, backend=backend)
    for _ in range(3):
        run_both(fn, *make(), f=f)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0, s
    assert s.frames_compiled == 1 and s.unique_graphs == 1, s
    assert "while" in loop_bodies(fn, *make())


def test_solver_object_with_a_helper_method():
    # `res = np.inf` is returned: a Python float if the loop never runs (its test is on
    # `self.tol`, a graph input), so the frame breaks once at the test and the resume function
    # that enters the loop peels its first iteration; the sweep helper is inlined
    solver = wp.Relaxation(omega=0.8, tol=1e-5, max_sweeps=500)
    f = ft.compile(solver.solve)
    for n in (16, 16, 24, 30):
        u, rhs = RNG.random(n), RNG.random(n) * 0.01
        assert_identical(f(u.copy(), rhs), solver.solve(u.copy(), rhs))
    s = ft.stats()
    assert s.graph_breaks == 1 and s.eager_fallbacks == 0 and s.frames_compiled <= 4, s


def test_convergence_loop_iterates_many_times_in_one_frame():
    u, b = np.ones(20), np.full(20, 1e-3)
    f = run_both(wp.jacobi, u, b, 1e-6)
    _, sweeps = f(np.ones(20), b, 1e-6)
    assert sweeps > 100
    assert ft.stats().frames_compiled == 1, ft.stats()


# ------------------------------------------------------------------ trips: none, one, many, NaN

@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_and_one_trips_and_nan(backend):
    f = ft.compile(wp.halve_until_small, backend=backend)
    for x, tol in ((np.zeros(4), 1.0), (np.array([1.5, 0.2]), 1.0), (np.array([np.nan, 3.0]), 1e-3),
                   (np.array([np.inf]), 1.0), (np.ones(1) * 7, 1e-9), (np.array([-0.0, 0.0]), 0.0)):
        if np.isinf(x).any():
            continue                                     # halving inf never ends, in Python too
        assert_identical(f(x.copy(), tol), wp.halve_until_small(x.copy(), tol))
    assert ft.stats().graph_breaks == 0, ft.stats()


@pytest.mark.parametrize("backend", BACKENDS)
def test_guarded_element_access_never_raises_on_the_side_not_taken(backend):
    f = ft.compile(wp.guarded_drain, backend=backend)
    for n, steps in ((1, 5), (2, 9), (6, 3), (1, 0)):
        run_both(wp.guarded_drain, RNG.random(n) * 3, steps, f=f)
    assert ft.stats().graph_breaks == 0, ft.stats()


def test_search_loop_past_the_end_stops_at_the_size():
    f = ft.compile(wp.first_crossing)
    for x, level in ((np.arange(5.0), 10.0), (np.arange(5.0), -1.0), (np.array([]), 0.0),
                     (np.array([np.nan, 2.0]), 1.0)):
        assert f(x, level) == wp.first_crossing(x, level)


# ------------------------------------------------------------------ values that change type

def test_python_float_that_becomes_a_numpy_scalar_peels_the_first_iteration():
    # `udiff = 1.0` then a np.float64: the constant test runs the first iteration as straight
    # code, the loop node carries the np.float64
    def relax(u, b):
        udiff, steps = 1.0, 0
        while udiff > 1e-6:
            un = u.copy()
            u[1:-1] = 0.5 * (un[2:] + un[:-2]) - b[1:-1]
            udiff = np.abs(np.sum(u) - np.sum(un)) / np.abs(np.sum(u))
            steps += 1
        return u, steps, udiff
    f = ft.compile(relax)
    u, b = np.ones(20), np.full(20, 1e-3)
    got, want = f(u.copy(), b), relax(u.copy(), b)
    assert_identical(got[:2], want[:2])
    assert_same(got[2], want[2])                        # sums: within the reductions' tolerance
    s = ft.stats()
    assert s.frames_compiled == 1 and s.graph_breaks == 0, s


def test_type_change_with_a_test_on_data_breaks_once_at_the_test():
    # `err` is returned: a Python float when the loop never runs, a np.float64 otherwise, so the
    # frame breaks at the test; the resume function entering the loop peels it (bounded)
    f = ft.compile(wp.newton_sqrt)
    for a in (RNG.random(8) + 1.0, np.ones(3), RNG.random(5) + 2.0):
        for tol in (1e-12, 10.0):
            assert_identical(f(a.copy(), tol), wp.newton_sqrt(a.copy(), tol))
    s = ft.stats()
    # two sizes: the frame and its resume functions compile at most twice (automatic dynamic),
    # each compile of the frame counts its break
    assert s.graph_breaks <= 2 and s.frames_compiled <= 6 and s.eager_fallbacks == 0, s


def test_time_loop_with_an_output_schedule_compiles_a_bounded_number_of_frames():
    f = ft.compile(wp.simulate)
    for n, t_end in ((16, 3.0), (16, 0.0), (24, 4.0), (24, 7.5), (5, 1.0)):
        x = np.linspace(1.0, 2.0, n)
        assert_identical(f(x, t_end), wp.simulate(x, t_end))
    s = ft.stats()
    assert s.frames_compiled <= 6 and s.graph_breaks <= 2, s


def test_a_temporary_of_the_body_is_not_carried():
    # `d` and `old` are dead where the body starts and after the loop: the node does not carry
    # them, so `d = 1.0` before the loop needs no peeling
    ft.reset()
    out = ft.explain(ft.compile(wp.smooth_until), RNG.random(10), 1e-3)
    loops = [n for g in out.graphs for n in g.nodes if n.op == "loop"]
    # `u` is written in place (captured), `j` is the inner loop's: only `it` is carried
    assert loops and loops[0].attr("body").ncarried == 1
    assert out.graph_break_count == 0


# ------------------------------------------------------------------ falls back to Python, bounded

@pytest.mark.parametrize("fn,make", [
    (wp.return_inside, lambda: (RNG.random(5) * 100,)),
    (wp.keep_best, lambda: (RNG.random(5) * 3,)),
    (wp.mixed_types, lambda: (RNG.standard_normal(7), 30)),
], ids=["return_inside", "keep_best", "mixed_types"])
def test_loops_that_cannot_be_nodes_run_in_python_with_bounded_frames(fn, make):
    f = ft.compile(fn)
    for _ in range(4):
        run_both(fn, *make(), f=f)
    s = ft.stats()
    # the frame and the code after the loop; that one again where a value's type after the loop
    # depends on the data (`acc` a float or a np.float64): never a frame per iteration
    assert s.graph_breaks == 1 and s.frames_compiled <= 3 and s.eager_fallbacks == 0, s


def test_the_reason_names_the_loop_and_what_failed(caplog):
    import logging
    with caplog.at_level(logging.INFO, logger="frametrace.graph_breaks"):
        run_both(wp.mixed_types, RNG.standard_normal(7), 30)
    text = caplog.text
    assert "`while` loop at line" in text and "acc" in text and "float" in text
    assert "runs in Python" in text


# ------------------------------------------------------------------ random programs vs Python

BRANCHY = (wp.count_signs, wp.shrink_until, wp.skip_positive, wp.first_crossing)
COMPILED = {fn: ft.compile(fn) for fn in BRANCHY}     # one compile per test, not per example


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 10_000), limit=st.floats(0.5, 5.0),
       steps=st.integers(0, 30))
def test_branchy_loops_match_python(n, seed, limit, steps):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 3
    cases = {wp.count_signs: (x, steps), wp.shrink_until: (np.abs(x) + 0.1, limit),
             wp.skip_positive: (x, steps), wp.first_crossing: (np.sort(x), limit)}
    for fn, args in cases.items():
        assert_identical(COMPILED[fn](*copied(args)), fn(*copied(args)))


# ------------------------------------------------------------------ native element loops (LLVM)

def grow_until(x, level):
    """A Python int that outgrows int64 after ~40 iterations: the native kernel hands the rest
    of the loop to Python (the big int), from the iteration it left at."""
    i, s = 0, 1
    while i < x.shape[0] and x[i] < level:
        s = s * 3 + 1
        i += 1
    return s, i


def countdown_divide(x, d):
    """`100 // d` reaches d == 0 when the loop runs long enough: Python's ZeroDivisionError."""
    i, acc = 0, 0
    while i < x.shape[0] and x[i] > 0:
        acc = acc + 100 // d
        d = d - 1
        i += 1
    return acc, i


def test_a_search_loop_is_one_native_kernel():
    from frametrace.backends.llvm.loop_call import runs
    f = ft.compile(wp.first_crossing, backend="llvm")
    before = runs["native"]
    for n, level in ((1000, 0.3), (1000, 2.0), (1, 0.5), (0, 0.5)):
        x = np.linspace(0.0, 1.0, n)
        assert f(x, level) == wp.first_crossing(x, level)
    assert runs["native"] - before >= 3                  # one kernel call per call, no Python per iteration


def test_native_while_hands_big_ints_and_zero_division_to_python():
    from frametrace.backends.llvm.loop_call import runs
    f, g = ft.compile(grow_until, backend="llvm"), ft.compile(countdown_divide, backend="llvm")
    for n in (10, 100):
        x = np.linspace(0.0, 1.0, n)
        assert_identical(f(x, 2.0), grow_until(x, 2.0))
    assert runs["resumed"] >= 1
    x = np.ones(10)
    assert_identical(g(x, 20), countdown_divide(x, 20))
    with pytest.raises(ZeroDivisionError):
        countdown_divide(x, 5)
    with pytest.raises(ZeroDivisionError):
        g(x, 5)


# ------------------------------------------------------------------ a test the trace decides

def _loop_log(caplog, fn, *args):
    import logging
    with caplog.at_level(logging.INFO, logger="frametrace.loops"):
        out = ft.explain(ft.compile(fn), *copied(args))
    ft.reset()
    return out, caplog.text


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_a_decided_test_enters_holds_its_body_once(caplog, backend):
    # `udiff = 1; while udiff > 1e-6:` runs at least once and keeps its types: the node starts at
    # the header with `go` true, so the graph has no peeled copy of the body
    u, b = np.ones(20), np.full(20, 1e-3)
    run_both(wp.relax_literal_tol, u, b, backend=backend)
    assert ft.stats().frames_compiled == 1 and ft.stats().graph_breaks == 0, ft.stats()
    out, log = _loop_log(caplog, wp.relax_literal_tol, u, b)
    outer = out.graphs[0]
    loops = [n for n in outer.nodes if n.op == "loop"]
    assert len(loops) == 1 and loops[0].attr("body").kind == "while"
    assert not [n for n in outer.nodes if n.op == "sum"], outer      # the sums are in the body only
    assert "do_while" in log


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_two_part_decided_test_and_zero_trips(backend):
    rng = np.random.default_rng(3)
    for sweeps in (40, 0, 1):
        s = wp.Smoother(0.7, sweeps)
        f = ft.compile(s.run, backend=backend)
        for n in (6, 1):
            run_both(s.run, rng.random(n), f=f)
    assert ft.stats().graph_breaks == 0 and ft.stats().eager_fallbacks == 0, ft.stats()


def test_a_decided_while_in_a_helper_inside_a_for_loop_node():
    a = np.random.default_rng(4).random(40) * 10 + 0.5    # past the unroll limit: a for node
    f = run_both(wp.roots, a)
    run_both(wp.roots, np.array([4.0]), f=f)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0, s
    kinds = loop_bodies(wp.roots, a)
    assert kinds == ["for", "while"]                     # the while node is inside the for body


def test_a_value_that_changes_type_still_peels(caplog):
    x = np.linspace(1.0, 2.0, 8)
    run_both(wp.drift_until, x, 5.0)
    assert ft.stats().graph_breaks == 0, ft.stats()
    _, log = _loop_log(caplog, wp.drift_until, x, 5.0)
    assert "do_while" not in log and "one while-loop node" in log
