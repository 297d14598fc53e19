"""Python int * // % in array-bodied loops run by the native driver (loop_driver.py CHECKED ops):
Python's semantics (floor rounding, big ints, ZeroDivisionError) against the plain Python loop,
with the driver handing the rest of the loop to Python on int64 overflow or a zero divisor."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import array_loops, loops

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    ft.reset()
    array_loops.runs.clear()
    loops.runs.clear()
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


# ------------------------------------------------------------------------------ the LCG random walk:
# Python int * %, a Python float chosen by an if (SELECT), an element written per iteration (STORE):
# element loops, which are native kernels (loops.py: checked int64 ops) rather than driver loops

def native_element_runs():
    return loops.runs["native"] if not (array_loops.runs["native"] or loops.runs["generic"]) else -1


def lcg(pos, seed):
    s = seed
    for i in range(1, pos.shape[0]):
        s = (s * 1103515245 + 12345) % 2147483648
        pos[i] = pos[i - 1] + (1.0 if s % 2 == 0 else -1.0)
    return pos


def lcg_int_steps(pos, seed, up, down):
    s = seed
    for i in range(pos.shape[0] - 1):
        s = (s * 69069 + 1) % 4294967296
        pos[i + 1] = pos[i] + (up if s % 3 == 0 else down)
    return pos, s


def lcg_backwards(pos, seed):
    s = seed
    for i in range(pos.shape[0] - 2, -1, -1):
        s = (s * 1103515245 + 12345) % 2147483648
        pos[i] = pos[i + 1] * 0.5 + (2.0 if s % 4 == 0 else 0.25)
    return pos


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [1, 2, 3, 50, 2000])
def test_lcg(backend, n):
    compiled = ft.compile(lcg, backend=backend, dynamic=True)
    for seed in (12345, 7):
        pos = np.random.default_rng(seed + n).standard_normal(n)
        got, want = compiled(pos.copy(), seed), lcg(pos.copy(), seed)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    if backend == "llvm" and n >= 3:
        assert native_element_runs() >= 2 and loops.runs["resumed"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_lcg_int_steps(backend, dtype):
    compiled = ft.compile(lcg_int_steps, backend=backend, dynamic=True)
    for n, seed in ((40, 3), (300, 99)):
        pos = np.zeros(n, dtype)
        same(compiled(pos.copy(), seed, 2, -1), lcg_int_steps(pos.copy(), seed, 2, -1))
    if backend == "llvm":
        assert native_element_runs() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_lcg_backwards(backend):
    compiled = ft.compile(lcg_backwards, backend=backend, dynamic=True)
    for n in (5, 64):
        pos = np.random.default_rng(n).standard_normal(n)
        np.testing.assert_array_equal(compiled(pos.copy(), 5), lcg_backwards(pos.copy(), 5))
    if backend == "llvm":
        assert native_element_runs() == 2


def test_lcg_read_only_raises_like_numpy():
    compiled = ft.compile(lcg, dynamic=True)
    pos = np.zeros(30)
    pos.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        lcg(pos, 3)
    with pytest.raises(ValueError, match="read-only"):
        compiled(pos, 3)


def test_lcg_strided_destination():
    compiled = ft.compile(lcg, dynamic=True)
    base = np.random.default_rng(1).standard_normal(80)
    got, want = base.copy(), base.copy()
    compiled(got[::3], 11)
    lcg(want[::3], 11)
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------ Python floats (FLOAT ops)

def euler_time(y, dt, n):
    t = 0.0
    for _ in range(n):
        w = 1.0 if t < 0.5 else 2.0 * t
        y = y + dt * (t - y) * w
        t = t + dt
    return y, t


def float_counter(y, h, n):
    for _ in range(n):
        h = h - 0.25
        y = y + 1.0 / h                   # ZeroDivisionError when h reaches 0.0
    return y, h


def nan_tests(y, a, n):
    c = 0.0
    t = a
    for _ in range(n):
        t = t * 1.5
        c = c + (1.0 if t != t else 0.0) + (0.5 if t >= 2.0 else 0.0) + (0.25 if t == t else 0.0)
        y = y + t
    return y, t, c


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 2, 5, 400])
def test_carried_python_float(backend, n):
    compiled = ft.compile(euler_time, backend=backend, dynamic=True)
    for dt in (0.01, 0.3):
        y = np.random.default_rng(n).standard_normal(6)
        same(compiled(y.copy(), dt, n), euler_time(y.copy(), dt, n))
    if backend == "llvm" and n >= 2:
        assert array_loops.runs["native"] == 2 and array_loops.runs["generic"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_division_by_zero_raises_like_python(backend):
    compiled = ft.compile(float_counter, backend=backend, dynamic=True)
    same(compiled(np.ones(3), 1.1, 30), float_counter(np.ones(3), 1.1, 30))
    with pytest.raises(ZeroDivisionError):
        float_counter(np.ones(3), 2.0, 30)
    with pytest.raises(ZeroDivisionError):
        compiled(np.ones(3), 2.0, 30)
    if backend == "llvm":
        assert array_loops.runs["native"] == 2 and array_loops.runs["generic"] == 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("a", [0.1, float("nan"), float("inf"), -3.0])
def test_float_comparisons_and_nan(backend, a):
    compiled = ft.compile(nan_tests, backend=backend, dynamic=True)
    got, want = compiled(np.zeros(4), a, 20), nan_tests(np.zeros(4), a, 20)
    np.testing.assert_array_equal(got[0], want[0])
    assert (got[1] == want[1] or (got[1] != got[1] and want[1] != want[1])) and type(got[1]) is float
    assert got[2] == want[2] and type(got[2]) is float
    if backend == "llvm":
        assert array_loops.runs == {"native": 1}


def wide_lcg(y, seed, n):
    s = seed
    for _ in range(n):
        s = (s * 25214903917 + 11) % 281474976710656       # 48-bit state: products past int64
        y = y + (s >> 47)
    return y, s


def lcg_2_32(y, seed, n):
    s = seed
    for _ in range(n):
        s = (s * 1664525 + 1013904223) % 4294967296
        y = y + s % 5
    return y, s


@pytest.mark.parametrize("backend", BACKENDS)
def test_big_state_lcg(backend):
    compiled = ft.compile(wide_lcg, backend=backend, dynamic=True)
    for seed in (1, 2 ** 47 + 12345):
        same(compiled(np.zeros(3), seed, 25), wide_lcg(np.zeros(3), seed, 25))
    array_loops.runs.clear()
    compiled = ft.compile(lcg_2_32, backend=backend, dynamic=True)
    for seed in (3, 2 ** 32 - 5, 2 ** 41):                  # a seed past 2**40 still runs natively
        same(compiled(np.zeros(3), seed, 300), lcg_2_32(np.zeros(3), seed, 300))
    if backend == "llvm":
        assert array_loops.runs == {"native": 3}


def float_mix(y, t, a, b, n):
    c = 0.0
    for _ in range(n):
        t = t * a - b / 3.0
        c = c + (1.0 if t > b else -0.5) + (0.25 if t <= a else 0.0)
        y = y + c
    return y, t, c


@settings(max_examples=30, deadline=None)
@given(t=st.floats(allow_nan=True, allow_infinity=True), a=st.floats(-3, 3), b=st.floats(-1e300, 1e300),
       n=st.integers(2, 30))
def test_python_float_arithmetic_is_exact(t, a, b, n):
    ft.reset()
    array_loops.runs.clear()
    compiled = ft.compile(float_mix, dynamic=True)
    got, want = compiled(np.zeros(2), t, a, b, n), float_mix(np.zeros(2), t, a, b, n)
    np.testing.assert_array_equal(got[0], want[0])
    for g, w in zip(got[1:], want[1:]):
        assert type(g) is float and (g == w or (g != g and w != w))
    assert array_loops.runs == {"native": 1}
