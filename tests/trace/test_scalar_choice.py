"""max()/min() of a NumPy float64 the graph computes and a Python number (issue 23 part 5:
`x / max(x.std(), 1e-8)`): no graph break where the result's type cannot change the outcome,
the very object Python returns when it leaves the graph, a clean break elsewhere."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import BACKENDS, exactly, same_outcome


def same(fn, *args, backend="llvm", fullgraph=True):
    return same_outcome(fn, *args, backend=backend, fullgraph=fullgraph)

class Normalizer:
    """A data pipeline step, as users write it."""

    def __init__(self, eps=1e-8, cap=4.0):
        self.eps, self.cap = eps, cap

    def __call__(self, x):
        scale = max(x.std(), self.eps)
        top = min(np.abs(x).max(), self.cap)
        z = (x - x.mean()) / scale
        return np.clip(z, -top, top), scale, top


DATA = [np.linspace(-2.0, 3.0, 11), np.zeros(5), np.full(3, 7.0), np.array([np.nan, 1.0]),
        np.array([-0.0, 0.0]), np.array([np.inf, 1.0]), np.array([1e-300, 2e-300])]


@pytest.mark.parametrize("backend", BACKENDS)
def test_normalizer_one_graph_and_python_types(backend):
    f = ft.compile(Normalizer(), backend=backend, fullgraph=True)
    for x in DATA:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = Normalizer()(x)
            got = f(x)
        exactly(got, want)              # scale is np.float64 or the Python float 1e-08, as in Python
    assert ft.stats().graph_breaks == 0


def pairs(x, c):
    s = x.sum()
    return (max(s, 0.5), max(0.5, s), min(s, 0.5), min(0.5, s), max(s, 0), min(0, s), max(s, c), min(c, s),
            x * max(s, 1), np.ones(2, np.complex128) * min(s, 2.0), s / max(s, 1.0), max(s, -1.0) < x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_order_and_kind(backend):
    for x in DATA:
        for c in (0.25, -3.0, float("nan")):
            ft.reset()
            with np.errstate(all="ignore"):
                same(pairs, x, c, backend=backend)


@settings(max_examples=40, deadline=None)
@given(a=st.floats(allow_nan=True, allow_infinity=True), c=st.floats(allow_nan=True, allow_infinity=True))
def test_random(a, c):
    ft.reset()
    with np.errstate(all="ignore"):
        same(lambda x, c: (max(x[0] * 1.0, c), min(c, x[0] * 1.0), x / max(x[0] * 1.0, c)), np.array([a]), c)


@pytest.mark.parametrize("use", [
    lambda x, s: x.astype(np.float32) * s,          # float32 keeps float32 with a Python float only
    lambda x, s: round(s, 2),                       # Python's vs NumPy's rounding
    lambda x, s: x.astype(np.int64) * s,
])
def test_type_dependent_uses_break_cleanly(use):
    def f(x):
        s = max(x.std(), 0.5)
        return use(x, s)
    x = np.linspace(0, 1, 5)
    e = ft.explain(f, x)
    assert e.graph_break_count == 1
    reason = str(e.break_reasons[0])
    assert "depends on the data" in reason and "test_scalar_choice.py" in reason and "np.maximum" in reason
    same(f, x, fullgraph=False)


@pytest.mark.parametrize("scale", [1.0, 3e307, -np.inf])
def test_python_float_arithmetic_is_each_candidates_own(scale):
    """`s * scale + 1.0`: the Python float's arithmetic (never warns) or NumPy's scalar math
    (warns on overflow), whichever max() picked; no graph break."""
    def f(x, c):
        s = max(x.std(), 0.5)
        return s * c + 1.0, 2.0 - s, s * s
    for x in (np.linspace(0, 1, 5), np.linspace(0, 100, 5)):
        e = ft.explain(f, x, scale)
        assert e.graph_break_count == 0
        same(f, x, scale)


def test_loop_minimum_from_python_inf_still_breaks_cleanly():
    def f(x):
        lo = np.inf
        for i in range(x.shape[0]):
            lo = min(lo, x[i])
        return lo
    same(f, np.array([3.0, 1.0, 2.0]), fullgraph=False)
    same(f, np.array([]), fullgraph=False)


def same_type_uses(x):
    s = max(x.std(), 0.5)
    t = min(-1.0, x.min())
    return (float(s), int(x[0] * s), bool(t), -s, abs(t), +s,
            np.clip(x, -s, s), np.maximum(x, t), np.where(x > 0.3, x, -t), np.sqrt(x) * s)


@pytest.mark.parametrize("backend", BACKENDS)
def test_uses_where_the_type_does_not_matter(backend):
    for x in DATA[:3] + [np.array([3.0, 0.0, -2.5])]:
        ft.reset()
        with np.errstate(all="ignore"):
            same(same_type_uses, x, backend=backend)
    assert ft.stats().graph_breaks == 0


def relu_sum(x):
    s = np.float64(0)
    for i in range(x.shape[0]):
        s = s + max(x[i], 0.0)            # the choice meets a NumPy float64: its value
    return s, np.float64(2.5) * min(x[0], 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_a_loop_body_with_numpy_scalars(backend):
    for x in (np.linspace(-1, 2, 7), np.array([np.nan, -1.0, 4.0]), np.array([-0.0])):
        ft.reset()
        same(relu_sum, x, backend=backend)
    assert ft.stats().graph_breaks == 0
