# ruff: noqa: B023  (the lambdas built in loops are called within the same iteration)
"""Reductions and scans: shapes, dtypes (NumPy's accumulator rules), scalar results, errors."""
import numpy as np
import pytest

from frametrace.errors import Unsupported
from frametrace.ir.numpy_api import lookup_function, lookup_method
from ir_helpers import Rt, check, run, views

DTYPES = [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8, np.bool_, np.complex64]
REDUCTIONS = ["sum", "prod", "mean", "var", "std", "max", "min", "any", "all"]
SHAPES = [(), (0,), (1,), (5,), (3, 4), (0, 3), (3, 0), (2, 1, 3)]


def data(rng, shape, dtype):
    x = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind in "iub":
        x = np.abs(x) if np.dtype(dtype).kind == "u" else x
    return x.astype(dtype)


def axes_for(ndim):
    out = [None]
    for a in range(-ndim, ndim):
        out.append(a)
    if ndim >= 2:
        out += [(0, 1), (-1, 0), ()]
    return out


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_function_and_method(name, rng):
    fn, eager = lookup_function(getattr(np, name)), getattr(np, name)
    meth = lookup_method(name)
    for dtype in DTYPES:
        for shape in SHAPES:
            x = data(rng, shape, dtype)
            for axis in axes_for(len(shape)):
                for keepdims in (False, True):
                    kw = {"axis": axis, "keepdims": keepdims}
                    check(lambda b, x: fn(b, x, **kw), lambda x: eager(x, **kw), x)
            for v in views(x)[1:]:
                check(lambda b, x: meth(b, x, 0), lambda x: getattr(x, name)(0), v)
        check(lambda b, x: fn(b, x), eager, np.dtype(dtype).type(2))     # NumPy scalar input


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std"])
def test_reduction_dtype_argument(name, rng):
    fn, eager = lookup_function(getattr(np, name)), getattr(np, name)
    for dtype in (np.int8, np.float32, np.bool_):
        x = data(rng, (3, 4), dtype)
        for dt in (np.float32, np.float64, np.int64, np.complex128):
            check(lambda b, x: fn(b, x, axis=1, dtype=dt), lambda x: eager(x, axis=1, dtype=dt), x)


def test_var_std_ddof(rng):
    x = rng.standard_normal((4, 5))
    for name in ("var", "std"):
        for ddof in (0, 1, 2.5, 5):
            check(lambda b, x: lookup_method(name)(b, x, axis=0, ddof=ddof),
                  lambda x: getattr(x, name)(axis=0, ddof=ddof), x)


def test_sum_of_python_scalar_is_numpy_scalar():
    got = check(lambda b, x: lookup_function(np.sum)(b, x), np.sum, Rt(2.5))
    assert isinstance(got, np.float64)
    check(lambda b, x: lookup_function(np.sum)(b, x), np.sum, Rt(True))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, rng):
    fn, eager = lookup_function(getattr(np, name)), getattr(np, name)
    for dtype in DTYPES[:-1]:
        for shape in SHAPES:
            x = data(rng, shape, dtype)
            if x.size:
                x.reshape(-1)[0] = x.reshape(-1)[-1]         # ties: first index wins
            for axis in [a for a in axes_for(len(shape)) if not isinstance(a, tuple)]:
                for keepdims in (False, True):
                    check(lambda b, x: fn(b, x, axis=axis, keepdims=keepdims),
                          lambda x: eager(x, axis=axis, keepdims=keepdims), x)
    x = np.array([1.0, np.nan, 3.0])
    check(lambda b, x: fn(b, x), eager, x)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans(name, rng):
    fn, eager = lookup_function(getattr(np, name)), getattr(np, name)
    for dtype in DTYPES:
        for shape in SHAPES:
            x = data(rng, shape, dtype)
            for axis in [a for a in axes_for(len(shape)) if not isinstance(a, tuple)]:
                check(lambda b, x: fn(b, x, axis=axis), lambda x: eager(x, axis=axis), x)
                check(lambda b, x: fn(b, x, axis=axis, dtype=np.float32),
                      lambda x: eager(x, axis=axis, dtype=np.float32), x)
        check(lambda b, x: fn(b, x), eager, np.dtype(dtype).type(3))


def test_empty_reductions_without_identity_raise_value_error():
    for name in ("max", "min", "argmax", "argmin"):
        fn, eager = lookup_function(getattr(np, name)), getattr(np, name)
        for shape, axis in [((0,), None), ((0, 3), 0), ((3, 0), 1), ((0, 0), 0), ((3, 0), 0)]:
            check(lambda b, x: fn(b, x, axis=axis), lambda x: eager(x, axis=axis), np.ones(shape))


def test_axis_errors_are_numpys():
    x = np.ones((2, 3))
    check(lambda b, x: lookup_function(np.sum)(b, x, axis=2), lambda x: np.sum(x, axis=2), x)
    check(lambda b, x: lookup_function(np.sum)(b, x, axis=(0, 0)), lambda x: np.sum(x, axis=(0, 0)), x)
    check(lambda b, x: lookup_function(np.argmax)(b, x, axis=-3), lambda x: np.argmax(x, axis=-3), x)


def test_out_argument(rng):
    x = rng.standard_normal((3, 4))

    def traced(b, x, o):
        r = lookup_function(np.sum)(b, x, axis=0, out=o)
        assert r is o
        return r
    check(traced, lambda x, o: np.sum(x, axis=0, out=o), x, np.zeros(4))
    check(traced, lambda x, o: np.sum(x, axis=0, out=o), x, np.zeros(4, np.int64))
    check(traced, lambda x, o: np.sum(x, axis=0, out=o), x, np.zeros((1, 4)))
    check(lambda b, x, o: lookup_method("cumsum")(b, x, 1, None, o),
          lambda x, o: x.cumsum(1, None, o), x, np.zeros((3, 4), np.int32))


def test_unsupported_arguments_name_the_function():
    for kw in ({"initial": 0}, {"where": np.ones(3, bool)}):
        with pytest.raises(Unsupported, match="np.sum.*(initial|where)"):
            run(lambda b, x: lookup_function(np.sum)(b, x, **kw), np.ones(3))


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nancumsum", "nancumprod"])
def test_nan_reductions_are_reductions_of_a_where(name, rng):
    """np.nansum / np.nanprod: NaN replaced by 0 / 1, then a (fused) sum / prod, as NumPy does."""
    fn, eager = lookup_function(getattr(np, name)), getattr(np, name)
    for dtype in DTYPES:
        for shape in SHAPES:
            x = data(rng, shape, dtype)
            if x.dtype.kind in "fc" and x.size >= 3:
                flat = x.reshape(-1)
                flat[0], flat[-1] = np.nan, -0.0
                if x.size >= 4:
                    flat[1] = np.inf
            for v in views(x):
                for axis in axes_for(len(shape))[:4]:
                    for keepdims in ((False, True) if "cum" not in name else (None,)):
                        kw = {"axis": axis} if keepdims is None else {"axis": axis, "keepdims": keepdims}
                        check(lambda b, a: fn(b, a, **kw), lambda a: eager(a, **kw), v)
                check(lambda b, a: fn(b, a, dtype=np.float64), lambda a: eager(a, dtype=np.float64), v)
    all_nan = np.full((3, 2), np.nan)
    check(lambda b, a: fn(b, a, axis=0), lambda a: eager(a, axis=0), all_nan)
