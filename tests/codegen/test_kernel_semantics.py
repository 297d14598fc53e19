"""NumPy semantics kernels used to get wrong (issue 14 item 5), on both backends, against eager.

FP error state (raise / warn / ignore, NumPy's own messages), exact int64-vs-uint64 compares,
*_like keeping the prototype's memory order, in-place updates of self-overlapping views,
float32 sums fused with argmin/max keeping NumPy's accuracy.
"""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import frametrace as ft
from frametrace.backends.llvm import fp_errors
from frametrace.codegen.llvm_kernels import fpflags
from frametrace.lower.loop_ir import Const, Kernel, Load, Loop, Op, Store
from helpers import BACKENDS, assert_same


@pytest.fixture(autouse=True)
def strict_llvm_backend(monkeypatch):
    """A backend bug must fail here, not fall back to NumPy (which would pass every test)."""
    import frametrace.backends.llvm as backend
    monkeypatch.setattr(backend, "STRICT", True)


def graphs():
    return ft.stats().unique_graphs


def outcome(fn, args, mode):
    """(result or exception text, warning messages) of fn(*copies of args) under errstate(mode)."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with np.errstate(all=mode):
                result = fn(*args)
        except FloatingPointError as exc:
            result = f"FloatingPointError: {exc}"
    return result, [f"{w.category.__name__}: {w.message}" for w in caught], args


# -- floating-point error state ----------------------------------------------------------

FP_CASES = [
    ("log_plus_recip", lambda x: np.log(x) + 1.0 / x, [np.array([1.0, 0.0, -1.0, 2.0])]),
    ("sqrt", lambda x: np.sqrt(x) * 2, [np.array([4.0, -1.0, 9.0])]),
    ("exp_overflow", lambda x: np.exp(x) - 1, [np.array([1.0, 1000.0, -3.0])]),
    ("f32_cast_overflow", lambda x: (x * 2).astype(np.float32), [np.array([1.0, 1e300])]),
    ("int_floordiv_zero", lambda a, b: a // b, [np.array([7, -7, 3]), np.array([2, 0, 0])]),
    ("int_mod_zero", lambda a, b: a % b + 1, [np.array([7, -7, 3]), np.array([2, 0, 5])]),
    ("int_min_div_minus_one", lambda a, b: a // b,
     [np.array([np.iinfo(np.int64).min, 4]), np.array([-1, 2])]),
    ("reduction", lambda x: (1.0 / x).sum(), [np.array([1.0, 0.0, 2.0])]),
    ("argmin_of_inf", lambda x: (1.0 / x).argmin(), [np.array([1.0, -0.0, 2.0])]),
    ("clean", lambda x: np.log(x) + 1.0 / x, [np.array([1.0, 2.0, 3.0])]),
    ("nan_input_no_warning", lambda x: x + 1.0, [np.array([np.nan, 1.0])]),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, fn, args", FP_CASES, ids=[c[0] for c in FP_CASES])
def test_error_state_matches_numpy(backend, name, fn, args):
    f = ft.compile(fn, backend=backend)
    for mode in ("ignore", "warn", "raise", "ignore", "raise", "warn"):   # cache hits too
        got, got_w, _ = outcome(f, args, mode)
        want, want_w, _ = outcome(fn, args, mode)
        assert got_w == want_w, (mode, got_w, want_w)
        if isinstance(want, str):
            assert got == want, mode
        else:
            assert_same(got, want)
    assert graphs() == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_error_state_of_in_place_updates_warns_once_and_writes_once(backend):
    def g(x, y):
        x /= y
        x += 1.5
        return x

    f = ft.compile(g, backend=backend)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 2.0])
    for mode in ("warn", "ignore", "warn", "ignore"):
        got, got_w, (gx, _) = outcome(f, [x, y], mode)
        want, want_w, (wx, _) = outcome(g, [x, y], mode)
        assert got_w == want_w and np.array_equal(gx, wx) and np.array_equal(got, want), mode
    with np.errstate(all="call", call=lambda kind, flag: None):
        assert_same(f(x.copy(), y), g(x.copy(), y))
    assert graphs() == 1


def test_kernels_set_the_flag_word_only_when_they_may_raise():
    fpflags.take()
    with np.errstate(all="ignore"):
        ft.compile(lambda x: 1.0 / x)(np.zeros(5))
    assert fpflags.take() == 0                    # the wrapper took it (all "ignore")
    add_const = Kernel("k", [Loop("i", Const(3, "int64"), [Store(0, (), Op("add", "float64", (
        Load(1, (), "float64"), Const(1.0, "float64"))))])])
    div = Kernel("k", [Loop("i", Const(3, "int64"), [Store(0, (), Op("true_divide", "float64", (
        Load(1, (), "float64"), Load(2, (), "float64"))))])])
    idiv = Kernel("k", [Store(0, (), Op("floor_divide", "int64", (Load(1, (), "int64"), Load(2, (), "int64"))))])
    iadd = Kernel("k", [Store(0, (), Op("add", "int64", (Load(1, (), "int64"), Load(2, (), "int64"))))])
    assert not fpflags.may_raise(add_const) and fpflags.may_raise(div)
    assert fpflags.may_raise(idiv) and not fpflags.may_raise(iadd)
    idiv3 = Kernel("k", [Store(0, (), Op("floor_divide", "int64", (Load(1, (), "int64"), Const(3, "int64"))))])
    idivm1 = Kernel("k", [Store(0, (), Op("remainder", "int64", (Load(1, (), "int64"), Const(-1, "int64"))))])
    assert not fpflags.may_raise(idiv3) and fpflags.may_raise(idivm1)


# -- int64 vs uint64 ---------------------------------------------------------------------

_CMPS = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=25, deadline=None)
@given(a=st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), min_size=1, max_size=6),
       b=st.lists(st.integers(0, 2 ** 64 - 1), min_size=1, max_size=6), swap=st.booleans())
def test_mixed_sign_64_bit_comparisons_are_exact(backend, a, b, swap):
    n = min(len(a), len(b))
    x, y = np.array(a[:n], np.int64), np.array(b[:n], np.uint64)
    if swap:
        x, y = y, x
    f = ft.compile(lambda x, y: tuple(c(x, y) for c in _CMPS) + (x < 3, y >= x[0]), backend=backend)
    assert_same(f(x, y), tuple(c(x, y) for c in _CMPS) + (x < 3, y >= x[0]))


# -- *_like keep the memory order -----------------------------------------------------------

def _likes(x):
    z = np.zeros_like(x)
    z.reshape(-1)[0] = 1.0                      # a view only when z is C-contiguous
    e = np.empty_like(x, dtype=np.int32)
    return (z, np.ones_like(x), np.full_like(x, 2.5), np.full_like(x, 7, dtype=np.int16),
            e.flags.f_contiguous, e.strides, np.ones_like(x, order="C").flags.c_contiguous)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", ("C", "F", "T3", "sliced"))
def test_like_creators_keep_the_memory_order(backend, layout):
    base = np.arange(24.0).reshape(2, 3, 4)
    x = {"C": base, "F": np.asfortranarray(base), "T3": base.transpose(2, 0, 1),
         "sliced": np.asfortranarray(base)[:, ::2]}[layout]
    got, want = ft.compile(_likes, backend=backend)(x), _likes(x)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert_same(g, w)
            assert g.strides == w.strides, (g.strides, w.strides)
        else:
            assert g == w


# -- in-place updates of self-overlapping views ------------------------------------------------

def _overlaps_brute(a) -> bool:
    offsets = [sum(i * s for i, s in zip(idx, a.strides)) for idx in itertools.product(*map(range, a.shape))]
    spans = sorted(offsets)
    return any(q - p < a.itemsize for p, q in zip(spans, spans[1:]))


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       strides=st.lists(st.integers(-4, 4), min_size=3, max_size=3))
def test_self_overlapping_never_misses_an_overlap(shape, strides):
    base = np.zeros(200)
    st_bytes = tuple(8 * s for s in strides[:len(shape)])
    a = as_strided(base[100:], shape, st_bytes)
    if _overlaps_brute(a):
        assert fp_errors.self_overlapping(a)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape, strides", [((4, 3), (8, 8)), ((3, 3), (0, 8)), ((5,), (0,)),
                                            ((2, 3), (24, 8)), ((3, 2), (8, 16))])
def test_in_place_update_of_self_overlapping_views(backend, shape, strides):
    def bump(x, y):
        x += y
        x *= 2.0

    f = ft.compile(bump, backend=backend)
    for _ in range(2):
        a, b = np.arange(8.0), np.arange(8.0)
        y = np.ones(shape[-1])
        bump(as_strided(a, shape, strides), y)
        f(as_strided(b, shape, strides), y)
        assert_same(b, a)


# -- float32 reductions fused with others ------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_sums_fused_with_argmin_keep_numpy_accuracy(backend):
    x = (np.random.default_rng(3).standard_normal(1_000_003) * 3 + 1).astype(np.float32)

    def fn(x):
        return (x * x).sum(), x.argmin(), x.max(), x.mean(), x.std(), (x - 1).var()
    got, want = ft.compile(fn, backend=backend)(x), fn(x)
    for g, w in zip(got, want):
        assert type(g) is type(w) and g.dtype == w.dtype
        assert abs(float(g) - float(w)) <= 2e-6 * abs(float(w)), (g, w)
    exact = np.sum(x.astype(np.float64) ** 2)
    assert abs(float(got[0]) - exact) <= 2 * abs(float(want[0]) - exact) + 1e-7 * exact


# -- signed zeros, out-of-range casts, read-only destinations -------------------------------------

_SPECIAL = np.array([0.0, -0.0, np.nan, 1.0, -1.0, np.inf, -np.inf])


def _same_bits(got, want):
    assert_same(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ("float64", "float32"))
def test_maximum_minimum_clip_signed_zero_and_nan(backend, dtype):
    a = np.repeat(_SPECIAL, len(_SPECIAL)).astype(dtype)
    b = np.tile(_SPECIAL, len(_SPECIAL)).astype(dtype)

    def fn(a, b):
        return (np.maximum(a, b), np.minimum(a, b), np.clip(a, b, None), np.clip(a, None, b),
                np.clip(a, -0.0, 0.0), np.maximum(a, 0.0), np.minimum(a, -0.0), np.clip(a, b, -b),
                np.clip(a, b * 0.0 - 0.0, b * 0.0),              # bounds that move: the bound wins ties
                np.clip(a, np.array([-0.0], a.dtype), np.array([0.0], a.dtype)))   # fixed: x wins
    with np.errstate(invalid="ignore"):
        for g, w in zip(ft.compile(fn, backend=backend)(a, b), fn(a, b)):
            _same_bits(g, w)


_EXTREMA = {
    "max": lambda x: np.max(x), "min": lambda x: x.min(), "max_rows": lambda x: x.max(axis=1),
    "min_cols": lambda x: np.min(x, axis=0), "max_keepdims": lambda x: np.max(x * 1.0, axis=-1, keepdims=True),
    "fused": lambda x: (x * 2.0).max() + np.minimum(x, 1.0).min(axis=0),
    "amax_f32": lambda x: np.amax(x.astype(np.float32), axis=1),
    "in_place_then_max": lambda x: (x.__imul__(3.0), x.max())[1],      # NumPy redoes a written graph
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(_EXTREMA))
@settings(max_examples=12, deadline=None)
@given(shape=st.tuples(st.integers(1, 40), st.integers(2, 70)), p_neg=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       other=st.sampled_from([None, -1.0, 1.0, np.nan]), seed=st.integers(0, 2 ** 16))
def test_max_min_reductions_return_numpys_signed_zero(backend, name, shape, p_neg, other, seed):
    # which zero NumPy's max/min returns depends on the order its SIMD loop combines
    # elements; the kernels report seeing both signs and NumPy redoes the call
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(shape) < p_neg, -0.0, 0.0)
    if other is not None:
        x[rng.integers(shape[0]), rng.integers(shape[1])] = other
    fn = _EXTREMA[name]
    f = ft.compile(fn, backend=backend)
    with np.errstate(all="ignore"):
        for arg in (x, x[:, ::-1], np.asfortranarray(x)):
            xa, xb = arg.copy(), arg.copy()
            got, want = f(xa), fn(xb)
            _same_bits(np.asarray(got), np.asarray(want))
            _same_bits(xa, xb)
    assert ft.stats().recompiles <= 2


_OUT_OF_RANGE = np.array([-1.0, -0.5, 1.9, 2.0 ** 31, 2.0 ** 32, 2.0 ** 63, 2.0 ** 64, 1e20, -1e20, np.nan,
                          np.inf, -np.inf, 2.0 ** 64 - 2048, -2.0 ** 63, -2.0 ** 31 - 1, 3e9])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ("uint64", "int64", "uint32", "int32", "uint16", "int8"))
def test_float_to_int_casts_out_of_range_match_numpy(backend, dtype):
    def fn(x):
        return x.astype(dtype), x.astype(np.float32).astype(dtype)
    with np.errstate(invalid="ignore"):
        assert_same(ft.compile(fn, backend=backend)(_OUT_OF_RANGE), fn(_OUT_OF_RANGE))


@pytest.mark.parametrize("backend", BACKENDS)
def test_writing_into_a_read_only_array_raises_numpys_message(backend):
    def put(x):
        x[1:] = 5.0

    x = np.ones(4)
    x.flags.writeable = False
    with pytest.raises(ValueError) as want:
        put(x)
    with pytest.raises(ValueError) as got:
        ft.compile(put, backend=backend)(x)
    assert str(got.value) == str(want.value) == "assignment destination is read-only"
    np.testing.assert_array_equal(x, np.ones(4))


_READ_ONLY_WRITES = {
    "x += 1": "output array is read-only",
    "np.add(y, 1, out=x)": "output array is read-only",
    "v = x[1:]\n    v *= 2": "output array is read-only",
    "np.sum(y2, axis=0, out=x)": "output array is read-only",
    "np.cumsum(y, out=x)": "output array is read-only",
    "np.clip(y, 0, 1, out=x)": "output array is read-only",
    "x[0] = 1": "assignment destination is read-only",
    "x[x > 1] = 0": "assignment destination is read-only",
    "x.fill(3)": "assignment destination is read-only",
    "np.copyto(x, y)": "assignment destination is read-only",
    "x.sort()": "sort array is read-only",
    "y += 1\n    x *= 2": "output array is read-only",       # y is written before NumPy raises
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("body", list(_READ_ONLY_WRITES))
def test_each_write_into_a_read_only_array_raises_numpys_message(backend, dynamic, body):
    ns = {"np": np}
    exec(f"def put(x, y, y2):\n    {body}\n    return x\n", ns)
    put = ns["put"]
    f = ft.compile(put, backend=backend, dynamic=dynamic)
    for n in (4, 6, 9):
        results = []
        for fn in (put, f):
            x, y, y2 = np.arange(float(n))[::-1].copy(), np.ones(n), np.ones((3, n))
            x.flags.writeable = False
            with pytest.raises(ValueError) as err:
                fn(x, y, y2)
            np.testing.assert_array_equal(x, np.arange(float(n))[::-1])
            results.append((str(err.value), y.tolist()))
        assert results[0] == results[1] and results[0][0] == _READ_ONLY_WRITES[body]
        x = np.arange(float(n))                    # a writeable x: no error, NumPy's result
        assert_same(f(x.copy(), np.ones(n), np.ones((3, n))), put(x.copy(), np.ones(n), np.ones((3, n))))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("body", ["x /= y", "np.divide(1.0, y, out=x)", "v = x[1:]\n    v /= y[1:]"])
def test_read_only_out_is_refused_before_the_ufunc_computes(backend, body):
    # NumPy checks out= before the loop: a ValueError, no divide-by-zero warning or error
    ns = {"np": np}
    exec(f"def put(x, y):\n    {body}\n    return x\n", ns)
    put = ns["put"]
    f = ft.compile(put, backend=backend)
    for mode in ("raise", "warn", "ignore"):
        outs = []
        for fn in (put, f):
            got, got_w, _ = outcome(lambda y, fn=fn: _read_only_error(fn, y), [np.zeros(3)], mode)
            outs.append((got, got_w))
        assert outs[0] == outs[1] == ("output array is read-only", []), (mode, outs)


def _read_only_error(fn, y):
    x = np.ones(3)
    x.flags.writeable = False
    with pytest.raises(ValueError) as err:
        fn(x, y)
    np.testing.assert_array_equal(x, np.ones(3))
    return str(err.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_error_state_seen_from_every_thread_of_a_split_kernel(backend):
    x = np.ones(3_000_000)
    x[-1] = 0.0                                   # in the last chunk: a pool thread computes it
    f = ft.compile(lambda x: np.sqrt(x) + 1.0 / x, backend=backend)
    with np.errstate(all="raise"), pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
        f(x)
    with np.errstate(all="ignore"):
        assert f(x)[-1] == np.inf
    x[-1] = 1.0
    with np.errstate(all="raise"):
        assert_same(f(x), np.full(3_000_000, 2.0))
