# ruff: noqa: E731
"""np.take_along_axis as a gather inside our kernels (op take_along: ir/ops/take_along.py,
lower/kernels.py, codegen gather_pos), end to end through ft.compile(fullgraph=True) on both
backends: every axis, negative indices, broadcasting index and array dims, axis=None, fused
producers and consumers (argsort, arithmetic, reductions), int64 / int32 / uint8 indices,
float / int / bool arrays, C / Fortran / reversed layouts, and NumPy's IndexError for an index
out of bounds (raised by NumPy's redo of the call) and its errors on the arguments."""
import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}

PROGRAMS = {
    "axis1": lambda x, i: np.take_along_axis(x, i, axis=1),
    "axis0_fused": lambda x, i: np.take_along_axis(x * 2, i, 0) + 1,
    "negative_axis_reduced": lambda x, i: np.take_along_axis(x, i, axis=-1).sum(axis=1),
    "broadcast_index": lambda x, i: np.take_along_axis(x, i[:, :1], axis=1),
    "broadcast_array": lambda x, i: np.take_along_axis(x[:1], i, axis=1),
    "flat": lambda x, i: np.take_along_axis(x.ravel(), i.ravel(), axis=None),
    "argsort": lambda x, i: np.take_along_axis(x, np.argsort(x, axis=1), axis=1),
    "transposed": lambda x, i: np.take_along_axis(x.T, i.T, axis=0),
}


def _layouts(a):
    return [a, np.asfortranarray(a), a[::-1, ::-1]]


@ft.config.patch(cache_size_limit=64)
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.bool_])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_take_along_matches_numpy(name, dtype, index_dtype, backend, rng):
    fn = PROGRAMS[name]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for shape in ((1, 1), (3, 4), (8, 5), (40, 7)):
        x = (rng.standard_normal(shape) * 5).astype(dtype)
        low = 0 if np.dtype(index_dtype).kind == "u" else -min(shape)
        i = rng.integers(low, min(shape), shape).astype(index_dtype)
        for xv, iv in zip(_layouts(x), _layouts(i)):
            assert_same(compiled(xv, iv), fn(xv, iv))
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("bad", [5, -6, 200])
def test_out_of_bounds_raises_numpys_index_error(bad, backend, rng):
    fn = PROGRAMS["axis1"]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    x = rng.standard_normal((3, 5))
    i = rng.integers(0, 5, (3, 5))
    assert_same(compiled(x, i), fn(x, i))
    i[1, 2] = bad
    with pytest.raises(IndexError) as want:
        fn(x, i)
    with pytest.raises(IndexError) as got:
        compiled(x, i)
    assert str(got.value) == str(want.value)


def test_argument_errors_are_numpys(backend, rng):
    x = rng.standard_normal((3, 5))
    for fn, i in ((lambda x, i: np.take_along_axis(x, i, axis=1), x > 0),
                  (lambda x, i: np.take_along_axis(x, i, axis=1), np.zeros(5, np.int64)),
                  (lambda x, i: np.take_along_axis(x, i, axis=None), np.zeros((3, 5), np.int64)),
                  (lambda x, i: np.take_along_axis(x, i, axis=2), np.zeros((3, 5), np.int64))):
        with pytest.raises(Exception) as want:
            fn(x, i)
        with pytest.raises(type(want.value)):
            ft.compile(fn, backend=FT_BACKEND[backend])(x, i)


def test_sizes_sweep_two_graphs_and_a_native_gather(backend, rng):
    fn = PROGRAMS["axis0_fused"]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (3, 6, 20, 300):
        x, i = rng.standard_normal((n, 4)), rng.integers(-n, n, (n, 4))
        assert_same(compiled(x, i), fn(x, i))
    assert ft.stats().unique_graphs == 2
    text = "\n".join(str(g) for g in ft.explain(fn, x, i).graphs)
    assert "take_along(" in text and "take_along_axis" not in text
