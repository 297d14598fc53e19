"""How fast can one core run `x += y` (4096 float64) and `M *= 0.995` (300x600 float64) at all?
A tight hand-written LLVM loop (explicit 4- or 8-wide vectors, 1 or 4 per iteration, the
destination 64-byte aligned, no call, no flag handling, repeated inside the function) against
NumPy's `x += y` / `M *= c` and the compiled function, on the same arrays, interleaved rounds,
medians of the calling process's CPU time; bandwidth counts the bytes the update must move
(read x and y, write x: 24 bytes per element; read and write M: 16).

    python benchmarks/bench_inplace_ceiling.py [--rounds 15] [--sweep]

`--sweep` adds the tight loop's bandwidth for sizes from 16 KiB to 8 MiB per array (where the
L1 and L2 plateaus end on this machine). Issue 23 item 4: the closing note quotes these.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

from frametrace.codegen.llvm_jit import compile_ir


def _loop_ir(name: str, op: str, width: int, unroll: int) -> str:
    """void name(ptr y, ptr x, i64 n, i64 reps, double c): reps times y[i] = y[i] + x[i]
    (op "add") or y[i] = y[i] * c ("scale"), n a multiple of width * unroll, y aligned."""
    body = []
    for u in range(unroll):
        body.append(f"  %o{u} = add i64 %i, {u * width}\n"
                    f"  %py{u} = getelementptr double, ptr %y, i64 %o{u}\n"
                    f"  %vy{u} = load <{width} x double>, ptr %py{u}, align 64\n")
        if op == "add":
            body.append(f"  %px{u} = getelementptr double, ptr %x, i64 %o{u}\n"
                        f"  %vx{u} = load <{width} x double>, ptr %px{u}, align 8\n"
                        f"  %res{u} = fadd <{width} x double> %vy{u}, %vx{u}\n")
        else:
            body.append(f"  %res{u} = fmul <{width} x double> %vy{u}, %cv\n")
        body.append(f"  store <{width} x double> %res{u}, ptr %py{u}, align 64\n")
    return f"""
define void @{name}(ptr noalias %y, ptr noalias %x, i64 %n, i64 %reps, double %c) #0 {{
entry:
  %c0 = insertelement <{width} x double> poison, double %c, i32 0
  %cv = shufflevector <{width} x double> %c0, <{width} x double> poison, <{width} x i32> zeroinitializer
  br label %outer
outer:
  %rep = phi i64 [0, %entry], [%rep1, %next]
  br label %loop
loop:
  %i = phi i64 [0, %outer], [%i1, %loop]
{''.join(body)}
  %i1 = add i64 %i, {width * unroll}
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %next
next:
  %rep1 = add i64 %rep, 1
  %again = icmp ult i64 %rep1, %reps
  br i1 %again, label %outer, label %exit
exit:
  ret void
}}
"""


SHAPES = [(4, 1), (4, 4), (8, 1), (8, 4)]
_SIG = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_double)


def tight_loops():
    names = {(op, w, u): f"tight_{op}_{w}x{u}" for op in ("add", "scale") for w, u in SHAPES}
    ir = "".join(_loop_ir(n, *k) for k, n in names.items())
    ir += '\nattributes #0 = { "prefer-vector-width"="512" "min-legal-vector-width"="512" }\n'
    cm = compile_ir(ir, list(names.values()))
    return cm, {k: _SIG(cm.address(n)) for k, n in names.items()}


def aligned(shape, fill):
    n = int(np.prod(shape))
    raw = np.empty(n + 8)
    start = (-raw.ctypes.data % 64) // 8
    a = raw[start:start + n].reshape(shape)
    a[...] = fill
    return a


def xpy(x, y):
    x += y
    return x


def scale(m):
    m *= 0.995
    return m


def _cpu(fn, reps):
    t0 = time.process_time()
    fn(reps)
    return (time.process_time() - t0) / reps


def measure(rounds: int):
    os.environ.setdefault("FRAMETRACE_NUM_THREADS", "1")
    cm, loops = tight_loops()    # (cm owns the machine code: keep it alive)
    rows = []
    for op, shape, nbytes in (("add", (4096,), 24 * 4096), ("scale", (300, 600), 16 * 180000)):
        rows += _measure_one(op, shape, nbytes, loops, rounds)
    del cm
    return rows


def _measure_one(op, shape, nbytes, loops, rounds):
    import frametrace as ft
    n = int(np.prod(shape))
    y = aligned(shape, 1.0)
    x = aligned(shape, 1e-300) if op == "add" else None
    reps = 2000 if op == "add" else 50
    plain = xpy if op == "add" else scale
    compiled = ft.compile(plain)
    args = (y, x) if op == "add" else (y,)
    compiled(*args)
    runners = {"numpy": lambda r: [plain(*args) for _ in range(r)],
               "frametrace": lambda r: [compiled(*args) for _ in range(r)]}
    xp = 0 if x is None else x.ctypes.data
    for (o, w, u), f in loops.items():
        if o == op:
            runners[f"tight {w}x{u}"] = (lambda r, f=f: f(y.ctypes.data, xp, n, r, 1.0))
    times = {k: [] for k in runners}
    for _ in range(rounds):
        for k, run in runners.items():
            times[k].append(_cpu(run, reps))
    what = "x += y" if op == "add" else "M *= 0.995"
    return [(f"{what} {shape}", k, statistics.median(ts) * 1e6, nbytes / statistics.median(ts) / 1e9)
            for k, ts in times.items()]


def sweep(rounds: int):
    cm, loops = tight_loops()    # (cm owns the machine code: keep it alive)
    out = []
    for n in (2048, 8192, 32768, 131072, 180000, 262144, 1048576):
        y, x = aligned((n,), 1.0), aligned((n,), 1e-300)
        reps = max(5, int(2e7 / n))
        row = [n * 8 // 1024]
        for op, nb in (("add", 24), ("scale", 16)):
            f = loops[(op, 8, 1)]
            t = statistics.median(_cpu(lambda r, f=f, y=y, x=x, n=n: f(y.ctypes.data, x.ctypes.data, n, r, 1.0),
                                       reps) for _ in range(rounds))
            row.append(nb * n / t / 1e9)
        out.append(row)
    del cm
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--sweep", action="store_true")
    opts = ap.parse_args(argv)
    with open("/proc/loadavg") as fh:
        print("load", fh.read().split()[:3])
    for what, who, us, gbs in measure(opts.rounds):
        print(f"{what:22s} {who:12s} {us:9.3f} us  {gbs:6.1f} GB/s")
    if opts.sweep:
        print("tight 8x1 loop, bandwidth by size of one array:")
        for kib, add, sc in sweep(max(5, opts.rounds // 3)):
            print(f"  {kib:6d} KiB  y += x {add:6.1f} GB/s   y *= c {sc:6.1f} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
