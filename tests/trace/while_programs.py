"""`while` loops as people write them, for test_while_loops.py and test_breaks_in_loops.py: solvers
that run until a residual converges, time steppers with output schedules, searches with a counter,
loops that break out on a condition; written with classes and helpers, as programs are."""
import numpy as np


# ------------------------------------------------------------------ convergence loops

def jacobi(u, b, tol):
    """Jacobi sweeps until the update is small (`udiff = 1.0`, then a np.float64)."""
    udiff, sweeps = 1.0, 0
    while udiff > tol:
        un = u.copy()
        u[1:-1] = 0.5 * (un[2:] + un[:-2]) - b[1:-1]
        udiff = np.abs(np.sum(u) - np.sum(un)) / (np.abs(np.sum(u)) + 1e-30)
        sweeps += 1
    return u, sweeps


def newton_sqrt(a, tol=1e-12):
    """Newton's iteration for sqrt(a); the error is returned (it is a Python float if the loop
    never runs, a np.float64 otherwise)."""
    x = a.copy()
    err = 1.0
    while err > tol:
        x = 0.5 * (x + a / x)
        err = np.abs(x * x - a).max()
    return x, err


def halve_until_small(x, tol):
    """The test itself on data; a counter carried."""
    n = 0
    while np.abs(x).max() > tol:
        x = x * 0.5
        n += 1
    return x, n


class Relaxation:
    """A solver object: parameters in attributes, the loop in a method, a helper for the sweep."""

    def __init__(self, omega, tol, max_sweeps):
        self.omega, self.tol, self.max_sweeps = omega, tol, max_sweeps

    def sweep(self, u, f):
        new = u.copy()
        new[1:-1] = (1 - self.omega) * u[1:-1] + self.omega * 0.5 * (u[2:] + u[:-2] + f[1:-1])
        return new

    def solve(self, u, f):
        res = np.inf
        it = 0
        while res > self.tol and it < self.max_sweeps:
            new = self.sweep(u, f)
            res = np.abs(new - u).max()
            u = new
            it += 1
        return u, it, res


# ------------------------------------------------------------------ branches, break, continue

def simulate(x, t_end):
    """A time loop whose step depends on the data, with an output schedule (`if` on data)."""
    t, out, snapshots = 0.0, 1, 0
    while t < t_end:
        dt = 0.05 * np.min(x)
        if t + dt > out * 0.5:
            snapshots += 1
            out += 1
        x = x + dt * (np.roll(x, 1) - x)
        t = t + dt
    return x, t, snapshots


def shrink_until(x, limit):
    """`while True` with a data-dependent `break`."""
    k = 0
    while True:
        x = x * 0.9
        k += 1
        if x.sum() < limit:
            break
    return x, k


def count_signs(x, steps):
    """if / elif / else on data, several Python int counters, a counter in the test."""
    pos = small = neg = 0
    total = x[0] * 0
    k = 0
    while k < steps and total < 1e6:
        v = x[k % x.shape[0]]
        if v > 0.5:
            pos += 1
            total = total + v
        elif v > -0.5:
            small += 1
        else:
            neg += 1
            total = total * 0.5
        k += 1
    return pos, small, neg, total, k


def skip_positive(x, n):
    """`continue` on data: it jumps back to the (first copy of the) test."""
    it = 0
    acc = x[0] * 0
    while it < n:
        it += 1
        v = x[it % x.shape[0]]
        if v > 0:
            continue
        acc = acc + v
    return acc, it


def first_crossing(x, level):
    """A search loop: a counter indexing the array, a data test and a size test."""
    i = 0
    while i < x.shape[0] and x[i] < level:
        i += 1
    return i


def damped(x, y):
    """A test with `and`/`or` on data and a counter."""
    k = 0
    while (x.sum() > 1.0 and y.sum() > 1.0) or k < 3:
        x = x * 0.7
        y = y * 0.8
        k += 1
    return x, y, k


def walrus_peak(x):
    """An assignment expression in the test."""
    n = 0
    while (m := x.max()) > 1.0:
        x = x - 0.5
        n += 1
    return x, m, n


def nested(x, n):
    """A `while` on data inside a `for` loop node, and a `for` inside the `while`."""
    out = np.zeros(n)
    for i in range(n):
        v = x[i]
        steps = 0
        while v > 1.0:
            v = v / 2.0
            steps += 1
        out[i] = v + steps
    return out


def smooth_until(u, tol):
    d = 1.0
    it = 0
    while d > tol:
        old = u.copy()
        for j in range(1, u.shape[0] - 1):
            u[j] = 0.5 * (old[j - 1] + old[j + 1])
        d = np.abs(u - old).max()
        it += 1
    return u, it


def clipped_step(x, limit):
    """A data `if` whose one side writes into an array in place (a predicated write)."""
    k = 0
    while x.max() > limit and k < 50:
        m = x.argmax()
        if x[m] > 2 * limit:
            x[m] = x[m] * 0.25
        else:
            x[m] = x[m] - 0.5
        k += 1
    return x, k


# ------------------------------------------------------------------ what a loop node cannot do

def return_inside(x):
    """A `return` inside the body: the loop runs in Python."""
    while x.sum() > 1.0:
        x = x * 0.5
        if x.max() < 0.01:
            return -x
    return x


def keep_best(x):
    """An array chosen by a data-dependent `if`: the loop runs in Python."""
    best = x.copy()
    k = 0
    while k < 10 and x.sum() > 0.1:
        x = x * 0.8
        if x.max() < best.max():
            best = x.copy()
        k += 1
    return best


def mixed_types(x, n):
    """`acc` is a Python float on one path and a np.float64 on another: Python's own types
    differ by path, so the loop runs in Python."""
    it, acc = 0, 0.0
    while it < n:
        it += 1
        if x[it % x.shape[0]] > 0:
            continue
        acc = acc + x[it % x.shape[0]]
    return acc, it


def guarded_drain(x, steps):
    """Reads and writes `x[k]` only while `k` is in bounds (a guard on data: the compiled body
    computes both sides, and must not index out of bounds on the side Python does not take)."""
    k = 0
    total = x[0] * 0
    while total < 100.0 and k < steps:
        if k < x.shape[0]:
            total = total + x[k]
            x[k] = 0.0
        else:
            total = total + 1.0
        k += 1
    return total, k


def limiter(v, cap):
    """A helper with a branch on data and a `return` on each side (with a Python float `cap` it
    returns a float on one side and a np.float64 on the other, as Python does: the loop then
    runs in Python; with a np.float64 `cap` it is if-converted)."""
    if v > cap:
        return cap
    if v < -cap:
        return -cap
    return v


def integrate_clipped(x, cap, t_end):
    """A time loop calling a helper that branches on data: the helper is if-converted inline."""
    t = x[0] * 0
    acc = x[0] * 0
    k = 0
    while t < t_end:
        acc = acc + limiter(x[k % x.shape[0]], cap)
        t = t + 0.1
        k += 1
    return acc, k


# ------------------------------------------------------------------ loops a decided test enters

def relax_literal_tol(u, b):
    """npbench channel_flow's form: `udiff = 1` (a Python int) and a literal tolerance, so the
    trace decides the first test; `udiff` is only read by the test (not carried)."""
    udiff, steps = 1, 0
    while udiff > 1e-6:
        un = u.copy()
        u[1:-1] = 0.5 * (un[2:] + un[:-2]) - b[1:-1]
        udiff = np.abs(np.sum(u) - np.sum(un)) / (np.abs(np.sum(u)) + 1e-30)
        steps += 1
    return u, steps


class Smoother:
    """A test of two parts the trace decides on entry (`np.inf`, an int attribute), an array
    argument rebound in the loop (carried, its type kept)."""

    def __init__(self, weight, max_sweeps):
        self.weight, self.max_sweeps = weight, max_sweeps

    def run(self, u):
        change, sweeps = np.inf, 0
        while change > 1e-8 and sweeps < self.max_sweeps:
            new = self.weight * u + (1 - self.weight) * np.roll(u, 1)
            change = np.abs(new - u).max()
            u = new
            sweeps += 1
        return u, sweeps


def _newton_root(a):
    x, step = a, 1.0
    while step > 1e-12:
        nxt = 0.5 * (x + a / x)
        step = abs(nxt - x)
        x = nxt
    return x


def roots(a):
    """A helper's `while` entered by a decided test, inside a `for` loop node."""
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = _newton_root(a[i])
    return out


def drift_until(x, t_end):
    """`t = 0.0` becomes a np.float64 in the first iteration: the first iteration is peeled."""
    t, k = 0.0, 0
    while t < 5.0:
        t = t + x.min() * 0.1
        k += 1
    return t, k
