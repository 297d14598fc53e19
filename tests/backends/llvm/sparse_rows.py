"""Helpers of tests/backends/llvm/test_data_range_loops.py, in a module of their own as users
keep them: loops over the entries of one compressed row."""


def row_dot(indptr, indices, data, x, i):
    s = 0.0
    for j in range(indptr[i], indptr[i + 1]):
        s += data[j] * x[indices[j]]
    return s


def scatter_column(indptr, indices, data, xj, j, y):
    for k in range(indptr[j], indptr[j + 1]):
        y[indices[k]] += data[k] * xj
