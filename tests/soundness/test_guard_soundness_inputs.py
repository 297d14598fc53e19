"""Guard soundness of scalar and function inputs, on both backends and all three `dynamic`
settings: NumPy scalars are 0-d graph inputs (never baked in), baked-in floats and complex
values are guarded by bits, and functions are guarded by their code, defaults and cells."""
import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frametrace as ft
from soundness_helpers import run

DYNAMIC = [None, True, False]
SCALE = np.float64(1.0)         # rebound by test_numpy_scalar_globals_are_inputs
NP_SCALARS = [np.float64, np.float32, np.int64, np.int32, np.uint8, np.bool_, np.complex128]


def graphs():
    return ft.stats().unique_graphs


def same_bits(got, want):
    """assert_same does not see the sign of a zero: compare signs too."""
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_numpy_scalar_arguments_are_graph_inputs(backend, dynamic):
    f = ft.compile(lambda x, s: x * s + s, backend=backend, dynamic=dynamic)
    x = np.linspace(-1, 1, 5)
    rng = np.random.default_rng(0)
    for t in NP_SCALARS:
        for v in [0, 1, *rng.normal(size=3) * 10]:
            s = t(v) if t is not np.bool_ else t(v > 0)
            with np.errstate(all="ignore"):
                got = run(lambda x, s: x * s + s, x, s, compiled=f)
            same_bits(got, x * s + s)
        assert graphs() <= NP_SCALARS.index(t) + 1       # one entry per scalar type, not per value


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_numpy_scalar_results_keep_numpy_types_and_promotion(backend, dynamic):
    f32 = np.ones(4, np.float32)

    def fn(x, s):
        return x * s, s * 2, s + 1.5, -s
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    for s in (np.float32(2.5), np.float64(2.5), np.int64(3), np.int8(-4), np.float32(-0.0)):
        with np.errstate(all="ignore"):
            run(fn, f32, s, compiled=f)     # NEP 50: float32 array * float64 scalar is float64


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_numpy_scalar_globals_are_inputs(backend, dynamic):
    def fn(x):
        return x * SCALE
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    for v in (np.float64(2.0), np.float64(np.nan), np.float64(-0.0), np.float64(7.0)):
        globals()["SCALE"] = v
        got = run(fn, np.ones(3), compiled=f)
        same_bits(got, np.ones(3) * v)
    assert graphs() == 1
    globals()["SCALE"] = np.float32(3.0)
    run(fn, np.ones(3), compiled=f)
    assert graphs() == 2


SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0]


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_python_floats_and_complex_constants_are_told_apart(backend, dynamic):
    # a complex argument is a constant: its guard compares by bits
    g = ft.compile(lambda x, c: x * c, backend=backend, dynamic=dynamic)
    for c in [complex(a, b) for a in SPECIAL for b in (0.0, -0.0, math.nan)]:
        with np.errstate(all="ignore"):
            got = run(lambda x, c: x * c, np.ones(2), c, compiled=g)
        w = np.ones(2) * c
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(w.real))
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(w.imag))

    # a float in a branch: each of 0.0/-0.0/nan takes its own path
    def branchy(x, s):
        if math.copysign(1.0, s) < 0:
            return x - 1
        return x / s if s == s else x
    h = ft.compile(branchy, backend=backend, dynamic=dynamic)
    for s in SPECIAL * 2:
        with np.errstate(all="ignore"):
            run(branchy, np.ones(2), s, compiled=h)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True), st.sampled_from(SPECIAL)), min_size=1, max_size=6))
def test_float_tuple_argument_random(values):
    ft.reset()
    f = ft.compile(lambda x, t: x * t[0] + len(t), backend="llvm")
    for v in values:
        t = (v, 1.0)
        with np.errstate(all="ignore"):
            got = run(lambda x, t: x * t[0] + len(t), np.ones(2), t, compiled=f)
        same_bits(got, np.ones(2) * v + 2)


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_fresh_lambdas_with_defaults_share_one_graph(backend, dynamic):
    def fn(x, op):
        return op(x)
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    for i in range(6):
        x = np.full(3, float(i))
        run(fn, x, lambda v, k=float(i): v * 2 + k, compiled=f)
    assert graphs() == 1
    run(fn, np.ones(3), lambda v, k=-0.0: v * k, compiled=f)            # other code: a new entry
    run(fn, np.ones(3), lambda v, k=1.0, m=2.0: v * k + m, compiled=f)
    assert graphs() == 3


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_fresh_closures_are_guarded_on_their_cells(backend, dynamic):
    def make(k):
        return lambda v: v * k
    f = ft.compile(lambda x, op: op(x), backend=backend, dynamic=dynamic)
    for k in (2.0, 3.0, np.float64(np.nan), -0.0, np.float32(1.5), np.arange(3.0), "s"):
        op = make(k)
        try:
            want = op(np.ones(3))
        except Exception as exc:     # noqa: BLE001
            with pytest.raises(type(exc)):
                f(np.ones(3), op)
            continue
        got = f(np.ones(3), op)
        np.testing.assert_array_equal(got, want)
        same_bits(got, want)


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_identity_of_code_guarded_functions(backend, dynamic):
    def make(k):
        return lambda v: v * k
    a = make(2.0)

    def same(x, f, g):
        return x * 2 if f is g else x * 3

    def is_a(x, f):
        return x * 2 if f is a else (x * 4 if f is None else x * 3)
    f1 = ft.compile(same, backend=backend, dynamic=dynamic)
    f2 = ft.compile(is_a, backend=backend, dynamic=dynamic)
    for f, g in [(a, a), (a, make(2.0)), (make(1.0), make(1.0)), (a, a)]:
        run(same, np.ones(2), f, g, compiled=f1)
    for f in (a, make(2.0), None, a):
        run(is_a, np.ones(2), f, compiled=f2)


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_changed_defaults_of_an_inlined_function_are_seen(backend, dynamic):
    def helper(v, s=2.0, *, t=1.0):
        return v * s + t

    def fn(x):
        return helper(x)
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    run(fn, np.ones(2), compiled=f)
    for defaults, kw in [((5.0,), {"t": 1.0}), ((5.0,), {"t": -0.0}), ((np.float32(3.0),), {"t": 0.0}),
                         ((2.0,), {"t": 1.0})]:
        helper.__defaults__, helper.__kwdefaults__ = defaults, kw
        got = run(fn, np.ones(2), compiled=f)
        same_bits(got, np.ones(2) * defaults[0] + kw["t"])
    helper.__defaults__ = None          # now `s` is required: the call raises like eagerly
    with pytest.raises(TypeError):
        fn(np.ones(2))
    with pytest.raises(TypeError):
        f(np.ones(2))


def test_reset_keeps_options_of_existing_wrappers():
    f = ft.compile(lambda x: x * x.shape[0], dynamic=True, backend="numpy")
    g = ft.compile(lambda x: print("break") or x, fullgraph=True)
    f(np.ones(4))
    ft.reset()
    for n in (5, 6, 7):
        f(np.ones(n))
    assert graphs() == 1
    ft.reset()
    with pytest.raises(ft.errors.GraphBreakError):
        g(np.ones(2))


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_changed_defaults_of_the_compiled_function_are_seen(backend, dynamic):
    def root(x, s=2.0, n=1, *rest, t=0.5, **kw):
        return x * s * n + t + len(rest) + len(kw)
    f = ft.compile(root, backend=backend, dynamic=dynamic)
    x = np.ones(2)
    run(root, x, compiled=f)
    run(root, x, 3.0, compiled=f)              # passed explicitly: never replaced
    for defaults, kw in [((5.0, 2), {"t": 1.0}), ((-0.0, 1), {"t": -0.0}), ((np.float64(np.nan), 3), {"t": 0.0}),
                         ((2.0, 1), {"t": 0.5})]:
        root.__defaults__, root.__kwdefaults__ = defaults, kw
        for args in [(x,), (x, 7.0), (x, 7.0, 2, 9)]:
            got = run(root, *args, compiled=f)
            same_bits(got, root(*args))
    root.__defaults__ = (4,)                   # `s` has no default any more
    for call in (lambda g: g(x), lambda g: g(x, 1.0), lambda g: g(x, t=1.0)):
        try:
            want = call(root)
        except TypeError:
            with pytest.raises(TypeError):
                call(f)
        else:
            np.testing.assert_array_equal(call(f), want)
    root.__kwdefaults__ = None
    with pytest.raises(TypeError, match="keyword-only"):
        f(x, 1.0)
    assert str(inspect.signature(f)) == str(inspect.signature(root))
