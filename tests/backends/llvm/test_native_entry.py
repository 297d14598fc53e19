"""Native entries (backends/llvm/native_entry.py + csrc_free_runtime/native.py): the guards and
the kernel launch of a cache entry as one METH_FASTCALL builtin. Every guard failure must
fall back to the Python path and give NumPy's answer; reference counts must not drift."""
import sys
import threading

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime.native import AVAILABLE, NATIVE_MISS

from helpers import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="native entries need CPython 3.11 + NumPy 2 layouts")


@pytest.fixture(autouse=True)
def native_on():
    """These tests are about the native path, whatever FRAMETRACE_NATIVE_DISPATCH says."""
    with ft.config.patch(native_dispatch=True):
        yield


def compiled(src, **kw):
    """(compiled fn, eager fn) of `def f...` in its own globals (so tests can rebind them)."""
    g = {"np": np}
    exec(src, g)
    return ft.compile(g["f"], **kw), g["f"], g


def natives(f):
    return [e.native for e in f._frametrace_cache.entries]


def native_hits(f):
    return sum(n.hits for n in natives(f) if n is not None)


def check(f, eager, *args, native=True):
    """f(*args) equals eager(*args) (on copies); `native`: served by a native entry."""
    before = native_hits(f)
    got = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    want = eager(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    assert_same(got, want)
    if native is not None:
        assert (native_hits(f) > before) == native, (native_hits(f), before)
    return got


def test_x_plus_one_is_native_and_counts_cache_hits():
    f, eager, _ = compiled("def f(x): return x + 1")
    x = np.arange(8.0)
    check(f, eager, x, native=False)          # the compiling call runs the Python entry
    hits = ft.stats().cache_hits
    for _ in range(3):
        check(f, eager, x)
    assert ft.stats().cache_hits == hits + 3
    assert "define ptr @ft_native_f" in natives(f)[0].ir


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "bool"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_results_equal_numpy(dtype, n):
    f, eager, _ = compiled("def f(x, y): return x * y + x", dynamic=True)
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 10).astype(dtype)
    y = (rng.standard_normal(n) * 10).astype(dtype)
    check(f, eager, x, y, native=None)
    check(f, eager, x, y)


def test_dtype_change_falls_back():
    f, eager, _ = compiled("def f(x): return x * 2")
    check(f, eager, np.arange(5.0), native=None)
    check(f, eager, np.arange(5.0))
    check(f, eager, np.arange(5, dtype=np.float32), native=False)     # recompiles
    check(f, eager, np.arange(5.0))                                    # older entry, natively
    check(f, eager, np.arange(5, dtype=np.float32))


def test_equal_dtype_that_is_not_identical_takes_the_python_path():
    f, eager, _ = compiled("def f(x): return x * 2")
    check(f, eager, np.arange(5.0), native=None)
    meta = np.dtype(np.float64, metadata={"unit": "m"})       # == float64, not the same object
    x = np.arange(5.0).astype(meta)
    hits = ft.stats().cache_hits
    check(f, eager, x, native=False)
    assert ft.stats().cache_hits == hits + 1                  # the Python guard accepted it
    assert len(f._frametrace_cache.entries) == 1


def test_ndim_change_falls_back():
    f, eager, _ = compiled("def f(x): return x + 1")
    check(f, eager, np.ones(6), native=None)
    check(f, eager, np.ones((2, 3)), native=False)
    check(f, eager, np.ones(6))
    check(f, eager, np.ones((2, 3)))


def test_static_size_change_and_dynamic_range():
    f, eager, _ = compiled("def f(x): return x - 3")
    check(f, eager, np.ones(8), native=None)
    check(f, eager, np.ones(8))
    check(f, eager, np.ones(9), native=False)      # automatic dynamic: new entry
    check(f, eager, np.ones(10))
    check(f, eager, np.ones(1), native=False)      # 1 is specialised: outside [2, inf]
    check(f, eager, np.ones(0), native=False)


def test_duck_sizing_guard():
    f, eager, _ = compiled("def f(x, y): return x + y", dynamic=True)
    check(f, eager, np.ones(5), np.ones(5), native=None)
    check(f, eager, np.ones(7), np.ones(7))
    check(f, eager, np.ones(7), np.ones(1), native=False)     # broadcast: different sizes
    with pytest.raises(ValueError):
        f(np.ones(7), np.ones(6))                             # NumPy's broadcast error


def test_subclass_is_not_an_ndarray():
    class Sub(np.ndarray):
        pass

    f, eager, _ = compiled("def f(x): return x + 1")
    check(f, eager, np.ones(4), native=None)
    s = np.ones(4).view(Sub)
    got = f(s)
    assert type(got) is Sub and np.array_equal(got, eager(s))


def test_non_contiguous_and_negative_strides():
    f, eager, _ = compiled("def f(x): return x * 3")
    base = np.arange(40.0).reshape(4, 10)
    check(f, eager, base, native=None)
    check(f, eager, base)
    check(f, eager, base[:, ::-3], native=None)
    check(f, eager, base[::-1, 1:], native=None)
    assert_same(f(base[:, ::2]), eager(base[:, ::2]))
    assert_same(f(base.T), eager(base.T))


def test_read_only_destination_raises_like_numpy():
    f, eager, _ = compiled("def f(x, y):\n    x += y\n    return x")
    x, y = np.arange(6.0), np.ones(6)
    assert f(x, y) is x
    assert f(x, y) is x and np.array_equal(x, np.arange(6.0) + 2)
    assert native_hits(f) == 1
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(x, y)
    np.testing.assert_array_equal(x, np.arange(6.0) + 2)


def test_overlapping_in_place_operands_take_the_python_path():
    f, eager, _ = compiled("def f(x, y):\n    x += y\n    return x")
    f(np.ones(8), np.ones(8))
    a, w = np.arange(9.0), np.arange(9.0)
    hits = native_hits(f)
    f(a[1:], a[:-1])
    w[1:] += w[:-1]
    np.testing.assert_array_equal(a, w)
    assert native_hits(f) == hits
    f(np.ones(8), np.ones(8))
    assert native_hits(f) == hits + 1


def test_int_argument_change():
    f, eager, _ = compiled("def f(x, k): return x * k")
    x = np.arange(4.0)
    check(f, eager, x, 3, native=None)
    check(f, eager, x, 3)
    check(f, eager, x, 4, native=False)            # `k == 3` fails natively; dynamic from now
    check(f, eager, x, 5)
    check(f, eager, x, -7)                         # an int symbol takes any int64 value
    check(f, eager, x, 0)                          # no 0/1 specialisation of ints
    check(f, eager, x, True, native=False)         # bool is not int
    check(f, eager, x, 2.5, native=False)


def test_huge_int_is_decided_by_python():
    f, eager, _ = compiled("def f(x, k):\n    if k > 10:\n        return x + 1\n    return x - 1")
    x = np.arange(4.0)
    check(f, eager, x, 30, native=None)
    check(f, eager, x, 30)
    check(f, eager, x, 2 ** 70, native=False)      # past 64 bits: the native guard misses
    check(f, eager, x, -2 ** 70, native=False)


def test_none_argument():
    f, eager, _ = compiled("def f(x, y=None):\n    if y is None:\n        return x + 1\n    return x + y")
    check(f, eager, np.ones(3), native=None)
    check(f, eager, np.ones(3))
    check(f, eager, np.ones(3), np.ones(3), native=False)
    check(f, eager, np.ones(3))


def test_float_argument_is_read_natively():
    f, eager, _ = compiled("def f(x, a): return x * a + 1")
    check(f, eager, np.ones(3), 2.5, native=None)
    check(f, eager, np.ones(3), -0.25)
    check(f, eager, np.ones(3), float("nan"))
    assert len(f._frametrace_cache.entries) == 1


def test_globals_guards():
    f, eager, g = compiled("def f(x): return np.sin(x) * 2")
    check(f, eager, np.ones(3), native=None)
    check(f, eager, np.ones(3))

    class FakeNp:
        sin = staticmethod(np.cos)

    g["np"] = FakeNp
    check(f, eager, np.ones(3), native=False)
    g["np"] = np
    check(f, eager, np.ones(3))
    del g["np"]
    with pytest.raises(NameError):
        f(np.ones(3))


@pytest.mark.parametrize("src, args", [
    ("def f(x): return x.sum()", (np.arange(5.0),)),
    ("def f(x): return x.max()", (np.arange(5),)),
    ("def f(x): return x + 1, x * 2", (np.arange(5.0),)),
    ("def f(x): return x, x.shape[0] * 2, None", (np.arange(5.0),)),
    ("def f(x): return x.mean(axis=0)", (np.ones((4, 3)),)),
    ("def f(x):\n    x += 1", (np.ones(3),)),
    ("def f(x): return np.where(x > 2, x, -x)", (np.arange(5.0),)),
])
def test_return_values(src, args):
    f, eager, _ = compiled(src)
    check(f, eager, *args, native=None)
    check(f, eager, *args)


def test_input_returned_is_the_same_object():
    f, _, _ = compiled("def f(x): return x, x + 1")
    x = np.ones(4)
    f(x)
    a, b = f(x)
    assert a is x and native_hits(f) == 1


def test_empty_reduction_raises_like_numpy():
    f, eager, _ = compiled("def f(x): return x.max()", dynamic=True)
    check(f, eager, np.arange(5.0), native=None)
    with pytest.raises(ValueError, match="zero-size"):
        f(np.zeros(0))


def test_large_kernels_use_the_python_path():
    from frametrace.backends.llvm import runtime
    f, eager, _ = compiled("def f(x): return x + 1", dynamic=True)
    check(f, eager, np.ones(10), native=None)
    check(f, eager, np.ones(runtime.PARALLEL_THRESHOLD + 5), native=False)
    check(f, eager, np.ones(40000))                 # GIL released around the kernel


def test_refcounts_and_memory_stable_over_100k_calls():
    f, _, _ = compiled("def f(x, k): return x * k, x.sum()")
    x, k = np.arange(8.0), int("123456789")       # a fresh int object (not a cached small int)
    f(x, k)
    f(x, k)
    assert native_hits(f) == 1
    rx, rk = sys.getrefcount(x), sys.getrefcount(k)
    for _ in range(1000):
        f(x, k)
    blocks = sys.getallocatedblocks()
    for _ in range(100_000):
        r = f(x, k)
    assert sys.getallocatedblocks() - blocks < 100
    assert sys.getrefcount(x) == rx and sys.getrefcount(k) == rk
    plain = (np.ones(2), np.float64(1.0))           # what a fresh tuple of fresh objects shows
    assert sys.getrefcount(r) == sys.getrefcount(plain)
    assert sys.getrefcount(r[0]) == sys.getrefcount(plain[0])
    assert sys.getrefcount(r[1]) == sys.getrefcount(plain[1])
    assert native_hits(f) == 101_001


def test_threads():
    f, eager, _ = compiled("def f(x, y): return x * y - 1", dynamic=True)
    f(np.ones(3), np.ones(3))
    errors = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for i in range(3000):
                n = int(rng.integers(2, 50)) if i % 100 else 40000
                x, y = rng.standard_normal(n), rng.standard_normal(n)
                np.testing.assert_array_equal(f(x, y), x * y - 1)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert native_hits(f) > 8 * 2900


def test_off_switch_and_force_eager():
    with ft.config.patch(native_dispatch=False):
        f, eager, _ = compiled("def f(x): return x + 1")
        check(f, eager, np.ones(3), native=False)
    assert natives(f) == [None]
    g, eager, _ = compiled("def f(x): return x + 1")
    check(g, eager, np.ones(3), native=None)
    with ft.set_stance("force_eager"):
        hits = ft.stats().cache_hits
        check(g, eager, np.ones(3), native=False)
        assert ft.stats().cache_hits == hits
    check(g, eager, np.ones(3))


def test_builtin_returns_the_sentinel_on_a_miss():
    f, _, _ = compiled("def f(x): return x + 1")
    f(np.ones(3))
    fn = natives(f)[0].fn
    assert fn(np.ones(3, np.int8)) is NATIVE_MISS
    assert fn("not an array") is NATIVE_MISS
    assert fn() is NATIVE_MISS
    np.testing.assert_array_equal(fn(np.ones(3)), np.full(3, 2.0))
