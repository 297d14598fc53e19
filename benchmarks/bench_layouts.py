"""Elementwise kernels on non-C-ordered inputs against NumPy eager (issue 14).

Run: python benchmarks/bench_layouts.py [--quick]
NumPy's iterator walks an F-ordered, transposed or permuted array in memory order, so its
speed does not depend on the axis order; the compiled kernels must not either. Each row is
compiled once with ft.compile(backend="llvm", dynamic=True) and timed round-robin with
NumPy (medians; the VM is noisy). Target: ratio (numpy / frametrace) >= 0.95 on every row.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frametrace as ft  # noqa: E402
from common import rounds_for, timed  # noqa: E402


def f(x):
    return x * 2.0 + 1.0


def g(x, y):
    return np.exp(x) + y


def h(x, y):
    return x * y - 0.5


def inplace(x, y):
    x += y
    return x


def total(x):
    return x.sum()


def row_sums(x):
    return x.sum(axis=1)


def layouts(n: int, rng):
    """(name, function, args maker) rows: each maker returns fresh arguments."""
    c = rng.standard_normal((n, n))
    c2 = rng.standard_normal((n, n))
    fo, fo2 = np.asfortranarray(c), np.asfortranarray(c2)
    wide, wide2 = rng.standard_normal((n, 2 * n)), rng.standard_normal((n, 2 * n))
    m = max(2, round((n * n) ** (1 / 3)))
    c3 = rng.standard_normal((m, m, m))
    c3b = rng.standard_normal((m, m, m))
    return [
        ("f C", f, lambda: (c,)),
        ("f F", f, lambda: (fo,)),
        ("f x.T", f, lambda: (c.T,)),
        ("g C", g, lambda: (c, c2)),
        ("g F", g, lambda: (fo, fo2)),
        ("g x.T", g, lambda: (c.T, c2.T)),
        ("g x[:, ::2]", g, lambda: (wide[:, ::2], wide2[:, ::2])),
        ("g x[::-1]", g, lambda: (c[::-1], c2[::-1])),
        ("h F * row (broadcast)", h, lambda: (fo, c2[0])),
        (f"f 3-d {m}^3 transpose(2,0,1)", f, lambda: (c3.transpose(2, 0, 1),)),
        (f"h 3-d {m}^3 transpose(1,2,0)", h, lambda: (c3.transpose(1, 2, 0), c3b.transpose(1, 2, 0))),
        ("x += y, x F", inplace, lambda: (fo.copy(), fo2)),
        ("x.sum() F", total, lambda: (fo,)),
        ("x.sum(axis=1) F (C order still)", row_sums, lambda: (fo,)),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = ap.parse_args()
    n = 300 if args.quick else 1000
    rng = np.random.default_rng(0)
    rows = []
    for name, fn, make in layouts(n, rng):
        compiled = ft.compile(fn, backend="llvm", dynamic=True)
        a = make()
        want, got = fn(*[x.copy(order="K") for x in a]), compiled(*make())
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
        assert np.shape(got) == np.shape(want) and np.ndim(got) == 0 or got.strides == want.strides, name
        # in-place rows mutate their argument: both sides get the same (reused) arrays
        a = make()
        for _ in range(3):
            compiled(*a)
        t = timed([fn], a, 3)[0]
        t_np, t_ft = timed([fn, compiled], a, rounds_for(t, 1.5, 9))
        rows.append((name, t_np * 1e3, t_ft * 1e3, t_np / t_ft))
    print(f"{'workload (' + str(n) + 'x' + str(n) + ' float64)':36s} {'numpy ms':>9s} {'ft ms':>9s} {'ratio':>7s}")
    for name, a, b, r in rows:
        print(f"{name:36s} {a:9.3f} {b:9.3f} {r:7.2f}")
    print("frames compiled:", ft.stats().frames_compiled)


if __name__ == "__main__":
    main()
