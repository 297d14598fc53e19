"""Slice assignments as kernels (lower/schedule.kernel_assign): `u[0, :] = 0` (a constant
NumPy converts to the destination's dtype once, at compile time), `p[-1, :] = p[-2, :]` (a view
read in place) run as kernel steps, so a loop body made of them runs under the native driver
(array_loops.py) instead of a NumPy step per iteration. NumPy's semantics: overlapping source
and destination as if through a copy, negative strides, broadcasting, casting on assignment
(float -> int truncation, the errors and warnings NumPy raises: those assignments stay NumPy's
own), 0-size slices, read-only destinations."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import array_loops
from frametrace.lower import schedule

from helpers import BACKENDS, assert_identical


@pytest.fixture(autouse=True)
def _native_from_the_first_iteration(monkeypatch):
    array_loops.runs.clear()
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 1)


def _same_call(fn, *args, backend="llvm"):
    """fn compiled and eager on copies of args: results and every argument afterwards equal."""
    mine = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    try:
        want = fn(*theirs)
    except Exception as exc:            # NumPy's error, raised by the compiled call alike
        with pytest.raises(type(exc)) as got:
            ft.compile(fn, backend=backend)(*mine)
        assert str(got.value) == str(exc)
        return None
    got = ft.compile(fn, backend=backend)(*mine)
    assert_identical(got, want)
    for m, t in zip(mine, theirs):
        if isinstance(t, np.ndarray):
            assert_identical(m, t)
    return got


class Grid:
    """Boundary conditions the way a CFD code writes them."""

    def __init__(self, wall=0):
        self.wall = wall

    def walls(self, u, v):
        u[0, :] = self.wall
        u[-1, :] = self.wall
        v[:, 0] = 1.5
        v[:, -1] = v[:, -2]            # copy between columns
        return u, v

    def step(self, u, v, nt):
        for _ in range(nt):
            un = u.copy()
            u[1:-1, 1:-1] = un[1:-1, 1:-1] + 0.1 * (un[2:, 1:-1] - un[:-2, 1:-1])
            self.walls(u, v)
            u[:, -1] = u[:, 0]          # periodic
        return u


@pytest.mark.parametrize("backend", BACKENDS)
def test_boundary_conditions(backend):
    rng = np.random.default_rng(0)
    u, v = rng.random((6, 7)), rng.random((6, 7))
    _same_call(Grid().walls, u, v, backend=backend)
    _same_call(Grid(3).step, u, v, 5, backend=backend)


def test_boundary_loop_runs_natively():
    """The time loop's body is kernels only: the driver runs it (it used to run a NumPy
    `dst[...] = src` step per assignment per iteration from the body's wrapper)."""
    rng = np.random.default_rng(1)
    _same_call(Grid().step, rng.random((8, 9)), rng.random((8, 9)), 12)
    assert array_loops.runs["native"] >= 1


def shift_right(x):
    x[1:] = x[:-1]                      # overlap: NumPy reads the source first
    return x


def shift_left(x):
    x[:-1] = x[1:]
    return x


def reverse_into_itself(x):
    x[:] = x[::-1]                      # negative stride, full overlap
    return x


def reverse_rows(a):
    a[::-1, 1:] = a[:, :-1]             # negative-step destination, overlapping source
    return a


def columns_backwards(a):
    a[:, ::-2] = a[:, 1::2][:, : a[:, ::-2].shape[1]] if a.shape[1] % 2 == 0 else a[:, ::-2]
    return a


def broadcast_row(a, r):
    a[1:] = r                           # a row broadcast over rows
    a[:, 0] = a[0, 0]                   # a 0-d view: NumPy's scalar path
    return a


def broadcast_from_itself(a):
    a[1:, :] = a[0, :]                  # broadcast of the destination's own first row
    return a


def empty_slices(a):
    a[3:3] = 7
    a[2:1, :] = a[0:0, :]
    return a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [shift_right, shift_left, reverse_into_itself])
@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_overlapping_vectors(fn, n, backend):
    x = np.arange(n, dtype=np.float64) * 1.5 - 2
    _same_call(fn, x, backend=backend)
    _same_call(fn, x[::-1], backend=backend)             # a negative-stride input
    _same_call(fn, np.arange(2 * n)[::2].astype(np.int32), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [reverse_rows, columns_backwards, broadcast_from_itself, empty_slices])
def test_matrices(fn, backend):
    rng = np.random.default_rng(2)
    for a in (rng.random((5, 6)), np.asfortranarray(rng.random((4, 6))), rng.random((6, 8))[::-1, ::2],
              rng.integers(-9, 9, (3, 4)), np.zeros((0, 4))):
        _same_call(fn, a, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_broadcast_sources(backend):
    rng = np.random.default_rng(3)
    _same_call(broadcast_row, rng.random((4, 5)), rng.random(5), backend=backend)
    _same_call(broadcast_row, rng.random((4, 5)), rng.random((1, 5)), backend=backend)
    _same_call(broadcast_row, np.zeros((4, 5), np.int16), np.arange(5, dtype=np.int16), backend=backend)


def fill(a, value):
    a[1:, ::-1] = value
    return a


def fill_constants(a):
    a[0] = 3.7                          # float -> int: truncated (NumPy's int(3.7))
    a[1] = -3.7
    a[2] = True
    a[3] = np.float32(2.5)
    return a


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.float32, np.float64, np.bool_])
def test_constants_cast_as_numpy(dtype, backend):
    a = np.zeros((4, 3), dtype)
    _same_call(fill_constants, a, backend=backend)
    for value in (0, 1, -0.0, 2.75, 255, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                fill(a.copy(), value)
            except Exception:
                continue                # NumPy refuses: covered below
        _same_call(fill, a, value, backend=backend)


def assign_const(kind):
    def f(a):
        if kind == "nan":
            a[1:] = float("nan")
        elif kind == "inf":
            a[1:] = float("inf")
        elif kind == "big":
            a[1:] = 300
        elif kind == "negative":
            a[1:] = -1
        return a
    return f


@pytest.mark.parametrize("kind, dtype, error", [
    ("nan", np.int32, ValueError), ("inf", np.int64, OverflowError),
    ("big", np.int8, OverflowError), ("negative", np.uint8, OverflowError)])
def test_constant_casting_errors_are_numpys(kind, dtype, error):
    """A constant NumPy cannot convert stays NumPy's assignment: its error, nothing written."""
    fn = assign_const(kind)
    assert schedule.assigned_constant({"nan": float("nan"), "inf": float("inf"), "big": 300,
                                       "negative": -1}[kind], np.dtype(dtype)) is None
    a = np.arange(4, dtype=dtype)
    with pytest.raises(error) as want:
        fn(a.copy())
    with pytest.raises(error) as got:
        ft.compile(fn)(a)
    assert str(got.value) == str(want.value)
    np.testing.assert_array_equal(a, np.arange(4, dtype=dtype))


def copy_cast(a, b):
    a[:, 1:] = b[:, ::-1][:, 1:]        # a view source of another dtype
    return a


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_sources_cast_on_assignment(backend):
    b = np.array([[1.9, -1.9, 2.5, 1e3], [-0.5, 7.25, -7.75, 0.0]])
    for dt in (np.int64, np.int16, np.float32, np.bool_):
        _same_call(copy_cast, np.zeros((2, 4), dt), b, backend=backend)
    _same_call(copy_cast, np.zeros((2, 4)), b.astype(np.int32), backend=backend)


def test_nan_into_int_warns_as_numpy():
    """An array source with NaN into an int destination: NumPy's RuntimeWarning (invalid value
    in cast), the same values."""
    b = np.array([[np.nan, 1.0, 2.0, 3.0]] * 2)
    a = np.zeros((2, 4), np.int64)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        ref = copy_cast(a.copy(), b)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = ft.compile(copy_cast)(a.copy(), b)
    np.testing.assert_array_equal(out, ref)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]


def test_read_only_destination():
    a = np.zeros((3, 3))
    a.flags.writeable = False
    with pytest.raises(ValueError) as want:
        fill(a, 1.0)
    with pytest.raises(ValueError) as got:
        ft.compile(fill)(a, 1.0)
    assert str(got.value) == str(want.value)


def test_kernel_assign_choice():
    """Which assignments are kernels: constants NumPy converts cleanly, views, computed values;
    not: constants NumPy refuses, complex values."""
    assert schedule.assigned_constant(3.7, np.dtype(np.int8)) == 3
    assert schedule.assigned_constant(-0.0, np.dtype(np.float64)) == 0.0
    assert np.signbit(schedule.assigned_constant(-0.0, np.dtype(np.float64)))
    assert schedule.assigned_constant(np.float64(1e300), np.dtype(np.float32)) is None   # overflow warns
    assert schedule.assigned_constant(1j, np.dtype(np.float64)) is None
    assert schedule.assigned_constant("3", np.dtype(np.float64)) is None


def sweep_and_wrap(u, nt):
    for _ in range(nt):
        un = u.copy()
        u[1:-1, 1:-1] = un[1:-1, 1:-1] + 0.1 * (un[2:, 1:-1] - un[:-2, 1:-1])
        u[:, -1] = u[:, 0]              # reads its destination at a column not provably apart
    return u


@pytest.mark.parametrize("shape", [(5, 4), (16, 16), (3, 9)])
def test_two_copies_of_one_destination_in_a_native_body(shape):
    """Two assign kernels of one body each read a copy of the same array (`u_before`): the
    driver keeps both copies alive (the second rebound the name: the first was freed while the
    driver still wrote it, corrupting the heap under dynamic shapes)."""
    u = np.arange(shape[0] * shape[1], dtype=np.float64).reshape(shape)
    f = ft.compile(sweep_and_wrap, dynamic=True)
    assert_identical(f(u.copy(), 20), sweep_and_wrap(u.copy(), 20))
    assert array_loops.runs["native"] >= 1
