"""Python float `**` in an array loop's body runs in the native driver (loop_driver.py FLOAT op
`power`: the C library's pow, as Python's float power), and the body's Python scalar ops that
read nothing the iteration's kernels write run before its first kernel (array_loops
_scalars_first), so one that may abandon the iteration (x / 0.0, an overflowing power) does so
before any write. Compared with plain Python/NumPy: values, exceptions, the arrays after an
exception."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import array_loops

from helpers import assert_identical


@pytest.fixture(autouse=True)
def _native_from_the_first_iteration(monkeypatch):
    array_loops.runs.clear()
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 1)


class Poisson:
    """The pressure iteration of a channel-flow solver, with its boundary rows."""

    def __init__(self, dx, dy):
        self.dx, self.dy = dx, dy

    def solve(self, p, b, nit):
        dx, dy = self.dx, self.dy
        for _ in range(nit):
            pn = p.copy()
            p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, :-2]) * dy ** 2 + (pn[2:, 1:-1] + pn[:-2, 1:-1]) * dx ** 2)
                             / (2 * (dx ** 2 + dy ** 2))
                             - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
            p[-1, :] = p[-2, :]
            p[0, :] = p[1, :]
        return p


def _compare(fn, *args):
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        want = fn(*theirs)
    except Exception as exc:
        with pytest.raises(type(exc)) as got:
            ft.compile(fn)(*mine)
        assert str(got.value) == str(exc)
        want = None
    else:
        assert_identical(ft.compile(fn)(*mine), want)
    for m, t in zip(mine, theirs):
        if isinstance(t, np.ndarray):
            assert_identical(m, t)


@pytest.mark.parametrize("dx, dy", [(0.05, 0.025), (0.0, 1.0), (2.0, 3.0)])
def test_pressure_loop_native(dx, dy):
    rng = np.random.default_rng(0)
    p, b = rng.random((9, 11)), rng.random((9, 11))
    _compare(Poisson(dx, dy).solve, p, b, 6)
    assert array_loops.runs["native"] >= 1


@pytest.mark.parametrize("dx", [1e200, 1e-170, -1e-170, -3.0])
def test_power_edges_as_python(dx):
    """dx ** 2 overflows (OverflowError before any write of the iteration) or is subnormal (the
    iteration goes to Python, which computes it): Python's result and exception."""
    rng = np.random.default_rng(1)
    _compare(Poisson(dx, 0.5).solve, rng.random((6, 7)), rng.random((6, 7)), 4)


def growth(x, r, n):
    for _ in range(n):
        x[1:] = x[:-1] * r              # overlapping slices, a carried float
        r = r ** 2 * 0.75
    return x, r


@pytest.mark.parametrize("r", [1.5, 0.5, -0.9, 1e-10, 1e30, 0.0, 1.0])
def test_carried_float_power(r):
    """A carried Python float raised each iteration: exact as Python (the same pow), until it
    overflows (OverflowError: Python's, with the writes of the earlier iterations kept) or
    becomes subnormal (Python runs the rest)."""
    _compare(growth, np.linspace(1.0, 2.0, 6), r, 40)
    assert array_loops.runs["native"] >= 1


def zero_base(x, a, n):
    for _ in range(n):
        x[:] = x + a ** -1              # a == 0.0: ZeroDivisionError, nothing written that iteration
    return x


def test_zero_base_negative_exponent():
    _compare(zero_base, np.ones(4), 0.0, 40)
    _compare(zero_base, np.ones(4), 4.0, 40)
    assert array_loops.runs["native"] >= 1
