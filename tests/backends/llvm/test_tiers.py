"""Size-tiered kernels (backends/llvm/tiers.py): a graph with symbolic sizes compiled for a small
call gets quick-tier kernels (no loop interleave), one compiled for a large call the full tier;
a quick kernel's first large call builds the full tier and swaps it in. Both tiers against NumPy."""
import threading

import numpy as np
import pytest

from frametrace.backends.llvm import compile_graph, runtime, tiers
from frametrace.config import config
from frametrace.codegen.llvm_kernels import emit
from tracing import A, Traced

rng = np.random.default_rng(5)
INTERLEAVED = f'"llvm.loop.interleave.count", i32 {emit.INTERLEAVE}'


def ten_sin(x):
    for _ in range(10):
        x = np.sin(x)
    return x


def traced(hint, fn=ten_sin, dtype="f8"):
    """fn traced on a symbolic length, compiled as if the compiling call had length `hint`."""
    t = Traced(fn, A(("n",), dtype))
    if hint is not None:
        t.graph.hints = {s: hint for s in t.graph.symbols}
        t.run = compile_graph(t.graph)
    return t


def large(dtype="f8"):
    """A length whose ten-sin kernel runs on the threaded (tier-up) path."""
    n = runtime.PARALLEL_THRESHOLD // 81 + 1001
    return (rng.standard_normal(n) * 3).astype(dtype)


@pytest.fixture
def sync(monkeypatch):
    monkeypatch.setattr(tiers, "SYNC", True)


def test_small_hint_compiles_the_quick_tier():
    t = traced(3)
    assert "interleave.count" not in t.run.llvm_ir
    assert t.run.kernels[0].tier == "quick" and t.run.tiers is not None
    assert "_tier_up(); _call(" in t.run.source
    assert tiers.hinted_work(t.run.plan, t.run.kernels[0], t.graph.hints) == 3 * 81


@pytest.mark.parametrize("hint", [1000, 1 << 20, None])
def test_large_or_unknown_hint_compiles_the_full_tier(hint):
    t = traced(hint)
    assert INTERLEAVED in t.run.llvm_ir
    assert t.run.kernels[0].tier == "full" and t.run.tiers is None
    assert "_tier_up" not in t.run.source


def test_static_kernels_keep_their_path():
    t = Traced(ten_sin, A((4,)))
    t.graph.hints = {}
    run = compile_graph(t.graph)
    assert "optnone" in run.llvm_ir and run.tiers is None


@pytest.mark.parametrize("dtype", ["f8", "f4"])
def test_quick_kernel_tiers_up_on_a_large_call(sync, dtype, monkeypatch):
    from frametrace.codegen.llvm_kernels import numpy_loops
    monkeypatch.setattr(numpy_loops, "ENABLED", False)     # our own sin (float32 sin is NumPy's loop)
    t = traced(5, dtype=dtype)
    rtol = 1e-5 if dtype == "f4" else 1e-12
    for n in (0, 1, 5, 77, 1001):
        t.check((rng.standard_normal(n) * 3).astype(dtype), rtol=rtol)
    assert not t.run.tiers.started
    quick_fn = t.run.module.functions["k0"]
    x = large(dtype)
    t.check(x, rtol=rtol)                               # tiers up first (SYNC), then runs
    up = t.run.tiers
    assert up.started and up.wait(0) and up.error is None
    assert INTERLEAVED in up.module.ir and "interleave.count" not in t.run.llvm_ir
    ref = next(r for r in t.run.__globals__ if t.run.__globals__[r] is up.module.functions["k0"])
    assert t.run.__globals__[ref] is not quick_fn
    assert t.run.module.functions["k0"] is quick_fn    # the quick module stays alive
    t.check(x, rtol=rtol)
    t.check(x[::3], rtol=rtol)
    for n in (0, 3, 1001):                              # small calls: the full tier too
        t.check((rng.standard_normal(n) * 3).astype(dtype), rtol=rtol)


def test_tier_up_happens_once(sync, monkeypatch):
    t = traced(5)
    builds = []
    real = tiers.TierUp._run
    monkeypatch.setattr(tiers.TierUp, "_run", lambda self: (builds.append(1), real(self)))
    x = large()
    for _ in range(3):
        t.check(x)
    assert builds == [1]


def test_threads_during_background_tier_up():
    assert not tiers.SYNC
    t = traced(7)
    xs = [large(), rng.standard_normal(100), large()[::2]]
    want = [t.ref(x)[0] for x in xs]
    errors = []

    def worker(i):
        try:
            for r in range(6):
                j = (i + r) % len(xs)
                got = t.llvm(xs[j])[0]
                np.testing.assert_allclose(got, want[j], rtol=1e-12, atol=1e-12)
        except Exception as exc:      # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert t.run.tiers.wait(60) and t.run.tiers.error is None
    for x, w in zip(xs, want):
        np.testing.assert_allclose(t.llvm(x)[0], w, rtol=1e-12, atol=1e-12)


def test_multi_kernel_module_swaps_every_quick_kernel(sync):
    def two(x, y):
        a = np.sin(np.sin(x)) * 2.0
        return a, np.cumsum(np.exp(np.cos(y)))
    t = Traced(two, A(("n",)), A(("m",)))
    t.graph.hints = {s: 9 for s in t.graph.symbols}
    t.run = compile_graph(t.graph)
    x, y = large(), rng.standard_normal(50)
    t.check(rng.standard_normal(9), y)
    t.check(x, y)
    t.check(x, rng.standard_normal(30000))


def test_seed_loop_end_to_end(sync, monkeypatch):
    import frametrace as ft
    quick, builds = [], []
    assign, run_ = tiers.assign, tiers.TierUp._run
    monkeypatch.setattr(tiers, "assign", lambda *a: quick.append(assign(*a)) or quick[-1])
    monkeypatch.setattr(tiers.TierUp, "_run", lambda self: (builds.append(1), run_(self)))
    g = ft.compile(ten_sin, backend="llvm")
    for n in range(2, 12):
        x = rng.standard_normal(n)
        np.testing.assert_allclose(g(x), ten_sin(x), rtol=1e-12, atol=1e-12)
    assert quick == [[], ["k0"]]                      # static n=2 (optnone path), then dynamic: quick
    x = large()
    for _ in range(2):                                # native entry misses, the wrapper tiers up once
        np.testing.assert_allclose(g(x), ten_sin(x), rtol=1e-12, atol=1e-12)
    assert builds == [1] and quick == [[], ["k0"]]


def _fail(kernels, context):
    raise RuntimeError("injected: the full tier does not build")


def test_strict_backend_surfaces_a_failed_background_tier_up():
    t = traced(5)
    t.run.tiers.build = _fail
    x = large()
    want = t.ref(x)[0]
    np.testing.assert_allclose(t.llvm(x)[0], want, rtol=1e-12)     # starts the build, runs quick
    assert t.run.tiers.wait(60) and isinstance(t.run.tiers.error, RuntimeError)
    with pytest.raises(RuntimeError, match="injected"):             # strict: the next large call
        t.llvm(x)
    np.testing.assert_allclose(t.llvm(x)[0], want, rtol=1e-12)     # then the quick tier again
    assert t.run.__globals__[next(iter(t.run.tiers.refs.values()))] is t.run.module.functions["k0"]


def test_failed_tier_up_keeps_the_quick_tier_when_not_strict(caplog, monkeypatch):
    import frametrace as ft
    from frametrace import backends
    monkeypatch.setattr(backends.llvm, "STRICT", False)
    with ft.config.patch(strict_backend=False):
        t = traced(5)
        t.run.tiers.build = _fail
        x = large()
        want = t.ref(x)[0]
        for _ in range(3):
            np.testing.assert_allclose(t.llvm(x)[0], want, rtol=1e-12)
            t.run.tiers.wait(60)
    assert isinstance(t.run.tiers.error, RuntimeError)
    assert "keeping the quick tier" in caplog.text


class Scaler:
    """A user's object whose method is compiled: ten sin, then a scale."""

    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return ten_sin(x) * self.k


def test_first_calls_of_a_big_kernel_run_the_full_tier():
    """Compiled at a large size, a kernel is full tier from its first call: nothing to tier up."""
    import frametrace as ft
    made, quick = [], []
    real_init, assign = tiers.TierUp.__init__, tiers.assign
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tiers.TierUp, "__init__", lambda self, *a: (made.append(self), real_init(self, *a))[1])
        mp.setattr(tiers, "assign", lambda *a: quick.append(assign(*a)) or quick[-1])
        s = Scaler(2.0)
        f = ft.compile(s.apply, dynamic=True)
        x = large()
        for _ in range(3):
            np.testing.assert_allclose(f(x), ten_sin(x) * 2.0, rtol=1e-12, atol=1e-12)
    assert quick == [[]] and made == []


def test_first_large_calls_of_a_quick_kernel_while_the_full_tier_builds():
    """Compiled small and dynamic (quick tier), then called large from two threads at once: the
    full tier builds once in the background, every call meanwhile runs the quick kernels, every
    result is NumPy's, and the full tier takes over."""
    import frametrace as ft
    made = []
    real_init = tiers.TierUp.__init__
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tiers.TierUp, "__init__", lambda self, *a: (made.append(self), real_init(self, *a))[1])
        s = Scaler(3.0)
        f = ft.compile(s.apply)
        for n in (3, 5):                              # static, then dynamic at a small size
            x = rng.standard_normal(n)
            np.testing.assert_allclose(f(x), ten_sin(x) * 3.0, rtol=1e-12, atol=1e-12)
    assert len(made) == 1 and not made[0].started
    up = made[0]
    quick_fn = next(iter(up.refs.values()))
    quick_fn = up.ns[quick_fn]
    xs = [large(), large()[::2], rng.standard_normal(50)]
    want = [ten_sin(x) * 3.0 for x in xs]
    errors = []

    def worker(i):
        try:
            for r in range(4):
                j = (i + r) % len(xs)
                np.testing.assert_allclose(f(xs[j]), want[j], rtol=1e-12, atol=1e-12)
        except Exception as exc:      # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    assert up.started and up.wait(60) and up.error is None
    ref = next(iter(up.refs.values()))
    assert up.ns[ref] is up.module.functions[next(iter(up.refs))] and up.ns[ref] is not quick_fn
    for x, w in zip(xs, want):
        np.testing.assert_allclose(f(x), w, rtol=1e-12, atol=1e-12)


def sum_of_math(x):
    return np.sum(np.exp(np.sin(x)) * np.cos(x))


def row_sums_of_math(x):
    return (np.tanh(x) * np.exp(-x * x)).sum(axis=1)


@pytest.mark.parametrize("fn, shape", [(sum_of_math, ("n",)), (row_sums_of_math, (3, "n"))])
@pytest.mark.parametrize("dtype", ["f8", "f4"])
def test_both_tiers_give_the_same_bits(fn, shape, dtype):
    """A float reduction's order is the vectorised loop's: the tier may change its compile time and
    its speed, never its result, so which tier runs (a matter of timing: the full tier is built in
    the background) cannot change a value."""
    quick, full = Traced(fn, A(shape, dtype)), Traced(fn, A(shape, dtype))
    quick.graph.hints = {s: 3 for s in quick.graph.symbols}
    full.graph.hints = {s: 1 << 20 for s in full.graph.symbols}
    quick.run, full.run = compile_graph(quick.graph), compile_graph(full.graph)
    assert quick.run.kernels[0].tier == "quick" and full.run.kernels[0].tier == "full"
    for n in (0, 1, 7, 1001, 4099):
        x = rng.standard_normal((n,) if len(shape) == 1 else (3, n)).astype(dtype)
        a, b = np.asarray(quick.llvm(x)), np.asarray(full.llvm(x))
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), n


# -- mid-size calls: the work budget (issue 23 part 5) ----------------------------------------------

def mid(dtype="f8"):
    """A length whose ten-sin kernel stays below the threaded size: no single call tiers up."""
    n = runtime.PARALLEL_THRESHOLD // 81 // 4
    return (rng.standard_normal(n) * 3).astype(dtype)


@pytest.mark.parametrize("dtype", ["f8", "f4"])
def test_mid_size_calls_tier_up_once_their_work_adds_up(sync, monkeypatch, dtype):
    """Called only below the threaded size, a quick kernel used to keep the quick tier for good;
    now its small calls spend the budget and the call exhausting it builds the full tier (our own
    math: the full tier's interleaved loops mark it; NumPy's loops would run chunk by chunk)."""
    monkeypatch.setattr(tiers, "TIER_UP_WORK", 5 * 81 * mid().size)
    monkeypatch.setitem(config._values, "numpy_math", False)
    t = traced(5, dtype=dtype)
    up = t.run.tiers
    rtol = 1e-5 if dtype == "f4" else 1e-12
    x = mid(dtype)
    per_call = 81 * x.size
    for i in range(5):
        t.check(x, rtol=rtol)
        assert up.spent == (i + 1) * per_call
        assert not up.started if i < 4 else up.started   # the 5th call empties the budget
    assert up.reason == "accumulated work" and up.wait(0) and up.error is None
    assert INTERLEAVED in up.module.ir
    ref = t.run.tiers.refs["k0"]
    assert t.run.__globals__[ref] is up.module.functions["k0"]
    spent = up.spent
    for n in (0, 1, 7, x.size):                         # the full tier, at every size; nothing spent
        t.check((rng.standard_normal(n) * 3).astype(dtype), rtol=rtol)
        t.check(x[::-3], rtol=rtol)
    assert up.spent == spent


def test_small_calls_below_the_budget_keep_the_quick_tier(sync):
    t = traced(5)
    for n in (0, 1, 2, 99, 1000):
        t.check(rng.standard_normal(n))
    up = t.run.tiers
    assert not up.started and up.reason is None
    assert up.spent == 81 * (0 + 1 + 2 + 99 + 1000)


def test_a_large_call_still_tiers_up_at_once(sync):
    t = traced(5)
    t.check(large())
    assert t.run.tiers.reason == "large call" and t.run.tiers.spent == 0


def mid_math(x, scale):
    """A user's step function: a math chain on a mid-size array."""
    return np.exp(-x * x) * np.tanh(x) * scale + np.log1p(x * x)


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed"])
def test_native_entry_spends_the_budget_then_calls_the_full_tier(monkeypatch, layout):
    """End to end under ft.compile: the native entry serves the mid-size calls, spends from the
    budget, misses once when it would exhaust it (the Python path starts the build) and, once
    the full tier is in place, calls it through the kernel's cell (before: the quick kernel's
    constant address for good)."""
    import frametrace as ft
    monkeypatch.setattr(tiers, "SYNC", True)
    made = []
    real_init = tiers.TierUp.__init__
    monkeypatch.setattr(tiers.TierUp, "__init__", lambda self, *a: (made.append(self), real_init(self, *a))[1])
    n = 20_000
    monkeypatch.setattr(tiers, "TIER_UP_WORK", 30 * n * 25)
    f = ft.compile(mid_math)
    for k in (3, 5):                                  # static, then dynamic at a small size: quick
        x = rng.standard_normal(k)
        np.testing.assert_allclose(f(x, 0.5), mid_math(x, 0.5), rtol=1e-12, atol=1e-12)
    assert len(made) == 1 and not made[0].started
    up = made[0]
    base = rng.standard_normal(3 * n)
    x = {"contiguous": base[:n], "strided": base[::3], "reversed": base[::-1][:n]}[layout]
    want = mid_math(x, 0.5)
    for _ in range(60):
        np.testing.assert_allclose(f(x, 0.5), want, rtol=1e-12, atol=1e-12)
    assert up.started and up.reason == "accumulated work" and up.wait(0) and up.error is None
    assert native_hits(f) >= 58                        # the native entry served them
    i = 1 + list(up._index).index("k0")
    assert up.cells[i] == up.module.address("k0") != up.ns["run"].module.address("k0")
    hits = native_hits(f)
    got = f(x, 0.5)                                    # natively, the full tier, the quick tier's bits
    assert native_hits(f) == hits + 1 and got.tobytes() == quick_bits(up, x)


def native_hits(f):
    return sum(e.native.hits for e in f._frametrace_cache.entries if e.native is not None)


def quick_bits(up, x):
    """The quick kernel's result on x, computed through the wrapper with the quick kernel put back."""
    run = up.ns["run"]
    ref = up.refs["k0"]
    full = up.ns[ref]
    up.ns[ref] = run.module.functions["k0"]
    try:
        return np.asarray(run([x, 0.5], [x.size])[0]).tobytes()
    finally:
        up.ns[ref] = full
