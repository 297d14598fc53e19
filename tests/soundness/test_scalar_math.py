"""Python operators on NumPy scalars (`x[0] * x[1]`, `-s`, `abs(s)`) run NumPy's scalar math,
which reports integer overflow ("overflow encountered in scalar multiply") where the ufunc on
arrays wraps silently, and names float errors "in scalar ...": compiled code warns, raises or
stays silent exactly as eager code does (graph.SCALAR_MATH, lower/pointwise.py scalar_* ops)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import BACKENDS

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
BINARY = ("+", "-", "*", "//", "%")
MODES = ("ignore", "warn", "raise")


def outcome(fn, *args):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            out = fn(*args)
        except FloatingPointError as exc:
            out = ("raised", str(exc))
    return out, [str(w.message) for w in rec if issubclass(w.category, RuntimeWarning)]


def same_outcome(fn, args, backend):
    got = outcome(ft.compile(fn, backend=backend, fullgraph=True), *args)
    want = outcome(fn, *args)
    assert got[1] == want[1]
    if isinstance(want[0], tuple):
        assert got[0] == want[0]
    else:
        assert type(got[0]) is type(want[0])
        assert np.array_equal(got[0], want[0], equal_nan=np.asarray(want[0]).dtype.kind == "f")


def make_binary(sym):
    """`x[0] <sym> x[1]` written as an operator (operator.add & co. are library calls)."""
    ns = {}
    exec(f"def fn(x):\n    return x[0] {sym} x[1]\n", ns)
    return ns["fn"]


def unary_neg(x):
    return -x[0]


def unary_abs(x):
    return abs(x[0])


def arrays_wrap_silently(x):
    return x * x + x                        # ufunc loops: no overflow report


def loop_product(x):
    acc = x[0]
    for i in range(1, x.shape[0]):
        acc = acc * x[i]                    # NumPy scalars in a loop node
    return acc


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(INT_DTYPES), st.sampled_from(sorted(BINARY) + ["neg", "abs"]), st.sampled_from(MODES),
       st.sampled_from(BACKENDS), st.data())
def test_integer_scalar_operators(dtype, op, mode, backend, data):
    info = np.iinfo(dtype)
    edge = st.sampled_from([info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.max // 2 + 1, 3])
    x = np.array([data.draw(edge), data.draw(edge)], dtype=dtype)
    fn = unary_neg if op == "neg" else unary_abs if op == "abs" else make_binary(op)
    with np.errstate(all=mode):
        same_outcome(fn, (x,), backend)
    ft.reset()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", MODES)
def test_float_scalar_messages_and_arrays(backend, mode):
    with np.errstate(all=mode):
        same_outcome(make_binary("*"), (np.array([1e308, 10.0]),), backend)
        same_outcome(make_binary("//"), (np.array([1.0, 0.0]),), backend)
        same_outcome(arrays_wrap_silently, (np.array([2 ** 62, 3], dtype=np.int64),), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [2, 40])
def test_scalar_overflow_inside_a_loop(backend, n):
    x = np.full(n, 1 << 20, dtype=np.int64)
    same_outcome(loop_product, (x,), backend)
    same_outcome(loop_product, (np.ones(n, dtype=np.int64),), backend)
