"""Everyday NumPy that stays in the graph (issue 21): literal tables, np.roll by a shift read from
data, int() and math functions of values the graph computes, pow(), np.ndarray, np.mgrid/ogrid,
`x.shape = ...`, slices whose bounds are read from arrays. Each against eager NumPy on both
backends, exceptions included, with fullgraph=True where the construct must not break."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import BACKENDS, assert_same, outcome
from frametrace.ir.numpy_api.shaping import setting_shape_warns


def same_outcome(fn, *args, backend="llvm", fullgraph=True):
    want = outcome(fn, args, copy=True)
    ft.reset()
    got = outcome(ft.compile(fn, backend=backend, fullgraph=fullgraph), args, copy=True)
    assert got[0] == want[0], (got, want)
    assert got[2] == want[2], (got[2], want[2])                  # the same warnings, in order
    if want[0] == "raise":
        assert got[1] == want[1], (got, want)
    else:
        assert_same(got[1], want[1])
    return got[1]


# ------------------------------------------------------------------------------ literal tables

def lattice(x):
    w = np.array([4 / 9, 1 / 9, 1 / 36])
    c = np.array([0, 1, -1])
    return x[:, None] * w + c


def table_of_values(x):
    return np.array([x[0], 1.5, x.shape[0]]), np.array([[x[1], 2], [3, 4]])


def table_dtypes(x):
    return (np.array([1, 2**63]), np.array([True, 2]), np.array([x[0], x[1]], dtype=np.float64),
            np.array((1, 2), dtype=np.int8), np.asarray([[1.0], [2.0]]))


def ragged(x):
    return np.array([[1, 2], [3]]) * x


def narrowing(x):
    return np.array([x[0]], dtype=np.int8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_literal_tables(backend):
    same_outcome(lattice, np.arange(4.0), backend=backend)
    same_outcome(table_of_values, np.arange(3, dtype=np.float32), backend=backend)
    same_outcome(table_dtypes, np.arange(3, dtype=np.float32), backend=backend)
    same_outcome(ragged, np.arange(2), backend=backend, fullgraph=False)    # NumPy's ValueError


def test_literal_tables_are_one_graph_without_recompiles():
    f = ft.compile(lattice, fullgraph=True)
    for n in (3, 5, 9):
        assert_same(f(np.arange(float(n))), lattice(np.arange(float(n))))
    assert ft.stats().unique_graphs <= 2 and ft.stats().graph_breaks == 0


def test_narrowing_a_traced_item_breaks_instead_of_casting():
    # NumPy converts each item as a Python number there (300 into int8 raises): not traced
    with pytest.raises(ft.errors.GraphBreakError):
        ft.compile(narrowing, fullgraph=True)(np.array([300.0]))
    same_outcome(narrowing, np.array([300.0]), fullgraph=False)
    same_outcome(narrowing, np.array([-3.7]), fullgraph=False)


# ------------------------------------------------------------------------- np.roll by data

def drift(F):
    cxs = np.array([0, 1, -1])
    for i, cx in zip(range(3), cxs):
        F[:, i] = np.roll(F[:, i], cx)
    return F


def roll_by(x, s, axis):
    return np.roll(x, s[0], axis=axis)


@pytest.mark.parametrize("backend", BACKENDS)
def test_roll_by_shifts_read_from_an_int_array(backend):
    same_outcome(drift, np.arange(24.0).reshape(8, 3), backend=backend)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 7), m=st.integers(1, 5), shift=st.integers(-20, 20),
       dtype=st.sampled_from([np.int8, np.int64, np.uint8, np.bool_]), axis=st.sampled_from([0, 1, None]),
       flip=st.booleans())
def test_roll_by_data_any_shift(n, m, shift, dtype, axis, flip):
    x = np.arange(n * m, dtype=np.float64).reshape(n, m)
    x = x[::-1] if flip else x
    s = np.array([shift]).astype(dtype) if dtype is not np.uint8 else np.array([abs(shift)], dtype=dtype)
    same_outcome(roll_by, x, s, axis)


# ------------------------------------------------ int(), math.f(), pow() of traced values

def n_steps(x, t_end, dt):
    n = int(np.ceil(t_end / dt))
    return x * n


def int_of_element(x):
    return x * int(x[0]), int(x[1]) + 1


def math_of_values(x):
    d = np.linalg.det(x)
    return x / math.sqrt(d) + math.exp(x[0, 0]) + math.floor(x[1, 1]), math.isnan(x[0, 1])


def powers(x):
    return pow(x[1], 2) + pow(x[0], 0.5), pow(x, 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("t_end,dt", [(1.0, 0.3), (2.0, 0.3), (1.0, 0.0), (np.inf, 1.0), (1e300, 1e-300),
                                      (-1.0, 0.3), (float("nan"), 1.0)])
def test_int_of_numpy_functions_of_python_floats(backend, t_end, dt):
    same_outcome(n_steps, np.ones(3), t_end, dt, backend=backend)


def test_int_of_python_floats_does_not_recompile_per_value():
    f = ft.compile(n_steps, fullgraph=True)
    for t_end in (1.0, 2.0, 3.5, 10.0):
        assert_same(f(np.ones(3), t_end, 0.3), n_steps(np.ones(3), t_end, 0.3))
    assert ft.stats().unique_graphs == 1, ft.stats()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [[np.nan, 1.0], [2.7, -1.5], [-2.7, 1e18], [np.inf, 0.0], [-0.0, 3.0]])
def test_int_of_an_element(backend, x):
    same_outcome(int_of_element, np.array(x), backend=backend)
    same_outcome(int_of_element, np.array(x, dtype=np.float32), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_of_integer_elements_is_exact(backend):
    same_outcome(int_of_element, np.array([2**62, -3], dtype=np.int64), backend=backend)
    same_outcome(int_of_element, np.array([2**63 + 5, 3], dtype=np.uint64), backend=backend)
    same_outcome(int_of_element, np.array([True, False]), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [[[2.0, 0.5], [0.5, 3.0]], [[-1.0, 0.0], [0.0, 1.0]], [[800.0, 0.0], [0.0, 1.0]],
                               [[2.0, np.nan], [0.0, 1.0]]])
def test_math_functions_of_values_the_graph_computes(backend, x):
    same_outcome(math_of_values, np.array(x), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_builtin_pow(backend):
    same_outcome(powers, np.array([4.0, 3.0]), backend=backend)
    same_outcome(powers, np.array([4, 3]), backend=backend, fullgraph=False)    # int ** 0.5, int ** 2
    same_outcome(powers, np.array([4, -3], dtype=np.int8), backend=backend, fullgraph=False)


# ------------------------------------------------------------ np.ndarray, np.mgrid, np.ogrid

def grids(n):
    a = np.ndarray((n, 3), np.float64)
    a[:] = 1
    g = np.mgrid[0:n, 0:3]
    o = np.ogrid[0:n, 1:7:2]
    f = np.mgrid[0:1:0.25, 0:2]
    c = np.mgrid[0:1:5j, 0:2]
    return a + g[0], o[0] + o[1], f, c, np.mgrid[0:n], np.mgrid[1:n:2, -3:0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_ndarray_and_grids(backend):
    for n in (2, 4, 7):
        same_outcome(grids, n, backend=backend)


def test_grids_stay_one_graph_over_sizes():
    f = ft.compile(grids, fullgraph=True)
    for n in (3, 4, 9, 12):
        assert_same(f(n), grids(n))
    assert ft.stats().unique_graphs <= 2, ft.stats()


def test_ndarray_with_a_buffer_is_not_traced():
    def f(x):
        return np.ndarray((2,), buffer=x)
    with pytest.raises(ft.errors.GraphBreakError):
        ft.compile(f, fullgraph=True)(np.arange(2.0))


# ----------------------------------------------------------------------------- x.shape = ...

def reshape_in_place(x):
    y = x * 2
    alias = y
    y.shape = (x.shape[0] // 2, 2)
    return alias, y, alias.shape


def reshape_strided(x):
    y = (x * 2)[::2]
    y.shape = (2, 2)
    return y


def reshape_transposed(x):
    y = (x * 2).reshape(2, 4).T
    y.shape = (8,)
    return y


@pytest.mark.parametrize("backend", BACKENDS)
def test_setting_shape(backend):
    # NumPy >= 2.5 deprecates the setter: the trace leaves it to NumPy (a graph break), which warns
    whole = not setting_shape_warns()
    same_outcome(reshape_in_place, np.arange(8.0), backend=backend, fullgraph=whole)
    same_outcome(reshape_strided, np.arange(8.0), backend=backend, fullgraph=whole)
    same_outcome(reshape_transposed, np.arange(8.0), backend=backend, fullgraph=False)    # AttributeError


def test_a_numpy_that_deprecates_the_setter_runs_it_eagerly(monkeypatch):
    from frametrace.ir.numpy_api import shaping
    monkeypatch.setattr(shaping, "setting_shape_warns", lambda: True)
    with pytest.raises(ft.errors.GraphBreakError, match="deprecated"):
        ft.compile(reshape_in_place, fullgraph=True)(np.arange(8.0))
    ft.reset()
    same_outcome(reshape_in_place, np.arange(8.0), fullgraph=False)


class Grid:
    def __init__(self, values):
        self.values = values


def flatten_input(x):
    alias = x
    x.shape = (x.size,)
    return x * 2, alias, x.shape


def flatten_attribute(g, n):
    g.values.shape = (n, -1)
    return g.values.sum(0), g.values


def flatten_grids(xn, yn):
    Xi, Yi = np.mgrid[0:xn, 0:yn]                    # views of one C-ordered grid
    C = np.linspace(-2.0, 0.5, xn)[Xi] + np.linspace(-1.0, 1.0, yn)[Yi] * 1j   # laid out as Xi
    Xi.shape = Yi.shape = C.shape = xn * yn
    return Xi, Yi, C, (C * C)[Xi > 0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_setting_the_shape_of_an_input_changes_the_callers_object(backend):
    whole = not setting_shape_warns()
    for shape in [(3, 4), (1, 5), (0, 3), (4, 1, 2)]:
        x, want = np.arange(float(np.prod(shape))).reshape(shape), np.arange(float(np.prod(shape)))
        ft.reset()
        doubled, alias, new_shape = ft.compile(flatten_input, backend=backend, fullgraph=whole)(x)
        assert alias is x and x.shape == new_shape == want.shape     # the very object, in place
        assert_same(doubled, want * 2)
        if whole:
            assert ft.stats().graph_breaks == 0
    for n in (2, 3, 6):
        g, ref = Grid(np.arange(12.0)), Grid(np.arange(12.0))
        ft.reset()
        got = ft.compile(flatten_attribute, backend=backend, fullgraph=whole)(g, n)
        want = flatten_attribute(ref, n)
        assert got[1] is g.values and g.values.shape == ref.values.shape
        assert_same(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_setting_the_shape_of_an_input_that_needs_a_copy_raises_numpys_error(backend):
    x = np.arange(24.0).reshape(4, 6)[:, :3]
    with pytest.raises(AttributeError) as want:
        flatten_input(np.arange(24.0).reshape(4, 6)[:, :3])
    with pytest.raises(AttributeError) as got:
        ft.compile(flatten_input, backend=backend)(x)
    assert str(got.value) == str(want.value) and x.shape == (4, 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_setting_the_shape_of_grids_and_their_gathers(backend):
    # np.mgrid's result is C-ordered (np.stack's layout of broadcast rows), and a gather of a
    # 1-d array is laid out as its index: `C.shape = n` is a view of each, traced
    whole = not setting_shape_warns()
    for xn, yn in [(3, 4), (1, 5), (4, 1), (6, 6)]:
        same_outcome(flatten_grids, xn, yn, backend=backend, fullgraph=whole)


def test_stack_and_gather_layouts_are_numpys():
    from frametrace.ir.numpy_api import layout
    rng = np.random.default_rng(7)
    for _ in range(200):
        shape = tuple(int(v) for v in rng.integers(1, 4, size=rng.integers(1, 4)))
        ops = []
        for _ in range(rng.integers(1, 4)):
            base = rng.standard_normal(shape)
            ops.append([base, np.asfortranarray(base), np.broadcast_to(base[..., :1], shape),
                        base[..., ::-1]][rng.integers(0, 4)])
        axis = int(rng.integers(0, len(shape) + 1))
        r = np.stack(ops, axis=axis)
        got = layout._multi_sorted_strides(
            [(list(shape[:axis]) + [1] + list(shape[axis:]), a.strides[:axis] + (0,) + a.strides[axis:])
             for a in ops], list(r.shape), 8)
        assert tuple(got) == r.strides
        idx = ops[0].astype(np.int64) % 3
        r = np.arange(5.0)[idx]
        got = layout._keep(None, [(list(idx.shape), idx.strides, 8)], list(r.shape), 8)
        assert all(g == s for g, s, d in zip(got, r.strides, r.shape) if d > 1)


# ------------------------------------------------------------ slices bounded by array data

def csr_row_sums(vals, ptr):
    out = np.zeros(ptr.shape[0] - 1)
    for i in range(ptr.shape[0] - 1):
        out[i] = vals[ptr[i]:ptr[i + 1]].sum()
    return out


def segments(x, a, b):
    return x[1, a[0]:b[0]] * 2, x[:, a[0]:][:, ::2], x[None, :, b[0]:].sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_csr_rows(backend):
    same_outcome(csr_row_sums, np.arange(10.0), np.array([0, 3, 3, 7, 10]), backend=backend)
    same_outcome(csr_row_sums, np.arange(10.0), np.array([0, 3, 12, -2, 10], dtype=np.int32), backend=backend)


@settings(max_examples=40, deadline=None)
@given(a=st.integers(-9, 9), b=st.integers(-9, 9), dtype=st.sampled_from([np.int64, np.int16, np.uint8]))
def test_slices_bounded_by_data(a, b, dtype):
    a, b = (abs(a), abs(b)) if dtype is np.uint8 else (a, b)
    same_outcome(segments, np.arange(12.0).reshape(2, 6), np.array([a], dtype=dtype), np.array([b], dtype=dtype))


@pytest.mark.parametrize("bad", [np.array([True]), np.array([1.5])])
def test_slice_bounds_of_other_types_raise_numpys_error(bad):
    same_outcome(segments, np.arange(12.0).reshape(2, 6), bad, np.array([3]))


def test_writing_through_a_data_bounded_slice_breaks_but_is_right():
    def f(x, p):
        x[p[0]:p[1]] = 0
        return x
    got = same_outcome(f, np.arange(6.0), np.array([1, 4]), fullgraph=False)
    assert got.tolist() == [0.0, 0.0, 0.0, 0.0, 4.0, 5.0]
