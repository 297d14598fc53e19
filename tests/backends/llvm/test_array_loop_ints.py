"""Python int * // % in array-bodied loops run by the native driver (loop_driver.py CHECKED ops):
Python's semantics (floor rounding, big ints, ZeroDivisionError) against the plain Python loop,
with the driver handing the rest of the loop to Python on int64 overflow or a zero divisor."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import array_loops

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    ft.reset()
    array_loops.runs.clear()
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 1)
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


def fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def same(got, want):
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w), (type(g), type(w))
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)
        else:
            assert g == w, (g, w)


def lcg_walk(y, x, seed, n):
    s = seed
    for _ in range(n):
        s = (s * 1103515245 + 12345) % 2147483648
        y = y + (s % 7 - 3) * x
    return y, s


def grows_past_int64(y, s, n):
    for _ in range(n):
        s = s * 3 - 1
        y = y + 1.0
    return y, s


def floor_ops(y, s, d, n):
    for _ in range(n):
        s = s // d + s % d + 5
        y = y * 0.5 + s
    return y, s


def divisor_reaches_zero(y, s, d, n):
    for _ in range(n):
        d = d - 1
        s = s + 100 // d                    # zero after `d` iterations
        y = y + 1.0
    return y, s, d


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 3, 40, 300])
def test_lcg_walk(backend, n):
    compiled = ft.compile(lcg_walk, backend=backend, dynamic=True)
    rng = np.random.default_rng(n)
    for seed in (12345, 987654321):
        args = (rng.standard_normal(16), rng.standard_normal(16), seed, n)
        same(compiled(*fresh(args)), lcg_walk(*fresh(args)))
    if backend == "llvm" and n >= 3:
        assert array_loops.runs["native"] >= 2 and array_loops.runs["generic"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_overflow_hands_back_to_python(backend):
    compiled = ft.compile(grows_past_int64, backend=backend, dynamic=True)
    for s, n in ((7, 60), (-5, 90), (2, 30)):
        same(compiled(np.ones(5), s, n), grows_past_int64(np.ones(5), s, n))
    if backend == "llvm":
        assert array_loops.runs["native"] >= 2 and array_loops.runs["generic"] >= 2   # big ints: Python


@settings(max_examples=25, deadline=None)
@given(s=st.integers(-10**6, 10**6), d=st.sampled_from([-7, -3, 2, 3, 5, 11]), n=st.integers(2, 40))
def test_floor_division_and_modulo_round_like_python(s, d, n):
    ft.reset()
    compiled = ft.compile(floor_ops, dynamic=True)
    same(compiled(np.ones(4), s, d, n), floor_ops(np.ones(4), s, d, n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_divisor_raises_like_python(backend):
    compiled = ft.compile(divisor_reaches_zero, backend=backend, dynamic=True)
    same(compiled(np.ones(3), 5, 8, 6), divisor_reaches_zero(np.ones(3), 5, 8, 6))    # never zero
    for d in (9, 30):
        with pytest.raises(ZeroDivisionError):
            divisor_reaches_zero(np.ones(3), 5, d, 40)
        with pytest.raises(ZeroDivisionError):
            compiled(np.ones(3), 5, d, 40)
    if backend == "llvm":
        assert array_loops.runs["native"] >= 2 and array_loops.runs["generic"] >= 2   # Python raises


def test_lcg_walk_takes_the_native_driver():
    compiled = ft.compile(lcg_walk, dynamic=True)
    args = (np.zeros(8), np.ones(8), 1, 5000)
    same(compiled(*fresh(args)), lcg_walk(*fresh(args)))
    assert array_loops.runs == {"native": 1}
    assert ft.stats().frames_compiled == 1
