"""Wrapper steps the native entry makes itself (native_view_objects.py, native_layouts.py,
native_views.safe_cast, native_launch._pool_call): views of values the call computes as array
objects (reshape, transpose, expand_dims, squeeze, basic getitem), NumPy's layouts of the
allocations where they follow a transpose or a non-C input, safe casts in assignments, and
kernels large enough for the thread pool. Each program must give NumPy's values, dtypes,
strides and sharing, be served by the native entry from its second call, and still miss (and
recompile to NumPy's result) when a guard fails."""
import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime.native import AVAILABLE
from frametrace.backends.llvm import runtime

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="native entries need CPython 3.11+ and NumPy 2 layouts")

rng = np.random.default_rng(10)


@pytest.fixture(autouse=True)
def native_exact_products():
    """The native path, with float products as NumPy's calls (the default outside these tests)."""
    with ft.config.patch(native_dispatch=True, exact_float_products=True):
        yield


def compiled(src, **kw):
    g = {"np": np}
    exec(src, g)
    return ft.compile(g["f"], **kw), g["f"]


def native_hits(f):
    return sum(e.native.hits for e in f._frametrace_cache.entries if e.native is not None)


def _copy(a):
    return a.copy(order="K") if isinstance(a, np.ndarray) else a


def assert_numpy(got, want, rtol=0.0):
    """Values (rtol: sums in another order), dtypes, shapes, strides (NumPy's layout) and which
    outputs share memory."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
        if rtol:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
        else:
            np.testing.assert_array_equal(g, w)
        if w.size > 1:
            assert g.strides == w.strides, (g.strides, w.strides)
    for i in range(len(want)):
        for j in range(i):
            assert np.shares_memory(got[i], got[j]) == np.shares_memory(want[i], want[j])


def served(f, eager, *args, native=True, rtol=0.0):
    """f(*args) equals eager(*args) (on copies; inputs' writes too); served natively or not
    (None: either, e.g. a call that may compile)."""
    before = native_hits(f)
    a1, a2 = [_copy(a) for a in args], [_copy(a) for a in args]
    got, want = f(*a1), eager(*a2)
    assert_numpy(got, want, rtol)
    for x, y in zip(a1, a2):
        if isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y)
    if native is not None:
        assert (native_hits(f) > before) == native, (native_hits(f), before)
    return got


W = rng.standard_normal((12, 24))
VIEWS = [   # (program, args): each view of a computed value is a wrapper step
    ("def f(x, w):\n return (x @ w).reshape(x.shape[0], 2, 12)", (rng.standard_normal((3, 12)), W)),
    ("def f(x, w):\n return (x @ w).T", (rng.standard_normal((3, 12)), W)),
    ("def f(x, w):\n y = x @ w\n return y, y[1:, ::-2]", (rng.standard_normal((3, 12)), W)),
    ("def f(x, w):\n return np.expand_dims(x @ w, 0)", (rng.standard_normal((3, 12)), W)),
    ("def f(x, w):\n return np.squeeze((x @ w)[:, None, :], 1)", (rng.standard_normal((3, 12)), W)),
    ("def f(x, w):\n return (np.exp(x) + 1.0).reshape(-1)", (rng.standard_normal((3, 12)), W)),
    # views feeding NumPy's product and a kernel: heads split, transposed, merged again
    ("def f(x, w):\n h = (x @ w).reshape(x.shape[0], 4, 6).transpose(1, 0, 2)\n"
     " return (h @ h.transpose(0, 2, 1)).reshape(-1) * 2.0", (rng.standard_normal((3, 12)), W)),
    ("def f(x, w):\n return (x @ w)[-1] @ w.T", (rng.standard_normal((3, 12)), W)),
    ("def f(x, w):\n y = np.tanh(x @ w)\n return y.reshape(x.shape[0], 2, 12)[:, 1] @ w[:, :12]",
     (rng.standard_normal((3, 12)), W)),
]


@pytest.mark.parametrize("src,args", VIEWS, ids=[s.split("return ")[-1][:40] for s, _ in VIEWS])
def test_views_of_computed_values(src, args):
    f, eager = compiled(src)
    served(f, eager, *args, native=False)         # the compiling call
    got = served(f, eager, *args)
    del f                                         # a returned view keeps its memory alive
    np.testing.assert_array_equal(got[0] if isinstance(got, tuple) else got,
                                  (eager(*args)[0] if isinstance(got, tuple) else eager(*args)))


@pytest.mark.parametrize("rows", [0, 1, 5])
@pytest.mark.parametrize("layout", ["C", "strided", "F", "reversed"])
def test_views_of_computed_values_any_rows_and_layouts(rows, layout):
    f, eager = compiled("def f(x, w):\n h = (x @ w).reshape(x.shape[0], 4, 6)\n"
                        " return h.transpose(1, 0, 2), (h * 2.0)[:, ::2]", dynamic=True)
    served(f, eager, rng.standard_normal((3, 12)), W, native=False)
    x = rng.standard_normal((2 * rows, 12))
    x = {"C": x[:rows], "strided": x[::2], "F": np.asfortranarray(x[:rows]), "reversed": x[::-2]}[layout]
    w = W if layout == "C" else np.asfortranarray(W)[:, ::-1]
    served(f, eager, x, w, native=None)          # (sizes 0 and 1 compile an entry of their own)
    served(f, eager, x, w, native=True)
    served(f, eager, x.astype(np.float32), w.astype(np.float32), native=False)   # a dtype guard fails
    served(f, eager, x, w, native=True)                                           # the first entry again


def test_a_guard_failure_is_still_caught():
    f, eager = compiled("def f(x, w):\n return (x @ w).reshape(2, -1).T")
    x = rng.standard_normal((4, 12))
    served(f, eager, x, W, native=False)
    served(f, eager, x, W)
    served(f, eager, x[:2], W, native=False)       # another shape: recompiles
    served(f, eager, x, W)
    with pytest.raises(ValueError):                # NumPy's error, from its own call in the entry
        f(x[:3], W.T)


def test_assignment_from_a_view_of_a_computed_value_into_an_input():
    """A KV cache written in place: `cache[pos:pos + n] = (x @ w).reshape(n, h, d)`."""
    src = ("def f(x, w, cache, pos):\n n = x.shape[0]\n"
           " cache[pos:pos + n] = (x @ w).reshape(n, 4, 6)\n return cache[:pos + n].sum(axis=0)")
    f, eager = compiled(src)
    cache = np.zeros((16, 4, 6))
    for pos in (0, 1, 2, 7):
        served(f, eager, rng.standard_normal((1, 12)), W, cache, pos, native=pos > 1)


CASTS = [("float32", "float64"), ("int64", "float64"), ("int32", "float64"), ("int8", "int16"),
         ("uint8", "int64"), ("bool", "float32"), ("bool", "int64"), ("uint32", "int64"), ("int16", "float32")]


@pytest.mark.parametrize("src_dt,dst_dt", CASTS)
def test_safe_cast_assignments(src_dt, dst_dt):
    f, eager = compiled("def f(a, r, i):\n a[i] = r\n a[i + 1, ::2] = r[::2]\n a[:2, -1] = r[3:5]\n return a")
    r = (rng.standard_normal(8) * 100)
    r = (r > 0) if src_dt == "bool" else np.abs(r).astype(src_dt) if src_dt.startswith("u") else r.astype(src_dt)
    a = np.zeros((5, 8), dst_dt)
    served(f, eager, a, r, 1, native=False)
    served(f, eager, a, r, 2, native=None)                   # another int: compiled dynamic
    served(f, eager, a, r, 2)
    served(f, eager, a, r[::-1], 0)                          # a reversed source
    served(f, eager, np.asfortranarray(a), r, 3)             # an F destination


@pytest.mark.parametrize("src_dt,dst_dt", [("float64", "float32"), ("int64", "int32"), ("float64", "int64"),
                                           ("int64", "uint64")])
def test_other_casts_stay_numpys(src_dt, dst_dt):
    f, eager = compiled("def f(a, r):\n a[1] = r\n return a")
    r = (rng.standard_normal(6) * 10).astype(src_dt)
    for _ in range(3):
        served(f, eager, np.zeros((3, 6), dst_dt), r, native=False)


def test_layouts_that_follow_a_transpose():
    """An einsum's K order follows its operands: NumPy lays `qhd,khd->hqk` out as `keys` is."""
    src = ("def f(q, keys, pos):\n s = np.einsum('qhd,khd->hqk', q, keys[:pos + 1]) / 4.0\n"
           " s = np.exp(s - s.max(axis=-1, keepdims=True))\n return s / s.sum(axis=-1, keepdims=True)")
    f, eager = compiled(src)
    keys = rng.standard_normal((10, 3, 8))
    for pos in (0, 1, 2, 5, 9):           # (the dot products' sums: our order, documented)
        served(f, eager, rng.standard_normal((1, 3, 8)), keys, pos, native=pos > 1, rtol=1e-14)
    served(f, eager, rng.standard_normal((1, 3, 8)), np.asfortranarray(keys), 4, rtol=1e-14)   # F keys
    served(f, eager, rng.standard_normal((2, 3, 8))[:1, :, ::-1], keys[:, :, ::-1], 4, rtol=1e-14)


def test_f_ordered_inputs_give_numpys_layouts():
    f, eager = compiled("def f(x, y):\n return np.exp(x) * y + 1.0, (x + y).T * 2.0")
    x, y = rng.standard_normal((6, 5)), rng.standard_normal((6, 5))
    served(f, eager, x, y, native=False)
    served(f, eager, x, y)
    served(f, eager, np.asfortranarray(x), np.asfortranarray(y))
    served(f, eager, np.asfortranarray(x), y)
    wide = rng.standard_normal((6, 10))
    served(f, eager, wide[::-1, ::2], np.asfortranarray(wide)[:, 1::2])


@pytest.mark.parametrize("threads", [1, 2])
def test_kernels_large_enough_for_the_pool(threads, monkeypatch):
    """Static and dynamic work past runtime.PARALLEL_THRESHOLD: runtime.call from the entry."""
    calls, call = [], runtime.call

    def counted(kernel, n, work, args):
        calls.append(work)
        return call(kernel, n, work, args)
    monkeypatch.setattr(runtime, "call", counted)        # (before compiling: the entry holds it)
    n = runtime.PARALLEL_THRESHOLD // 4
    with ft.config.patch(num_threads=threads):
        f, eager = compiled("def f(x, y):\n return np.exp(x) * y + np.tanh(y)")
        x, y = rng.standard_normal((4, n)), rng.standard_normal((4, n))
        served(f, eager, x, y, native=False)
        for args in ((x, y), (x[:, ::-1], y)):
            del calls[:]
            served(f, eager, *args)
            assert calls and min(calls) >= runtime.PARALLEL_THRESHOLD
        g, eager2 = compiled("def f(x):\n return np.tanh(x) * 2.0 + x", dynamic=True)
        for m in (4 * n, 4 * n - 3, 7, 4 * n + 5):
            del calls[:]
            served(g, eager2, rng.standard_normal(m), native=m != 4 * n)
            assert bool(calls) == (m > 7), (m, calls)
