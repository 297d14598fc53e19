"""Loops over ranges bounded by array data, as users write them by hand (bench_range_loops.py):
compressed-row products, a column scatter, adjacency-list traversal, a histogram scatter."""
from __future__ import annotations

import numpy as np


def row_dot(indptr, indices, data, x, i):
    s = 0.0
    for j in range(indptr[i], indptr[i + 1]):
        s += data[j] * x[indices[j]]
    return s


def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            s += data[j] * x[indices[j]]
        y[i] = s
    return y


def csr_matvec_helper(indptr, indices, data, x):
    y = np.empty(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        y[i] = row_dot(indptr, indices, data, x, i)
    return y


def csc_matvec(indptr, indices, data, x, m):
    y = np.zeros(m)
    for j in range(indptr.shape[0] - 1):
        xj = x[j]
        for k in range(indptr[j], indptr[j + 1]):
            y[indices[k]] += data[k] * xj
    return y


def neighbour_sums(indptr, adj, rank, outdeg):
    new = np.empty(indptr.shape[0] - 1)
    for v in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[v], indptr[v + 1]):
            u = adj[k]
            s += rank[u] / outdeg[u]
        new[v] = s
    return new


def histogram(idx, w, nbins):
    out = np.zeros(nbins)
    for j in range(idx.shape[0]):
        out[idx[j]] += w[j]
    return out


# the same with NumPy's whole-array calls (what a user would write without loops)
def csr_matvec_numpy(indptr, indices, data, x):
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    return np.bincount(rows, data * x[indices], minlength=indptr.size - 1)


def csc_matvec_numpy(indptr, indices, data, x, m):
    return np.bincount(indices, data * np.repeat(x, np.diff(indptr)), minlength=m)


def neighbour_sums_numpy(indptr, adj, rank, outdeg):
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    return np.bincount(rows, (rank / outdeg)[adj], minlength=indptr.size - 1)


def histogram_numpy(idx, w, nbins):
    return np.bincount(idx, w, minlength=nbins)


PROGRAMS = {"csr_matvec": (csr_matvec, csr_matvec_numpy),
            "csr_matvec_helper": (csr_matvec_helper, csr_matvec_numpy),
            "csc_matvec": (csc_matvec, csc_matvec_numpy),
            "neighbour_sums": (neighbour_sums, neighbour_sums_numpy),
            "histogram": (histogram, histogram_numpy)}


def inputs(name, m=20_000, per_row=8, idt=np.int32, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 2 * per_row + 1, m)
    indptr = np.concatenate(([0], np.cumsum(lengths))).astype(idt)
    nnz = int(indptr[-1])
    indices = rng.integers(0, m, nnz).astype(idt)
    data = rng.standard_normal(nnz)
    if name in ("csr_matvec", "csr_matvec_helper"):
        return (indptr, indices, data, rng.standard_normal(m))
    if name == "csc_matvec":
        return (indptr, indices, data, rng.standard_normal(m), m)
    if name == "neighbour_sums":
        return (indptr, indices, rng.random(m), rng.integers(1, 9, m).astype(np.float64))
    return (indices, data, m)
