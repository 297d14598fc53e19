"""np.round(x, decimals) and Python's round() of values the graph computes, without a graph break
(issue 23 part 5: `round(loss, 4)` in a log line, `np.round(x, 2)` in a data program). Values,
dtypes, NumPy scalars vs Python numbers, layouts, warnings and exceptions against plain
NumPy/Python, compiled with fullgraph=True."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import frametrace as ft
from helpers import BACKENDS, exactly, outcome, same_outcome


def same(fn, *args, backend="llvm", fullgraph=True):
    return same_outcome(fn, *args, backend=backend, fullgraph=fullgraph, copy=True, strides=True)

SPECIALS = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 2.675, 1.005, -0.0, 0.0, np.nan, np.inf, -np.inf,
                     1e308, -1e-308, 5e-324, 56294995342131.5, 0.285, 1234.5678])


# ------------------------------------------------------------------------------------- np.round

def scaled_round(x, d):
    return np.round(x * 1.0, d)            # the copy fuses with the rounding


def method_round(x, d):
    return x.round(d) + 0


def around(x, d):
    return np.around(x, decimals=d)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("d", [0, 1, 2, 3, 5, 9, 15, 22, 23, 30, -1, -2, -5, -23, -300])
def test_float64_decimals(backend, d):
    ft.reset()
    for fn in (scaled_round, method_round, around):
        same(lambda x, fn=fn: fn(x, d), SPECIALS, backend=backend)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("d", [0, 1, 2, 3, 4, -1, -3])
def test_narrow_floats_stay_narrow(dtype, d):
    """The factor is a Python float: NEP 50 keeps float32 / float16 (NumPy's own weak rule)."""
    with np.errstate(all="ignore"):
        x = SPECIALS.astype(dtype)
    r = same(lambda x: np.round(x, d), x)
    assert r.dtype == dtype


def test_overflowing_factor_breaks_cleanly():
    """float16 at 5 decimals: 1e5 overflows float16 (NumPy warns twice and gives NaN): not traced."""
    def f(x):
        return np.round(x, 5)
    x = np.ones(3, np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = ft.explain(f, x)
    assert e.graph_break_count == 1
    assert "overflows float16" in str(e.break_reasons[0])
    same(f, x, fullgraph=False)


@pytest.mark.parametrize("dtype", [np.float64, np.int16])
@pytest.mark.parametrize("layout", ["c", "f", "strided", "transposed", "negative", "3d", "0d", "empty", "one"])
def test_layouts(layout, dtype):
    """decimals != 0: NumPy's result is C-ordered, F for an F-contiguous input (not K)."""
    base = (np.random.default_rng(1).normal(size=(6, 8)) * 100).astype(dtype)
    x = {"c": base, "f": np.asfortranarray(base), "strided": base[::2, 1::3],
         "transposed": base[::2].T, "negative": base[::-1, ::-2], "0d": np.array(2.675).astype(dtype),
         "3d": base.reshape(2, 3, 8).transpose(1, 2, 0), "empty": base[:0], "one": base[:1, :1]}[layout]
    for d in (0, 2, -1):
        same(lambda x, d=d: np.round(x, d), x)
        same(lambda x, d=d: np.round(x[...], d) * 2, x)


def test_numpy_scalars_and_0d_arrays():
    def f(x):
        s = x.sum()                                       # a NumPy scalar
        return np.round(s, 2), np.round(x[0], -1), np.round(np.float32(s), 1), x[0].round(3)
    same(f, np.linspace(0.1, 9.9, 7))
    same(f, np.linspace(0.1, 9.9, 7).astype(np.float32))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("d", [0, 2, -1, -2])
def test_integers(dtype, d):
    """ints: a copy for decimals >= 0; float64 rint(x / f) * f cast back (wrapping) for < 0."""
    info = np.iinfo(dtype)
    x = np.array([0, 5, 15, 25, 44, 45, 55, 99, 127, info.max, info.min, info.max - 1], dtype=dtype)
    same(lambda x: np.round(x, d), x)
    same(lambda x: x.round(d) * 1, x[::-2])


def test_bools():
    x = np.array([True, False, True])
    same(lambda x: np.round(x), x)                        # float16, as NumPy
    same(lambda x: np.round(x, 1), x, fullgraph=False)    # NumPy's casting error


def test_complex_decimals_zero_traced_and_nonzero_breaks():
    z = np.array([1.5 + 2.5j, -0.5 - 1.5j])
    same(lambda z: np.round(z), z)
    e = ft.explain(lambda z: np.round(z, 1) + 1, z)
    assert e.graph_break_count == 1 and "complex" in str(e.break_reasons[0])


def test_decimals_errors_and_run_time_decimals():
    x = np.arange(4.0)
    same(lambda x: np.round(x, 1.5), x, fullgraph=False)  # NumPy's TypeError

    def runtime(x, d):
        return np.round(x, d)
    same(runtime, x, 2)                                   # an int argument is a constant (guarded)
    same(runtime, x, -1)


@settings(max_examples=40, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(0, 12),
                    elements=st.floats(allow_nan=True, allow_infinity=True, width=64)),
       d=st.integers(-12, 25))
def test_np_round_random(x, d):
    ft.reset()
    same(lambda x: np.round(x, d), x)


# ----------------------------------------------------------------------------- Python's round()

def log_line_values(x):
    """How training loops write it: the loss and stats rounded for a log dict."""
    loss = float(np.mean(x ** 2))
    stats = {"loss": round(loss, 4), "max": round(x.max(), 2), "steps": round(loss * 10),
             "min": round(x.min())}
    return stats


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_in_a_log_dict(backend):
    for x in (np.linspace(-2, 3, 11), np.array([2.675, 0.285]), np.array([0.5, 1.5, 2.5])):
        ft.reset()
        same(log_line_values, x, backend=backend)


class Scheduler:
    """A user class: the rounded learning rate feeds arithmetic on arrays."""

    def __init__(self, lr):
        self.lr = lr

    def step(self, grads):
        scale = round(float(np.abs(grads).max()), 3)
        return grads * (self.lr / (scale + 1.0))


def test_round_of_a_python_float_feeds_arrays():
    s = Scheduler(0.1)
    same(s.step, np.linspace(-1.0, 2.0, 9))


def python_float_round(x, nd):
    v = float(x[0])
    return round(v, nd), round(v), round(x[1] * 1.0, nd)


@settings(max_examples=60, deadline=None)
@given(a=st.floats(allow_nan=True, allow_infinity=True), b=st.floats(allow_nan=False, allow_infinity=False),
       nd=st.integers(-310, 330))
def test_python_round_random(a, b, nd):
    """round(float, n) is Python's correctly rounded float.__round__; round(float) raises on
    NaN / inf as Python does; round(np.float64, n) is NumPy's algorithm."""
    ft.reset()
    f = ft.compile(python_float_round, fullgraph=True)
    x = np.array([a, b])
    want, got = outcome(python_float_round, (x, nd), copy=True), outcome(f, (x, nd), copy=True)
    assert got[0] == want[0] and got[2] == want[2], (got, want)
    if want[0] == "ok":
        exactly(got[1], want[1], strides=True)
    else:
        assert got[1] == want[1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint8])
def test_round_of_numpy_scalars(dtype):
    def f(x):
        s = x[1]
        return round(s), round(s, 1), round(s, 0), round(s, -1), round(x.sum(), 2)
    with np.errstate(all="ignore"):
        x = np.array([1, 2.5, 3.25, 7.5]).astype(dtype)
    same(f, x)


def test_round_errors_as_python():
    same(lambda x: round(x[0]), np.array([np.nan]))                       # ValueError from round()
    same(lambda x: round(float(x[0])), np.array([np.inf]))                # OverflowError
    same(lambda x: round(x[0]), np.array([True]), fullgraph=False)        # np.bool has no __round__
    same(lambda x: round(x), np.array(2.5), fullgraph=False)              # nor ndarray
    same(lambda x: round(float(x[0]), 1.5), np.array([1.0]), fullgraph=False)


def test_round_of_python_number_inputs():
    def f(x, v, n):
        return x * round(v, 2), round(n, -1), round(v), round(n)
    same(f, np.arange(3.0), 2.675, 125)
    same(f, np.arange(3.0), -0.5, 135)
    assert ft.stats().graph_breaks == 0
