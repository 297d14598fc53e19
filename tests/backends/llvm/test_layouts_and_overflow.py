"""NumPy eager parity of two things the values alone don't show, on both backends, with the
native entry on and off:

- memory layout: NumPy allocates ufunc, reduction, scan and copy results in "K" order (an
  F-ordered input gives an F-ordered result), so returned strides and reshape/ravel views
  follow the inputs' layouts (backends/llvm/layouts.py);
- NEP 50: a run-time Python int next to a narrower integer array raises OverflowError when
  the dtype cannot hold it (lower/weak_ints.py), and comparisons compare exactly.
"""
import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime.native import AVAILABLE

from helpers import assert_same

BACKENDS = ["numpy", "llvm"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


@pytest.fixture(params=[True, False], ids=["native", "python"])
def native(request):
    with ft.config.patch(native_dispatch=request.param):
        yield request.param


def compiled(src, backend):
    g = {"np": np}
    exec("def f(x, n=0):\n    return " + src + "\n", g)
    return ft.compile(g["f"], backend=backend), g["f"]


def native_hits(f):
    return sum(e.native.hits for e in f._frametrace_cache.entries if e.native is not None)


def _c(shape):
    return np.arange(float(np.prod(shape))).reshape(shape)


INPUTS = {
    "C": lambda: _c((3, 4)),
    "F": lambda: np.asfortranarray(_c((3, 4))),
    "T3": lambda: _c((2, 3, 4)).transpose(2, 0, 1),
    "strided": lambda: _c((3, 8))[:, ::2],
    "T3b": lambda: _c((4, 3, 5)).transpose(1, 2, 0),
}

BODIES = [
    "x + 1", "np.sin(x) * 2", "x * x", "(x + 1).T", "x[::-1] - 1",
    "x.sum(axis=0)", "x.sum(axis=-1, keepdims=True)", "x.max(axis=1)", "x.mean(axis=0, keepdims=True) * 2",
    "np.copy(x)", "x.copy()", "x.astype(np.float32)", "np.cumsum(x, axis=0)",
    "(x + 1, (x + 1).T.reshape(-1))", "(x * 2, (x * 2).ravel())",
]


def _strides(v):
    """Strides of the dims of size > 1 (a size-1 dim's stride is never used to address memory;
    numpy_api/layout.py, which both backends follow, does not model it where NumPy varies)."""
    if isinstance(v, tuple):
        return tuple(_strides(a) for a in v)
    return tuple(s if d != 1 else None for d, s in zip(v.shape, v.strides))


@pytest.mark.parametrize("body", BODIES)
def test_output_strides_follow_numpy(backend, native, body):
    f, eager = compiled(body, backend)
    for name in ("C", "F", "C", "strided", "F", "T3", "T3b", "T3", "C"):   # one entry sees several layouts
        got, want = f(INPUTS[name]()), eager(INPUTS[name]())
        assert_same(got, want)
        assert _strides(got) == _strides(want), (name, _strides(got), _strides(want))
        if isinstance(want, tuple) and len(want) == 2 and want[1].ndim == 1:
            assert np.shares_memory(got[0], got[1]) == np.shares_memory(want[0], want[1]), name


@pytest.mark.skipif(not AVAILABLE, reason="native entries need CPython 3.11 + NumPy 2 layouts")
def test_native_entry_serves_c_and_other_layouts():
    with ft.config.patch(native_dispatch=True):
        f, eager = compiled("x * 2 + x", "llvm")
        f(_c((3, 4)))
        before = native_hits(f)
        got = f(_c((3, 4)))
        assert native_hits(f) == before + 1
        assert got.strides == (32, 8)
        before = native_hits(f)
        x = np.asfortranarray(_c((3, 4)))
        got = f(x)
        assert native_hits(f) == before + 1             # an F input: laid out by the wrapper's Layouts
        assert got.strides == eager(x).strides == (8, 24)


def _outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except Exception as exc:                            # noqa: BLE001 - compared with eager's
        return type(exc).__name__, str(exc)


def _same_outcome(f, eager, *args):
    got, want = _outcome(f, *args), _outcome(eager, *args)
    assert got[0] == want[0], (args[1:], got, want)
    if got[0] == "ok":
        assert_same(got[1], want[1])
    else:
        assert got[1] == want[1]


def _values(dt):
    info = np.iinfo(dt)
    return [int(info.max), int(info.min), int(info.max) + 1, int(info.min) - 1, 5, int(info.max) + 1000, -1, 0]


@pytest.mark.parametrize("dt", ["int8", "int32", "uint8"])
@pytest.mark.parametrize("body", ["x * n", "x + n", "np.maximum(x, n)", "x * (n + 1)",
                                  "x < n", "x == n", "(x + n, x.sum())", "(x - n) * 2"])
def test_dynamic_int_out_of_dtype_range(backend, native, dt, body):
    f, eager = compiled(body, backend)
    x = np.arange(3, dtype=dt)
    for n in (2, 3):                                    # the int argument becomes dynamic
        _same_outcome(f, eager, x, n)
    for n in _values(dt):
        _same_outcome(f, eager, x, n)


@pytest.mark.parametrize("dt", ["int8", "uint8"])
def test_unused_out_of_range_op_still_raises(backend, native, dt):
    f, eager = compiled("(x, x * n)[0]", backend)
    x = np.arange(3, dtype=dt)
    for n in (2, 3, 100, 300, -5, 4):
        _same_outcome(f, eager, x, n)


def test_size_operand_out_of_int8_range(backend, native):
    f, eager = compiled("x * (x.shape[0] + 100)", backend)
    for n in (2, 3, 27, 28, 40, 5):                     # 128 and up: out of int8's range
        _same_outcome(f, eager, np.arange(n, dtype=np.int8))


@pytest.mark.skipif(not AVAILABLE, reason="native entries need CPython 3.11 + NumPy 2 layouts")
def test_native_entry_range_checks_the_int():
    with ft.config.patch(native_dispatch=True):
        f, eager = compiled("x * n", "llvm")
        x = np.arange(3, dtype=np.int8)
        for n in (2, 3, 4):
            f(x, n)
        before = native_hits(f)
        assert_same(f(x, 127), eager(x, 127))
        assert native_hits(f) == before + 1
        with pytest.raises(OverflowError, match="Python integer 128 out of bounds for int8"):
            f(x, 128)
        assert native_hits(f) == before + 1             # a miss: the Python path raised
