"""NumPy's and `math`'s float constants (np.inf, np.nan, np.pi, np.e, math.tau, ...) read from a
global or an attribute are constants guarded by value, so `ord=np.inf` is a constant argument and
`x * np.pi` compiles once; other float globals stay run-time inputs (never baked in)."""
import math

import numpy as np
import pytest
from numpy import pi as imported_pi

import frametrace as ft
from frametrace.errors import GraphBreakError

ALIAS = np.inf          # a global aliasing NumPy's constant: the same object, a constant too
USER_SCALE = 0.5        # a user float global: a run-time input


@pytest.fixture(params=["numpy", "llvm"])
def backend(request):
    return request.param


def norms(x):
    return (np.linalg.norm(x, ord=np.inf), np.linalg.norm(x, ord=-np.inf),
            np.linalg.norm(x, ord=ALIAS))


def scaled(x):
    return x * np.pi + np.e - math.tau + imported_pi


def nan_fill(x):
    return np.where(x > 0.5, x, np.nan), np.maximum(x, -np.inf)


def user_scaled(x):
    return x * USER_SCALE


def _rand(rng, n, order="C"):
    x = rng.standard_normal((n, 3)) if order != "1d" else rng.standard_normal(n)
    x[::2] *= -1.0
    return np.asfortranarray(x) if order == "F" else x


@pytest.mark.parametrize("fn", [norms, scaled, nan_fill])
def test_module_constants_compile_as_constants(fn, backend):
    rng = np.random.default_rng(14)
    for order in ("1d", "C", "F"):
        ft.reset()
        f = ft.compile(fn, backend=backend, fullgraph=True)
        for n in (1, 4, 7, 9, 0):
            if fn is norms and n == 0:
                continue                     # NumPy: max of an empty array raises
            x = _rand(rng, n, order)
            np.testing.assert_equal(f(x), fn(x))
        s = ft.stats()
        assert s.graph_breaks == 0 and s.eager_fallbacks == 0
        # static sizes, then one dynamic graph (plus the size 0/1 specialisations): never per constant
        assert s.frames_compiled <= 3


def test_norm_inf_is_a_constant_argument_not_an_input(backend):
    f = ft.compile(lambda x: np.linalg.norm(x, ord=np.inf), backend=backend, fullgraph=True)
    x = np.array([1.0, -3.0, 2.0])
    assert f(x) == 3.0 and f(-x) == 3.0
    assert ft.stats().frames_compiled == 1 and ft.stats().recompiles == 0


def test_user_float_global_stays_a_runtime_input(backend):
    global USER_SCALE
    f = ft.compile(user_scaled, backend=backend, fullgraph=True)
    x = np.arange(4.0)
    old = USER_SCALE
    try:
        np.testing.assert_equal(f(x), user_scaled(x))
        USER_SCALE = 3.25
        np.testing.assert_equal(f(x), user_scaled(x))
        USER_SCALE = np.inf             # now NumPy's object: still one graph, an input value
        np.testing.assert_equal(f(x), user_scaled(x))
    finally:
        USER_SCALE = old
    assert ft.stats().frames_compiled == 1


def test_rebinding_an_alias_of_a_constant_recompiles_with_the_new_value(backend):
    global ALIAS
    f = ft.compile(lambda x: np.linalg.norm(x, ord=ALIAS), backend=backend, fullgraph=True)
    x = np.array([1.0, -3.0, 2.0])
    old = ALIAS
    try:
        assert f(x) == 3.0
        ALIAS = 1.0                     # the value guard fails: traced again with ord=1.0
        with pytest.raises(GraphBreakError):   # a user float is a run-time ord: a break under fullgraph
            f(x)
    finally:
        ALIAS = old
    g = ft.compile(lambda x: np.linalg.norm(x, ord=ALIAS), backend=backend)
    try:
        for v in (np.inf, 1.0, -np.inf, np.inf):
            ALIAS = v
            assert g(x) == np.linalg.norm(x, ord=v)
    finally:
        ALIAS = old
