"""ns per element: frametrace.codegen.llvm_math loop kernels vs NumPy ufuncs (out= preallocated).

    python benchmarks/bench_llvm_math.py [--rounds 9] [--quick] [name ...]

Each function is compiled into `k(x, [y,] out, n)` (the same kernel as the tests) and timed
with pointers extracted once (the ~0.3 us ctypes call is negligible at n >= 1e6). Rounds
interleave ours and NumPy so machine noise hits both alike; the table shows medians.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from frametrace.codegen.llvm_jit import compile_ir  # noqa: E402
from frametrace.codegen.llvm_math import MATH_FUNCTIONS, math_function_ir, symbol_name  # noqa: E402

# Typical input ranges (inside the fast paths, as real data usually is).
RANGES = {
    "log": (0.1, 10), "log2": (0.1, 10), "log10": (0.1, 10), "log1p": (-0.9, 10), "sqrt": (0, 10),
    "arcsin": (-1, 1), "arccos": (-1, 1), "power": ((0.1, 10), (-5, 5)),
}
LARGE = {"sin", "exp"}          # also timed at n = 1e7


def kernel_ir(name: str, ty: str) -> str:
    binary = MATH_FUNCTIONS[name].nargs == 2
    extra = f"""  %py = getelementptr inbounds {ty}, ptr %y, i64 %i
  %w = load {ty}, ptr %py
""" if binary else ""
    args = f"{ty} %v, {ty} %w" if binary else f"{ty} %v"
    params = "ptr noalias %x, " + ("ptr noalias %y, " if binary else "") + "ptr noalias %out, i64 %n"
    return math_function_ir(name, ty) + f"""
define void @k({params}) {{
entry:
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %exit
loop:
  %i = phi i64 [0, %entry], [%i.next, %loop]
  %px = getelementptr inbounds {ty}, ptr %x, i64 %i
  %v = load {ty}, ptr %px
{extra}  %r = call {ty} @{symbol_name(name, ty)}({args})
  %po = getelementptr inbounds {ty}, ptr %out, i64 %i
  store {ty} %r, ptr %po
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"""


def inputs(name: str, n: int, dtype, rng):
    spec = RANGES.get(name, (-10, 10))
    specs = spec if isinstance(spec[0], tuple) else (spec,) * MATH_FUNCTIONS[name].nargs
    return [rng.uniform(lo, hi, n).astype(dtype) for lo, hi in specs]


def bench_one(name: str, ty: str, n: int, rounds: int, rng) -> tuple[float, float, float]:
    dtype = np.float64 if ty == "double" else np.float32
    t0 = time.perf_counter()
    cm = compile_ir(kernel_ir(name, ty), ["k"])
    compile_ms = (time.perf_counter() - t0) * 1e3
    nargs = MATH_FUNCTIONS[name].nargs
    k = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (nargs + 1), ctypes.c_int64)(cm.address("k"))
    xs = inputs(name, n, dtype, rng)
    out = np.empty_like(xs[0])
    ptrs = [x.ctypes.data for x in xs] + [out.ctypes.data]
    ufunc = getattr(np, name)
    k(*ptrs, n)                           # warm up (page faults, caches)
    ufunc(*xs, out=out)
    ours, theirs = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        k(*ptrs, n)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        ufunc(*xs, out=out)
        theirs.append(time.perf_counter() - t)
    return float(np.median(ours)) / n * 1e9, float(np.median(theirs)) / n * 1e9, compile_ms


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", default=sorted(MATH_FUNCTIONS))
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="n = 1e5 only, 5 rounds")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'function':9s} {'dtype':7s} {'n':>9s} {'ours ns/el':>11s} {'numpy ns/el':>12s} "
          f"{'speed-up':>9s} {'compile ms':>11s}")
    for name in args.names:
        sizes = [10**5] if args.quick else [10**6] + ([10**7] if name in LARGE else [])
        for ty in ("double", "float"):
            for n in sizes:
                ours, theirs, cms = bench_one(name, ty, n, 5 if args.quick else args.rounds, rng)
                print(f"{name:9s} {'f64' if ty == 'double' else 'f32':7s} {n:9.0e} {ours:11.2f} "
                      f"{theirs:12.2f} {theirs / ours:8.2f}x {cms:11.0f}", flush=True)


if __name__ == "__main__":
    main()
