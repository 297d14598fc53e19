"""Escape-time programs as users write them (used by test_shrinking_loops.py): iterate a complex
map over a grid in a Python `for` loop, drop the points that escaped (`z = z[keep]`: the arrays
shrink every iteration), record when each escaped. A class with a helper of this module."""
import numpy as np


def escaped(z, horizon):
    """A helper in another module than the loop: the mask of points still inside."""
    return np.abs(z) <= horizon


class EscapeTime:
    def __init__(self, horizon=2.0):
        self.horizon = horizon

    def run(self, c, steps):
        z = np.zeros_like(c)
        counts = np.zeros(c.shape, np.int64)
        where = np.arange(c.shape[0])
        for i in range(steps):
            z = z * z + c
            keep = escaped(z, self.horizon)
            counts[where[~keep]] = i + 1
            z, c, where = z[keep], c[keep], where[keep]
        return counts, z, where

    def run_until_empty(self, c, steps):
        """`if not len(z): break` first in the body, the loop index used after the loop, and
        `np.multiply(z, z, z)`: an array written in place, then replaced by a subset of itself."""
        z = np.zeros(c.shape, c.dtype)
        last = np.zeros(c.shape, c.dtype)
        where = np.arange(c.shape[0])
        i = -1
        for i in range(steps):  # noqa: B007 (i: the index after the loop)
            if not len(z):
                break
            np.multiply(z, z, z)
            np.add(z, c, z)
            out = ~escaped(z, self.horizon)
            last[where[out]] = z[out]
            np.logical_not(out, out)
            z, c, where = z[out], c[out], where[out]
        return last, z, where, i


def grid_escape(xn, yn, steps, horizon=2.0):
    """As NPBench's mandelbrot2 writes it: index grids flattened with `x.shape = ...`."""
    Xi, Yi = np.mgrid[0:xn, 0:yn]
    C = np.linspace(-2.0, 0.5, xn)[Xi] + np.linspace(-1.25, 1.25, yn)[Yi] * 1j
    N = np.zeros(C.shape, dtype=np.int64)
    Xi.shape = Yi.shape = C.shape = xn * yn
    Z = np.zeros(C.shape, np.complex128)
    for i in range(steps):
        if not len(Z):
            break
        np.multiply(Z, Z, Z)
        np.add(Z, C, Z)
        out = np.abs(Z) > horizon
        N[Xi[out], Yi[out]] = i + 1
        np.logical_not(out, out)
        Z = Z[out]
        Xi, Yi = Xi[out], Yi[out]
        C = C[out]
    return N.T, Z


def first_value_seen_elsewhere(c, steps):
    """The array the loop starts from is also `start`: writing into it is visible after the loop."""
    z = c.copy()
    start = z
    for _ in range(steps):
        np.multiply(z, 0.5, z)
        z = z[np.abs(z) > 0.1]
    return start, z


def nested_selections(c, steps, inner):
    """A shrinking loop inside a shrinking loop: the inner loop's last size is the outer one's."""
    z = c.copy()
    t = z
    for _step in range(steps):
        z = z[np.abs(z) < 3.0] * 1.5
        t = z
        for _sweep in range(inner):
            t = t[np.abs(t) > 0.5]
    return z, t
