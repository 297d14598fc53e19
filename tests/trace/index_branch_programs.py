"""Programs whose loop bodies branch on loop indices (Python ints), as users write them: a class
with a method, a helper called in the body, carried values. Used by test_index_branches.py."""
import numpy as np


def row_update(out, A, i, j):
    """A helper of another module: a branch on its int arguments, array work on both sides."""
    if j < i:
        out[i] += A[j]
    else:
        out[i] -= 0.5 * A[j]


class SelfEnergy:
    """A convolution over energies written as a four-deep nest (k, E, w, a) whose body works only
    where the shifted energy index is not negative: `G[k, E - w]` is out of range elsewhere."""

    def __init__(self, scale):
        self.scale = scale

    def accumulate(self, G, D, S):
        for k in range(G.shape[0]):
            for E in range(G.shape[1]):
                for w in range(D.shape[0]):
                    for a in range(D.shape[1]):
                        if E - w >= 0:
                            S[k, E, a] += self.scale * (G[k, E - w] @ D[w, a])
                        else:
                            S[k, E, a] -= 0.5 * D[w, a].sum()
        return S


def lower_upper(A, out):
    """`if k < i:` three loops deep, a dot of slices that move with k on one side."""
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            for k in range(n):
                if k < i:
                    out[i, j] += A[i, :k] @ A[:k, j]
                else:
                    out[i, j] -= A[k, j] * 0.5
    return out


def diagonal(A, out):
    """`if i == j:` with row work on both sides."""
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            if i == j:
                out[i] += A[j] * 2.0
            else:
                out[j] -= A[i] * 0.25
    return out


def parity(A, out):
    """`(i + j) % 2`: not monotone in either index (both sides computed, merged)."""
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            if (i + j) % 2:
                out[i] += A[j]
            else:
                out[j] -= A[i] * 2
    return out


def with_helper(A, out):
    for i in range(A.shape[0]):
        for j in range(A.shape[0]):
            row_update(out, A, i, j)
    return out


def running(x, m):
    """A carried float (a Python float that becomes a np.float64) and the loop target after."""
    s = 0.0
    i = -1
    for i in range(x.shape[0]):
        if i < m:
            s += x[i]
        else:
            s -= 2.0 * x[i]
    return s, i


def running_break(x, m):
    """A data-dependent `break` in a body split by an index condition: not split (if-converted)."""
    s = np.float64(0.0)
    for i in range(x.shape[0]):
        if i < m:
            s += x[i]
        if x[i] > 1.5:
            break
    return s


def backwards(x, m):
    """A step of -1: not split (if-converted)."""
    s = np.float64(0.0)
    for i in range(x.shape[0] - 1, -1, -1):
        if i >= m:
            s = s * 0.5 + x[i]
    return s


def recurrence(x, out):
    """`if i > 0:` guarding `out[i - 1]` (index -1 at i = 0): a one-iteration piece and the rest."""
    for i in range(x.shape[0]):
        if i > 0:
            out[i] = out[i - 1] * 0.5 + x[i]
        else:
            out[i] = x[i]
    return out


def shifted(x, out, m):
    """An int argument first read in the body as the split point; `x[i - m]` is negative below it."""
    for i in range(x.shape[0]):
        if i < m:
            out[i] = x[i] * 2.0
        else:
            out[i] = x[i - m]
    return out
