# ruff: noqa: E731
"""np.sort of short last-axis rows in our kernels (sort_rows: ir/ops/sorting.py, lower/sorting.py),
end to end through ft.compile(fullgraph=True) on both backends. The result equals NumPy's bit
for bit (tobytes), including the order of -0.0 and 0.0 and where NaNs (np.nan and others)
land, for row lengths 0..17 (16 is the native limit, 17 runs NumPy's sort), float64 / float32
/ signed / unsigned / bool, C, Fortran, reversed and strided layouts; x.sort() in place too.
Sizes sweep with two graphs; the native cases emit sort_rows, the others the opaque sort."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.lower.sorting import sort_rows  # noqa: F401  (the module under test)

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}
DTYPES = [np.float64, np.float32, np.int64, np.int32, np.int8, np.uint64, np.uint16, np.bool_]

PROGRAMS = {
    "rows": lambda x: np.sort(x, axis=1),
    "last_axis_default": lambda x: np.sort(x),
    "fused": lambda x: np.sort(x * 2, axis=-1)[:, :3] + 1,
    "stable": lambda x: np.sort(x, kind="stable"),
    "first_axis_opaque": lambda x: np.sort(x, axis=0),
    "flat_opaque": lambda x: np.sort(x, axis=None),
    "vector": lambda x: np.sort(x[0]),
}


def _values(rng, shape, dtype, special):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    x = (rng.standard_normal(shape) * 3).astype(dt)
    pick = rng.random(shape)
    if special >= 1:                                   # zeros of both signs, infinities
        x[pick < 0.2] = 0.0
        x[(pick >= 0.2) & (pick < 0.3)] = -0.0
        x[(pick >= 0.3) & (pick < 0.35)] = np.inf
        x[(pick >= 0.35) & (pick < 0.4)] = -np.inf
    if special >= 2:                                   # np.nan, and a NaN with the sign set
        x[(pick >= 0.4) & (pick < 0.5)] = np.nan
    if special >= 3:
        x[(pick >= 0.5) & (pick < 0.55)] = -np.float64(np.nan).astype(dt)
    return x


def _same(got, want):
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)


@ft.config.patch(cache_size_limit=256)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sort_matches_numpy_bit_for_bit(name, dtype, backend, rng):
    fn = PROGRAMS[name]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (0, 1, 2, 3, 5, 8, 13, 16, 17):
        for special in (0, 1, 2, 3) if np.dtype(dtype).kind == "f" else (0,):
            x = _values(rng, (6, n), dtype, special)
            for v in (x, np.asfortranarray(x), x[::-1, ::-1], np.repeat(x, 2, 0)[::2]):
                if not v.size and name in ("vector", "fused"):
                    continue
                _same(compiled(v), fn(v))
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_sort_in_place(dtype, backend, rng):
    def fn(x):
        y = x * 1
        y.sort()
        return y
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for rows in (3, 10, 40):
        x = _values(rng, (rows, 12), dtype, 2)
        _same(compiled(x), fn(x))
    assert ft.stats().unique_graphs == 2


def test_rows_sweep_compiles_twice(backend, rng):
    fn = PROGRAMS["fused"]
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for rows in (3, 10, 40, 1000):
        x = _values(rng, (rows, 16), np.float64, 0)
        _same(compiled(x), fn(x))
    assert ft.stats().unique_graphs == 2


@pytest.mark.parametrize("n, native", [(4, True), (16, True), (17, False)])
def test_short_rows_are_native(n, native, rng):
    x = _values(rng, (5, n), np.float64, 0)
    graphs = "\n".join(str(g) for g in ft.explain(PROGRAMS["rows"], x).graphs)
    assert ("sort_rows(" in graphs) == native and ("sort(" in graphs.replace("sort_rows(", "")) != native
