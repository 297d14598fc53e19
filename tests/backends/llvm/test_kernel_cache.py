"""The process-wide kernel cache (backends/llvm/kernel_cache.py): identical kernels are compiled
by LLVM once and shared by every graph, recompile and resume function; kernels that differ in
structure, dtype, flags, tier or optimisation level are not; the disk cache uses the same keys."""
import threading
import time

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import jit, kernel_cache, tiers
from helpers import assert_same

rng = np.random.default_rng(20)


def compiled_by_llvm() -> int:
    return kernel_cache.stats["compiled"]


def units_of(fn):
    """The CompiledKernel of each kernel of each entry of an ft.compile'd function."""
    out = []
    for entry in fn._frametrace_cache.entries:
        run = entry.info.namespace.get("___graph")
        if run is not None and run.module is not None:
            out += list(run.module.units.values())
    return out


class Smoother:
    """A user object whose method and a free function compute the same kernel."""

    def __init__(self, k):
        self.k = k

    def step(self, x):
        return np.tanh(x) * self.k + 1.0


def smooth(y):
    return np.tanh(y) * 0.5 + 1.0


def smooth_by(y, k):
    return np.tanh(y) * k + 1.0


def test_identical_kernels_of_two_functions_compile_once():
    x = rng.standard_normal(100)
    before = compiled_by_llvm()
    method = ft.compile(Smoother(0.5).step)
    assert_same(method(x), Smoother(0.5).step(x))
    after_first = compiled_by_llvm()
    assert after_first == before + 1
    free = ft.compile(smooth_by)                                 # k: a float input in both
    assert_same(free(x, 0.25), smooth_by(x, 0.25))
    assert compiled_by_llvm() == after_first                     # shared, not rebuilt
    (a,), (b,) = units_of(method), units_of(free)
    assert a is b and a.symbol.startswith(kernel_cache.CANON + "_")
    run = free._frametrace_cache.entries[0].info.namespace["___graph"]
    assert run.module.how == {"k0": "shared"} and run.module.cache_hit


@pytest.mark.parametrize("change, other", [
    ("dtype", lambda x: (np.tanh(x.astype(np.float32)) * np.float32(0.5) + np.float32(1.0))),
    ("structure", lambda x: np.tanh(x) * 0.5 - 1.0),
    ("constant", lambda x: np.tanh(x) * 0.25 + 1.0),
])
def test_a_different_kernel_is_compiled(change, other):
    x = rng.standard_normal(64)
    f = ft.compile(smooth)
    f(x)
    before = compiled_by_llvm()
    g = ft.compile(other)
    assert_same(g(x), other(x))
    assert compiled_by_llvm() == before + 1, change
    assert units_of(g)[0] is not units_of(f)[0]


def test_opt_level_is_part_of_the_key():
    x = rng.standard_normal(64)
    f = ft.compile(smooth)
    f(x)
    before = compiled_by_llvm()
    with ft.config.patch(kernel_opt_level=1):
        g = ft.compile(lambda y: np.tanh(y) * 0.5 + 1.0)
        assert_same(g(x), smooth(x))
    assert compiled_by_llvm() == before + 1 and units_of(g)[0].levels == (1, 1)
    assert units_of(g)[0].key != units_of(f)[0].key


def grow(y):
    return np.exp(y) * 2.0


def grow_or_raise(y):
    with np.errstate(over="raise"):
        return np.exp(y) * 2.0


def test_error_modes_share_the_kernel_and_keep_their_behaviour():
    """The kernel reports FP flags; what they mean (warn, raise) is the wrapper's: one kernel."""
    quiet, loud = ft.compile(grow), ft.compile(grow_or_raise)
    x = rng.standard_normal(64)
    assert_same(quiet(x), grow(x))
    before = compiled_by_llvm()
    assert_same(loud(x), grow(x))
    assert compiled_by_llvm() == before and units_of(loud)[0] is units_of(quiet)[0]
    big = np.full(64, 800.0)
    with pytest.raises(FloatingPointError):
        loud(big)
    with pytest.warns(RuntimeWarning, match="overflow"):
        assert_same(quiet(big), np.full(64, np.inf))


def test_default_levels_fit_the_kernel():
    small = ft.compile(lambda y: np.tanh(y) * 0.5 + 1.0)
    small(rng.standard_normal(8))                                 # static work 8 * 9: tiny
    big = ft.compile(lambda y: np.tanh(y) * 0.5 + 1.0)
    big(rng.standard_normal(4096))
    assert units_of(small)[0].levels == (0, 0)
    assert units_of(big)[0].levels == (2, 1)


def test_recompile_and_resume_share_kernels():
    """The kernels of a function's static graph, its automatic-dynamic recompile and of the
    resume function after a graph break are shared wherever they are the same."""
    def f(x):
        a = np.exp(x) * 2.0
        print("", end="")                   # a graph break: the rest is a resume function
        return np.exp(a) * 2.0
    cf = ft.compile(f)
    before = compiled_by_llvm()
    x = rng.standard_normal(10) * 0.1
    assert_same(cf(x), f(x))
    # the static graphs before and after the break: the same kernel on 10 elements
    assert compiled_by_llvm() == before + 1
    y = rng.standard_normal(20) * 0.1
    assert_same(cf(y), f(y))                # automatic dynamic: both graphs recompile dynamic
    assert compiled_by_llvm() == before + 2
    assert kernel_cache.stats["shared"] >= 2


def _step(x, w):
    return np.linalg.solve(w, np.tanh(x * 0.5).T).T     # a kernel, then NumPy's solve


def test_repeated_identical_steps_compile_once():
    def layers(x, w):                       # the same step six times in one graph (a loop over
        x = _step(x, w)                     # them would be one loop node: one kernel)
        x = _step(x, w)
        x = _step(x, w)
        x = _step(x, w)
        x = _step(x, w)
        return _step(x, w)
    x, w = rng.random((8, 16)), np.eye(16) * 2.0 + rng.random((16, 16)) * 0.1
    before = compiled_by_llvm()
    cf = ft.compile(layers)
    assert_same(cf(x, w), layers(x, w))
    units = units_of(cf)                    # the first step reads an input, the others a solve
    assert len(units) == 6 and len({id(u) for u in units}) == 2 and all(u is units[1] for u in units[1:])
    assert compiled_by_llvm() - before == 2


def test_reset_forgets_and_the_disk_cache_uses_the_same_key(tmp_path):
    x = rng.standard_normal(33)
    with ft.config.patch(cache_dir=str(tmp_path)):
        f = ft.compile(smooth)
        f(x)
        (unit,) = units_of(f)
        (path,) = f._frametrace_cache.entries[0].info.namespace["___graph"].module.paths.values()
        assert path.endswith(f"{unit.key}.o") and jit.check(open(path, "rb").read(), unit.key)
        ft.reset()
        assert kernel_cache.size() == 0
        before = compiled_by_llvm()
        g = ft.compile(smooth)
        assert_same(g(x), smooth(x))
        assert compiled_by_llvm() == before
        run = g._frametrace_cache.entries[0].info.namespace["___graph"]
        assert run.module.how == {"k0": "disk"} and units_of(g)[0].key == unit.key


def test_threads_asking_for_one_kernel_build_it_once(monkeypatch):
    """Concurrent requests for a kernel being built wait for it (no second LLVM build)."""
    built = []
    real = jit.object_code

    def slow(*args, **kwargs):
        built.append(args[1])
        time.sleep(0.2)                      # the other threads arrive while this one builds
        return real(*args, **kwargs)
    monkeypatch.setattr(jit, "object_code", slow)
    x = rng.standard_normal(50)
    results, errors = [], []

    def worker():
        try:
            f = ft.compile(lambda y: np.cos(y) * 3.0 - 2.0)
            results.append((f(x), units_of(f)[0]))
        except Exception as exc:             # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(built) == 1
    assert all(u is results[0][1] for _, u in results)
    for got, _ in results:
        assert_same(got, np.cos(x) * 3.0 - 2.0)


def test_quick_and_full_tiers_are_distinct_kernels(monkeypatch):
    monkeypatch.setattr(tiers, "SYNC", True)
    f = ft.compile(lambda y: np.sin(np.sin(y)) + 1.0, dynamic=True)
    small = rng.standard_normal(40)
    assert_same(f(small), np.sin(np.sin(small)) + 1.0)
    run = f._frametrace_cache.entries[0].info.namespace["___graph"]
    assert run.tiers is not None
    before = compiled_by_llvm()
    run.tiers()                              # what a large call triggers
    assert compiled_by_llvm() == before + 1 and run.tiers.module.units["k0"] is not run.module.units["k0"]
    assert_same(f(small), np.sin(np.sin(small)) + 1.0)
