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


def outcome(fn, args, copy=False):
    """("ok", result, warnings) or ("raise", (exception type, message), warnings) of fn(*args),
    every warning recorded (category, message) in order; `copy`: the array arguments are copied
    first (order "K"), so in-place programs run on fresh data each time."""
    import warnings
    if copy:
        args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = "ok", fn(*args)
        except Exception as e:                              # noqa: BLE001 - part of the outcome
            result = "raise", (type(e), str(e))
    return result + ([(w.category, str(w.message)) for w in caught],)


def exactly(got, want, strides=False):
    """Same type (dicts, tuples and lists item by item), dtype, shape (with `strides`, strides
    too) and bits: NaN equals NaN, -0.0 differs from 0.0."""
    if isinstance(want, dict):
        assert type(got) is dict and got.keys() == want.keys(), (got, want)
        for k in want:
            exactly(got[k], want[k], strides)
        return
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            exactly(g, w, strides)
        return
    assert type(got) is type(want), (type(got), type(want), got, want)
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want), (got.dtype, want.dtype, got, want)
        if strides and isinstance(want, np.ndarray):
            assert got.strides == want.strides, (got.strides, want.strides)
        assert np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"), (got, want)
        if want.dtype.kind == "f":
            assert np.array_equal(np.signbit(got), np.signbit(want)), (got, want)
    else:
        assert got == want or (got != got and want != want), (got, want)
        if isinstance(want, float):
            assert np.signbit(got) == np.signbit(want), (got, want)


def same_outcome(fn, *args, backend="llvm", fullgraph=True, copy=False, strides=False):
    """fn compiled gives fn's outcome (module `outcome`): the same warnings in order, the same
    exception and message, or a result `exactly` the same; returns the compiled result."""
    want = outcome(fn, args, copy)
    got = outcome(ft.compile(fn, backend=backend, fullgraph=fullgraph), args, copy)
    assert got[0] == want[0] and got[2] == want[2], (got, want)
    if want[0] == "ok":
        exactly(got[1], want[1], strides)
    else:
        assert got[1] == want[1], (got, want)
    return got[1]
