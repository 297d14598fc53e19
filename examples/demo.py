"""frametrace demo: the seed example of the dynamic-shapes manual, for NumPy.

Ten `np.sin` over sizes 2..99, compiled three ways: one graph per size (dynamic=False),
one symbolic graph (dynamic=True), and the default (static first, then automatic dynamic).
Then a function that branches on a size, which specialises into a few graphs, the
steady-state speed of the compiled code (LLVM backend) against NumPy, and two whole programs:
a GPT-style and a Llama-style decoder (examples/gpt_decoder.py, llama_decoder.py) decoding 30
tokens compiled, each token checked against NumPy.
"""
import time
import timeit

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


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.79788456 * (x + 0.044715 * x ** 3)))


def best_ms(fn, x):
    return min(timeit.repeat(lambda: fn(x), number=3, repeat=5)) / 3 * 1e3


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

    ft.reset()
    print(f"\n{'steady state':<28} {'NumPy ms':>9} {'frametrace ms':>13} {'speedup':>8}")
    for fn, x in ((sin_ten_times, np.random.default_rng(0).standard_normal(1_000_000)),
                  (gelu, np.random.default_rng(1).standard_normal((1024, 1024)).astype(np.float32))):
        compiled = ft.compile(fn)
        got = compiled(x)
        assert got.dtype == fn(x).dtype and np.allclose(got, fn(x), rtol=1e-5, atol=1e-6)
        eager_ms, compiled_ms = best_ms(fn, x), best_ms(compiled, x)
        label = f"{fn.__name__} {x.dtype}{list(x.shape)}"
        print(f"{label:<28} {eager_ms:>9.2f} {compiled_ms:>13.2f} {eager_ms / compiled_ms:>7.1f}x")


def whole_programs():
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpt_decoder
    import llama_decoder
    print()
    with ft.config.patch(pgo=False):
        gpt_decoder.main()
        llama_decoder.main()


if __name__ == "__main__":
    main()
    whole_programs()
