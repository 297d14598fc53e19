"""The vector loop of a unit-stride map starts where its first store is on a 64-byte line: a
scalar loop runs the first few elements (emit.py `_peel`). Every element must get NumPy's
value and NumPy's FP report whatever the destination's offset, the split into threads'
chunks, the size and the dtype."""
import re
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.config import config
from helpers import assert_same
from tracing import A, Traced

rng = np.random.default_rng(23)


def _at(n, offset, dtype):
    """A 1-d array of n elements whose data starts `offset` elements after a 64-byte line."""
    dtype = np.dtype(dtype)
    raw = np.zeros(n * dtype.itemsize + 192, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset * dtype.itemsize
    return raw[start:start + n * dtype.itemsize].view(dtype)


def _fill(a, dtype):
    a[...] = (rng.standard_normal(a.shape) * 40).astype(dtype)
    return a


def test_the_peel_is_a_scalar_loop_before_the_vector_loop():
    t = Traced(lambda x, y: x * 2.0 + y, A(("n",)), A(("n",)))
    ir = t.run.llvm_ir
    assert "peeled" in ir and "ptrtoint" in ir
    for n in (0, 1, 5, 8, 9, 77):
        for off in (0, 1, 3, 7):
            t.check(_fill(_at(n, off, "f8"), "f8"), _fill(_at(n, (off + 2) % 8, "f8"), "f8"))


def test_a_reduction_or_a_transcendental_is_not_peeled():
    # a sum's order (and so its last bit) would depend on the array's address; exp's scalar
    # and vector versions need not give the same bits
    for fn in (lambda x: x.sum(), lambda x: np.exp(x) + 1.0):
        t = Traced(fn, A(("n",)))
        assert "peeled" not in t.run.llvm_ir
        for off in (0, 3):
            t.check(_fill(_at(41, off, "f8"), "f8") / 40)


@pytest.mark.parametrize("dtype", ["f8", "f4", "i1", "i2", "i4", "i8", "u8", "?"])
def test_in_place_maps_match_numpy_at_every_offset(dtype):
    def f(x, y):
        x += y
        x *= 3 if x.dtype.kind in "iu" else True if x.dtype.kind == "b" else 0.5
        return x

    compiled = ft.compile(f, backend="llvm", fullgraph=True)
    for n in (0, 1, 2, 7, 8, 9, 63, 64, 65, 1000, 4099):
        for xo in (0, 1, 5):
            for yo in (0, 3):
                x, y = _fill(_at(n, xo, dtype), dtype), _fill(_at(n, yo, dtype), dtype)
                ex, ey = x.copy(), y.copy()
                with np.errstate(all="ignore"):
                    got, want = compiled(x, y), f(ex, ey)
                assert_same(got, want)
                assert got is x


@pytest.mark.parametrize("threads", [1, 2])
def test_chunks_of_a_split_loop_each_peel(threads):
    def f(x, y):
        return np.sqrt(x * x + y * y)

    before = config.num_threads
    config.num_threads = threads
    try:
        compiled = ft.compile(f, backend="llvm", fullgraph=True)
        for off in (0, 3):
            x, y = _fill(_at(300_001, off, "f8"), "f8"), _fill(_at(300_001, 5, "f8"), "f8")
            assert_same(compiled(x, y), f(x, y))
    finally:
        config.num_threads = before


def test_peeled_elements_report_fp_errors_as_numpy():
    def f(x, y):
        x += y
        return x

    compiled = ft.compile(f, backend="llvm", fullgraph=True)
    for bad in (0, 2, 6, 40):                      # in the peel, at its end, in the vector loop
        x, y = _fill(_at(50, 3, "f8"), "f8"), _fill(_at(50, 1, "f8"), "f8")
        x[bad], y[bad] = np.inf, -np.inf
        ex, ey = x.copy(), y.copy()
        with warnings.catch_warnings(record=True) as got_w:
            warnings.simplefilter("always")
            compiled(x, y)
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            f(ex, ey)
        assert_same(x, ex)
        assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w] != []
        assert re.search("invalid", str(got_w[0].message))
