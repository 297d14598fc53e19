"""Flips and negative-step views inside a graph: the innermost loop's fast copy reads them as
reversed unit-stride vectors (emit.py `_prepare_versions`), and gives NumPy's values."""
import re

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same
from tracing import A, Traced

rng = np.random.default_rng(11)


def test_a_flip_read_is_vectorised_with_reversed_loads():
    t = Traced(lambda a, b: a[::-1] * 2.0 + b, A(("n",)), A(("n",)))
    asm = t.run.module.asm
    assert re.search(r"\bvperm\w*", asm), "no reversed vector load in the fast copy"
    for n in (0, 1, 2, 7, 64, 1001):
        t.check(rng.standard_normal(n), rng.standard_normal(n))


@pytest.mark.parametrize("dtype", ["f8", "f4", "i1", "i4", "i8", "u2", "?"])
@pytest.mark.parametrize("fn", [
    lambda x, y: np.flip(x) + y,
    lambda x, y: np.flip(x, axis=0) * y,
    lambda x, y: np.fliplr(x) + y[::-1],
    lambda x, y: x[::-1, ::-1] + x,
    lambda x, y: x[:, ::-2] + y[:, ::2],                  # step -2: the byte-strided copy
    lambda x, y: np.flip(x, axis=1).sum(axis=1),
    lambda x, y: np.maximum(x[:, ::-1], y),
])
def test_flips_match_numpy(fn, dtype):
    f = lambda x, y: fn(x, y)      # noqa: E731  (a code object per case)
    compiled = ft.compile(f, backend="llvm", fullgraph=True)
    for shape in ((5, 8), (1, 1), (3, 33), (0, 4), (17, 2)):
        x = (rng.standard_normal(shape) * 50).astype(dtype)
        y = (rng.standard_normal(shape) * 50).astype(dtype)
        with np.errstate(all="ignore"):
            assert_same(compiled(x, y), f(x, y))
    assert ft.stats().graph_breaks == 0


def test_negative_stride_inputs_and_in_place_reversal():
    def f(x, y):
        y[...] = x[::-1] * 2.0               # a write beside a reversed read
        return y + x[::-1]

    def g(x):
        x[...] = x[::-1].copy()              # NumPy's own copy: no overlap left
        return x

    compiled, cg = ft.compile(f, backend="llvm"), ft.compile(g, backend="llvm")
    for n in (1, 8, 33):
        x = rng.standard_normal(n)
        y1, y2 = np.zeros(n), np.zeros(n)
        assert_same(compiled(x, y1), f(x, y2))
        np.testing.assert_array_equal(y1, y2)
        assert_same(compiled(x[::-1], y1[::-1]), f(x[::-1], y2[::-1]))     # run-time negative strides
        a, b = x.copy(), x.copy()
        assert_same(cg(a), g(b))


def test_stores_through_flipped_views():
    def f(x, y):
        y[::-1] = x * 2.0                    # a reversed store
        y[:, ::-1] += x[::-1]                # reversed load and store of the same buffer
        return y

    compiled = ft.compile(f, backend="llvm")
    for shape in ((1, 1), (3, 5), (17, 33), (64, 128)):
        x = rng.standard_normal(shape)
        y1, y2 = np.zeros(shape), np.zeros(shape)
        assert_same(compiled(x, y1), f(x, y2))
        np.testing.assert_array_equal(y1, y2)
    assert ft.stats().graph_breaks == 0
