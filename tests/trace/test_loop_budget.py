"""What is compiled grows with the source, not with trip counts (trace/loops.py, the budget).

A `for` loop over a constant range (a static size, a literal) is a loop node like one over a
symbolic range; it is unrolled only when trips x body nodes is within
`config.loop_unroll_budget`. Printed graph sizes are compared across trip counts; results are
compared with plain Python/NumPy on random inputs, on both backends."""
import logging

import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same


def graph_size(fn, *args, **kw):
    """(graphs, printed lines of all graphs, loop nodes at the top level) of compiling fn."""
    ft.reset()
    out = ft.explain(ft.compile(fn, **kw) if kw else fn, *args)
    lines = sum(len(str(g).splitlines()) for g in out.graphs)
    loops = sum(1 for g in out.graphs for n in g.nodes if n.op == "loop")
    return out.graph_count, lines, loops


def copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


# ---------------------------------------------------------------- loops over rows, triangular

def row_elimination(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def forward_substitution(L, b):
    n = b.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_row_loops_are_one_graph_of_one_size_at_every_static_size(backend):
    rng = np.random.default_rng(0)
    sizes = {}
    for n in (6, 24, 40):
        A = rng.standard_normal((n, n)) + n * np.eye(n)
        graphs, lines, loops = graph_size(row_elimination, A.copy(), backend=backend, dynamic=False)
        assert graphs == 1 and loops == 1
        sizes[n] = lines
        got = ft.compile(row_elimination, backend=backend, dynamic=False)(A.copy())
        np.testing.assert_allclose(got, row_elimination(A.copy()), rtol=1e-12)
    assert sizes[6] == sizes[24] == sizes[40], sizes


def test_row_loops_compile_twice_over_sizes_with_automatic_dynamic():
    rng = np.random.default_rng(1)
    f = ft.compile(forward_substitution)
    for n in (5, 17, 33, 2, 64):
        L = np.tril(rng.standard_normal((n, n))) + n * np.eye(n)
        b = rng.standard_normal(n)
        assert_same(f(L, b), forward_substitution(L, b))
    st = ft.stats()
    assert st.unique_graphs <= 2 and st.graph_breaks == 0 and st.eager_fallbacks == 0, st


# ---------------------------------------------------------------- time loops calling helpers

def _apply_boundary(kind, u):                   # a helper with branches on a Python int
    if kind == 0:
        u[0] = u[1]
        u[-1] = u[-2]
    elif kind == 1:
        u[0] = -u[1]
        u[-1] = -u[-2]
    else:
        u[0] = 0.0
        u[-1] = 0.0


def diffuse(u, kind, alpha, steps):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        _apply_boundary(kind, u)
    return u


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_time_loop_calling_a_helper_with_int_branches_is_a_loop_at_any_trip_count(kind):
    rng = np.random.default_rng(2)
    u = rng.standard_normal(30)
    sizes = []
    for steps in (20, 60, 300):
        graphs, lines, loops = graph_size(diffuse, u.copy(), kind, 0.2, steps)
        assert graphs == 1 and loops == 1
        sizes.append(lines)
        ft.reset()
        assert_same(ft.compile(diffuse)(u.copy(), kind, 0.2, steps), diffuse(u.copy(), kind, 0.2, steps))
    assert sizes[0] == sizes[1] == sizes[2], sizes


# ---------------------------------------------------------------- the budget

def three_taps(x, w):
    out = np.zeros(x.shape[0] - 2)
    for k in range(3):                           # 3 trips x a few nodes: unrolled (fused)
        out += w[k] * x[k:k + out.shape[0]]
    return out


def scaled_sum(x):
    s = 0.0
    for k in range(40):                          # 40 trips x 3 nodes > 64: a loop node
        s = s + x[k] * 0.5
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_short_loops_under_the_budget_are_unrolled(backend):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal(50), rng.standard_normal(3)
    _, _, loops = graph_size(three_taps, x, w, backend=backend)
    assert loops == 0
    assert_same(ft.compile(three_taps, backend=backend)(x, w), three_taps(x, w))
    _, _, loops = graph_size(scaled_sum, x, backend=backend)
    assert loops == 1
    assert_same(ft.compile(scaled_sum, backend=backend)(x), scaled_sum(x))


def test_the_budget_is_a_setting():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal(50), rng.standard_normal(3)
    with ft.config.patch(loop_unroll_budget=0):
        assert graph_size(three_taps, x, w)[2] == 1
        ft.reset()
        assert_same(ft.compile(three_taps)(x, w), three_taps(x, w))
    with ft.config.patch(loop_unroll_budget=10_000):
        assert graph_size(scaled_sum, x)[2] == 0
        ft.reset()
        assert_same(ft.compile(scaled_sum)(x), scaled_sum(x))


def test_the_loops_log_says_why_a_loop_was_unrolled(caplog):
    rng = np.random.default_rng(5)
    with caplog.at_level(logging.INFO, logger="frametrace.loops"):
        ft.compile(three_taps)(rng.standard_normal(20), rng.standard_normal(3))
    assert "unrolled under the budget (3 trips x" in caplog.text


def test_an_empty_body_is_a_loop_not_a_million_unrolled_steps():
    def spin(x):
        for _ in range(1_000_000):
            pass
        return x + 1
    graphs, lines, _ = graph_size(spin, np.ones(3))
    assert graphs == 1 and lines < 20
    assert_same(ft.compile(spin)(np.ones(3)), np.ones(3) + 1)


def layers(x, ws):
    for w in ws:                                 # a list of weights: unrolled, as before
        x = np.tanh(x @ w)
    return x


def test_loops_over_lists_are_unrolled_whatever_the_budget():
    rng = np.random.default_rng(6)
    ws = [rng.standard_normal((4, 4)) for _ in range(5)]
    x = rng.standard_normal((3, 4))
    with ft.config.patch(loop_unroll_budget=0):
        assert graph_size(layers, x, ws)[2] == 0
        ft.reset()
        assert_same(ft.compile(layers)(x, ws), layers(x, ws))


# ---------------------------------------------------------------- sizes that depend on data

def azimuthal_means(data, radius, npt):
    rmax = radius.max()
    res = np.zeros(npt, dtype=np.float64)
    for i in range(npt):
        r1 = rmax * i / npt
        r2 = rmax * (i + 1) / npt
        values = data[np.logical_and(r1 <= radius, radius < r2)]   # a size bound in every iteration
        res[i] = values.mean()                                     # empty bins: NaN and NumPy's warnings
    return res


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_mask_in_the_body_is_bound_per_iteration_not_unrolled(backend):
    import warnings
    rng = np.random.default_rng(7)
    data, radius = rng.random(60), rng.random(60)
    assert graph_size(azimuthal_means, data, radius, 100)[::2] == (1, 1)
    for npt in (40, 100):
        ft.reset()
        f = ft.compile(azimuthal_means, backend=backend)
        seen = []
        for fn in (azimuthal_means, f):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                seen.append((fn(data, radius, npt), [(w.category, str(w.message)) for w in caught]))
        assert_same(seen[1][0], seen[0][0])
        assert seen[1][1] == seen[0][1]


def pool(x):
    out = np.empty((x.shape[0] // 2, x.shape[1] // 2))
    for i in range(x.shape[0] // 2):
        for j in range(x.shape[1] // 2):
            out[i, j] = x[2 * i:2 * i + 2, 2 * j:2 * j + 2].max()
    return out


def test_a_short_loop_nest_is_not_unrolled_copy_by_copy():
    # 4 x 4 windows: the inner loop alone fits the budget, but unrolled inside the outer loop's
    # body (or the outer unrolled around it) every copy would be kernels of its own
    x = np.random.default_rng(8).standard_normal((8, 8))
    graphs, lines, loops = graph_size(pool, x)
    assert (graphs, loops) == (1, 1) and lines < 40, lines
    ft.reset()
    assert_same(ft.compile(pool)(x), pool(x))
