"""Loops whose carried arrays shrink every iteration (`z = z[keep]`): one loop node whose carried
sizes are symbols bound per iteration (ir/ops/loops.py `carried_sizes`), compiled once whatever
the trip count and the sizes; `if not len(z): break` first in the body is a test of those sizes
before each iteration. Against NumPy on random inputs, NaN/inf in complex parts, sizes 0 and 1."""
import logging

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import all_caches
from frametrace.ir.numpy_api.shaping import setting_shape_warns
from helpers import BACKENDS, same_outcome
import escape_programs as ep


def same(got, want):
    assert type(got) is type(want)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)          # exact, NaN equal to NaN
    else:
        assert got == want


def entries(fn) -> int:
    """Compiled entries of fn's own code (the eager frame that tuning times against the compiled
    one compiles the helpers it calls as frames of their own: not counted)."""
    code = getattr(fn, "__func__", fn).__code__
    return sum(len(c.entries) for c in all_caches() if c.code is code)


def points(rng, n, special=False):
    c = (rng.uniform(-2.2, 0.8, n) + 1j * rng.uniform(-1.3, 1.3, n)).astype(np.complex128)
    if special and n:
        c[rng.integers(0, n, max(1, n // 5))] = complex(np.nan, 0.5)
        c[rng.integers(0, n, max(1, n // 5))] = complex(0.1, np.inf)
    return c


@pytest.fixture
def loop_lines():
    ft.set_logs(loops=True)
    lines = []
    handler = logging.Handler(logging.DEBUG)
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("frametrace.loops")
    logger.addHandler(handler)
    yield lines
    logger.removeHandler(handler)
    ft.set_logs(loops=False)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_escape_time_is_one_loop_node(backend, seed, loop_lines):
    rng = np.random.default_rng(seed)
    model = ep.EscapeTime()
    f = ft.compile(model.run, backend=backend, dynamic=True)
    ft.reset()
    for n in (2, 7, 64):
        for steps in (2, 5, 30):
            c = points(rng, n, special=seed == 2)
            with np.errstate(all="ignore"):
                want = model.run(c.copy(), steps)
                same(f(c.copy(), steps), want)
    # one graph for every trip count and size (0 and 1 are specialised, as any size, below)
    assert entries(model.run) == 1 and ft.stats().graph_breaks == 0, ft.stats()
    assert any("carried sizes" in line for line in loop_lines)
    assert any("one for-loop node" in line for line in loop_lines)
    for n in (0, 1, 3):
        for steps in (0, 1, 3):
            c = points(rng, n, special=seed == 2)
            with np.errstate(all="ignore"):
                same(f(c.copy(), steps), model.run(c.copy(), steps))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", [0, 3])
def test_a_size_test_that_breaks_first_in_the_body(backend, seed):
    rng = np.random.default_rng(seed)
    model = ep.EscapeTime(horizon=1.5)
    f = ft.compile(model.run_until_empty, backend=backend, dynamic=True)
    ft.reset()
    for n in (2, 9, 100):
        for steps in (1, 4, 60):                     # 60: every point has escaped before the end
            with np.errstate(all="ignore"):
                c = points(rng, n, special=seed == 3) * 2.0
                want = model.run_until_empty(c.copy(), steps)
                same(f(c.copy(), steps), want)
    assert entries(model.run_until_empty) == 1 and ft.stats().graph_breaks == 0, ft.stats()


@pytest.mark.filterwarnings("ignore:Setting the shape:DeprecationWarning")      # NumPy >= 2.5's own
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_grid_program_compiles_once_whatever_the_trip_count(backend):
    whole = not setting_shape_warns()     # NumPy >= 2.5 deprecates `x.shape = ...`: a break there
    f = ft.compile(ep.grid_escape, backend=backend, fullgraph=whole)
    ft.reset()
    for steps in (1, 3, 20, 80):
        same(f(12, 9, steps), ep.grid_escape(12, 9, steps))
    # the trip count becomes an input after its first change: 2 graphs for 4 trip counts
    if whole:
        assert entries(ep.grid_escape) == 2 and ft.stats().graph_breaks == 0, ft.stats()
    ft.reset()
    g = ft.compile(ep.grid_escape, backend=backend, dynamic=True)
    for xn, yn, steps in [(12, 9, 1), (7, 13, 40), (30, 30, 200), (5, 4, 2)]:
        same(g(xn, yn, steps), ep.grid_escape(xn, yn, steps))
    if whole:
        assert entries(ep.grid_escape) == 1, ft.stats()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_first_value_seen_elsewhere_keeps_pythons_writes(backend):
    rng = np.random.default_rng(5)
    f = ft.compile(ep.first_value_seen_elsewhere, backend=backend)
    for n in (3, 40):
        c = rng.standard_normal(n)
        same(f(c.copy(), 4), ep.first_value_seen_elsewhere(c.copy(), 4))


def test_a_loop_with_carried_sizes_runs_its_body_per_iteration(loop_lines):
    f = ft.compile(ep.EscapeTime().run)
    c = points(np.random.default_rng(0), 50)
    same(f(c.copy(), 10), ep.EscapeTime().run(c.copy(), 10))
    assert any("a carried array changes its size in the loop" in line for line in loop_lines), loop_lines


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_and_inf_warn_as_numpy_warns(backend):
    c = points(np.random.default_rng(11), 40, special=True)
    for steps in (3, 25):
        same_outcome(ep.EscapeTime().run, c, steps, backend=backend, copy=True)
        same_outcome(ep.EscapeTime().run_until_empty, c, steps, backend=backend, copy=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_shrinking_loops_compile_once(backend):
    rng = np.random.default_rng(8)
    f = ft.compile(ep.nested_selections, backend=backend, dynamic=True)
    ft.reset()
    for n in (5, 50):
        for steps in (2, 4):
            for inner in (2, 3):
                c = rng.standard_normal(n)
                same(f(c.copy(), steps, inner), ep.nested_selections(c.copy(), steps, inner))
    assert entries(ep.nested_selections) == 1 and ft.stats().graph_breaks == 0, ft.stats()
