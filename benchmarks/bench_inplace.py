"""In-place updates and masked writes against NumPy (issue 23 item 4), under NumPy's default
error state: `x += y`, `M *= 0.995`, a masked write into a view, a Game-of-Life step and a
Gray-Scott reaction-diffusion step written the way public NumPy programs write them.

    python benchmarks/bench_inplace.py [--clock cpu] [--threads 1] [--only life,xpy]

(`xpy_raise` times `x += y` under np.errstate(all="raise"), `xpy_f32` in float32, `xdivy` is
`x /= y`, `xpy_narrow` x float32 += y float64, `ifloordiv` int64 `x //= y`: one in-place ufunc
each, written first and reported after, as NumPy does.)

Each workload is compiled once, checked against NumPy on copies, warmed up, then NumPy and the
compiled function are timed round-robin in batches (medians). Targets: `x += y` (n=4096) and
`M *= 0.995` (300x600) >= 1.5x, the masked write >= 1.0x, the Life step >= 3x.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def xpy(x, y):
    x += y
    return x


def sgd(w, g, lr):
    w -= lr * g
    return w


def scale(m):
    m *= 0.995
    return m


def masked(z, mask):
    z[...] = 0
    z[1:-1, 1:-1][mask] = 1
    return z


def life(z):
    n = (z[0:-2, 0:-2] + z[0:-2, 1:-1] + z[0:-2, 2:] +
         z[1:-1, 0:-2] + z[1:-1, 2:] +
         z[2:, 0:-2] + z[2:, 1:-1] + z[2:, 2:])
    birth = (n == 3) & (z[1:-1, 1:-1] == 0)
    survive = ((n == 2) | (n == 3)) & (z[1:-1, 1:-1] == 1)
    z[...] = 0
    z[1:-1, 1:-1][birth | survive] = 1
    return z


def gray_scott(U, V, Du, Dv, F, k):
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    Lu = (U[0:-2, 1:-1] + U[1:-1, 0:-2] - 4 * u + U[1:-1, 2:] + U[2:, 1:-1])
    Lv = (V[0:-2, 1:-1] + V[1:-1, 0:-2] - 4 * v + V[1:-1, 2:] + V[2:, 1:-1])
    uvv = u * v * v
    u += (Du * Lu - uvv + F * (1 - u))
    v += (Dv * Lv + uvv - (F + k) * v)


def _rng(seed=0):
    return np.random.default_rng(seed)


def xdivy(x, y):
    x /= y
    return x


def xfloordiv(x, y):
    x //= y
    return x


WORKLOADS = {   # name -> (function, argument maker, target speed-up or None[, np.errstate kwargs])
    "xpy": (xpy, lambda: (_rng().random(4096), _rng(1).random(4096) * 1e-9), 1.5),
    "xpy_raise": (xpy, lambda: (_rng().random(4096), _rng(1).random(4096) * 1e-9), None, {"all": "raise"}),
    "xpy_f32": (xpy, lambda: (_rng().random(4096, np.float32), _rng(1).random(4096, np.float32) * 1e-9), None),
    "xdivy": (xdivy, lambda: (_rng().random(4096), 1 + _rng(1).random(4096) * 1e-9), None),
    "xpy_narrow": (xpy, lambda: (_rng().random(4096, np.float32), _rng(1).random(4096) * 1e-9), None),
    "ifloordiv": (xfloordiv, lambda: (_rng().integers(-10**9, 10**9, 4096), _rng(1).integers(1, 100, 4096)), None),
    "sgd": (sgd, lambda: (_rng().random(4096), _rng(1).random(4096), 1e-3), None),
    "scale": (scale, lambda: (_rng().random((300, 600)),), 1.5),
    "masked": (masked, lambda: (np.zeros((256, 256), np.int64), _rng().random((254, 254)) < 0.3), 1.0),
    "life": (life, lambda: ((_rng().random((256, 256)) < 0.3).astype(np.int64),), 3.0),
    "gray_scott": (gray_scott, lambda: (1 - 0.1 * _rng().random((256, 256)), 0.1 * _rng(1).random((256, 256)),
                                        0.16, 0.08, 0.06, 0.062), None),
}


def measure(name, clock, rounds=15):
    fn, make, target, *state = WORKLOADS[name]
    with np.errstate(**(state[0] if state else {})):
        return _measure(fn, make, target, clock, rounds)


def _measure(fn, make, target, clock, rounds):
    import frametrace as ft
    a_np, a_ft = make(), make()
    compiled = ft.compile(fn)
    check_np, check_ft = make(), make()
    fn(*check_np)
    compiled(*check_ft)
    for x, y in zip(check_np, check_ft):
        if isinstance(x, np.ndarray):
            np.testing.assert_allclose(y, x, rtol=1e-12)
    tick = time.process_time if clock == "cpu" else time.perf_counter
    t0 = time.perf_counter()
    fn(*a_np)
    reps = max(3, min(2000, int(2e-3 / max(time.perf_counter() - t0, 1e-7))))
    for _ in range(reps):
        compiled(*a_ft)
    ts_np, ts_ft = [], []
    for _ in range(rounds):
        t0 = tick()
        for _ in range(reps):
            fn(*a_np)
        ts_np.append((tick() - t0) / reps)
        t0 = tick()
        for _ in range(reps):
            compiled(*a_ft)
        ts_ft.append((tick() - t0) / reps)
    a, b = statistics.median(ts_np), statistics.median(ts_ft)
    return a, b, target


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--threads", type=int)
    opts = ap.parse_args(argv)
    if opts.threads:
        os.environ["FRAMETRACE_NUM_THREADS"] = str(opts.threads)
    for name in (opts.only.split(",") if opts.only else WORKLOADS):
        a, b, target = measure(name, opts.clock)
        met = "" if target is None else ("  target %.1fx %s" % (target, "met" if a / b >= target else "MISSED"))
        print(f"{name:12s} numpy {a * 1e6:9.2f} us   frametrace {b * 1e6:9.2f} us   {a / b:6.2f}x{met}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
