"""Shared test helpers: compare a compiled function with NumPy eager."""
import numpy as np

import frametrace as ft

# Both backends, always: llvmlite is a runtime dependency, so a missing LLVM backend is a failure.
BACKENDS = ("numpy", "llvm")


def assert_same(got, want, rtol=None):
    """Same type, dtype, shape and values (NaN-aware) as eager."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want), (type(got), type(want))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol)
        return
    if isinstance(want, dict):
        assert type(got) is dict and got.keys() == want.keys()
        for k in want:
            assert_same(got[k], want[k], rtol)
        return
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
        if rtol is None:
            rtol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)
    else:
        assert got == want or (got != got and want != want), (got, want)


def assert_identical(got, want):
    """Same type, dtype, shape and exactly the same values (NaN equal to NaN) as eager, for
    tuples of results too: what a loop computes element by element in eager order."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_identical(g, w)
        return
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    elif isinstance(want, (float, np.floating)):
        assert (want != want and got != got) or got == want, (got, want)
    else:
        assert got == want, (got, want)


def check(fn, *args, graphs=None, **compile_kw):
    """Run fn eagerly on copies and compiled; compare results and argument mutations."""
    import copy
    f = ft.compile(fn, **compile_kw)
    eager_args = copy.deepcopy(args)
    want = fn(*eager_args)
    got = f(*args)
    assert_same(got, want)
    for a, b in zip(args, eager_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    if graphs is not None:
        assert ft.stats().unique_graphs == graphs, ft.stats()
    return f
