"""Scalars of every size and kind reach compiled code as NumPy sees them (issue 12, item 4).

Classes: floats computed from symbolic sizes (a size expression that is a float must reach a
kernel as a double, not be packed as an int64); Python ints outside int64 (NumPy's NEP 50
answer: a float for a float array, OverflowError for an int64 array); ints from Python
arithmetic on dynamic ints. Every case runs on both backends and every `dynamic` setting.
"""
import numpy as np
import pytest

import frametrace as ft
from soundness_helpers import run

DYNAMIC = (None, True, False)

FLOATS_OF_SIZES = [
    lambda x: x * (1.0 / x.shape[0]),
    lambda x: x / len(x) ** 0.5,
    lambda x: np.clip(x, -x.shape[0] / 2, x.shape[0] / 2),
    lambda x: x * 2.0 ** -x.shape[0],
    lambda x: x - x.shape[0] * 0.25,
    lambda x: (x + len(x) / 3) * (x.size / 7),
    lambda x: np.where(x > len(x) / 2, x.shape[0] * 1.5, x),
    lambda x: x.astype(np.float32) * (1.0 / x.shape[0]),       # a weak float next to float32
    lambda x: (x * 2).astype(np.int64) + x.shape[0] / 4,         # int array + float of a size
]


def _graphs_for(dynamic, sizes):
    """One graph per size when static, one when dynamic, two under automatic dynamic."""
    return {None: 2, True: 1, False: len(sizes)}[dynamic]


@pytest.mark.parametrize("dynamic", DYNAMIC)
@pytest.mark.parametrize("case", range(len(FLOATS_OF_SIZES)))
def test_floats_computed_from_sizes(backend, dynamic, case):
    fn = FLOATS_OF_SIZES[case]
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    sizes = (3, 4, 9, 17)
    rng = np.random.default_rng(case)
    for n in sizes:
        run(fn, rng.standard_normal(n) * 4, compiled=f)
    assert ft.stats().unique_graphs == _graphs_for(dynamic, sizes)


BIG_INTS = (2 ** 63 - 1, 2 ** 63, -(2 ** 63), -(2 ** 63) - 1, 2 ** 64, -(2 ** 70), 10 ** 30)


@pytest.mark.parametrize("dynamic", DYNAMIC)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint64, np.int8, np.complex128])
def test_python_ints_beyond_int64(backend, dynamic, dtype):
    """In range first (the int may become a dynamic input), then every edge of int64 and far
    beyond: NumPy's value, or NumPy's exception (OverflowError for an int64 array)."""
    fn = lambda x, k: x * k + 1          # noqa: E731
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    x = np.arange(3).astype(dtype)
    with np.errstate(over="ignore"):
        for k in (3, 5, 7) + BIG_INTS + (11,):
            run(fn, x, k, compiled=f)


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_ints_out_of_int64_only_recompile_for_big_values(backend, dynamic):
    f = ft.compile(lambda x, k: x * k, backend=backend, dynamic=dynamic)
    x = np.ones(2)
    for k in (3, 5, 2 ** 40, 2 ** 64, -(2 ** 70), 2 ** 41):
        run(lambda x, k: x * k, x, k, compiled=f)
    # static: one graph per value; dynamic: one for in-range ints plus one per value outside int64
    assert ft.stats().unique_graphs == {None: 4, True: 3, False: 6}[dynamic]


@pytest.mark.parametrize("dynamic", DYNAMIC)
def test_float_of_a_size_as_a_python_result(backend, dynamic):
    fn = lambda x: (x * 2, x.shape[0] / 4, len(x) ** 0.5)        # noqa: E731
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    for n in (3, 5, 8):
        run(fn, np.arange(float(n)), compiled=f)


COMPUTED_INTS = [
    lambda x, k: x * (k * k),
    lambda x, k: x + (k << 40),
    lambda x, k: x * (k + x.shape[0] * 2 ** 62),
    lambda x, k: x - k ** 3,
]


@pytest.mark.parametrize("dynamic", DYNAMIC)
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint8])
@pytest.mark.parametrize("case", range(len(COMPUTED_INTS)))
def test_ints_computed_beyond_int64(backend, dynamic, dtype, case):
    """Python arithmetic on dynamic ints and sizes leaves int64 at some values only: the
    compiled code must give NumPy's float, or raise NumPy's OverflowError, at those."""
    fn = COMPUTED_INTS[case]
    f = ft.compile(fn, backend=backend, dynamic=dynamic)
    x = np.arange(1, 4).astype(dtype)
    with np.errstate(over="ignore"):
        for k in (3, 5, 2 ** 31, 2 ** 33, -(2 ** 40), 7, 2 ** 21):
            run(fn, x, k, compiled=f)
