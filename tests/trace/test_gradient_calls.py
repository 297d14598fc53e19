"""np.gradient traced (issue 23 part 5): NumPy's bits, dtypes and memory order for every axis,
spacing form and edge order; coordinate arrays a clean graph break with a hint."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import frametrace as ft
from helpers import BACKENDS, exactly, same_outcome


def same(fn, *args, backend="llvm", fullgraph=True):
    return same_outcome(fn, *args, backend=backend, fullgraph=fullgraph, strides=True)

class HeatSolver:
    """A simulation's diagnostics, as users write them: gradients of a field on a grid."""

    def __init__(self, dx, dy):
        self.dx, self.dy = dx, dy

    def flux(self, u):
        gy, gx = np.gradient(u, self.dy, self.dx)
        return np.hypot(gx, gy), np.gradient(u, axis=0, edge_order=2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_solver_diagnostics(backend):
    u = np.random.default_rng(0).random((6, 9))
    s = HeatSolver(0.1, 0.25)
    same(s.flux, u, backend=backend)
    same(s.flux, np.asfortranarray(u), backend=backend)
    same(s.flux, u[::-1, ::2], backend=backend)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint8, np.complex128])
@pytest.mark.parametrize("edge_order", [1, 2])
def test_dtypes(dtype, edge_order):
    with np.errstate(all="ignore"):
        x = (np.array([0, 1, 4, 9, -16, 25, 2.5, -0.0]) * 3).astype(dtype)
    same(lambda x: np.gradient(x, edge_order=edge_order), x)
    same(lambda x: np.gradient(x, 0.5, edge_order=edge_order), x)
    same(lambda x: np.gradient(x, np.float32(0.5)), x)


def test_spacing_forms():
    f = np.arange(24.0).reshape(2, 3, 4) ** 1.5

    def forms(f, h):
        return (np.gradient(f), np.gradient(f, 2.0), np.gradient(f, 1.0, 2.0, h, axis=None),
                np.gradient(f, axis=(0, -1)), np.gradient(f, h, axis=1), np.gradient(f, f[0, 0, 1] * 1.0, axis=2),
                np.gradient(f, np.array(0.5)))
    same(forms, f, 0.25)
    same(forms, f.transpose(2, 0, 1).copy().transpose(1, 2, 0), 3)


def test_errors_as_numpy():
    same(lambda x: np.gradient(x), np.ones(1), fullgraph=False)                  # too small
    same(lambda x: np.gradient(x, edge_order=2), np.ones(2), fullgraph=False)    # too small for 2
    same(lambda x: np.gradient(x, edge_order=3), np.ones(5), fullgraph=False)
    same(lambda x: np.gradient(x, 1.0, 2.0), np.ones(5), fullgraph=False)        # invalid number
    same(lambda x: np.gradient(x, axis=2), np.ones((3, 3)), fullgraph=False)     # AxisError
    same(lambda x: np.gradient(x), np.array([True, False, True]), fullgraph=False)   # bool subtract


def test_coordinate_arrays_break_cleanly():
    def f(y, x):
        return np.gradient(y, x) * 2
    x = np.array([0.0, 0.5, 1.5, 3.0])
    e = ft.explain(f, x ** 2, x)
    assert e.graph_break_count == 1
    reason = str(e.break_reasons[0])
    assert "coordinate arrays" in reason and "test_gradient_calls.py" in reason and "hint" in reason
    same(f, x ** 2, x, fullgraph=False)


def test_dynamic_sizes_one_graph():
    def f(x):
        return np.gradient(x * 2.0, 0.1) + 1
    g = ft.compile(f, fullgraph=True)
    for n in (3, 5, 8, 17, 2):
        exactly(g(np.linspace(0, 1, n) ** 2), f(np.linspace(0, 1, n) ** 2), strides=True)
    assert ft.stats().unique_graphs <= 2
    with pytest.raises(ValueError, match="too small"):
        g(np.ones(1))


@settings(max_examples=25, deadline=None)
@given(f=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=3, max_side=6),
                    elements=st.floats(allow_nan=True, allow_infinity=True, width=64)),
       h=st.floats(min_value=-1e3, max_value=1e3).filter(lambda v: v != 0), edge_order=st.sampled_from([1, 2]))
def test_random(f, h, edge_order):
    ft.reset()
    with np.errstate(all="ignore"):
        same(lambda f, h: np.gradient(f, h, edge_order=edge_order), f, h)
