"""Loop programs as Numba users write them: recurrences, dynamic programming, stencils,
iterate-until-converged (the class of programs of issue 15). Plain Python + NumPy: the
benchmark runs each as written (NumPy eager), through ft.compile, and through numba.njit."""
import numpy as np


def ema(x, alpha):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = alpha * x[i] + (1 - alpha) * out[i - 1]
    return out


def running_max_and_sum(x):
    best = x[0]
    total = 0.0
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        if x[i] > best:
            best = x[i]
        total += x[i]
        out[i] = best
    return out, total


def edit_distance(a, b):
    n, m = a.shape[0], b.shape[0]
    d = np.zeros((n + 1, m + 1), dtype=np.int64)
    for i in range(n + 1):
        d[i, 0] = i
    for j in range(m + 1):
        d[0, j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + cost)
    return d[n, m]


def viterbi(log_emit, log_trans):
    steps, states = log_emit.shape
    score = log_emit[0].copy()
    back = np.zeros((steps, states), dtype=np.int64)
    for t in range(1, steps):
        cand = score[:, None] + log_trans
        back[t] = cand.argmax(axis=0)
        score = cand.max(axis=0) + log_emit[t]
    path = np.zeros(steps, dtype=np.int64)
    path[-1] = score.argmax()
    for t in range(steps - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path, score.max()


def jacobi(u, iters):
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def newton_sqrt(a):
    x = a.copy()
    it = 0
    while np.abs(x * x - a).max() > 1e-12 * a.max() and it < 100:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it


def stencil_loops(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0] - 1):
        for j in range(1, x.shape[1] - 1):
            out[i, j] = (x[i - 1, j] + x[i + 1, j] + x[i, j - 1] + x[i, j + 1]) * 0.25
    return out


def inputs(name, scale=1.0):
    """Arguments of program `name` at its benchmark size (`scale` shrinks it)."""
    rng = np.random.default_rng(0)
    s = lambda n: max(8, int(n * scale))      # noqa: E731
    return {
        "ema": lambda: (rng.standard_normal(s(1_000_000)), 0.1),
        "running_max_and_sum": lambda: (rng.standard_normal(s(1_000_000)),),
        "edit_distance": lambda: (rng.integers(0, 4, s(2000)), rng.integers(0, 4, s(2000))),
        "viterbi": lambda: (np.log(rng.random((s(10_000), 16))), np.log(rng.random((16, 16)))),
        "jacobi": lambda: (rng.standard_normal((s(512), s(512))), 100),
        "newton_sqrt": lambda: (rng.random(s(1_000_000)) + 0.5,),
        "stencil_loops": lambda: (rng.standard_normal((s(1000), s(1000))),),
    }[name]()


PROGRAMS = {f.__name__: f for f in (ema, running_max_and_sum, edit_distance, viterbi, jacobi, newton_sqrt,
                                    stencil_loops)}
