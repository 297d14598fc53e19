"""An array rebound by a data-dependent `if` in a loop body (trace/branches.select_arrays): the
loop stays one node, the array is a select of the two sides where they meet, when both sides
are new arrays of one shape and dtype whose branch work neither raises nor warns. Against
plain Python on both backends: branches taken both ways, NaN conditions, integer and float
arrays; and the programs it must refuse (a side that may warn, a write into the chosen array
or one of its sides, a side that is an input or a view), which stay correct."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean():
    ft.reset()
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False, loop_unroll_budget=0):
        yield
    ft.reset()


def loop_nodes(fn, *args):
    ft.reset()
    out = ft.explain(ft.compile(fn, dynamic=True), *args)
    return [n for g in out.graphs for n in g.nodes if n.op == "loop"]


def run_both(fn, *args, backend="llvm"):
    a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    b = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    f = ft.compile(fn, backend=backend)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = f(*a)
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = fn(*b)
    assert_same(got, want)
    assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert_same(x, y)


# -- programs, as users write them ------------------------------------------------------------
class Integrator:
    """A contour integral's loop (npbench contour_integral, in float): a solve per point, the
    solution's sign flipped inside the unit circle."""

    def __init__(self, ham, rhs):
        self.ham, self.rhs = ham, rhs

    def system(self, z):
        T = np.zeros_like(self.ham[0])
        for n in range(self.ham.shape[0]):
            T += np.power(z, 1.0 - n) * self.ham[n]
        return T

    def __call__(self, points):
        P0 = np.zeros_like(self.rhs)
        P1 = np.zeros_like(self.rhs)
        for z in points:
            X = np.linalg.solve(self.system(z), self.rhs)
            if abs(z) < 1.0:
                X = -X
            P0 += X
            P1 += z * X
        return P0, P1


def flip_rows(A, signs):
    out = np.zeros(A.shape[1], A.dtype)
    for i in range(A.shape[0]):
        r = A[i] * 2
        if signs[i] < 0:
            r = -r
        else:
            r = np.abs(r)
        out += r
    return out


def pick_copy(A, t):
    acc = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        a = A[i] + 1.0
        b = a.copy()
        if A[i, 0] > t:
            b = np.floor(a)
        acc += b
    return acc


# -- tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_contour_integral_is_one_loop_node(backend):
    rng = np.random.default_rng(0)
    ham, rhs = rng.random((3, 6, 6)) + 3 * np.eye(6), rng.random((6, 4))
    points = rng.random(12) * 2                      # both sides of |z| < 1
    integ = Integrator(ham, rhs)
    run_both(integ, points, backend=backend)
    run_both(integ, np.array([0.5, np.nan, 1.5, np.nan]), backend=backend)    # NaN: not < 1
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0 and s.frames_compiled <= 2, s
    assert len(loop_nodes(integ, points)) >= 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int32])
def test_both_sides_rebind(backend, dt):
    rng = np.random.default_rng(1)
    A = (rng.random((9, 5)) * 10 - 5).astype(dt)
    signs = rng.standard_normal(9)
    signs[3] = np.nan                                 # NaN < 0 is False: the else side
    run_both(flip_rows, A, signs, backend=backend)
    run_both(flip_rows, A, -np.abs(signs), backend=backend)        # always taken
    run_both(flip_rows, A[:0], signs[:0], backend=backend)         # no iteration
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0, s
    assert len(loop_nodes(flip_rows, A, signs)) == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copy_against_a_branch_value(backend):
    rng = np.random.default_rng(2)
    A = rng.random((7, 4)) * 3
    for t in (-1.0, 1.5, 9.0, np.nan):
        run_both(pick_copy, A, t, backend=backend)
    assert ft.stats().graph_breaks == 0


def _warns_in_branch(A, d):
    acc = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        r = A[i] * 1.0
        if d[i] != 0:
            r = r / d[i]                             # may warn where Python would not run it
        acc += r
    return acc


def _writes_chosen(A, s):
    acc = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        r = A[i] + 0.0
        if s[i] > 0:
            r = -r
        r[0] = 7.0                                  # Python writes into whichever side r is
        acc += r
    return acc


def _writes_side(A, s):
    acc = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        r = A[i] + 0.0
        q = r
        if s[i] > 0:
            q = -r
        r[1] = 5.0                                  # seen through q where the branch was not taken
        acc += q
    return acc


def _input_view(A, s):
    acc = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        r = A[i]
        if s[i] > 0:
            r = -A[i]
        acc += r
    return acc


@pytest.mark.parametrize("fn", [_warns_in_branch, _writes_chosen, _writes_side, _input_view])
def test_refused_selections_stay_correct(fn):
    rng = np.random.default_rng(3)
    A = rng.random((6, 3))
    s = rng.standard_normal(6)
    s[2] = 0.0
    run_both(fn, A, s)
    run_both(fn, A, s[::-1].copy())


def _carried_pair(A, s):
    r = A[0] * 1
    q = r
    for i in range(A.shape[0]):
        r = A[i] + r
        q = r
        if s[i] > 0:
            q = -r
    r += 1.0                                        # Python: q is r where the last branch was not taken
    return q, r


@pytest.mark.parametrize("backend", BACKENDS)
def test_carried_next_to_its_side_stays_correct(backend):
    rng = np.random.default_rng(4)
    A = rng.random((5, 3))
    for s in (np.ones(5), -np.ones(5), rng.standard_normal(5)):
        run_both(_carried_pair, A, s, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_carried_selection_is_one_loop_node(backend):
    def decay(x, s):
        for i in range(s.shape[0]):
            x = x * 0.5
            if s[i] > 0:
                x = -x
        return x
    rng = np.random.default_rng(5)
    for s in (rng.standard_normal(7), np.array([np.nan, 1.0, -1.0])):
        run_both(decay, rng.random(4), s, backend=backend)
    assert ft.stats().graph_breaks == 0
    assert len(loop_nodes(decay, rng.random(4), rng.standard_normal(7))) == 1


def _while_picks(x, s):
    k = 0
    while k < s.shape[0] and x.sum() > 0.1:
        x = x * 0.5
        if s[k] > 0:
            x = x / s[k]                            # may warn: a `while`'s paths keep the old behaviour
        k += 1
    return x


def test_while_paths_keep_refusing_array_choices():
    rng = np.random.default_rng(6)
    s = rng.standard_normal(6)
    s[1] = 0.0
    run_both(_while_picks, rng.random(4), s)
    assert ft.stats().graph_breaks == 1
