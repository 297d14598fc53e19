"""Concurrency: compiled functions called from many threads while other threads trigger
compiles and recompiles of the same function (new sizes, new dtypes).

Checks: no crash, every result equals eager, no two cache entries with identical guards,
`frames_compiled` equals the number of entries created, hits never exceed calls.
"""
from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS


def kernel(x, y, a):
    z = x * a + y[::-1]
    z[1:] += x[:-1]
    return z.sum(axis=0), z[::2], x.shape[0] * 2


def _inputs(n, dtype, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, 3)) * 4).astype(dtype)
    y = (rng.standard_normal((n, 3)) * 4).astype(dtype)
    return x, y


def _check(got, want):
    assert type(got) is type(want)
    for g, w in zip(got, want):
        assert type(g) is type(w), (type(g), type(w))
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
            tol = 1e-4 if w.dtype == np.float32 else 1e-9
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
        else:
            assert g == w


def _guard_key(entry):
    """The guards of an entry as readable text (the generated source alone names dtypes and
    types through namespace slots, so it can be equal for different dtypes)."""
    info = entry.info
    names = [getattr(g, "name", str(g)) for g in getattr(info, "guards", ())]
    return "\n".join(names) if names else entry.guard_source


@pytest.fixture
def fast_switch():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)          # switch threads often: more interleavings
    yield
    sys.setswitchinterval(old)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dynamic", [None, True, False])
def test_calls_and_recompiles_from_many_threads(backend, dynamic, fast_switch):
    c = ft.compile(kernel, backend=backend, dynamic=dynamic)
    cache = c._frametrace_cache
    callers, compilers = 8, 3
    duration = 1.5 if backend == "numpy" else 2.5
    steady = [(_inputs(5, np.float64, s), a) for s, a in ((1, 0.5), (2, 2.0), (3, -1.5))]
    sizes = (5, 6, 7, 9, 12, 17, 23)
    dtypes = (np.float64, np.float32, np.int64, np.int32)
    errors, calls = [], [0] * (callers + compilers)
    barrier = threading.Barrier(callers + compilers)
    stop = time.perf_counter() + duration

    def caller(i):
        try:
            barrier.wait()
            k = 0
            while time.perf_counter() < stop:
                (x, y), a = steady[k % len(steady)]
                want = kernel(x.copy(), y.copy(), a)
                xs = x.copy()
                got = c(xs, y, a)
                _check(got, want)
                np.testing.assert_array_equal(xs, x)            # x itself is not written
                calls[i] += 1
                k += 1
        except BaseException as exc:    # noqa: BLE001
            errors.append(exc)

    def compiler(i):
        try:
            barrier.wait()
            k = 0
            while time.perf_counter() < stop:
                n = sizes[(k + i) % len(sizes)]
                dt = dtypes[(k // len(sizes) + i) % len(dtypes)]
                x, y = _inputs(n, dt, 100 * i + k)
                a = 3 if dt in (np.int64, np.int32) else 0.25
                want = kernel(x.copy(), y.copy(), a)
                _check(c(x, y, a), want)
                calls[callers + i] += 1
                k += 1
        except BaseException as exc:    # noqa: BLE001
            errors.append(exc)

    with ft.config.patch(cache_size_limit=64):
        threads = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
        threads += [threading.Thread(target=compiler, args=(i,)) for i in range(compilers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]

    st = ft.stats()
    entries = cache.entries
    assert st.frames_compiled == len(entries), (st, len(entries))
    guards = [_guard_key(e) for e in entries]
    dupes = {g for g in guards if guards.count(g) > 1}
    assert not dupes, f"{len(dupes)} guard sets compiled more than once:\n" + "\n---\n".join(dupes)
    total = sum(calls)
    assert st.cache_hits <= total, (st, total)
    assert st.cache_hits + st.frames_compiled + st.eager_fallbacks <= total + len(entries)
    assert st.eager_fallbacks == 0, st
    # the policy bounds the number of entries: per dtype at most static + dynamic (+ the
    # re-specialisation of `a` for int dtypes under dynamic=None)
    if dynamic is True:
        assert len(entries) <= len(dtypes), [_guard_key(e) for e in entries]
    if dynamic is None:
        assert len(entries) <= 3 * len(dtypes), [_guard_key(e) for e in entries]


@pytest.mark.parametrize("backend", BACKENDS)
def test_first_compile_raced_by_many_threads(backend, fast_switch):
    """Many threads hit the very first call at once: one entry, one compile."""
    def f(x):
        return (x * 2 + 1).sum()

    c = ft.compile(f, backend=backend)
    n = 8
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def go(i):
        try:
            barrier.wait()
            results[i] = c(np.arange(10.0))
        except BaseException as exc:   # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]
    want = f(np.arange(10.0))
    assert all(type(r) is type(want) and r == want for r in results), results
    assert ft.stats().frames_compiled == 1 == len(c._frametrace_cache.entries), ft.stats()
