"""Functions inside pairwise row loops, and of values computed before their loop, are NumPy's own
loop (codegen/llvm_kernels/chunked.py): softmax's `np.exp(x - x.max(...))`, whose argument reads
the row's max (a Let made before the row's sum loop), is computed by NumPy's exp loop in chunks
inside the pairwise sum, and `np.log(x.sum(axis=1))`, the log of each row's sum in the row loop
between its inner loops, by NumPy's log loop on one element. The results are NumPy's bits for
float32 and float64, every row length around the 8 / 128 edges, contiguous, strided, reversed,
row-reversed and Fortran-ordered inputs (whose rows NumPy adds up one element at a time, not
pairwise: pairwise.numpy_sums_in_order), NaN and inf rows, under several seeds."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from test_pairwise_computed import same_bits
from tracing import A, Traced

LENGTHS = [0, 1, 7, 8, 9, 127, 128, 129, 1000]
LAYOUTS = ["contiguous", "strided", "reversed", "rows_reversed", "fortran", "fortran_reversed"]


class Scores:
    """Attention-style row normalisations, written the way users write them."""

    def __init__(self, axis=-1):
        self.axis = axis

    def shifted(self, x):
        return x - x.max(axis=self.axis, keepdims=True)

    def softmax(self, x):
        e = np.exp(self.shifted(x))
        return e / e.sum(axis=self.axis, keepdims=True)

    def logsumexp(self, x):
        m = x.max(axis=self.axis, keepdims=True)
        return np.log(np.exp(x - m).sum(axis=self.axis)) + m[:, 0]

    def __call__(self, x):
        return self.softmax(x), self.logsumexp(x)


def log_of_row_sums(x):
    return np.log(x.sum(axis=1)), np.tanh(x.sum(axis=1) / x.shape[1])


SCORES = Scores()
compiled_scores = ft.compile(SCORES, dynamic=True)
compiled_log_sums = ft.compile(log_of_row_sums, dynamic=True)


def rows(n, dtype, how, special, seed):
    """5 rows of n values over several magnitudes, laid out `how`; NaN/inf rows where asked."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal((5, n)) * 10.0 ** r.uniform(-2, 2, (5, 1))).astype(dtype)
    if special and n:
        x[1, r.integers(n)] = np.nan
        x[2, r.integers(n)] = np.inf
        x[3, r.integers(n)] = -np.inf
        x[4] = np.inf
    if how == "strided":
        y = np.zeros((5, 2 * n), dtype)
        y[:, ::2] = x
        return y[:, ::2]
    if how == "reversed":
        return x[:, ::-1].copy()[:, ::-1]
    if how == "rows_reversed":
        return x[::-1].copy()[::-1]
    if how == "fortran":                          # NumPy adds each row's elements in order
        return np.asfortranarray(x)
    if how == "fortran_reversed":
        return np.asfortranarray(x[:, ::-1])[:, ::-1]
    return x


def outcome(fn, x):
    """Results, or the exception type, and the warnings' messages."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = fn(x)
        except ValueError as e:
            out = type(e)
    return out, sorted(str(m.message) for m in w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("how", LAYOUTS)
@pytest.mark.parametrize("seed", [0, 1])
def test_softmax_and_logsumexp_are_numpys_bits(dtype, how, seed):
    for n in LENGTHS:
        for special in (False, True):
            x = rows(n, dtype, how, special, 1000 * seed + n)
            (got, got_w), (want, want_w) = outcome(compiled_scores, x), outcome(SCORES, x)
            assert got_w == want_w, (n, special)
            if want is ValueError:                 # the max of a row of no elements, both sides
                assert got is ValueError
                continue
            for k, (g, e) in enumerate(zip(got, want)):
                assert same_bits(g, e), (n, how, special, k)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", [3, 4])
def test_functions_of_row_sums_are_numpys_bits(dtype, seed):
    for n in LENGTHS:
        for how in LAYOUTS:
            x = np.abs(rows(n, dtype, how, False, 1000 * seed + n))
            x[0] = -x[0]                           # log of a negative sum: NaN and its warning
            (got, got_w), (want, want_w) = outcome(compiled_log_sums, x), outcome(log_of_row_sums, x)
            assert got_w == want_w, (n, how)
            for g, e in zip(got, want):
                assert same_bits(g, e), (n, how)


def test_exp_in_a_pairwise_row_loop_is_numpys_loop():
    t = Traced(lambda x: np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1), A(("n", "m")))
    assert "@frametrace_nploop_exp_f64" in t.run.llvm_ir
    for shape in ((3, 1), (2, 7), (3, 129), (2, 1025)):
        x = np.random.default_rng(1).standard_normal(shape) * 30
        assert same_bits(t.llvm(x)[0], np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1)), shape


def log_then_tanh(x):
    return np.log(x) + np.tanh(x), np.tanh(x.sum(axis=-1)) + np.log(x.sum(axis=-1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_flag_raised_before_a_loop_that_clears_the_status_is_reported(dtype):
    """NumPy's tanh loop clears the FP status flags: the kernel sets the ones raised before each
    of NumPy's loops again after it (log(0)'s divide by zero, then tanh)."""
    f = ft.compile(log_then_tanh)
    for n in (1, 7, 1000):
        x = np.zeros((3, n), dtype)
        (got, got_w), (want, want_w) = outcome(f, x), outcome(log_then_tanh, x)
        assert got_w == want_w == ["divide by zero encountered in log"] * 2, n
        assert all(same_bits(g, e) for g, e in zip(got, want))
        with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
            f(x)


def row_sum(x):
    return x.sum(axis=-1)


def row_stats(x):
    return x.sum(axis=-1), x.var(axis=-1), (x - x.mean(axis=-1, keepdims=True)).sum(axis=-1)


def weighted(x, y):
    return (x * y).sum(axis=1), (x * y[0]).sum(axis=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rows_numpy_adds_in_order_are_added_in_order(dtype):
    """NumPy sums pairwise along the axis of the smallest |stride| of the summed operand (of
    more than one element), the temporary a computed value makes laid out as its operands
    agree (C order unless all of them say otherwise); else one element at a time."""
    r = np.random.default_rng(7)
    fsum, fstats, fw = ft.compile(row_sum), ft.compile(row_stats), ft.compile(weighted)
    for n in (1, 9, 130, 1000):
        c = (r.standard_normal((6, n)) * 10.0 ** r.uniform(-3, 3, (6, n))).astype(dtype)
        f = np.asfortranarray(c)
        t = np.asfortranarray(r.standard_normal((n, 3)).astype(dtype)).T    # C-ordered rows of a transpose
        tc = r.standard_normal((n, 3)).astype(dtype).T                        # Fortran-ordered rows
        for x in (f, f[::-1], f[:, ::2], f[:1], f[:2], t, tc, tc[:1], tc[:, ::-1],
                  np.asfortranarray(r.standard_normal((3, 4, n)).astype(dtype)),
                  r.standard_normal((3, 4, n)).astype(dtype).transpose(1, 0, 2)):
            assert same_bits(fsum(x), row_sum(x)), (n, x.shape, x.strides)
            assert all(same_bits(g, e) for g, e in zip(fstats(x), row_stats(x))), (n, x.shape, x.strides)
        for x, y in ((f, c), (c, f), (f, f), (f[:, ::-1], f)):     # (f, c): the temporary is C-ordered
            assert same_bits(fw(x, y)[0], weighted(x, y)[0]), (n, x.strides, y.strides)
        for x, y in ((c, f), (f, f), (f[:, ::-1], f)):
            assert all(same_bits(g, e) for g, e in zip(fw(x, y), weighted(x, y))), (n, x.strides, y.strides)
