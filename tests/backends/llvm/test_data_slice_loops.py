"""Compressed-row loops as native loop nests (backends/llvm/loop_data_slices.py): slices whose
bounds are read from arrays in the body (`A_val[A_row[i]:A_row[i + 1]]`, clamped as Python
clamps a slice, negative bounds included) and gathers `x[cols]` read inside the product or sum,
their index checked where it is read. Against plain NumPy on random CSR matrices (empty rows,
no rows, one row), index and value dtypes, out-of-range and negative indices (NumPy's
IndexError / wrap, after the earlier rows' writes), with graph, break and compile counts."""

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import loops
from helpers import assert_same


LOOP_CONFIG = {"loop_unroll_budget": 0}
pytestmark = pytest.mark.usefixtures("fresh_loops")


# -- the programs, as users write them ------------------------------------------------------------
class CSRMatrix:
    """A sparse matrix in compressed-row form with a product method (the scipy layout)."""

    def __init__(self, indptr, indices, data):
        self.indptr, self.indices, self.data = indptr, indices, data

    def row(self, i):
        lo, hi = self.indptr[i], self.indptr[i + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    def matvec(self, x):
        y = np.zeros(self.indptr.size - 1, self.data.dtype)
        for i in range(self.indptr.size - 1):
            cols, vals = self.row(i)
            y[i] = vals @ x[cols]
        return y


def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def segment_sums(vals, p):
    out = np.zeros(p.shape[0] - 1, vals.dtype)
    for i in range(p.shape[0] - 1):
        out[i] = vals[p[i]:p[i + 1]].sum()
    return out


def ragged_norms(vals, p):
    """Mean square of each ragged row, 0 for an empty one (sizes of the data slice as values)."""
    out = np.empty(p.shape[0] - 1)
    for i in range(p.shape[0] - 1):
        row = vals[p[i]:p[i + 1]]
        out[i] = (row * row).sum() / max(row.size, 1)
    return out


def gathered_sums(x, idx, p):
    out = np.zeros(p.shape[0] - 1, x.dtype)
    for i in range(p.shape[0] - 1):
        out[i] = np.sum(x[idx[p[i]:p[i + 1]]])
    return out


def csr(rng, m, n, density, idt=np.int64, vdt=np.float64):
    mask = rng.random((m, n)) < density
    if m > 2:
        mask[m // 2] = False                                   # an empty row
    rows = np.concatenate(([0], np.cumsum(mask.sum(1)))).astype(idt)
    cols = np.nonzero(mask)[1].astype(idt)
    vals = (rng.random(cols.size) * 10 - 3).astype(vdt)
    return rows, cols, vals


def _outcome(f, *args):
    try:
        return "ok", f(*args)
    except Exception as exc:                                   # noqa: BLE001  (compared below)
        return "raised", (type(exc), str(exc))


def check(f, fn, *args):
    """f (compiled) against fn (NumPy) on copies of args: the result or the exception, and
    the arguments after the call."""
    a, b = [np.copy(x) for x in args], [np.copy(x) for x in args]
    got, want = _outcome(f, *a), _outcome(fn, *b)
    assert got[0] == want[0], (got, want)
    if got[0] == "ok":
        assert_same(got[1], want[1])
    else:
        assert got[1] == want[1]
    for x, y in zip(a, b):
        assert_same(x, y)


# -- tests ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("idt", [np.int64, np.int32, np.uint32, np.int8])
@pytest.mark.parametrize("vdt", [np.float64, np.float32, np.int64, np.int32])
def test_spmv_random_csr_one_native_kernel(idt, vdt, loop_log):
    rng = np.random.default_rng(7)
    f = ft.compile(spmv)
    for m, n in ((7, 9), (12, 5), (1, 4), (0, 3), (30, 40)):
        rows, cols, vals = csr(rng, m, n, 0.3, idt, vdt)
        x = (rng.random(n) * 4 - 1).astype(vdt)
        check(f, spmv, rows, cols, vals, x)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0
    assert s.frames_compiled <= 4            # static, dynamic, and sizes 0 and 1 specialised (duck sizing)
    assert loops.runs["native"] >= 3 and loops.runs["generic"] == 0
    assert any("native loop nest (one kernel, 1 inner loops)" in line for line in loop_log)


def test_matrix_class_with_row_helper():
    rng = np.random.default_rng(3)
    for m, n in ((10, 8), (25, 30)):
        rows, cols, vals = csr(rng, m, n, 0.25)
        x = rng.random(n)
        A = CSRMatrix(rows, cols, vals)
        got = ft.compile(A.matvec)(x)
        assert_same(got, A.matvec(x))
    assert ft.stats().graph_breaks == 0
    assert loops.runs["native"] == 2


@pytest.mark.parametrize("bad", [40, -40, 9, -10])
def test_gather_out_of_range_raises_as_numpy(bad):
    """An index out of bounds (or below -n) leaves the kernel before that row's write: earlier
    rows are written, then NumPy's IndexError from the generic path."""
    rng = np.random.default_rng(11)
    rows, cols, vals = csr(rng, 12, 9, 0.4)
    cols[rows[6]] = bad                                       # row 6's first column
    x = rng.random(9)
    f = ft.compile(spmv)

    def keep(A_row, A_col, A_val, x, y):
        for i in range(A_row.size - 1):
            y[i] = A_val[A_row[i]:A_row[i + 1]] @ x[A_col[A_row[i]:A_row[i + 1]]]
    check(f, spmv, rows, cols, vals, x)
    g = ft.compile(keep)
    check(g, keep, rows, cols, vals, x, np.full(12, -1.0))    # rows 0..5 written before the raise
    assert loops.runs["generic"] >= 1


def test_negative_indices_wrap_once():
    rng = np.random.default_rng(5)
    rows, cols, vals = csr(rng, 9, 6, 0.5)
    cols = cols - 6                                          # every column as its negative index
    check(ft.compile(spmv), spmv, rows, cols, vals, rng.random(6))
    assert loops.runs["generic"] == 0


@pytest.mark.parametrize("case", ["negative", "beyond", "reversed", "empty"])
def test_bounds_clamped_as_python_clamps(case):
    rng = np.random.default_rng(2)
    vals = rng.random(13)
    p = np.array([0, 3, 3, 7, 10, 13])
    if case == "negative":
        p = np.array([0, -10, 3, -2, -20, 13])
    elif case == "beyond":
        p = np.array([0, 30, 5, 99, 12, 100])
    elif case == "reversed":
        p = np.array([13, 9, 2, 1, 6, 0])
    elif case == "empty":
        vals, p = vals[:0], np.array([0, 0, 0])
    check(ft.compile(segment_sums), segment_sums, vals, p)
    check(ft.compile(ragged_norms), ragged_norms, vals, p)
    assert ft.stats().graph_breaks == 0
    assert loops.runs["generic"] == 0 and loops.runs["native"] >= 2


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.uint8])
def test_segment_sums_dtypes_nan(dt):
    rng = np.random.default_rng(4)
    p = np.sort(rng.integers(0, 50, 12))
    vals = (rng.random(50) * 100).astype(dt)
    if vals.dtype.kind == "f":
        vals[7] = np.nan
        vals[20] = np.inf
    check(ft.compile(segment_sums), segment_sums, vals, p)
    assert loops.runs["native"] == 1


def test_gathered_sums_and_sizes_one():
    rng = np.random.default_rng(9)
    f = ft.compile(gathered_sums)
    for n in (1, 5, 40):
        x = rng.random(n)
        idx = rng.integers(-n, n, 3 * n)
        p = np.sort(rng.integers(0, 3 * n + 1, 6))
        check(f, gathered_sums, x, idx, p)
    assert ft.stats().graph_breaks == 0 and loops.runs["generic"] == 0


def test_gather_read_after_a_write_into_its_array_is_not_native(loop_log):
    """x[cols] is a copy in NumPy: read after a write into x, the loop is not native."""
    def f(A_row, A_col, x, y):
        for i in range(A_row.size - 1):
            g = x[A_col[A_row[i]:A_row[i + 1]]]
            x[i] = 0.0
            y[i] = g.sum()
    rng = np.random.default_rng(1)
    rows, cols, _ = csr(rng, 6, 6, 0.5)
    check(ft.compile(f), f, rows, cols, rng.random(6), np.zeros(6))
    assert loops.runs["native"] == 0
    assert any("not an element loop" in line for line in loop_log)


def _count_then_gather(A_row, A_col, A_val, x, seen, y):
    for i in range(A_row.size - 1):
        seen[i] += 1                                  # a write before the gather, not idempotent
        y[i] = A_val[A_row[i]:A_row[i + 1]] @ x[A_col[A_row[i]:A_row[i + 1]]]


@pytest.mark.parametrize("bad", [None, 50, -50])
def test_gather_after_a_write_checks_its_indices_first(bad):
    """Indices read after a write of the iteration are checked by a loop of their own before
    that write: an out-of-range one hands the iteration over before `seen[i] += 1`, so the
    generic path does it once, then raises as NumPy does."""
    rng = np.random.default_rng(12)
    rows, cols, vals = csr(rng, 10, 7, 0.5)
    if bad is not None:
        cols[rows[4] + 1 if rows[5] - rows[4] > 1 else rows[4]] = bad
    check(ft.compile(_count_then_gather), _count_then_gather, rows, cols, vals, rng.random(7),
          np.zeros(10, np.int64), np.zeros(10))
    assert loops.runs["native"] == 1
    assert loops.runs["generic"] == (0 if bad is None else 1)


def _paired(p, a, b, out):
    for i in range(p.size - 1):
        out[i] = a[p[i]:p[i + 1]] @ b[p[i]:p[i + 1]]


def _write_between(p, a, b, out):
    for i in range(p.size - 1):
        s = a[p[i]:p[i + 1]]
        p[i + 1] += 1                                 # the second slice's bound is another value
        out[i] = s @ b[p[i]:p[i + 1]]


@pytest.mark.parametrize("p", [[0, 4, 9], [0, 4, 11], [0, 3, 3, 1]])
def test_slices_share_a_size_only_when_equal(p):
    """Equal bounds along axes of different lengths (10 and 12), or a bound read again after a
    write: different lengths, so no shared size; NumPy's own ValueError where they differ."""
    rng = np.random.default_rng(8)
    a, b = rng.random(10), rng.random(12)
    p = np.array(p)
    check(ft.compile(_paired), _paired, p, a, b, np.zeros(p.size - 1))
    check(ft.compile(_write_between), _write_between, p, a, a.copy(), np.zeros(p.size - 1))
    check(ft.compile(_paired), _paired, p, a, a.copy(), np.zeros(p.size - 1))


def test_numpy_backend_one_graph():
    """The tracer's part (one size for the two slices, no break) on the reference backend."""
    rng = np.random.default_rng(13)
    f = ft.compile(spmv, backend="numpy")
    for m, n in ((8, 6), (15, 11)):
        rows, cols, vals = csr(rng, m, n, 0.3)
        check(f, spmv, rows, cols, vals, rng.random(n))
    assert ft.stats().graph_breaks == 0 and ft.stats().eager_fallbacks == 0


# -- max / min of a data-bounded slice ------------------------------------------------------------
def segment_extremes(vals, p, out):
    for i in range(p.shape[0] - 1):
        seg = vals[p[i]:p[i + 1]]
        out[i, 0] = seg.max()
        out[i, 1] = np.min(seg)
    return out


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("seed", range(3))
def test_segment_max_min_native(dt, seed):
    """NumPy's max / min: a NaN anywhere is the result; both signed zeros in a segment whose
    extreme is zero, or an empty segment (ValueError after the earlier rows' writes), hand
    that row and the rest over to the generic path."""
    rng = np.random.default_rng(seed)
    f = ft.compile(segment_extremes)
    vals = (rng.random(60) * 200 - (0 if dt == np.uint8 else 100)).astype(dt)
    if vals.dtype.kind == "f":
        vals[rng.integers(0, 60, 3)] = np.nan
        vals[rng.integers(0, 60, 3)] = -np.inf
    p = np.concatenate(([0], np.sort(rng.integers(1, 60, 10)), [60]))
    p = np.unique(p)                                          # no empty segment
    check(f, segment_extremes, vals, p, np.zeros((p.size - 1, 2), dt))
    assert loops.runs["native"] == 1 and loops.runs["generic"] == 0
    q = p.copy()
    q[4] = q[3]                                               # segment 3 empty: ValueError
    check(f, segment_extremes, vals, q, np.zeros((q.size - 1, 2), dt))
    assert loops.runs["resumed"] == 1
    assert ft.stats().graph_breaks == 0


def test_segment_max_of_signed_zeros():
    vals = np.array([-0.0, 0.0, -0.0, -1.0, 0.0, 2.0, -0.0, -0.0, 0.0, np.nan, -0.0])
    for p in ([0, 2, 4, 6, 8, 11], [0, 1, 3, 4, 8, 11], [0, 3, 6, 7, 8, 9]):
        check(ft.compile(segment_extremes), segment_extremes, vals, np.array(p), np.zeros((len(p) - 1, 2)))
    assert ft.stats().graph_breaks == 0


def test_max_of_data_sized_values_outside_loops():
    """`v[a:b].max()`, `x[x > t].min()`: no guard on emptiness; NumPy's ValueError when empty."""
    def window_max(v, p):
        return v[p[0]:p[1]].max()

    def above_min(x, t):
        return x[x > t].min()
    v = np.array([3.0, 1.0, np.nan, 4.0, -2.0])
    f, g = ft.compile(window_max), ft.compile(above_min)
    for p in ([0, 2], [3, 5], [2, 2], [4, 1], [-3, 5]):
        check(f, window_max, v, np.array(p))
    for t in (0.0, 3.5, 10.0):
        check(g, above_min, v, t)
    assert ft.stats().graph_breaks == 0


def test_max_min_of_moving_slices_native():
    """max / min of any whole body array, not only data-bounded ones: windows and triangles."""
    def window_range(x):
        k = 4
        out = np.empty(x.shape[0] - k + 1)
        for i in range(x.shape[0] - k + 1):
            out[i] = x[i:i + k].max() - np.min(x[i:i + k])
        return out

    def triangle_max(A):
        out = np.empty(A.shape[0], A.dtype)
        for i in range(A.shape[0]):
            out[i] = A[i, :i + 1].max()
        return out
    rng = np.random.default_rng(10)
    x = rng.standard_normal(40)
    x[7] = np.nan
    check(ft.compile(window_range), window_range, x)
    check(ft.compile(triangle_max), triangle_max, rng.standard_normal((7, 7)).astype(np.float32))
    check(ft.compile(triangle_max), triangle_max, rng.integers(-50, 50, (9, 9)).astype(np.int16))
    assert loops.runs["native"] == 3 and loops.runs["generic"] == 0
