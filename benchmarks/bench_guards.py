"""Guard time per call for models passed as objects, with 10, 100 and 1,000 weight arrays.

A model as users write one: a list of layer objects, each holding its weights in attributes
and a dict (`self.w`, `self.p["b"]`), called on a small input so that the guards, not the
arithmetic, are what is measured. For each size, in one process, interleaved medians of:

  python check   the entry's Python guard condition (every guard walks its source again)
  native check   the entry's guards alone, as the native builtin native_check.py builds from
                 them (each source read once, arrays' fields compared in place; instance
                 attributes read through the class's version tag: walk_helpers.py), at the level
                 a model without a native entry gets (O2 up to 200 guards, else O0); the
                 native entry runs the same walk before its kernels
  check build    the seconds that native check took to build (LLVM included)
  entry          a whole compiled call (the native entry: guards, inputs, the graph's kernels)
  NumPy          the same model run eagerly

    python benchmarks/bench_guards.py [--sizes 10,100,1000]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import frametrace as ft  # noqa: E402
from common import timed  # noqa: E402
from csrc_free_runtime import cache as rt_cache  # noqa: E402


class Layer:
    def __init__(self, rng, d):
        self.w = rng.standard_normal(d)
        self.p = {"b": rng.standard_normal(d) * 0.1}

    def __call__(self, x):
        return np.tanh(x * self.w + self.p["b"])


class Model:
    def __init__(self, n_arrays, d=8, seed=0):
        rng = np.random.default_rng(seed)
        self.layers = [Layer(rng, d) for _ in range(n_arrays // 2)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _entry(model, x):
    for c in rt_cache.all_caches():
        for e in c.entries:
            if c.code is Model.__call__.__code__ and e.check(model, x):
                return e
    raise RuntimeError("no compiled entry")


def measure(n_arrays, rounds):
    model, x = Model(n_arrays), np.linspace(-1, 1, 8)
    cm = ft.compile(model)
    t0 = time.perf_counter()
    np.testing.assert_allclose(cm(x), model(x), rtol=1e-12)
    compile_s = time.perf_counter() - t0
    e = _entry(model, x)
    from frametrace.backends.llvm.native_check import build_native_check
    t0 = time.perf_counter()                     # the guards alone, at the stand-alone check's level
    nc = build_native_check(e.info.argnames, e.info.guards, [], [], e.info.namespace, "guards")
    build_s = time.perf_counter() - t0
    fns = [lambda: e.check(model, x), (lambda: nc.fn(model, x)) if nc else None, lambda: cm(x), lambda: model(x)]
    t = timed(fns, rounds=rounds)
    return len(e.info.guards), nc, t, compile_s, build_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,1000")
    ap.add_argument("--rounds", type=int, default=2000)
    args = ap.parse_args()
    print(f"{'arrays':>6} {'guards':>6} {'native':>7} {'python check':>13} {'native check':>13} "
          f"{'entry':>9} {'NumPy':>9} {'compile s':>9} {'check build s':>13}")
    for n in map(int, args.sizes.split(",")):
        guards, nc, (py, nat, entry, eager), cs, bs = measure(n, max(50, args.rounds // max(1, n // 100)))
        shown = f"{nc.guarded}/{guards}" if nc else "-"
        nat_s = f"{nat * 1e6:10.2f} us" if nat is not None else f"{'-':>13}"
        print(f"{n:>6} {guards:>6} {shown:>7} {py * 1e6:10.2f} us {nat_s} {entry * 1e6:6.1f} us "
              f"{eager * 1e6:6.1f} us {cs:9.1f} {bs:13.2f}", flush=True)


if __name__ == "__main__":
    main()
