"""New arrays whose every byte is zero (np.zeros, np.empty, np.zeros_like in the prototype's
order, np.full(..., 0)) are allocated zeroed by the wrapper (calloc, lazily zeroed pages)
instead of being filled by a kernel (fusion.py `zero_fill`, wrapper.py): same values, dtypes
and strides as NumPy on C, F and strided inputs; -0.0 is not a zero fill."""
import logging

import numpy as np
import pytest

import frametrace as ft
from tracing import assert_same


@pytest.fixture(autouse=True)
def _clean():
    ft.reset()
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


def _write(out, x):
    out[1:, 1:] = x[:-1, :-1] * 2
    return out


def zeros_then_write(x):
    return _write(np.zeros(x.shape, x.dtype), x)


def zeros_like_2d(x):
    return _write(np.zeros_like(x), x)


def empty_like_fully_written(x):
    out = np.empty_like(x)
    out[...] = x + 1
    return out


def full_zero(x):
    return _write(np.full(x.shape, 0.0), x)


def zeros_int(x):
    out = np.zeros((x.shape[0], 3), dtype=np.int32)
    out[1:, 1] = 7
    return out


@pytest.mark.parametrize("fn", [zeros_then_write, zeros_like_2d, empty_like_fully_written, full_zero, zeros_int])
def test_zero_filled_allocations_are_numpys(fn, caplog):
    compiled = ft.compile(fn, dynamic=True, fullgraph=True)
    rng = np.random.default_rng(0)
    with caplog.at_level(logging.INFO, logger="frametrace.output_code"):
        for n, m in ((4, 6), (9, 3), (7, 7)):
            base = rng.standard_normal((n, m))
            for x in (base, np.asfortranarray(base), rng.standard_normal((n, 2 * m))[:, ::2]):
                got, want = compiled(x), fn(x)
                assert_same(got, want)
                assert got.strides == want.strides, fn.__name__
    assert "_zeros(" in caplog.text


def test_full_of_zero_and_of_negative_zero():
    """np.full(..., 0.0) is a zero fill; np.full(..., -0.0) is not (its sign bit is set)."""
    def fn(x, fill):
        out = np.full(x.shape, fill)
        out[1:] = x[:-1]
        return out
    compiled = ft.compile(fn, dynamic=True, fullgraph=True)
    for fill in (0.0, -0.0, 0):
        x = np.random.default_rng(1).standard_normal(7)
        got, want = compiled(x, fill), fn(x, fill)
        assert_same(got, want)
        assert np.signbit(got[0]) == np.signbit(want[0])
