"""Small in-place graphs on the native path (backends/llvm/native_views.py): basic-slice views
of inputs and copies into them (`a[3] = r`, `a[:2, :2] = r`, `a[3] += 1.0`) run natively and
equal NumPy, in-place effects included; what the native copy cannot do exactly (overlap,
read-only, casts) takes the Python path and still equals NumPy. Then the re-run snapshot of
written inputs under each floating-point error mode."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime.native import AVAILABLE

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="native entries need CPython 3.11 + NumPy 2 layouts")


@pytest.fixture(autouse=True)
def native_on():
    with ft.config.patch(native_dispatch=True):
        yield


def compiled(src, backend="llvm", **kw):
    g = {"np": np}
    exec(src, g)
    return ft.compile(g["f"], backend=backend, **kw), g["f"]


def native_hits(f):
    return sum(e.native.hits for e in f._frametrace_cache.entries if e.native is not None)


def run_both(f, eager, args):
    """(compiled result, compiled inputs after), (eager result, eager inputs after)."""
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    return (f(*a1), a1), (eager(*a2), a2)


def assert_same_effects(got, want):
    (r1, a1), (r2, a2) = got, want
    for x, y in zip(a1 + [r1], a2 + [r2]):
        if isinstance(y, np.ndarray):
            assert isinstance(x, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y or (x is None and y is None)


rng = np.random.default_rng(7)
A = rng.standard_normal((64, 64))
CASES = [   # (source, args, served natively)
    ("def f(a, r):\n a[3] = r\n return a", (A, rng.standard_normal(64)), True),
    ("def f(a, r):\n a[:2, :2] = r\n return a", (A, rng.standard_normal((2, 2))), True),
    ("def f(a):\n a[3] += 1.0\n return a", (A,), True),
    ("def f(a, r):\n a[1:9:3, ::-2] = r\n return a", (A, rng.standard_normal((3, 32))), True),
    ("def f(a, r):\n a[:5] = r\n return a", (A, rng.standard_normal(64)), True),          # broadcast
    ("def f(a, r):\n a[2] = r\n return a", (A, rng.standard_normal((1, 64))), True),      # leading 1
    ("def f(a):\n a[:, 2] = 0.0\n return a", (A,), True),
    ("def f(a):\n a[:, 2] = 3\n return a", (A,), True),
    ("def f(a):\n a[2:4] = a[5:7]\n return a", (A,), True),                          # disjoint
    ("def f(a):\n a[1:4] = a[0:3]\n return a", (A,), True),                          # overlap: copied first
    ("def f(a):\n a[3] = a[3]\n return a", (A,), True),
    ("def f(a, b):\n a[1:3, 4:6] = b[::2, 1:3]\n return a", (A, rng.standard_normal((4, 5))), True),
    ("def f(a, r):\n a[3] = r\n return a", (A, rng.standard_normal(64).astype(np.float32)), True),   # safe cast
    ("def f(a, r):\n a[3] = r\n return a", (A, np.arange(64)), True),                        # int64 -> float64
    ("def f(a, r):\n a[3] = r\n return a", (A.astype(np.float32), rng.standard_normal(64)), False),  # narrowing
    ("def f(a, r):\n a[3, 1:] = r\n return a.max()", (A, rng.standard_normal(63)), True),
    ("def f(a, r):\n a[0] = r\n return a[1] * 2", (A, rng.standard_normal(64)), True),
    # the source reads the destination elsewhere: a native copy of it first (step.copies)
    ("def f(a):\n a[:, 5] = a[:, 2] * 2.0\n return a", (A,), True),
    ("def f(a):\n a[1:] = a[:-1] + 1.0\n return a", (A,), True),
    ("def f(a):\n a[:] = a[::-1] * 1.5\n return a", (A,), True),
    ("def f(a, r):\n a[2:5] = r\n a[:, 1:] = a[:, :-1] - a[:, 1:]\n return a", (A, rng.standard_normal(64)), True),
]


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
@pytest.mark.parametrize("src,args,native", CASES, ids=[c[0].split("\n")[1].strip() for c in CASES])
def test_in_place_view_writes_equal_numpy(src, args, native, backend):
    f, eager = compiled(src, backend=backend)
    before = ft.stats().frames_compiled
    for _ in range(3):
        assert_same_effects(*run_both(f, eager, args))
    assert ft.stats().frames_compiled == before + 1
    if backend == "llvm":
        assert (native_hits(f) == 2) == native


@pytest.mark.parametrize("dtype", ["float32", "int64", "int8", "bool", "complex128", "uint16"])
def test_dtypes(dtype):
    f, eager = compiled("def f(a, r):\n a[1, ::3] = r\n a[2:4, 5] = r[:2]\n return a")
    a = (rng.standard_normal((5, 9)) * 50).astype(dtype)
    r = (rng.standard_normal(3) * 50).astype(dtype)
    for _ in range(3):
        assert_same_effects(*run_both(f, eager, (a, r)))
    assert native_hits(f) == 2


def test_symbolic_sizes_and_negative_index():
    f, eager = compiled("def f(a, r):\n a[-1, 1:] = r[1:]\n a[:2, -3:] = 7.5\n return a", dynamic=True)
    for n in (6, 6, 9, 13, 13, 40):
        a, r = rng.standard_normal((n, n + 1)), rng.standard_normal(n + 1)
        assert_same_effects(*run_both(f, eager, (a, r)))
    assert native_hits(f) >= 3


def test_non_contiguous_and_read_only_inputs():
    f, eager = compiled("def f(a, r):\n a[1] = r\n return a")
    base = rng.standard_normal((6, 8))
    for _ in range(2):
        assert_same_effects(*run_both(f, eager, (base, rng.standard_normal(8))))
    strided = base[:, ::2]
    assert_same_effects(*run_both(f, eager, (strided, rng.standard_normal(4))))
    ro = base.copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(ro, rng.standard_normal(8))
    with pytest.raises(ValueError, match="read-only"):
        eager(ro, rng.standard_normal(8))


def test_input_aliasing_another_input():
    """dst and src views of one buffer passed as two arguments: NumPy copies the source first."""
    f, eager = compiled("def f(a, b):\n a[1:4] = b[0:3]\n return a")
    for _ in range(2):
        assert_same_effects(*run_both(f, eager, (A[:8], A[8:16])))
    base1, base2 = A[:8].copy(), A[:8].copy()
    f(base1, base1)
    eager(base2, base2)
    np.testing.assert_array_equal(base1, base2)


# -- the snapshot of written inputs under each error mode ------------------------------------
FP_SOURCES = [
    "def f(a, y):\n a[3] += y[:8]\n return a",
    "def f(a, y):\n a[:, 5] = y[:a.shape[0]] * 3.0\n return a",       # a KV-cache-like column
    "def f(a, y):\n a[1:3, :4] *= y[:4]\n return a",
    "def f(a, y):\n a += y[:8]\n return a",
]


def _call(fn, a, y, mode):
    a = a.copy()
    calls = []
    with warnings.catch_warnings(record=True) as w, np.errstate(all=mode, call=lambda kind, flag: calls.append(kind)) \
            if mode == "call" else np.errstate(all=mode):
        warnings.simplefilter("always")
        try:
            out = fn(a, y)
            exc = None
        except FloatingPointError as e:
            out, exc = None, str(e)
    msgs = [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]
    return a, out, exc, msgs, calls


@pytest.mark.parametrize("backend", ["llvm", "llvm-python-path", "numpy"])
@pytest.mark.parametrize("src", FP_SOURCES, ids=["row", "column", "corner", "whole"])
@pytest.mark.parametrize("mode", ["ignore", "warn", "raise", "call"])
@pytest.mark.parametrize("rows", [6, 100])       # 100 x 8 float64: more than a stack snapshot
def test_fp_errors_of_in_place_updates(src, mode, backend, rows):
    with ft.config.patch(native_dispatch=backend == "llvm"):
        _fp_errors_of_in_place_updates(src, mode, backend.split("-")[0], rows)


def _fp_errors_of_in_place_updates(src, mode, backend, rows):
    f, eager = compiled(src, backend=backend)
    a = rng.standard_normal((rows, 8))
    for big in (False, True, False, True):
        y = np.full(max(8, rows), 1e308 if big else 0.5)
        with np.errstate(all="ignore"):
            a_in = a * (1e308 if big else 1.0)
        got, want = _call(f, a_in, y, mode), _call(eager, a_in, y, mode)
        assert got[2] == want[2] and got[3] == want[3] and got[4] == want[4]
        np.testing.assert_array_equal(got[0], want[0])   # also under "raise": written, then raised
    if backend == "llvm":
        assert (native_hits(f) >= 1) == ft.config.native_dispatch


@pytest.mark.parametrize("mode", ["ignore", "warn", "raise", "call"])
def test_fp_errors_without_writes(mode):
    """A graph that writes no input: a flag hands the call to NumPy, nothing to put back."""
    f, eager = compiled("def f(a, y):\n return np.log(a) + 1.0 / y")
    for bad in (False, True, False, True):
        a, y = np.array([1.0, 2.0, -1.0 if bad else 3.0]), np.array([1.0, 0.0 if bad else 2.0, 4.0])
        got, want = _call(f, a, y, mode), _call(eager, a, y, mode)
        assert got[2:] == want[2:]
        if want[1] is not None:                  # log: within an ulp of NumPy's
            np.testing.assert_allclose(got[1], want[1], rtol=1e-15)
    assert native_hits(f) >= 1


def _random_slice(r, n):
    step = int(r.choice([1, 1, 2, 3, -1, -2]))
    lo, hi = sorted(int(v) for v in r.integers(-n - 2, n + 2, 2))
    return slice(lo, hi, step) if step > 0 else slice(hi, lo, step)


def _src(s: slice) -> str:
    return f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}:{s.step}"


@pytest.mark.parametrize("seed", range(30))
def test_random_basic_slice_assignments(seed):
    """Random slices (negative bounds and steps, empty results), sources broadcast over the
    view, copies between views of one array: the native copy equals NumPy's, or it misses."""
    r = np.random.default_rng(seed)
    shape = tuple(int(v) for v in r.integers(1, 9, 2))
    s0, s1 = _random_slice(r, shape[0]), _random_slice(r, shape[1])
    view = np.empty(shape)[s0, s1].shape
    kind = seed % 3
    if kind == 0:                          # from an argument, maybe broadcast along dim 0
        body, rshape = f"a[{_src(s0)}, {_src(s1)}] = r", (1 if seed % 2 else view[0], view[1])
    elif kind == 1:                        # a constant
        body, rshape = f"a[{_src(s0)}, {_src(s1)}] = {float(r.integers(-9, 9))}", None
    else:                                  # from another view of the same array
        t0, t1 = _random_slice(r, shape[0]), _random_slice(r, shape[1])
        if np.empty(shape)[t0, t1].shape != view:
            t0, t1 = s0, s1
        body, rshape = f"a[{_src(s0)}, {_src(s1)}] = a[{_src(t0)}, {_src(t1)}]", None
    src = f"def f(a{', r' if rshape else ''}):\n {body}\n return a"
    f, eager = compiled(src)
    for _ in range(3):
        args = (r.standard_normal(shape),) + ((r.standard_normal(rshape),) if rshape else ())
        assert_same_effects(*run_both(f, eager, args))
    assert len(f._frametrace_cache.entries) == 1
    if kind != 2:                          # no overlap possible: always native after compiling
        assert native_hits(f) == 2
