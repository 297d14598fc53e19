# ruff: noqa: E731
"""np.repeat with per-element repeats (a list or an array): NumPy's call inside the graph with
an unbacked result length, fused with what follows; no graph break, one graph for every size
and every repeat count; NumPy's ValueError for repeats of the wrong length or negative ones."""
import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}

PROGRAMS = {
    "flat_array": lambda x, r: np.repeat(x, r) * 2.0,
    "axis0_array": lambda x, r: np.repeat(x, r[:x.shape[0]], axis=0).sum(axis=1),
    "axis1_list": lambda x, r: np.repeat(x, [2, 0, 1], axis=-1) + x[:, :1],
    "method": lambda x, r: x.repeat(r[:x.shape[1]], 1).sum(axis=0),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_repeat_each_matches_numpy(name, backend, rng):
    fn = PROGRAMS[name]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for rows in (2, 5, 9):
        x = rng.standard_normal((rows, 3))
        r = rng.integers(0, 4, rows * 3)
        for _ in range(2):                             # new counts, same sizes: no recompile
            assert_same(compiled(x, r), fn(x, r))
            r = rng.integers(0, 4, rows * 3)
    assert ft.stats().graph_breaks == 0 and ft.stats().unique_graphs <= 2


@pytest.mark.parametrize("r", [np.array([1, 2]), np.array([1, -1, 1, 1])])
def test_repeat_each_errors_are_numpys(r, backend):
    fn = lambda x, r: np.repeat(x, r)
    x = np.arange(4.0)
    with pytest.raises(ValueError) as want:
        fn(x, r)
    with pytest.raises(ValueError) as got:
        ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])(x, r)
    assert str(got.value) == str(want.value)
