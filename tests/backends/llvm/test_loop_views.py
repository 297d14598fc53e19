"""Array-bodied loops whose views move with the loop index (`x[i:i + k]`, `x[t - 1]`, `x[:, j]`,
`x[i:i + k, j:j + k]`) and fixed slices (`u[1:-1] = ...`): the tracer proves a window's clamp
(`Min(n, i + k)` is `i + k` over the range: shapes/helpers.py, shapes/loop_index.py), so the
view's shape does not depend on the index and the native driver runs the body's kernels with
the view's offset affine in the index (array_loops.py). Compared with plain Python on random
inputs, both backends, strict backend and IR verification, native calls and compile counts."""
import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import array_loops, loops
from frametrace.shapes import ShapeEnv
from frametrace.shapes.helpers import sym_max, sym_min
from frametrace.shapes.symint import SymInt, wrap

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    ft.reset()
    array_loops.runs.clear()
    loops.runs.clear()
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 1)     # short loops run natively too
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


def same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def fresh(args):
    return [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]


def check(fn, args_list, backend):
    compiled = ft.compile(fn, backend=backend, dynamic=True)
    for args in args_list:
        inputs, eager_inputs = fresh(args), fresh(args)
        want = fn(*eager_inputs)
        got = compiled(*inputs)
        same(got, want)
        for a, b in zip(inputs, eager_inputs):    # in-place effects on the inputs as NumPy's
            if isinstance(a, np.ndarray):
                same(a, b)
    return compiled


def native():
    """Calls that ran natively: the array-loop driver, or (slices in the body) a native loop nest."""
    return array_loops.runs["native"] + loops.runs["native"]


def strided(a):
    """`a` as a non-contiguous view (every other element of a bigger array)."""
    big = np.zeros((2 * a.shape[0],) + a.shape[1:], a.dtype)
    big[::2] = a
    return big[::2]


# ------------------------------------------------------------------------------ programs

def window(x, w):
    k = w.shape[0]
    out = np.zeros(x.shape[0] - k + 1)
    for i in range(x.shape[0] - k + 1):
        out[i] = (x[i:i + k] * w).sum()
    return out


def window_backwards(x, w):
    k = w.shape[0]
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0] - k, -1, -1):
        out[i] = (x[i:i + k] * w).sum() + out[min(i + 1, x.shape[0] - 1)]
    return out


def window_2d(x, w):
    k = w.shape[0]
    out = np.zeros((x.shape[0] - k + 1, x.shape[1] - k + 1))
    for i in range(x.shape[0] - k + 1):
        for j in range(x.shape[1] - k + 1):
            out[i, j] = (x[i:i + k, j:j + k] * w).sum()
    return out


def rows(x):
    out = np.zeros_like(x)
    for t in range(1, x.shape[0]):
        out[t] = np.tanh(x[t] + 0.5 * x[t - 1])
    return out


def column_norms(x):
    out = np.zeros(x.shape[1])
    for j in range(x.shape[1]):
        out[j] = np.sqrt((x[:, j] ** 2).sum())
    return out


def row_update(a, b):
    for i in range(a.shape[0]):
        b[i, :] = a[i, :] * 2.0 + b[i, :]
    return b


def smooth(u, n):
    for _ in range(n):
        u[1:-1] = 0.5 * u[1:-1] + 0.25 * (u[:-2] + u[2:])
    return u


def recurrence(h, w):
    for t in range(1, h.shape[0]):
        h[t] = np.tanh(h[t - 1] * w + 1.0)
    return h


def ragged_window(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i:i + 3].sum()            # shorter at the end: the clamp is not proved
    return out


def triangular_windows(x, k):
    out = np.zeros((x.shape[0], x.shape[0]))
    for i in range(x.shape[0]):
        for j in range(i, x.shape[0]):
            out[i, j] = x[j - i:j - i + k].sum() + x[i:j + 1].sum()
    return out


def shifted_windows(x, k):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(1, n - k):
        out[i] = x[i - 1:i + k].sum() - x[i + k - 1:n].sum()
    return out


# ------------------------------------------------------------------------------ tests

def window_args(rng, k, ns):
    return [(rng.standard_normal(n), rng.standard_normal(k)) for n in ns]


@pytest.mark.parametrize("backend", BACKENDS)
def test_sliding_window_runs_0_1_many_times(backend):
    rng = np.random.default_rng(0)
    args = window_args(rng, 8, (40, 8, 9, 1000, 7))    # many, one, two, many, none (n < k: zeros(0))
    args += [(strided(rng.standard_normal(30)), strided(rng.standard_normal(8)))]
    check(window, args, backend)
    if backend == "llvm":
        assert native() == 6                          # every call, none included (a loop node of 0 trips): `* w` of the
    assert ft.stats().frames_compiled == 2            # whole `w` makes the body a native loop nest


@pytest.mark.parametrize("backend", BACKENDS)
def test_sliding_window_with_a_dynamic_width(backend):
    rng = np.random.default_rng(1)
    args = [(rng.standard_normal(n), rng.standard_normal(k)) for n, k in ((50, 3), (50, 11), (12, 12), (64, 5))]
    check(window, args, backend)
    if backend == "llvm":
        assert native() == 4                          # every call: `(x[i:i + k] * w).sum()` is a native nest
    assert ft.stats().unique_graphs <= 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_window_with_a_negative_step(backend):
    rng = np.random.default_rng(2)
    check(window_backwards, window_args(rng, 4, (30, 4, 5, 200)), backend)
    if backend == "llvm":
        assert native() == 4                          # every call (a native loop nest)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_dimensional_window(backend):
    rng = np.random.default_rng(3)
    args = [(rng.standard_normal((m, n)), rng.standard_normal((3, 3))) for m, n in ((12, 9), (5, 20), (3, 3))]
    args.append((np.asfortranarray(rng.standard_normal((10, 7))), rng.standard_normal((3, 3))))
    check(window_2d, args, backend)
    if backend == "llvm":
        assert native() == 4                          # one native loop nest per call


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [rows, column_norms])
def test_row_and_column_views(backend, fn):
    rng = np.random.default_rng(4)
    args = [(rng.standard_normal((m, n)),) for m, n in ((30, 7), (2, 5), (1, 4), (9, 1))]
    args += [(np.asfortranarray(rng.standard_normal((12, 6))),), (strided(rng.standard_normal((10, 3))),)]
    check(fn, args, backend)
    if backend == "llvm":
        assert native() == 5                          # two trips or more (rows of (9, 1): a native loop nest)
    assert ft.stats().frames_compiled == 3            # sizes 1 are specialised: (1, 4), (9, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_row_update_in_place(backend):
    rng = np.random.default_rng(5)
    args = [(rng.standard_normal((m, n)), rng.standard_normal((m, n))) for m, n in ((20, 6), (1, 3), (3, 8))]
    args.append((np.asfortranarray(rng.standard_normal((7, 5))), strided(rng.standard_normal((7, 5)))))
    check(row_update, args, backend)
    if backend == "llvm":
        assert native() == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_fixed_slices_updated_in_place(backend):
    rng = np.random.default_rng(6)
    args = [(rng.standard_normal(n), k) for n, k in ((40, 20), (40, 0), (40, 1), (5, 9), (100, 3))]
    check(smooth, args, backend)
    if backend == "llvm":
        assert native() == 5                          # every call: the trip count k is an input (0 and 1 too)


@pytest.mark.parametrize("backend", BACKENDS)
def test_recurrence_through_row_views(backend):
    rng = np.random.default_rng(7)
    args = [(rng.standard_normal((t, 6)), rng.standard_normal(6)) for t in (30, 1, 2, 3)]
    check(recurrence, args, backend)
    if backend == "llvm":
        assert native() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_window_whose_length_varies_is_a_native_loop_nest(backend):
    rng = np.random.default_rng(8)
    check(ragged_window, [(rng.standard_normal(n),) for n in (10, 2, 30)], backend)
    # its shape depends on the index: not for the array-loop driver, but a native loop nest
    assert array_loops.runs["native"] == 0
    assert loops.runs["native"] == (3 if backend == "llvm" else 0)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 60), k=st.integers(1, 9), seed=st.integers(0, 2 ** 31 - 1))
def test_window_matches_python_on_random_sizes(n, k, seed):
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal(n + k - 1), rng.standard_normal(k)
    for backend in BACKENDS:
        ft.reset()
        array_loops.runs.clear()
        loops.runs.clear()
        got = ft.compile(window, backend=backend, dynamic=True)(x, w)
        same(got, window(x, w))
        if backend == "llvm":
            # a loop node (native) unless its trip count is a constant: sizes 0/1 specialised, or
            # x and w of one length (one duck-sized symbol: n + k - 1 - k + 1 is 1)
            length = n + k - 1
            assert native() == (1 if length >= 2 and (k == 1 or length != k) else 0)


def test_the_body_holds_a_window_of_fixed_shape():
    """The clamp of `x[i:i + 8]`'s stop (`Min(n, i + 8)`) is proved away over the loop range;
    `x[i:i + 3]` over `range(n)` does run past the end, so its clamp stays."""
    body = str(ft.explain(window, np.zeros(50), np.zeros(8)).graphs[0])
    assert "%0 = getitem(%loop0_captured0, index=(i0:i0 + 8:1,))  : f64[8]" in body
    ragged = str(ft.explain(ragged_window, np.zeros(50)).graphs[0])
    assert "%0 = getitem(%loop0_captured0, index=(i0:Min(50, i0 + 3):1,))  : f64[Min(3, 50 - i0)]" in ragged



@settings(max_examples=60, deadline=None)
@given(hi=st.integers(0, 30), a=st.integers(-2, 2), c=st.integers(-4, 8), m=st.integers(-3, 12),
       use_min=st.booleans())
def test_min_max_over_a_loop_index_agree_with_every_index(hi, a, c, m, use_min):
    """sym_min / sym_max of an index expression inside a loop scope (shapes/helpers.py): an
    operand is picked only when it is the min / max at every index of the range."""
    env = ShapeEnv()
    i = env.enter_loop_index(0, hi)
    got = (sym_min if use_min else sym_max)(wrap(a * i + c, "int", env), wrap(sympy.Integer(m), "int", env))
    expr = got.expr if isinstance(got, SymInt) else sympy.Integer(got)
    for v in range(hi + 1):
        assert int(expr.xreplace({i: v})) == (min if use_min else max)(a * v + c, m)
    env.exit_loop_index(i)


def test_a_clamp_the_range_proves_is_dropped():
    env = ShapeEnv()
    i = env.enter_loop_index(0, 9)
    assert sym_min(wrap(i + 3, "int", env), wrap(sympy.Integer(12), "int", env)).expr == i + 3
    assert isinstance(sym_min(wrap(i + 3, "int", env), wrap(sympy.Integer(11), "int", env)).expr, sympy.Min)
    env.exit_loop_index(i)


def test_a_symbolic_window_clamp_is_proved_without_a_guard():
    """range(n - 7) runs only when n >= 8, so `Min(n, i + 8)` is `i + 8` inside its body; over
    range(n - 6) it is not (i = n - 7), and neither answer adds a guard."""
    env = ShapeEnv()
    n = env.create_symbol(50, "L['x'].shape[0]")
    guards = list(env.guards)
    i = env.enter_loop_index(0, n.expr - 8)
    assert sym_min(n, wrap(i + 8, "int", env)).expr == i + 8
    assert sym_max(wrap(i, "int", env), wrap(sympy.Integer(0), "int", env)).expr == i
    env.exit_loop_index(i)
    i = env.enter_loop_index(0, n.expr - 7)
    assert isinstance(sym_min(n, wrap(i + 8, "int", env)).expr, sympy.Min)
    env.exit_loop_index(i)
    assert env.guards == guards


@settings(max_examples=80, deadline=None)
@given(lo_c=st.integers(-3, 3), hi_c=st.integers(-9, 3), a=st.integers(-2, 2), b=st.integers(-2, 2),
       c=st.integers(-9, 9), use_min=st.booleans())
def test_static_clamps_with_a_symbolic_range_hold_at_every_size_and_index(lo_c, hi_c, a, b, c, use_min):
    """sym_min / sym_max of `a * i + b * n + c` and `n` for i in [lo_c, n + hi_c]: a picked
    operand is the min / max for every n >= 2 and every i where the range is non-empty."""
    env = ShapeEnv()
    n = env.create_symbol(50, "L['x'].shape[0]")
    i = env.enter_loop_index(lo_c, n.expr + hi_c)
    got = (sym_min if use_min else sym_max)(wrap(a * i + b * n.expr + c, "int", env), n)
    env.exit_loop_index(i)
    expr = got.expr if isinstance(got, SymInt) else sympy.Integer(got)
    if isinstance(expr, (sympy.Min, sympy.Max)):
        return                                       # not decided: the clamp stays
    for nv in range(2, 30):
        for iv in range(lo_c, nv + hi_c + 1):
            want = (min if use_min else max)(a * iv + b * nv + c, nv)
            assert int(expr.xreplace({i: iv, n.expr: nv})) == want, (expr, nv, iv)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [triangular_windows, shifted_windows])
def test_windows_bounded_by_an_enclosing_index_or_a_size(backend, fn):
    """Clamps the ranges prove (or not) in nested loops and shifted bounds, on random sizes."""
    rng = np.random.default_rng(9)
    check(fn, [(rng.standard_normal(int(rng.integers(0, 15))), int(rng.integers(0, 6))) for _ in range(10)],
          backend)
