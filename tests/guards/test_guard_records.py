"""Guard records: the Python check, the native check and the text are generated from the same
record and agree with an independent statement of the guard on random values (NaN, -0.0, inf,
complex, big ints, arrays of other layouts, functions with other defaults)."""
import math
import struct
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csrc_free_runtime.native import AVAILABLE, NATIVE_MISS
from frametrace.backends.llvm.native_entry import build_native_entry
from frametrace.guards.builder import GuardBuilder
from frametrace.guards.failures import failing_guards, recompile_advice
from frametrace.guards.kinds import GuardKind
from frametrace.sources import AttrSource, DefaultsSource, LocalSource, ShapeSource
from frametrace.trace.entry import build_entry

X = LocalSource("x")
MISS = object()


def checks(builder, argnames=("x",)):
    """(python check, native check or None) of the builder's guards: True when they pass."""
    ns = dict(builder.namespace, ___MISS=MISS, ___G={})
    _, check, _ = build_entry(argnames, builder.guards, [], None, [], "True", ns)
    native = None
    if AVAILABLE:
        entry = build_native_entry(argnames, builder.guards, [], None, [], "True", ns, None, None, "t")
        if entry is not None:
            native = lambda *v: entry.fn(*v) is not NATIVE_MISS     # noqa: E731
    return check, native


def bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", v))[0]


def exactly(a, b) -> bool:
    """The independent statement of an equality guard: same type, same value, floats by bits
    (any NaN equals any NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(b, float):
        return (a != a and b != b) or bits(a) == bits(b)
    if isinstance(b, complex):
        return exactly(a.real, b.real) and exactly(a.imag, b.imag)
    return a == b


SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, float(np.float64(np.nan) * -1), 1.5, -2.0, 1e308, 5e-324]
SCALARS = st.one_of(
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.booleans(), st.none(),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(SPECIAL),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.sampled_from([complex(0.0, -0.0), complex(-0.0, 0.0), complex(math.inf, 1.0), complex(math.nan, 0.0)]),
    st.sampled_from([2 ** 63 - 1, -(2 ** 63), 2 ** 63, 2 ** 64, "a", b"b"]))


@settings(max_examples=150, deadline=None)
@given(SCALARS, st.lists(SCALARS, min_size=1, max_size=6))
def test_equality_guard_python_native_and_text_agree(value, probes):
    b = GuardBuilder()
    b.equals(X, value)
    check, native = checks(b)
    kinds = [g.kind for g in b.guards]
    assert kinds == [GuardKind.TYPE_MATCH, GuardKind.EQUALS_MATCH]
    text = b.guards[1].name
    assert text == ("L['x'] is nan" if isinstance(value, float) and value != value else f"L['x'] == {value!r}")
    for v in [value] + probes:
        want = exactly(v, value)
        assert check(v) is want, (value, v)
        if native is not None:
            assert native(v) is want, (value, v)
        assert (failing_guards(b.guards, b.namespace, ("x",), (v,)) == []) is want


def test_simple_scalars_compile_natively():
    if not AVAILABLE:
        pytest.skip("native entries need CPython's C API through ctypes")
    for value in (0.0, -0.0, math.nan, math.inf, 1.5, 3, -(2 ** 63), True, None):
        b = GuardBuilder()
        b.equals(X, value)
        assert checks(b)[1] is not None, value


ARRAYS = [np.ones(3), np.ones(4), np.ones(3, np.float32), np.ones((3, 1)), np.ones((3, 2))[:, 0],
          np.asfortranarray(np.ones((3, 2))), np.ones((3, 2)), np.ones((2, 3)).T, np.zeros(0), 1.0, [1.0],
          np.ones(3).view(np.recarray)]


@pytest.mark.parametrize("i", range(len(ARRAYS) - 3))
def test_array_guards_python_native_and_text_agree(i):
    a = ARRAYS[i]
    b = GuardBuilder()
    b.type(X, a)
    b.dtype(X, a.dtype)
    b.ndim(X, a.ndim)
    for d, n in enumerate(a.shape):
        b.size(ShapeSource(X, d), n)
    b.strides(X, a.strides)
    if a.flags.c_contiguous or a.flags.f_contiguous:
        b.layout(X, "C" if a.flags.c_contiguous else "F")
    check, native = checks(b)
    if AVAILABLE:
        assert native is not None
    assert f"L['x'].dtype == {a.dtype.name}" in [g.name for g in b.guards]
    for v in ARRAYS:
        want = type(v) is np.ndarray and v.dtype == a.dtype and v.shape == a.shape and v.strides == a.strides \
            and (not b.guards[-1].kind == GuardKind.LAYOUT or
                 (v.flags.c_contiguous if b.guards[-1].payload == "C" else v.flags.f_contiguous))
        assert check(v) is want
        if native is not None:
            assert native(v) is want


def _fn(i=2.0, j=3):
    return lambda v, i=i, j=j: v * i + j


def test_function_guards_read_code_and_defaults_not_identity():
    f0 = _fn()
    b = GuardBuilder()
    b.type(X, f0)
    b.code(X, f0)
    b.length(AttrSource(X, "__defaults__"), 2)          # a function's defaults: a tuple or None
    b.equals(DefaultsSource(X, 0), 2.0)
    b.equals(DefaultsSource(X, 1), 3)
    check, native = checks(b)
    if AVAILABLE:
        assert native is not None
    assert "L['x'].__code__ is <code _fn.<locals>.<lambda>>" in [g.name for g in b.guards]
    for v, want in [(_fn(), True), (f0, True), (_fn(-0.0), False), (_fn(2.0, 4), False), (lambda v: v, False),
                    (lambda v, i=2.0, j=3: v * i + j, False), (1.0, False)]:
        assert check(v) is want
        if native is not None:
            assert native(v) is want
    g = _fn()
    g.__defaults__ = (2.0,)          # fewer defaults than traced: rejected, never read past the end
    assert check(g) is False and (native is None or native(g) is False)
    g.__defaults__ = None
    assert check(g) is False and (native is None or native(g) is False)


def test_alias_and_builtin_guards():
    b = GuardBuilder()
    b.alias(X, LocalSource("y"), False)
    b.builtin_not_shadowed(None, "len")
    check, native = checks(b, ("x", "y"))
    a = np.ones(2)
    assert check(a, np.ones(2)) and not check(a, a)
    if native is not None:
        assert native(a, np.ones(2)) and not native(a, a)
    assert [g.name for g in b.guards] == ["(L['x'] is L['y']) == False", "'len' not in G"]


def test_recompile_advice_is_read_from_records():
    b = GuardBuilder()
    b.size(ShapeSource(X, 1), 10)
    b.equals(LocalSource("n"), 3)
    b.equals(LocalSource("flag"), True)
    advice = recompile_advice(b.guards)
    assert "ft.mark_dynamic(x, 1)" in advice and "FRAMETRACE_DYNAMIC_SOURCES=\"L['x'],L['n']\"" in advice
    assert recompile_advice([b.guards[-1]]) == ""          # a bool is not a size
    assert recompile_advice([]) == ""


def test_kinds_are_one_enum_and_records_are_deduplicated():
    b = GuardBuilder()
    for _ in range(3):
        b.equals(X, -0.0)
        b.type(X, 1.0)
    assert [g.kind for g in b.guards] == [GuardKind.TYPE_MATCH, GuardKind.EQUALS_MATCH]
    assert isinstance(b.guards[0].kind, GuardKind) and b.guards[0].kind == "TYPE_MATCH"
    assert types.FunctionType is type(_fn())


def test_texts_are_the_ones_users_know():
    b = GuardBuilder()
    a = np.ones((2, 3), np.float32)
    b.type(X, a)
    b.dtype(X, a.dtype)
    b.ndim(X, 2)
    b.size(ShapeSource(X, 1), 3)
    b.layout(X, "F")
    b.strides(X, (4, 8))
    b.length(LocalSource("t"), 2)
    b.dict_keys(LocalSource("d"), ["a", 1])
    b.identity(LocalSource("m"), np)
    b.equals(LocalSource("r"), range(3))
    b.equals(LocalSource("z"), -0.0)
    b.equals(LocalSource("c"), complex(math.inf, math.nan))
    b.builtin_not_shadowed(None, "len")
    assert [g.name for g in b.guards] == [
        "type(L['x']) is numpy.ndarray", "L['x'].dtype == float32", "L['x'].ndim == 2", "L['x'].shape[1] == 3",
        "L['x'] is F-contiguous", "L['x'].strides == (4, 8)", "len(L['t']) == 2", "list(L['d']) == ['a', 1]",
        "L['m'] is <module numpy>", "type(L['r']) is range", "L['r'] == range(0, 3)", "type(L['z']) is float",
        "L['z'] == -0.0", "type(L['c']) is complex", "L['c'] == (inf+nanj)", "'len' not in G"]
    assert [g.code for g in b.guards][:7] == [
        "type(x) is ___type_0", "x.dtype == ___dtype_1", "x.ndim == 2", "x.shape[1] == 3", "x.flags.f_contiguous",
        "x.strides == (4, 8)", "len(t) == 2"]
