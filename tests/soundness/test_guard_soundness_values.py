"""Guard soundness for values: dtype, ndim, strides and contiguity, the read-only flag,
aliasing between arguments, and Python scalar arguments (int, float, bool, None). After a
compile each is changed; the compiled function must notice and return the eager result.
"""
from __future__ import annotations

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same
from soundness_helpers import BACKENDS, compiled_count, run


# ---- arrays: dtype, ndim, strides, read-only, aliasing ------------------------------------------

def add_scaled(x, y):
    return x + 2 * y


LAYOUTS = {
    "C": lambda a: a.copy(),
    "F": lambda a: np.asfortranarray(a),
    "T": lambda a: np.ascontiguousarray(a.T).T,
    "strided": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    "neg": lambda a: np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1],
    "bcast0": lambda a: np.broadcast_to(a[:1], a.shape),
}


def test_dtype_and_ndim_changes(backend):
    c = ft.compile(add_scaled, backend=backend)
    for x, y in [(np.ones((2, 3)), np.ones(3)),
                 (np.ones((2, 3), np.float32), np.ones(3, np.float32)),
                 (np.ones((2, 3), np.int32), np.ones(3, np.int32)),
                 (np.ones((2, 3), bool), np.ones(3, bool)),
                 (np.ones((2, 3), np.int64), np.ones(3, np.int8)),
                 (np.ones((2, 2, 3)), np.ones(3)),
                 (np.ones(3), np.ones(3)),
                 (np.ones(()), np.ones(3)),
                 (np.float64(1.0), np.ones(3)),
                 (np.ones((2, 3)), np.ones(3))]:
        run(add_scaled, x, y, compiled=c)


@pytest.mark.parametrize("first", ["C", "F", "neg"])
def test_strides_and_contiguity(backend, first):
    c = ft.compile(add_scaled, backend=backend)
    base = np.arange(12.0).reshape(3, 4)
    run(add_scaled, LAYOUTS[first](base), base[0].copy(), compiled=c)
    for make in LAYOUTS.values():
        run(add_scaled, make(base * 1.5), make(base)[1], compiled=c)
        run(add_scaled, make(base), make(base), compiled=c)


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_in_place_write_through_views_of_any_layout(backend, dynamic):
    def f(x, y):
        x[1:] += y[:-1]
        return x

    c = ft.compile(f, backend=backend, dynamic=dynamic)
    base = np.arange(20.0).reshape(4, 5)
    for name, make in LAYOUTS.items():
        if name == "bcast0":
            continue                  # read-only view: covered below
        run(f, make(base), make(base * 2), compiled=c)


def test_read_only_flag(backend):
    def f(x):
        x += 1
        return x

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    run(f, x, compiled=c)
    ro = np.arange(3.0)
    ro.setflags(write=False)
    run(f, ro, compiled=c)                      # ValueError as NumPy
    run(f, np.broadcast_to(np.arange(3.0), (2, 3))[0], compiled=c)
    run(f, np.arange(3.0), compiled=c)          # writeable again


def test_read_only_first(backend):
    def f(x):
        x[0] = 5
        return x.sum()

    c = ft.compile(f, backend=backend)
    ro = np.arange(3.0)
    ro.setflags(write=False)
    run(f, ro, compiled=c)
    run(f, np.arange(3.0), compiled=c)
    run(f, ro, compiled=c)


def test_read_only_arguments_that_are_only_read(backend):
    def f(x):
        return x * 2, x[::-1]

    c = ft.compile(f, backend=backend)
    ro = np.arange(3.0)
    ro.setflags(write=False)
    run(f, np.arange(3.0), compiled=c)
    got = run(f, ro, compiled=c)
    assert not got[1].flags.writeable           # a view of a read-only array is read-only
    assert np.shares_memory(got[1], ro)


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_aliasing_arguments(backend, dynamic):
    """x and y the same array (or overlapping views): in-place updates must see it."""
    def f(x, y):
        x += 1
        return y * 2

    c = ft.compile(f, backend=backend, dynamic=dynamic)
    a = np.arange(4.0)
    run(f, np.arange(4.0), np.arange(4.0), compiled=c)
    a = np.arange(4.0)
    b = a.copy()
    assert_same(c(a, a), f(b, b))
    np.testing.assert_array_equal(a, b)
    a = np.arange(5.0)
    b = a.copy()
    assert_same(c(a[1:], a[:-1]), f(b[1:], b[:-1]))   # overlapping views
    np.testing.assert_array_equal(a, b)
    a = np.arange(4.0)
    b = a.copy()
    assert_same(c(a, a[::-1]), f(b, b[::-1]))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_overlapping_in_place_copy(backend, dynamic):
    def f(x, y):
        x[...] = y[::-1]
        return x

    c = ft.compile(f, backend=backend, dynamic=dynamic)
    run(f, np.arange(5.0), np.ones(5), compiled=c)
    a = np.arange(5.0)
    b = a.copy()
    assert_same(c(a, a), f(b, b))                # NumPy buffers the overlapping copy
    np.testing.assert_array_equal(a, b)


# ---- Python scalars ------------------------------------------------------------------------------

def test_int_arguments(backend):
    def f(x, n):
        return x[:n] * n

    c = ft.compile(f, backend=backend)
    x = np.arange(10.0)
    for n in (3, 4, 5, 0, 1, -2, 20, 4):
        run(f, x, n, compiled=c)


def test_float_arguments_do_not_recompile(backend):
    def f(x, a):
        return x * a + a

    c = ft.compile(f, backend=backend)
    x = np.arange(4.0)
    run(f, x, 0.5, compiled=c)
    n = compiled_count()
    for a in (1.5, -2.0, 0.0, 1.0, float("nan"), float("inf"), 1e300):
        run(f, x, a, compiled=c)
    assert compiled_count() == n, ft.stats()
    # a type change is a different program: int32 * 2.0 is float64, int32 * 2 is int32
    xi = np.arange(4, dtype=np.int32)
    run(f, xi, 2.0, compiled=c)
    run(f, xi, 2, compiled=c)
    run(f, xi, True, compiled=c)
    run(f, xi, np.float32(2.0), compiled=c)
    run(f, xi, np.int8(2), compiled=c)
    run(f, xi, 2.5, compiled=c)


@pytest.mark.parametrize("be", BACKENDS)
def test_dynamic_int_argument_out_of_dtype_range_raises(be):
    # NEP 50: int32_array * 2**40 raises OverflowError. Once the int argument is dynamic
    # (automatic dynamic after 2, 3), the llvm kernels take it as a run-time value; the
    # wrapper range-checks it first (lower/weak_ints.py), as the numpy backend raises.
    def f(x, n):
        return x * n

    c = ft.compile(f, backend=be)
    xi = np.arange(3, dtype=np.int32)
    for n in (2, 3, 2**40, -2**40, 2**31, 4):
        run(f, xi, n, compiled=c)


def test_float_argument_used_in_control_flow(backend):
    def f(x, a):
        if a > 1.0:
            return x * a
        return x - a

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    for a in (2.0, 0.5, 3.0, 1.0, 0.25):
        run(f, x, a, compiled=c)


def test_bool_arguments(backend):
    def f(x, flag):
        if flag:
            return x + 1
        return x * flag

    c = ft.compile(f, backend=backend)
    x = np.arange(3)
    with ft.config.patch(cache_size_limit=32):
        for flag in (True, False, True, 1, 0, 2, np.True_):
            run(f, x, flag, compiled=c)
        xb = np.array([True, False])
        for flag in (True, 1, False, 0):           # bool * True is bool; bool * 1 is int64
            run(f, xb, flag, compiled=c)
        assert ft.stats().eager_fallbacks == 0


def optional_add(x, y=None):
    if y is None:
        return x * 2
    return x + y


def test_array_then_none(backend):
    c = ft.compile(optional_add, backend=backend)
    x = np.arange(3.0)
    run(optional_add, x, np.ones(3), compiled=c)
    run(optional_add, x, None, compiled=c)
    run(optional_add, x, compiled=c)
    run(optional_add, x, np.ones(1, np.int32), compiled=c)
    run(optional_add, x, 5.5, compiled=c)


def test_none_then_array(backend):
    # The guard on y=None, re-evaluated alone by the slow explainer (trace/compile.py
    # failing_guards) when an array comes in, gives an array: a failing guard, not an error.
    c = ft.compile(optional_add, backend=backend)
    x = np.arange(3.0)
    run(optional_add, x, compiled=c)
    run(optional_add, x, np.ones(3), compiled=c)


def test_int_argument_then_array(backend):
    # After a compile with y=5 (an int guarded by value), calling with an array makes the
    # slow explainer (trace/compile.py failing_guards, via convert_frame.guard_failures)
    # evaluate `array == 5`: a failing guard and a recompile, not a ValueError.
    def g(x, y):
        return x + y

    c = ft.compile(g, backend=backend)
    run(g, np.arange(3.0), 5, compiled=c)
    run(g, np.arange(3.0), np.ones(3), compiled=c)


def test_scalar_array_vs_numpy_scalar_vs_python_scalar(backend):
    def f(x, s):
        return x * s

    c = ft.compile(f, backend=backend)
    x = np.arange(3, dtype=np.float32)
    for s in (2.0, np.float64(2.0), np.array(2.0), np.float32(2.0), 2, np.int64(2),
              np.array([2.0])):
        run(f, x, s, compiled=c)


def test_size_specialisation_and_branch(backend):
    def f(x):
        if x.shape[0] == 4:
            return x * 10
        if x.shape[0] < 3:
            return x - 1
        return x + x.shape[0]

    c = ft.compile(f, backend=backend)
    for n in (4, 5, 6, 2, 4, 0, 1, 3, 7, 4):
        run(f, np.arange(float(n)), compiled=c)


def test_equal_sizes_duck_sizing(backend):
    def f(x, y):
        return x + y

    c = ft.compile(f, backend=backend)
    for n, m in ((3, 3), (4, 4), (5, 5), (5, 1), (1, 5), (5, 6), (6, 6), (0, 0), (0, 1)):
        run(f, np.arange(float(n)), np.arange(float(m)), compiled=c)
