"""Warnings and errors of a compiled call are eager NumPy's: the same categories and messages,
in the same order and number, under every np.errstate mode and warnings filter, with the
exception where NumPy raises (backends/llvm/reports.py; README "What 'same result as NumPy'
means").

The differential test builds small programs from statements that report in different ways: FP
errors of kernels (divide, overflow, invalid), NumPy's own Python warnings from sizes (the mean
of an empty selection, ddof) and from values (nan-functions), NumPy steps that warn as they run
(np.nanvar), NumPy scalar math, and an error (np.nanargmax of an all-NaN column), and compares
each call with eager NumPy, on both backends and over changing sizes. A second one runs
ufuncs, casts and reductions over every pair of dtypes (bool, ints, float16/32/64) and values
with NaN, inf, -0.0 and overflowing magnitudes, under every error mode.
"""
import textwrap
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frametrace as ft

from helpers import BACKENDS, assert_same

# one statement each; `a` is the statement's result
STATEMENTS = {
    "divide": "a = x / y",
    "log": "a = np.log(x)",
    "overflow": "a = x * 1e308",
    "sqrt": "a = np.sqrt(y - 0.5)",
    "empty_mean": "a = x[x > t].mean()",
    "scalar_overflow": "a = k[0] * np.int64(2 ** 62)",
    "constant_overflow": "a = np.int64(2 ** 62) * 4",
    "nanmax": "a = np.nanmax(z, axis=0)",
    "nanmean": "a = np.nanmean(z, axis=0)",
    "ddof": "a = z.var(axis=0, ddof=2)",
    "nanvar": "a = np.nanvar(z, axis=0, ddof=1)",
    "reciprocal": "a = x ** -1",
    "square": "a = y ** 2 * 1e300",
    "scalar_loop": ("a = 0.0\n"
                    "for j in range(y.shape[0]):\n"
                    "    a = a + 1.0 / y[j]"),
    "array_loop": ("a = np.zeros_like(x)\n"
                   "for j in range(y.shape[0]):\n"
                   "    a = a + x / y[j]"),
    "inplace": ("x /= y\n"
                "a = x"),
}
ERROR = "a = np.nanargmax(z, axis=0)"          # ValueError on an all-NaN column
MODES = ("ignore", "warn", "raise")
VALUES = [0.0, -1.0, 2.0, 0.25, 1e300, np.nan]


def make_program(names, error: bool):
    """`f(x, y, z, k, t)` running the statements in order, returning their results."""
    lines = []
    for i, name in enumerate(names):
        lines += [line.replace("a =", f"a{i} =").replace("a +", f"a{i} +").replace("= a", f"= a{i}")
                  for line in STATEMENTS[name].splitlines()]
    if error:
        lines.append(ERROR.replace("a =", f"a{len(names)} ="))
    results = ", ".join(f"a{i}" for i in range(len(names) + error))
    source = "def f(x, y, z, k, t):\n" + textwrap.indent("\n".join(lines) + f"\nreturn ({results},)", "    ")
    ns = {"np": np}
    exec(compile(source, "<warning program>", "exec"), ns)
    return ns["f"], source


def observe(fn, args, action):
    """(result or None, (exception type, message) or None, [(category, message), ...])."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(action)
        try:
            result, exc = fn(*args), None
        except Exception as e:          # noqa: BLE001 - the exception is part of the outcome
            result, exc = None, (type(e), str(e))
    return result, exc, [(w.category, str(w.message)) for w in caught], args


def same_outcome(fn, calls, backend, modes, action, source):
    compiled = ft.compile(fn, backend=backend)
    with np.errstate(**modes):
        for i, args in enumerate(calls):
            want = observe(fn, args, action)
            got = observe(compiled, args, action)
            where = f"call {i} {modes} filter={action!r} {backend}\n{source}"
            assert got[1] == want[1], (where, got[1], want[1])
            assert got[2] == want[2], (where, got[2], want[2])
            if want[1] is None:
                assert_same(got[0], want[0], rtol=1e-9)
            if want[1] is None or "/=" not in source:
                # (README: an in-place `x /= y` that raises, FloatingPointError or a warning
                # filtered to "error", leaves x as it was where NumPy has written it)
                assert_same(got[3], want[3])


@st.composite
def call_args(draw):
    n, m, c = draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 3))
    vals = st.sampled_from(VALUES)
    x = np.array(draw(st.lists(vals, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(vals, min_size=n, max_size=n)))
    z = np.array(draw(st.lists(vals, min_size=m * c, max_size=m * c))).reshape(m, c)
    k = np.array(draw(st.lists(st.sampled_from([0, 1, 3, -2]), min_size=1, max_size=3)), np.int64)
    return x, y, z, k, draw(st.sampled_from([0.5, 100.0]))


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(st.sampled_from(sorted(STATEMENTS)), min_size=1, max_size=4),
       error=st.booleans(),
       calls=st.lists(call_args(), min_size=1, max_size=3),
       modes=st.fixed_dictionaries({k: st.sampled_from(MODES) for k in ("divide", "over", "invalid")}),
       action=st.sampled_from(["always", "error", "ignore"]))
def test_random_programs_report_as_eager_numpy(backend, names, error, calls, modes, action):
    fn, source = make_program(names, error)
    ft.reset()
    same_outcome(fn, calls, backend, modes, action, source)


# ------------------------------------------- the same over dtypes, NaN/inf and overflowing values

ELEMENTWISE = {
    "divide": "a = x / y", "floor_divide": "a = x // y", "remainder": "a = x % y",
    "power": "a = x ** y", "multiply": "a = x * y", "subtract": "a = x - y",
    "log": "a = np.log(x)", "sqrt": "a = np.sqrt(x)", "exp": "a = np.exp(x)", "arcsin": "a = np.arcsin(x)",
    "reciprocal": "a = 1 / x", "cast_int32": "a = x.astype(np.int32)", "cast_int8": "a = (x * y).astype(np.int8)",
    "float16_sum": "a = (x * y).astype(np.float16).sum()", "mean": "a = x.mean()",
    "scalars": "a = x[0] / y[-1]", "extrema": "a = np.maximum(x, y) - np.fmin(x, y)",
    "sign_cbrt": "a = np.sign(x) * np.cbrt(y)", "cumsum": "a = np.cumsum(x * y)",
}
DTYPES = ["float64", "float32", "float16", "int64", "int32", "int8", "uint8", "bool"]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 127.0, -128.0, 255.0, 7e4, 3e38, 1e300, -1e10,
           np.nan, np.inf, -np.inf]


def typed(values, dtype):
    """NumPy's own cast of the float values (wrapping, NaN to int as NumPy does), silently."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array(values, np.float64).astype(dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(st.sampled_from(sorted(ELEMENTWISE)), min_size=1, max_size=3),
       dtypes=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
       sizes=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data(),
       modes=st.fixed_dictionaries({k: st.sampled_from(MODES) for k in ("divide", "over", "under", "invalid")}),
       action=st.sampled_from(["always", "error", "ignore"]))
def test_ufuncs_over_dtypes_and_special_values_report_as_eager_numpy(backend, names, dtypes, sizes, data,
                                                                    modes, action):
    lines = [ELEMENTWISE[name].replace("a =", f"a{i} =") for i, name in enumerate(names)]
    source = ("def f(x, y):\n" + textwrap.indent("\n".join(lines), "    ")
              + "\n    return (" + ", ".join(f"a{i}" for i in range(len(names))) + ",)")
    ns = {"np": np}
    exec(compile(source, "<ufunc program>", "exec"), ns)
    calls = [tuple(typed(data.draw(st.lists(st.sampled_from(SPECIAL), min_size=n, max_size=n)), dt)
                   for dt in dtypes) for n in sizes]
    ft.reset()
    where = f"{source}\n{dtypes}"
    compiled = ft.compile(ns["f"], backend=backend)
    for i, args in enumerate(calls):
        with np.errstate(**modes):
            want = observe(ns["f"], args, action)
            got = observe(compiled, args, action)
        assert got[1] == want[1], (i, modes, action, where, got[1], want[1])
        assert got[2] == want[2], (i, modes, action, where, got[2], want[2])
        if want[1] is None:
            with np.errstate(all="ignore"):
                assert_same(got[0], want[0], rtol=1e-6)


# ------------------------------------------------------------------- regressions, one per bug

def _check(fn, calls, modes=None, action="always"):
    for backend in BACKENDS:
        ft.reset()
        same_outcome(fn, calls, backend, modes or {}, action, fn.__name__)


def test_warnings_of_a_kernel_reduction_and_a_numpy_step_keep_program_order():
    def stats(a):
        return np.nanmax(a, axis=0), np.nanvar(a, axis=0, ddof=1)
    _check(stats, [(np.array([[np.nan, 1.0], [np.nan, 2.0]]),)])


def test_a_warning_before_an_exception_is_issued():
    def stats(a):
        m = np.nanmean(a, axis=0)
        return m, np.nanargmax(a, axis=0)
    for modes in ({}, {"all": "ignore"}, {"all": "raise"}):
        _check(stats, [(np.array([[1.0, np.nan], [2.0, np.nan]]),)], modes)


def test_numpy_python_warnings_do_not_follow_errstate():
    class Selection:
        def __init__(self, limit):
            self.limit = limit

        def mean_above(self, x):
            return x[x > self.limit].mean(), x.var(ddof=x.shape[0])

    sel = Selection(100.0)
    for modes in ({"all": "ignore"}, {}, {"invalid": "raise"}):
        _check(sel.mean_above, [(np.ones(3),), (np.ones(4),), (np.ones(7),)], modes)


def test_a_mean_fused_after_a_numpy_step_still_warns_first():
    def f(x, y, t):
        a = x / y
        m = x[x > t].mean()
        v = np.nanvar(y, ddof=5)
        return a, m, v, a * 1e308
    x, y = np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0, 0.0])
    for modes in ({}, {"all": "ignore"}, {"all": "raise"}, {"divide": "ignore", "invalid": "warn"}):
        _check(f, [(x, y, 5.0), (x, y, 0.5)], modes)


def test_power_shortcuts_name_their_ufunc():
    def powers(x, y, z):
        x **= -1                                  # np.reciprocal(x, out=x)
        return y ** 2, z ** 0.5, np.array(0.0) ** -1, z ** -1.0
    _check(powers, [(np.zeros(3), np.full(2, 1e300), -np.ones(2))])


def test_scalar_overflow_of_constants_warns_at_every_call():
    def f(x):
        return x + np.int64(2 ** 62) * 4 - np.int64(-2 ** 63) + np.log(0.0)
    _check(f, [(np.zeros(n),) for n in (3, 4, 5, 6)])
    _check(f, [(np.zeros(n),) for n in (3, 4)], {"over": "raise"})


def test_a_loop_hands_its_flags_to_numpy_once():
    def f(x, y):
        acc = np.zeros_like(x)
        for i in range(y.shape[0]):
            acc = acc + x / y[i]
        return acc, np.nanmax(np.log(y))
    y = np.array([1.0, 2.0, 0.0, 3.0, -1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 6.0])
    _check(f, [(np.ones(4), y), (np.ones(5), y[:9])])


def test_the_array_loop_driver_leaves_no_report_to_a_second_numpy_run():
    """Iterations run by the body's own wrapper warn as they go; the native driver then runs
    the rest only when they reported nothing, so that a flag it leaves is the first report of
    the call, which NumPy's redo of the whole call then makes (once)."""
    from frametrace.backends.llvm import array_loops

    def sweeps(u, d, k):
        for t in range(k):
            u = 0.5 * u + 1.0 / (d - t)
        return u

    u = np.ones(3)
    cases = [(u, np.array([15.0, 0.5, 2.5]), 20),       # the zero in the native iterations
             (u, np.array([0.0, 15.0, 2.5]), 20),       # in the first one, then in the native ones
             (u, np.array([0.0, 0.5, 2.5]), 20),        # in the first one only
             (u, np.array([0.5, 0.5, 2.5]), 20)]        # none
    for backend in BACKENDS:
        ft.reset()
        before = array_loops.runs["native"]
        compiled = ft.compile(sweeps, backend=backend, dynamic=True)
        for args in cases:
            want, got = observe(sweeps, args, "always"), observe(compiled, args, "always")
            assert got[2] == want[2] and got[1] == want[1], (args, got[2], want[2])
            assert_same(got[0], want[0], rtol=1e-12)
        if backend == "llvm":
            assert array_loops.runs["native"] - before == 2     # the calls whose first iterations were quiet
