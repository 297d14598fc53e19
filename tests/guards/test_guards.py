"""Guards: generated as Python, covering what the trace assumed, explained when they fail."""
import logging

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

SCALE = 2.0
OFFSET = 3


def uses_global(x):
    return x * SCALE + OFFSET


def entry_of(f, i=0):
    return f._frametrace_cache.entries[i]


def test_array_guards_name_type_dtype_ndim_and_static_sizes():
    f = ft.compile(lambda x: x + 1, dynamic=False)
    f(np.ones((2, 3), dtype=np.float32))
    names = [g.name for g in entry_of(f).info.guards]
    assert "type(L['x']) is numpy.ndarray" in names
    assert "L['x'].dtype == float32" in names
    assert "L['x'].ndim == 2" in names
    assert "L['x'].shape[0] == 2" in names and "L['x'].shape[1] == 3" in names


def test_dynamic_guards_come_from_the_shape_env():
    f = ft.compile(lambda x, y: x + y, dynamic=True)
    f(np.ones(5), np.ones(5))
    names = [g.name for g in entry_of(f).info.guards]
    assert "L['x'].shape[0] == L['y'].shape[0]" in names       # duck sizing
    assert "2 <= L['x'].shape[0]" in names                       # range of a backed size
    assert "L['x'].shape[0] == 5" not in names                  # not specialised


def test_failure_reasons_are_exact():
    f = ft.compile(lambda x: x * 2, dynamic=False)
    f(np.ones(4))
    info = entry_of(f).info
    assert info.failing_guards((np.ones(5),)) == ["L['x'].shape[0] == 4"]
    assert info.failing_guards((np.ones(4, dtype=np.int32),)) == ["L['x'].dtype == float64"]
    assert info.failing_guards(([1.0],))[0] == "type(L['x']) is numpy.ndarray"
    assert entry_of(f).check(np.ones(4)) and not entry_of(f).check(np.ones(5))


def test_recompile_log_names_the_failing_guard(caplog):
    f = ft.compile(lambda x: x * 2, dynamic=False)
    with caplog.at_level(logging.INFO, logger="frametrace.recompiles"):
        f(np.ones(4))
        f(np.ones(6))
    text = caplog.text
    assert "Recompiling function <lambda>" in text
    assert "- 0/0: L['x'].shape[0] == 4" in text or "L['x'].shape[0] == 4" in text
    assert "ft.mark_dynamic(x, 0)" in text and "FRAMETRACE_DYNAMIC_SOURCES=\"L['x']\"" in text


def test_globals_are_guarded():
    global SCALE, OFFSET
    f = ft.compile(uses_global)
    x = np.arange(3.0)
    assert_same(f(x), uses_global(x))
    old = SCALE, OFFSET
    try:
        SCALE, OFFSET = -1.0, 7
        assert_same(f(x), uses_global(x))       # float and int globals changed: recompile
    finally:
        SCALE, OFFSET = old
    assert ft.stats().unique_graphs == 2


def test_closure_cells_defaults_and_called_functions_are_guarded():
    def make(k):
        def g(x, scale=2.0):
            return x * k * scale
        return g
    x = np.arange(4.0)
    g1 = make(3)
    f = ft.compile(g1)
    assert_same(f(x), g1(x))
    g1.__defaults__ = (5.0,)
    f2 = ft.compile(g1)
    assert_same(f2(x), g1(x))

    def helper(x):
        return x + 1

    def calls(x, fn):
        return fn(x) * 2
    c = ft.compile(calls)
    assert_same(c(x, helper), calls(x, helper))
    assert_same(c(x, np.negative), calls(x, np.negative))   # a different callee: recompile
    assert_same(c(x, helper), calls(x, helper))


def test_int_and_float_arguments():
    def f(x, n, a):
        return x * n + a
    c = ft.compile(f)
    x = np.arange(3.0)
    for n, a in [(2, 0.5), (2, 1.5), (3, 1.5), (4, 2.5)]:
        assert_same(c(x, n, a), f(x, n, a))
    s = ft.stats()
    assert s.unique_graphs == 2      # floats never recompile; the int went dynamic at its first change


@pytest.mark.parametrize("make", [
    lambda a: a[::2], lambda a: a[::-1], lambda a: a.T, lambda a: np.asfortranarray(a)])
def test_layouts_do_not_change_results(make):
    f = ft.compile(lambda x: np.sin(x) + x.sum(axis=0))
    base = np.arange(24.0).reshape(4, 6)
    for a in (base, make(base)):
        assert_same(f(a), np.sin(a) + a.sum(axis=0))


def test_read_only_argument_mutation_raises_like_numpy():
    def inc(x):
        x += 1
        return x
    f = ft.compile(inc)
    a = np.ones(3)
    a.flags.writeable = False
    with pytest.raises(ValueError):
        f(a)
