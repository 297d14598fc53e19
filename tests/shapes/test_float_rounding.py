"""Python float arithmetic on sizes rounds at every step, as the program wrote it.

`2.0 * (1.0 / t) / ((1.0 / n) * (1.0 / n))` is not sympy's `2.0 * n**2 / t` in floats: a
stencil's coefficients built that way (npbench adi) drifted by 2.7e-5 relative after a dozen
time steps once the sizes were dynamic. SymFloat values are FloatOp nodes (shapes/functions.py),
printed and evaluated as the Python operations, in order.
"""
import operator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import frametrace as ft
from frametrace.shapes import ShapeEnv, SymFloat, pycode

from shape_sources import X

OPS = [operator.add, operator.sub, operator.mul, operator.truediv]
CONSTANTS = [0.1, 0.2, 0.3, 1.0, 2.0, 3.0, 1e-3, 7, 3, -0.7]


def _run(program, sizes, start):
    """The program's values, on numbers, or on the Sym values of a ShapeEnv when symbolic."""
    vals = list(sizes) + [start]
    for op, i, j, const in program:
        a = vals[i % len(vals)]
        b = vals[j % len(vals)] if const is None else const
        vals.append(op(a, b))
    return vals


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(2, 1000), min_size=1, max_size=3),
       st.sampled_from(CONSTANTS),
       st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 20), st.integers(0, 20),
                          st.one_of(st.none(), st.sampled_from(CONSTANTS))), min_size=1, max_size=10))
def test_float_arithmetic_of_sizes_is_pythons_bit_for_bit(hints, start, program):
    env = ShapeEnv(duck_shape=False)
    syms = [env.create_symbol(h, X(i)) for i, h in enumerate(hints)]
    try:
        want = _run(program, hints, start)
    except ZeroDivisionError:
        return
    got = _run(program, syms, start)
    names = {s.expr: f"n{i}" for i, s in enumerate(syms)}
    for g, w in zip(got, want):
        if isinstance(g, SymFloat):
            assert g.hint == w, (g, w)                                   # the hint, and the code
            assert eval(pycode(g.expr, names), {}, {f"n{i}": h for i, h in enumerate(hints)}) == w
        else:
            assert (g.hint if hasattr(g, "hint") else g) == w
    assert env.guards == []


def test_no_algebra_across_float_operations(env):
    n, t = env.create_symbol(150, X(0)), env.create_symbol(12, X(1))
    mul1 = 2.0 * (1.0 / t) / ((1.0 / n) * (1.0 / n))
    assert str(mul1.expr) == "((2.0 * (1.0 / s1)) / ((1.0 / s0) * (1.0 / s0)))"
    assert mul1.hint == 2.0 * (1.0 / 12) / ((1.0 / 150) * (1.0 / 150)) != 2.0 * 150 ** 2 / 12
    assert ((n + 0.1) + 0.2).hint == (150 + 0.1) + 0.2 != 150 + 0.3
    assert (n ** -1 * 3).hint == 150 ** -1 * 3


def test_floor_and_ceil_of_a_ratio_of_sizes_stay_exact(env):
    import math
    n = env.create_symbol(7, X(0))
    assert str(math.floor(n / 2)) == "(s0//2)" and math.ceil(n / 2).hint == 4
    assert math.floor(n * 0.5 + 1).hint == 4 and math.ceil(n * 0.25).hint == 2
    assert env.guards == []


def test_stencil_coefficients_from_dynamic_sizes_are_eagers():
    """adi's coefficients, from TSTEPS and N made dynamic: each size gives NumPy's values."""
    def kernel(tsteps, n, u):
        dx, dt = 1.0 / n, 1.0 / tsteps
        mul1 = 2.0 * dt / (dx * dx)
        a = -mul1 / 2.0
        b = 1.0 + mul1
        for _ in range(tsteps):
            u[1:n - 1] = (u[0:n - 2] * a + u[1:n - 1] * b) / (1.0 + 2.0 * a)
        return u

    for backend in ("numpy", "llvm"):
        f = ft.compile(kernel, dynamic=True, backend=backend)
        for t, n in [(12, 150), (7, 33), (3, 10), (5, 101)]:
            u = np.random.default_rng(n).standard_normal(n)
            np.testing.assert_array_equal(f(t, n, u.copy()), kernel(t, n, u.copy()))


def test_exact_values_of_float_sizes_only_when_python_does_not_round():
    from frametrace.shapes.functions import FloatAdd, FloatMul, FloatTrueDiv, exact_value
    import sympy
    s = sympy.Symbol("s0", integer=True, positive=True)
    assert exact_value(FloatTrueDiv(s, 2)) == s / 2
    assert exact_value(FloatAdd(FloatMul(0.5, s), 1.0)) == s / 2 + 1
    assert exact_value(FloatTrueDiv(s, 3)) is None               # n / 3 is rounded
    assert exact_value(FloatAdd(FloatTrueDiv(s, 4), 0.1)) is None

    def f(v):                                                    # NumPy's float length, each size
        return np.arange(0.0, v.shape[0] / 2, 0.5) + 1, np.arange(0.0, v.shape[0] / 3, 0.25)
    g = ft.compile(f, dynamic=True)
    for n in (2, 3, 7, 12):
        for got, want in zip(g(np.ones(n)), f(np.ones(n))):
            np.testing.assert_array_equal(got, want)
