"""What a removed graph break buys (issue 23 part 5): programs with everyday calls on the values
they compute (`loss.item()`, `round()`, `max(s, eps)`, an f-string log line, `np.gradient`,
`.tolist()`), compiled against plain NumPy, interleaved medians in one process, 1 thread.

    FRAMETRACE_THREADS=1 .venv/bin/python benchmarks/bench_everyday_calls.py

Run it with another tree on PYTHONPATH to compare (the graph and break counts are printed).
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("FRAMETRACE_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frametrace as ft  # noqa: E402
from common import rounds_for, timed  # noqa: E402


class Trainer:
    """A logistic-regression step with the bookkeeping of a training loop."""

    def __init__(self):
        self.log = []

    def step(self, w, x, y, lr):
        z = x @ w
        p = 1.0 / (1.0 + np.exp(-z))
        err = p - y
        loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        g = x.T @ err / len(y)
        scale = max(np.linalg.norm(g), 1e-8)
        w = w - lr * g / scale
        self.log.append(f"loss={loss:.5f} |g|={scale:.3e} acc={((p > 0.5) == y).mean():.3f}")
        return w, round(loss.item(), 6)


def diagnostics(u, dx):
    """A simulation's per-step diagnostics: gradients of a field, rounded summary numbers."""
    gy, gx = np.gradient(u, dx)
    mag = np.hypot(gx, gy)
    u_next = u + 0.1 * (np.roll(u, 1, 0) + np.roll(u, -1, 0) - 2 * u)
    return u_next, {"max_grad": round(float(mag.max()), 4), "mean": np.round(u_next.mean(), 6),
                    "hist": np.histogram(mag, bins=8)[0].tolist()}


def normalise(x):
    """A data-pipeline step: robust scaling with an epsilon floor, clipped."""
    s = max(x.std(), 1e-8)
    top = min(np.abs(x).max(), 5.0)
    return np.clip((x - x.mean()) / s, -top, top), s


def main():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(512, 16)), (rng.random(512) > 0.5).astype(np.float64)
    w = np.zeros(16)
    u = rng.random((128, 128))
    v = rng.normal(size=200_000)
    cases = [
        ("training step (item, round, max, f-string)", Trainer().step, (w, x, y, 0.1)),
        ("diagnostics (gradient, round, tolist)", diagnostics, (u, 0.1)),
        ("normalise (max/min of a NumPy scalar)", normalise, (v,)),
    ]
    print(f"{'program':<46} {'graphs':>6} {'breaks':>6} {'NumPy us':>9} {'ft us':>9} {'speed-up':>9}")
    for name, fn, args in cases:
        ft.reset()
        e = ft.explain(fn, *args)
        ft.reset()
        compiled = ft.compile(fn)
        for _ in range(3):
            compiled(*args)
        t = timed([fn, compiled], args, rounds=3)
        rounds = rounds_for(max(t), budget=2.0, lo=15, hi=400)
        eager_t, ft_t = timed([fn, compiled], args, rounds=rounds)
        print(f"{name:<46} {e.graph_count:>6} {e.graph_break_count:>6} {eager_t * 1e6:>9.1f} {ft_t * 1e6:>9.1f} "
              f"{eager_t / ft_t:>8.2f}x")


if __name__ == "__main__":
    main()
