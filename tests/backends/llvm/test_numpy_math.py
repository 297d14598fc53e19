"""Transcendental functions computed by NumPy's own ufunc loops inside fused kernels
(codegen/llvm_kernels/numpy_loops.py, chunked.py): NumPy's bits for every routed function and
dtype (specials, sizes around the chunk, strided / reversed / Fortran / 2-d operands, fused
chains, scalar operands), NumPy's warnings and errors in every error state, both compile tiers,
threaded kernels, exact entries become tunable, and a clean fall back to our own math."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import compile_graph, runtime, tiers
from frametrace.codegen.llvm_kernels import chunked, numpy_loops
from tracing import A, Traced

rng = np.random.default_rng(2311)
UNARY = sorted({n for n, _ in numpy_loops.ROUTED} & set(numpy_loops._UNARY))
BINARY = sorted({n for n, _ in numpy_loops.ROUTED} & set(numpy_loops._BINARY))
SIZES = [0, 1, 7, numpy_loops.CHUNK - 1, numpy_loops.CHUNK, numpy_loops.CHUNK + 1, 2 * numpy_loops.CHUNK + 3]


def same(got, want, nan_sign=True):
    """Bit for bit; `nan_sign=False`: any NaN for a NaN (LLVM may commute `a + b`, and x86
    keeps the first operand's NaN: which NaN a sum of two NaNs gives is not NumPy's promise)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if not nan_sign:
        both = np.isnan(got) & np.isnan(want)
        got, want = np.where(both, np.nan, got).astype(got.dtype), np.where(both, np.nan, want).astype(want.dtype)
    assert got.tobytes() == want.tobytes(), f"{got!r} != {want!r}"


def values(n, dtype, seed=0):
    """Specials, random bit patterns and ordinary values, `n` of them."""
    r = np.random.default_rng(seed)
    sp = numpy_loops.specials(dtype)
    it = np.dtype(dtype)
    bits = r.integers(0, 2 ** (8 * it.itemsize) - 1, n, dtype=np.uint64, endpoint=True)
    raw = bits.astype(np.uint32).view(np.float32) if it == np.float32 else bits.view(np.float64)
    mixed = np.where(r.random(n) < 0.5, raw, (r.standard_normal(n) * 4).astype(dtype))
    return np.concatenate([sp, mixed])[:n] if n <= len(sp) else np.concatenate([sp, mixed[len(sp):]])


def _quiet(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_give_numpys_bits(name, dtype):
    if (name, dtype) not in numpy_loops.ROUTED:
        pytest.skip("our own math (faster)")
    assert numpy_loops.loop_for(name, dtype) is not None
    uf = getattr(np, name)

    def lone(x):
        return uf(x)

    def chain(x, y):
        return uf(x * 0.75 + y) * 2.0 - y

    f, g = ft.compile(lone), ft.compile(chain)
    for n in SIZES:
        x, y = values(n, dtype, n), values(n, dtype, n + 1)
        same(_quiet(f, x), _quiet(lone, x))
        same(_quiet(g, x, y), _quiet(chain, x, y), nan_sign=False)
    x = values(3000, dtype, 5)
    for view in (x[::2], x[::-1], x[::-3], x.reshape(60, 50).T, np.asfortranarray(x.reshape(60, 50)),
                 x.reshape(60, 50)[:, ::-1], x.reshape(60, 50)[::-2, 1:]):
        same(_quiet(f, view), _quiet(lone, view))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_functions_give_numpys_bits(name, dtype):
    uf = getattr(np, name)

    def both(x, y):
        return uf(x, y)

    def scalar_right(x):
        return uf(x, -1.5)

    def scalar_left(x):
        return uf(np.asarray(2.5, x.dtype), x)

    f, g, h = ft.compile(both), ft.compile(scalar_right), ft.compile(scalar_left)
    for n in SIZES:
        x, y = values(n, dtype, n), values(n, dtype, n + 7)
        same(_quiet(f, x, y), _quiet(both, x, y))
        same(_quiet(g, x), _quiet(scalar_right, x))
        same(_quiet(h, x), _quiet(scalar_left, x))
    x, y = values(2000, dtype, 3), values(2000, dtype, 4)
    for a, b in ((x[::-1], y), (x, y[::-1]), (x[::2], y[1::2]), (x.reshape(40, 50)[:, ::-1], y.reshape(40, 50))):
        same(_quiet(f, a, b), _quiet(both, a, b))


def nested_math(x, y):
    """A helper chain the way models write it: nested functions, a reduction, a where."""
    t = np.tanh(np.log1p(np.abs(x)) * y)
    s = np.where(x > 0, np.exp(-x), np.arctan2(y, x))
    return t + s ** 2.5, np.exp(x).max()


@settings(max_examples=25, deadline=None)
@given(n=st.sampled_from(SIZES[1:] + [3, 100, 1500]), dtype=st.sampled_from(["float64", "float32"]),
       seed=st.integers(0, 2 ** 16), step=st.sampled_from([1, 2, -1, -2]))
def test_fused_chains_random(n, dtype, seed, step):
    f = ft.compile(nested_math)
    x = values(n * abs(step), dtype, seed)[::step]
    y = values(n * abs(step), dtype, seed + 1)[::step]
    got, want = _quiet(f, x, y), _quiet(nested_math, x, y)
    same(got[0], want[0], nan_sign=False)
    same(got[1], want[1], nan_sign=False)


def test_nbody_power_is_numpys():
    """nbody's `r ** -1.5` (a scalar exponent: NumPy's loop with stride 0)."""
    def inv_r3(dx, dy, dz, soft):
        return (dx ** 2 + dy ** 2 + dz ** 2 + soft ** 2) ** (-1.5)
    f = ft.compile(inv_r3)
    d = [rng.standard_normal((50, 50)) for _ in range(3)]
    same(f(*d, 0.1), inv_r3(*d, 0.1))


@pytest.mark.parametrize("mode", ["ignore", "warn", "raise", "call"])
@pytest.mark.parametrize("case", [
    ("log", [0.0, 1.0]), ("log", [-1.0, 2.0]), ("exp", [1000.0, 1.0]), ("exp", [-1000.0, 1.0]),
    ("arcsin", [2.0, 0.5]), ("arctanh", [1.0, 0.0]), ("log1p", [-1.0, 0.0]), ("cosh", [1e4, 0.0]),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fp_errors_are_numpys(case, mode, dtype):
    name, vals = case
    uf = getattr(np, name)

    def fn(x):
        return uf(x * 1.0) + 1.0

    f = ft.compile(fn)
    x = np.array(vals * 300, dtype)
    seen = {"ours": [], "numpy": []}
    for who, run in (("ours", f), ("numpy", fn)):
        old = np.seterrcall(lambda kind, flag, who=who: seen[who].append((kind, flag)))
        try:
            with np.errstate(all=mode), warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    out = run(x)
                except FloatingPointError as e:
                    out = ("raised", str(e))
        finally:
            np.seterrcall(old)
        seen[who].append(([str(m.message) for m in w], out if isinstance(out, tuple) else out.tobytes()))
    assert seen["ours"] == seen["numpy"]


def ten_tanh(x):
    for _ in range(10):
        x = np.tanh(x * 1.5)
    return x


@pytest.mark.parametrize("dtype", ["f8", "f4"])
def test_both_tiers_and_threads_give_numpys_bits(monkeypatch, dtype):
    monkeypatch.setattr(tiers, "SYNC", True)
    t = Traced(ten_tanh, A(("n",), dtype))
    t.graph.hints = {s: 5 for s in t.graph.symbols}
    t.run = compile_graph(t.graph)
    assert t.run.kernels[0].tier == "quick" and "frametrace_nploop_tanh" in t.run.llvm_ir
    for n in (0, 1, 5, 77, 1001):
        x = (rng.standard_normal(n) * 3).astype(dtype)
        same(t.run([x], [n])[0], ten_tanh(x))
    n = runtime.PARALLEL_THRESHOLD // 10 + 4001            # threaded, and tiers up to the full tier
    x = (rng.standard_normal(n) * 3).astype(dtype)
    with ft.config.patch(num_threads=2):
        same(t.run([x], [n])[0], ten_tanh(x))
        assert t.run.tiers.started and t.run.tiers.wait(0) and t.run.tiers.error is None
        assert "frametrace_nploop_tanh" in t.run.tiers.module.ir
        same(t.run([x], [n])[0], ten_tanh(x))
        same(t.run([x[::-1]], [n])[0], ten_tanh(x[::-1]))


def test_sin_and_cos_float64_keep_our_math():
    """NumPy 2.x's float64 sin/cos are ~10x slower than ours: not routed (not bit-exact)."""
    assert ("sin", "float64") not in numpy_loops.ROUTED and numpy_loops.loop_for("sin", "float64") is None
    t = Traced(lambda x: np.sin(x) + np.exp(x), A(("n",), "f8"))
    assert "frametrace_nploop_exp_f64" in t.run.llvm_ir and "nploop_sin" not in t.run.llvm_ir


@pytest.fixture
def fresh_loops(monkeypatch):
    monkeypatch.setattr(numpy_loops, "_LOOPS", {})


def test_a_loop_that_differs_from_numpy_is_refused(fresh_loops, monkeypatch):
    """verify compares bits: exp2's loop is not exp's."""
    exp2 = numpy_loops.loop_for("exp2", "float64")
    with pytest.raises(ValueError, match="differ"):
        numpy_loops.verify(exp2, np.exp)
    real = numpy_loops.verify

    def wrong(loop, uf):
        real(loop, np.exp2 if uf is np.exp else uf)
    monkeypatch.setattr(numpy_loops, "verify", wrong)
    assert numpy_loops.loop_for("exp", "float64") is None
    t = Traced(lambda x: np.exp(x) * 2.0, A(("n",), "f8"))     # our own math, still correct
    assert "nploop" not in t.run.llvm_ir
    x = rng.standard_normal(1000)
    np.testing.assert_allclose(t.run([x], [1000])[0], np.exp(x) * 2.0, rtol=1e-15)


def test_flags_that_differ_from_numpy_are_refused(fresh_loops, monkeypatch):
    monkeypatch.setattr(numpy_loops, "_numpy_flags", lambda uf, args: 0)
    with pytest.raises(ValueError, match="flags"):
        numpy_loops.verify(_unverified("log"), np.log)          # log(0) raises divide: NumPy "said" none


def _unverified(name):
    """NumPy's loop without verification (to feed verify itself)."""
    uf = getattr(np, name)
    dt = np.dtype("float64")
    _, cap = uf._resolve_dtypes_and_context((dt, dt))
    uf._get_strided_loop(cap, fixed_strides=(8, 8))
    api = numpy_loops._api
    info = numpy_loops._CallInfo.from_address(api.PyCapsule_GetPointer(cap, numpy_loops.CAPSULE))
    return numpy_loops.NumpyLoop(name, "float64", 1, cap, info)


def test_a_numpy_without_the_low_level_api_keeps_our_math(fresh_loops, monkeypatch):
    monkeypatch.setattr(numpy_loops, "CAPSULE", b"numpy_9.99_ufunc_call_info")
    assert numpy_loops.loop_for("tanh", "float32") is None
    t = Traced(lambda x: np.tanh(x), A(("n",), "f4"))
    assert "nploop" not in t.run.llvm_ir


def test_config_switches_numpy_math_off():
    with ft.config.patch(numpy_math=False):
        t = Traced(lambda x: np.tanh(x) + np.log(x), A(("n",), "f8"))
        assert "nploop" not in t.run.llvm_ir
        x = rng.random(700) + 0.5
        np.testing.assert_allclose(t.run([x], [700])[0], np.tanh(x) + np.log(x), rtol=1e-12, atol=1e-15)
    t = Traced(lambda x: np.tanh(x) + np.log(x), A(("n",), "f8"))
    assert "frametrace_nploop_tanh_f64" in t.run.llvm_ir and "frametrace_nploop_log_f64" in t.run.llvm_ir


def scaled_exp(x):
    return np.exp(x * 0.5) + np.tanh(x)


def with_sin(x):
    return np.exp(x) + np.sin(x)


def flipped_temp(a, b):
    return np.exp((a * b)[::-1])


def test_entries_computed_by_numpys_loops_are_exact():
    """exact.py: an entry whose only transcendental functions are NumPy's loops is tunable."""
    from csrc_free_runtime import all_caches
    x = rng.standard_normal(300)

    def extra(fn, *args):
        ft.compile(fn)(*args)
        return next(c for c in all_caches() if c.fn is fn and c.entries).entries[0].info.extra["same_as_eager"]
    assert extra(scaled_exp, x) is True
    assert extra(with_sin, x) is False                    # float64 sin: our math
    assert extra(flipped_temp, x, x) is False             # NumPy's exp saw a reversed temporary


def test_tuned_entry_with_numpy_loops(monkeypatch):
    """With tuning on, an exact entry alternates compiled and eager: identical results."""
    with ft.config.patch(autotune_entries=True):
        f = ft.compile(scaled_exp)
        x = rng.standard_normal(3000)
        outs = [f(x) for _ in range(14)]
    for o in outs:
        same(o, scaled_exp(x))


def test_routing_refuses_unsafe_loops():
    """A function reading what the same loop stores elsewhere, or inside a segment, keeps our math."""
    from frametrace.lower.loop_ir import Affine, Const, Kernel, Load, Loop, Op, Store, Buffer
    i = Affine.var("i")
    x = Load(0, (i,), "float64")
    k = Kernel("k", [], [Buffer("a", "float64", 1, True), Buffer("b", "float64", 1, True)])
    ok = Loop("i", Const(10, "int64"), [Store(1, (i,), Op("exp", "float64", (x,)))])
    assert [r.op.op for r in chunked.routed_ops(k, ok)] == ["exp"]
    shifted = Loop("i", Const(10, "int64"), [Store(0, (i + Affine(const=1),), Op("exp", "float64", (x,)))])
    assert chunked.routed_ops(k, shifted) == []
    earlier = Loop("i", Const(10, "int64"), [Store(0, (i,), Const(1.0, "float64")),
                                             Store(1, (i,), Op("exp", "float64", (x,)))])
    assert chunked.routed_ops(k, earlier) == []            # b0[i] stored first: exp reads the new value


def two_outputs(x):
    """A value stored by one statement and read by the next (the chunk's order must keep it)."""
    y = np.exp(x)
    return y, np.log(y + 1.0), x + y


def test_statements_reading_what_earlier_ones_stored():
    f = ft.compile(two_outputs)
    for n in (1, 513, 2000):
        x = rng.standard_normal(n)
        for got, want in zip(f(x), two_outputs(x)):
            same(got, want)


def broadcast_exp(x, y):
    """exp of a value that does not move with the loop (an argument passed with stride 0)."""
    return np.log(np.exp(x[:1]) + 1.0) * y, np.tanh(x.sum()) + y


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_functions_of_values_no_loop_moves_are_numpys(dtype):
    """A function of a one-element array, or of a value every iteration reads (the argument a
    routed function gets with stride 0), is NumPy's loop on one element: NumPy's bits (our own
    exp differed in the last bit for ~1 in 10 such values, shown on CI for shape (1,))."""
    f, g = ft.compile(two_outputs), ft.compile(broadcast_exp)
    for _ in range(200):
        x = rng.standard_normal(1).astype(dtype)
        for got, want in zip(f(x), two_outputs(x)):
            same(got, want)
        x, y = rng.standard_normal(7).astype(dtype), rng.standard_normal(600).astype(dtype)
        for got, want in zip(g(x, y), broadcast_exp(x, y)):
            same(got, want)


def test_a_loop_acquired_again_keeps_linked_kernels_valid(monkeypatch):
    """A loop acquired a second time (a fresh table, as the refusal tests make) points the same
    process-wide block at itself; the block a kernel linked before stays valid after that loop
    is dropped (it used to be freed with it: the next kernel calling exp2 crashed)."""
    import gc
    before = Traced(lambda x: np.exp2(x) - 1.0, A(("n",), "f8"))
    with monkeypatch.context() as m:
        m.setattr(numpy_loops, "_LOOPS", {})
        assert numpy_loops.loop_for("exp2", "float64") is not None
    gc.collect()
    after = Traced(lambda x: np.exp2(x) + 1.0, A(("n",), "f8"))
    assert "nploop" in before.run.llvm_ir and "nploop" in after.run.llvm_ir
    x = rng.standard_normal(2000) * 50
    for t, want in ((before, np.exp2(x) - 1.0), (after, np.exp2(x) + 1.0)):
        got = t.run([x], [2000])[0]
        assert got.tobytes() == want.tobytes()
