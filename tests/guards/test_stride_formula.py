"""Strides as functions of sizes (ir/numpy_api/layout.stride_formula, guard STRIDE_FORMULA):
the formula reproduces the strides it was derived from, the Python and native checks agree with
evaluating it on other arrays, and dynamic=True compiles once for views of every size."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frametrace as ft
from csrc_free_runtime.native import AVAILABLE, NATIVE_MISS
from frametrace.backends.llvm.native_entry import build_native_entry
from frametrace.guards.builder import GuardBuilder
from frametrace.ir.numpy_api.layout import stride_formula
from frametrace.sources import LocalSource
from frametrace.trace.entry import build_entry

X = LocalSource("x")


def evaluate(formula, shape):
    out = []
    for coef, dims in formula:
        for j in dims:
            coef *= shape[j]
        out.append(coef)
    return tuple(out)


@st.composite
def views(draw):
    """A view of a dense C or F array: per dim a step (possibly negative) and a start, then a
    permutation of the dims."""
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim))
    base = np.arange(int(np.prod(shape)), dtype=draw(st.sampled_from([np.float64, np.float32, np.int8])))
    base = base.reshape(shape, order=draw(st.sampled_from("CF")))
    index = tuple(slice(draw(st.integers(0, 1)), None, draw(st.sampled_from([1, 2, 3, -1, -2])))
                  for _ in range(ndim))
    return base[index].transpose(draw(st.permutations(range(ndim))))


@settings(max_examples=300, deadline=None)
@given(v=views())
def test_formula_reproduces_the_strides(v):
    f = stride_formula(v.shape, v.strides, v.itemsize)
    if f is not None:
        assert evaluate(f, v.shape) == v.strides
    if all(abs(s) == v.itemsize * np.prod(v.shape[d + 1:]) for d, s in enumerate(v.strides)):
        assert f is not None                    # C order with reversed dims: always a formula


def test_common_views_have_formulas():
    a = np.zeros((6, 8))
    assert stride_formula(a[::-1, ::-1].shape, a[::-1, ::-1].strides, 8) == ((-8, (1,)), (-8, ()))
    assert stride_formula(a[::2].shape, a[::2].strides, 8) == ((16, (1,)), (8, ()))
    assert stride_formula(a[:, ::2].shape, a[:, ::2].strides, 8) == ((16, (1,)), (16, ()))
    assert stride_formula(a.T[::-1].shape, a.T[::-1].strides, 8) == ((-8, ()), (8, (0,)))
    assert stride_formula(a[:, :3].shape, a[:, :3].strides, 8) is None        # a gap: no multiple
    b = np.broadcast_to(np.arange(3.0), (4, 3))
    assert stride_formula(b.shape, b.strides, 8) == ((0, ()), (8, ()))


def checks(builder):
    ns = dict(builder.namespace, ___MISS=object(), ___G={})
    _, check, _ = build_entry(("x",), builder.guards, [], None, [], "True", ns)
    native = None
    if AVAILABLE:
        entry = build_native_entry(("x",), builder.guards, [], None, [], "True", ns, None, None, "t")
        if entry is not None:
            native = lambda v: entry.fn(v) is not NATIVE_MISS     # noqa: E731
    return check, native


PROBES = [np.zeros((5, 9))[::-1, ::-1], np.zeros((2, 3))[::-1, ::-1], np.zeros((4, 4))[::-1], np.zeros((4, 6))[::2],
          np.zeros((3, 10))[::2], np.zeros((4, 6))[:, ::2], np.zeros((4, 7))[:, ::2], np.zeros((3, 4)),
          np.zeros((3, 4)).T, np.zeros((6, 5)).T[::-1], np.zeros((4, 3), np.float32)[::-1, ::-1]]


@pytest.mark.parametrize("i", [i for i, a in enumerate(PROBES) if i != 6])   # 6: odd rows, no formula
def test_python_native_and_text_agree(i):
    a = PROBES[i]
    f = stride_formula(a.shape, a.strides, a.itemsize)
    assert f is not None and stride_formula(PROBES[6].shape, PROBES[6].strides, 8) is None
    b = GuardBuilder()
    b.type(X, a)
    b.dtype(X, a.dtype)
    b.ndim(X, a.ndim)
    g = b.stride_formula(X, f)
    assert g.name.startswith("L['x'].strides == (")
    check, native = checks(b)
    if AVAILABLE:
        assert native is not None
    for v in PROBES:
        want = v.dtype == a.dtype and v.ndim == a.ndim and evaluate(f, v.shape) == v.strides
        assert check(v) is want, (a.strides, v.shape, v.strides)
        if native is not None:
            assert native(v) is want


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_reversed_views_compile_once_with_dynamic_sizes(backend):
    def f(x):
        return x.ravel() * 2.0, x.reshape(-1)[:3]
    c = ft.compile(f, dynamic=True, backend=backend)
    for n, m in ((4, 7), (5, 13), (9, 2), (3, 3)):
        x = np.arange(n * m * 1.0).reshape(n, m)[::-1, ::-1]
        for got, want in zip(c(x), f(x)):
            np.testing.assert_array_equal(got, want)
            assert np.shares_memory(got, x) == np.shares_memory(want, x)
    assert ft.stats().unique_graphs == 1
