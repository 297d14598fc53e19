"""Loops over ranges bounded by array data as native loop nests: `for j in range(p[i], p[i + 1])`
(trace/loops.py `_build_data_range`, backends/llvm/loop_data_slices.py `data_range`). The index
`j` is a Python int of the graph: `a[j]`, `x[c[j]]` are data indices (NumPy's negative wrap,
its IndexError after the same writes), writes and `+=` through indirect indices keep loop
order, a range with stop < start is empty, negative bounds are plain ints. Against plain
Python on random compressed-row structures (hypothesis), int32 and int64 indices, empty rows
and rows of one entry, with compile and break counts."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import loops
from helpers import exactly, outcome
from sparse_rows import row_dot, scatter_column


LOOP_CONFIG = {"loop_unroll_budget": 0}
pytestmark = pytest.mark.usefixtures("fresh_loops")


# -- the programs, as users write them ------------------------------------------------------------
def csr_matvec(indptr, indices, data, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for j in range(indptr[i], indptr[i + 1]):
            s += data[j] * x[indices[j]]
        y[i] = s
    return y


class CSR:
    def __init__(self, indptr, indices, data):
        self.indptr, self.indices, self.data = indptr, indices, data

    def matvec(self, x):
        y = np.empty(self.indptr.size - 1)
        for i in range(self.indptr.size - 1):
            y[i] = row_dot(self.indptr, self.indices, self.data, x, i)
        return y


def csc_matvec(indptr, indices, data, x, m):
    y = np.zeros(m)
    for j in range(indptr.shape[0] - 1):
        scatter_column(indptr, indices, data, x[j], j, y)
    return y


def neighbour_means(indptr, adj, rank, outdeg):
    """One PageRank-style step over adjacency lists, accumulated with a NumPy scalar."""
    new = np.empty(indptr.shape[0] - 1)
    for v in range(indptr.shape[0] - 1):
        s = np.float64(0.0)
        for k in range(indptr[v], indptr[v + 1]):
            u = adj[k]
            s += rank[u] / outdeg[u]
        new[v] = s
    return new


def backwards_last(indptr, vals, out):
    """Walk each row from its end (step -1); the last write of a row wins."""
    for i in range(indptr.shape[0] - 1):
        for j in range(indptr[i + 1] - 1, indptr[i] - 1, -1):
            out[i] = vals[j] * (j + 1)
    return out


def row_counts(p, out):
    """An integer loop over each range: its length and the sum of its indices (plain ints)."""
    for i in range(p.shape[0] - 1):
        c = 0
        t = 0
        for j in range(p[i], p[i + 1]):
            c += 1
            t += j
        out[i, 0] = c
        out[i, 1] = t
    return out


def csr(rng, m, n, density, idt=np.int64):
    mask = rng.random((m, n)) < density
    if m > 2:
        mask[m // 2] = False                                   # an empty row
    if m > 3:
        mask[1] = False
        mask[1, n // 2] = True                                 # a row of one entry
    rows = np.concatenate(([0], np.cumsum(mask.sum(1)))).astype(idt)
    cols = np.nonzero(mask)[1].astype(idt)
    vals = rng.standard_normal(cols.size)
    return rows, cols, vals


def same(f, fn, *args):
    """f (compiled) against fn (plain Python) on copies: the outcome (result bits, or the
    exception and message) and every array argument after the call."""
    a = [np.copy(x) if isinstance(x, np.ndarray) else x for x in args]
    b = [np.copy(x) if isinstance(x, np.ndarray) else x for x in args]
    got, want = outcome(f, a), outcome(fn, b)
    assert got[0] == want[0] and got[2] == want[2], (got, want)
    if want[0] == "ok":
        exactly(got[1], want[1])
    else:
        assert got[1] == want[1]
    for x, y in zip(a, b):
        if isinstance(y, np.ndarray):
            exactly(x, y)


# -- tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("idt", [np.int64, np.int32])
def test_csr_matvec_one_native_kernel_one_compile(idt, loop_log):
    rng = np.random.default_rng(1)
    f = ft.compile(csr_matvec)
    for m, n in ((7, 9), (30, 40), (55, 20), (12, 12)):
        rows, cols, vals = csr(rng, m, n, 0.3, idt)
        same(f, csr_matvec, rows, cols, vals, rng.standard_normal(n))
        if m == 30:
            compiled = ft.stats().frames_compiled
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0
    assert s.frames_compiled == compiled <= 2        # static, then one dynamic graph for every nnz and m
    assert loops.runs["native"] == 4 and loops.runs["generic"] == 0
    assert any("native loop nest (one kernel, 1 inner loops)" in line for line in loop_log)


def test_helper_in_another_module_and_class():
    rng = np.random.default_rng(2)
    for m, n in ((9, 7), (40, 31)):
        rows, cols, vals = csr(rng, m, n, 0.2)
        A = CSR(rows, cols, vals)
        x = rng.standard_normal(n)
        exactly(ft.compile(A.matvec)(x), A.matvec(x))
    assert ft.stats().graph_breaks == 0
    assert loops.runs["native"] == 2


@pytest.mark.parametrize("idt", [np.int64, np.int32])
def test_csc_scatter_accumulates_in_loop_order(idt):
    """`y[indices[k]] += ...` is the Python loop's read-modify-write, in order (duplicate
    indices accumulate: not NumPy's buffered fancy `+=`)."""
    rng = np.random.default_rng(3)
    f = ft.compile(csc_matvec)
    for m, n in ((8, 6), (25, 33)):
        rows, cols, vals = csr(rng, n, m, 0.35, idt)           # columns of an m x n matrix
        cols[::3] = cols[0] if cols.size else 0                # repeated rows within a column
        same(f, csc_matvec, rows, cols, vals, rng.standard_normal(n), m)
    assert ft.stats().graph_breaks == 0 and loops.runs["native"] == 2


def test_graph_traversal_with_numpy_scalar():
    rng = np.random.default_rng(4)
    f = ft.compile(neighbour_means)
    for nv in (5, 60):
        deg = rng.integers(0, 4, nv)
        indptr = np.concatenate(([0], np.cumsum(deg)))
        adj = rng.integers(-nv, nv, indptr[-1])                # negative: NumPy's wrap
        same(f, neighbour_means, indptr, adj, rng.random(nv), rng.integers(1, 5, nv).astype(float))
    assert ft.stats().graph_breaks == 0 and loops.runs["native"] == 2


@pytest.mark.parametrize("case", ["plain", "reversed", "negative", "beyond"])
def test_range_bounds_are_plain_ints(case):
    """No clamping: stop < start is empty, negative starts index from the end (NumPy's wrap),
    an index past the data raises NumPy's IndexError after the earlier rows' writes."""
    vals = np.arange(1.0, 14.0)
    p = {"plain": [0, 3, 3, 7, 10, 13], "reversed": [13, 9, 2, 1, 6, 0],
         "negative": [-5, -2, 0, -13, -1, 4], "beyond": [0, 4, 9, 12, 16, 20]}[case]
    p = np.array(p)
    f, g = ft.compile(backwards_last), ft.compile(row_counts)
    same(f, backwards_last, p, vals, np.full(p.size - 1, -1.0))
    same(g, row_counts, p, np.zeros((p.size - 1, 2), np.int64))
    assert ft.stats().graph_breaks == 0


def test_out_of_bounds_after_writes_into_an_input():
    """An indirect index out of range in the middle of the nest: what the call wrote is put
    back and NumPy raises its IndexError after the very writes the Python loop made."""
    rng = np.random.default_rng(5)
    rows, cols, vals = csr(rng, 10, 8, 0.5)
    cols[rows[6]] = 8                                         # row 6's first entry
    y = np.zeros(8)

    def scatter(indptr, indices, data, y):
        for i in range(indptr.size - 1):
            for k in range(indptr[i], indptr[i + 1]):
                y[indices[k]] += data[k] * (i + 1)
        return y
    same(ft.compile(scatter), scatter, rows, cols, vals, y)
    cols[rows[6]] = -9
    same(ft.compile(scatter), scatter, rows, cols, vals, y)


def test_empty_range_leaves_the_python_float():
    """`s = 0.0` stays a Python float when the range is empty, a NumPy float64 otherwise:
    returned, each is what Python gives."""
    def last_row_sum(p, a):
        i = p.shape[0] - 2
        s = 0.0
        for j in range(p[i], p[i + 1]):
            s += a[j]
        return s
    a = np.arange(5.0)
    f = ft.compile(last_row_sum)
    for p in ([0, 2, 5], [0, 5, 5], [0, 3, 2]):
        same(f, last_row_sum, np.array(p), a)
    assert ft.stats().graph_breaks == 0


def test_promoted_float_used_where_its_type_shows_breaks():
    """`s` after the loop is either type: scaled by a float32 array, NumPy's result depends on
    which, so the graph breaks there (naming `s`) and the values are still NumPy's."""
    def scaled(p, a, w):
        out = []
        for i in range(p.shape[0] - 1):
            s = 0.0
            for j in range(p[i], p[i + 1]):
                s += a[j]
            out.append(s * w)
        return out
    p, a, w = np.array([0, 2, 2, 4]), np.arange(4.0), np.ones(3, np.float32)
    got, want = ft.compile(scaled)(p, a, w), scaled(p, a, w)
    for g, h in zip(got, want):
        exactly(g, h)


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(0, 4), min_size=0, max_size=12), n=st.integers(1, 9),
       idt=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2 ** 16))
def test_random_structures_match_python(lengths, n, idt, seed):
    rng = np.random.default_rng(seed)
    rows = np.concatenate(([0], np.cumsum(lengths))).astype(idt)
    cols = rng.integers(-n, n, rows[-1]).astype(idt)
    vals = rng.standard_normal(rows[-1])
    x = rng.standard_normal(n)
    same(ft.compile(csr_matvec), csr_matvec, rows, cols, vals, x)
    same(ft.compile(csc_matvec), csc_matvec, rows, cols, vals, rng.standard_normal(len(lengths)), n)
    assert loops.runs["generic"] == 0


def test_numpy_backend_runs_the_same_graph():
    rng = np.random.default_rng(6)
    f = ft.compile(csr_matvec, backend="numpy")
    for m, n in ((6, 5), (20, 17)):
        rows, cols, vals = csr(rng, m, n, 0.3)
        same(f, csr_matvec, rows, cols, vals, rng.standard_normal(n))
    assert ft.stats().graph_breaks == 0


def test_loop_target_after_the_loop_breaks_cleanly():
    """Where a data-bounded loop stopped is data: reading its target afterwards is a graph
    break (the frame's values stay Python's)."""
    def last_index(p):
        j = -1
        for j in range(p[0], p[1]):  # noqa: B007  (the target read after the loop)
            pass
        return j
    for p in ([2, 5], [3, 3]):
        assert ft.compile(last_index)(np.array(p)) == last_index(np.array(p))


def damped(indptr, adj, rank, d):
    n = indptr.shape[0] - 1
    new = np.empty(n)
    for v in range(n):
        s = 0.0
        for k in range(indptr[v], indptr[v + 1]):
            s += rank[adj[k]]
        new[v] = 0.15 - d * s + s * 2.0
    return new


@pytest.mark.parametrize("d", [0.85, np.inf, -0.0])
def test_promoted_float_in_python_float_arithmetic(d):
    """`d * s` with a Python float: each candidate's own arithmetic; with d = inf an empty
    row's Python `inf * 0.0` is a quiet nan, a NumPy scalar's would warn: no warning."""
    rng = np.random.default_rng(7)
    indptr = np.array([0, 2, 2, 5, 5, 6])
    adj = rng.integers(0, 6, 6)
    f = ft.compile(damped)
    same(f, damped, indptr, adj, rng.random(6) + 0.5, d)
    same(f, damped, np.array([0, 0, 0]), adj, rng.random(6), d)
    assert ft.stats().graph_breaks == 0


def prefix_scale(x, n, out):
    for j in range(n):
        out[j] = x[j] * 2.0
    return out


@pytest.mark.parametrize("make", [np.int64, np.int32, np.array])
def test_top_level_range_of_a_numpy_integer(make):
    """range(n) of a NumPy integer argument (or a 0-d array): the outer loop of a native
    kernel, its trip count from the value at run time; one graph for every n, negative n
    empty, an n past the array NumPy's IndexError after the writes."""
    x = np.arange(10.0)
    f = ft.compile(prefix_scale)
    for n in (3, 10, 0, -2, 7, 12):
        same(f, prefix_scale, x, make(n), np.zeros(12))
    assert ft.stats().graph_breaks == 0
    assert loops.runs["native"] >= 5
