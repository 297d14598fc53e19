"""frametrace demo: the seed example of the dynamic-shapes manual, for NumPy.

Ten `np.sin` over sizes 2..99, compiled three ways: one graph per size (dynamic=False),
one symbolic graph (dynamic=True), and the default (static first, then automatic dynamic).
Then a function that branches on a size, which specialises into a few graphs.
"""
import time

import numpy as np

import frametrace as ft


def sin_ten_times(x):
    for _ in range(10):
        x = np.sin(x)
    return x


def branchy(x):
    if x.shape[0] == 10:
        return x * 10
    if x.shape[0] <= 30:
        return x * 200
    return x * x.shape[0]


def sweep(fn, sizes):
    start = time.perf_counter()
    for n in sizes:
        x = np.random.default_rng(n).standard_normal(n)
        got = fn(x)
        want = (sin_ten_times if fn.__wrapped__ is sin_ten_times else branchy)(x)
        assert got.dtype == want.dtype and got.shape == want.shape and np.allclose(got, want)
    return time.perf_counter() - start


def main():
    print(f"{'setting':<18} {'graphs':>6} {'recompiles':>10} {'compile ms':>10} {'total ms':>9}")
    for label, dynamic in (("dynamic=False", False), ("dynamic=True", True), ("default (auto)", None)):
        ft.reset()
        f = ft.compile(sin_ten_times, dynamic=dynamic)
        with ft.config.patch(pgo=False, cache_size_limit=200):
            total = sweep(f, range(2, 100))
        s = ft.stats()
        compile_ms = sum(e.info.compile_time for e in f._frametrace_cache.entries) * 1e3
        print(f"{label:<18} {s.unique_graphs:>6} {s.recompiles:>10} {compile_ms:>10.1f} {total * 1e3:>9.1f}")

    ft.reset()
    g = ft.compile(branchy, dynamic=True)
    with ft.config.patch(pgo=False):
        total = sweep(g, [10, 20, 30, 40, 50])
    s = ft.stats()
    print(f"\nbranch on x.shape[0] (10 / <=30 / else) over sizes 10..50: {s.unique_graphs} graphs, "
          f"{total * 1e3:.1f} ms")
    print(ft.explain(branchy, np.ones(20)))


if __name__ == "__main__":
    main()
