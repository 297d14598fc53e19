"""`a if c else b` / `max(a, b)` of two Python ints is a Python int (select keeps the weak
type: lower/pointwise.weak_node), so arithmetic on it grows as Python's ints do instead of
wrapping in int64 kernels (a wrong answer before: 8873687295888736095 for a big int)."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS


def hash_with_branch(x, y):
    s = 7
    for i in range(x.shape[0]):
        y = y * 0.5 + x[i]                       # a carried array: not an element loop
        s = s * 31 + (1 if x[i] > 0 else 2)
    return s, y


def max_of_ints(x, a, b):
    m = max(a, b)
    return m * 2 ** 40 * 2 ** 30 + x.shape[0], x * 2


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [3, 40, 100])
def test_python_int_from_a_branch_grows_like_python(backend, n):
    x = np.random.default_rng(n).standard_normal(n)
    got, want = ft.compile(hash_with_branch, backend=backend)(x, np.ones(3)), hash_with_branch(x, np.ones(3))
    assert got[0] == want[0] and type(got[0]) is int
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_of_python_ints(backend):
    f = ft.compile(max_of_ints, backend=backend, dynamic=True)
    for a, b in ((3, 5), (2 ** 40, 7), (-1, -2)):
        got, want = f(np.ones(4), a, b), max_of_ints(np.ones(4), a, b)
        assert got[0] == want[0] and type(got[0]) is int
