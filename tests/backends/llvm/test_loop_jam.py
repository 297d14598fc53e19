"""Unroll-and-jam of native loop nests (backends/llvm/loop_jam.py): consecutive outer iterations
whose products read the same matrix computed in one pass over it, only where the analysis proves
it changes nothing. Against NumPy: sizes 0, 1 and odd (trip counts that leave a remainder),
strided, reversed and Fortran operands, int and float dtypes; float results within the
reduction-order bound (README "What 'same result as NumPy' means": |ours - NumPy's| <= 4 k eps
(|a| @ |b|)) and bit for bit equal to the same nest without the transformation; bodies that
write what a later iteration reads keep their order or are left alone."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import loops

rng = np.random.default_rng(23)


pytestmark = pytest.mark.usefixtures("fresh_loops")


def jammed(lines) -> bool:
    return any("unroll-and-jam" in line for line in lines)


# ------------------------------------------------------------------ programs as users write them

class Moments:
    """Covariance and correlation the way polybench writes them: one product per column."""

    def __init__(self, ddof=1.0):
        self.ddof = ddof

    def _column_products(self, data, i, first):
        return data[:, i] @ data[:, first:]

    def covariance(self, data):
        m = data.shape[1]
        centred = data - data.mean(axis=0)
        cov = np.zeros((m, m), dtype=data.dtype)
        for i in range(m):
            cov[i:m, i] = cov[i, i:m] = self._column_products(centred, i, i) / (data.shape[0] - self.ddof)
        return cov


def correlation(data):
    m = data.shape[1]
    corr = np.eye(m, dtype=data.dtype)
    for i in range(m - 1):
        corr[i + 1:m, i] = corr[i, i + 1:m] = data[:, i] @ data[:, i + 1:m]
    return corr


def gram(data):
    """Integer and float grams without centring (the dtype stays the data's)."""
    m = data.shape[1]
    g = np.zeros((m, m), dtype=data.dtype)
    for i in range(m):
        g[i, i:] = data[:, i] @ data[:, i:]
    return g


def windows(A, x, y):
    """`M @ v` with the matrix moving with the index: every window shares x."""
    k = y.shape[1]
    for i in range(A.shape[0] - k + 1):
        y[i, :] = A[i:i + k, :] @ x
    return y


def chained(A, w):
    """The product reads only A, but the write reads w, which an earlier iteration wrote:
    the products may be jammed, the writes must stay in order."""
    for i in range(A.shape[1] - 1):
        w[i + 1:] = w[i + 1:] + (A[:, i] @ A[:, i + 1:]) * w[i]
    return w


def recurrence(W, A):
    """The product's vector W[:, i] holds W[0, i], which iteration i - 1 wrote; its matrix
    windows A[:, i + 1:] overlap from one iteration to the next (what jamming shares): never
    reordered."""
    for i in range(W.shape[1] - 1):
        W[0, i + 1:] += W[:, i] @ A[:, i + 1:]
    return W


def prefix_sums(A, w):
    """The sum reads w, which earlier iterations wrote (its accumulation stays in order), and
    the product only A (computed ahead)."""
    for i in range(A.shape[1] - 1):
        w[i + 1] = w[:i + 1].sum() + (A[:, i] @ A[:, i + 1:])[0]
    return w


def running(A):
    """A carried scalar updated from each iteration's product."""
    total = np.float64(0.0)
    for i in range(A.shape[1]):
        total = total * 0.5 + (A[:, i] @ A[:, i:]).sum()
    return total


# ------------------------------------------------------------------ checks

def within_bound(got, want, k, mag):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])      # NaN and inf where NumPy has them
    got, want, mag = got[finite], want[finite], np.broadcast_to(mag, finite.shape)[finite]
    eps = np.finfo(want.dtype).eps
    bound = 4 * max(k, 1) * eps * mag + np.finfo(want.dtype).tiny
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(err <= bound), float(np.max(err - bound))


def gram_magnitude(data):
    a = np.abs(data.astype(np.float64))
    return a.T @ a


def compile_fresh(fn, jam):
    """`fn` compiled with `config.loop_jam = jam` (the kernels are built at the first call)."""
    ft.reset()
    compiled = ft.compile(fn, dynamic=True)

    def call(*args):
        with ft.config.patch(loop_jam=jam):
            return compiled(*args)
    return call


SIZES = [(3, 2), (2, 5), (6, 4), (5, 7), (9, 9), (17, 13), (40, 33), (1, 6), (6, 1), (0, 5), (5, 0)]


def test_covariance_against_numpy_and_the_unjammed_nest(loop_log):
    """Every size (trip counts 0..33: whole blocks of 4 and remainders), within the bound of
    NumPy's BLAS result and bit for bit the nest without unroll-and-jam (same order per element)."""
    stats = Moments()
    jam, plain = compile_fresh(stats.covariance, 4), None
    for n, m in SIZES:
        data = rng.standard_normal((n, m))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # n == 0: NumPy's mean of an empty axis
            want = stats.covariance(data.copy())
            got = jam(data.copy())
        if n == 0:
            assert got.shape == want.shape and np.isnan(got).sum() == np.isnan(want).sum()
            continue
        centred = data - data.mean(axis=0)
        within_bound(got, want, n, gram_magnitude(centred) / max(n - 1, 1))
    assert jammed(loop_log), loop_log
    assert loops.runs["native"] >= 1 and not loops.runs["generic"], loops.runs
    plain = compile_fresh(stats.covariance, 1)
    again = compile_fresh(stats.covariance, 4)
    for n, m in SIZES:
        if n == 0:
            continue
        data = rng.standard_normal((n, m))
        np.testing.assert_array_equal(again(data.copy()), plain(data.copy()))


@pytest.mark.parametrize("layout", ["C", "F", "reversed", "strided", "both"])
def test_correlation_layouts(layout, loop_log):
    """Fortran, negative-stride and strided data: the product's rows move by any stride."""
    compiled = ft.compile(correlation, dynamic=True)
    for n, m in ((7, 9), (12, 6), (5, 14), (3, 2)):
        base = rng.standard_normal((2 * n, 2 * m))
        data = {"C": base[:n, :m].copy(), "F": np.asfortranarray(base[:n, :m]), "reversed": base[:n, :m][::-1, ::-1],
                "strided": base[::2, ::2], "both": base[::-2, 1::2]}[layout]
        want = correlation(data.copy())
        got = compiled(data.copy())
        within_bound(got, want, n, gram_magnitude(data))
    assert jammed(loop_log), loop_log
    assert not loops.runs["generic"], loops.runs


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float32", "float64"])
def test_int_and_float_dtypes(dtype, loop_log):
    """Integer products are exact (they wrap as NumPy's: uint8 here); float32 sums in float32."""
    compiled = ft.compile(gram, dynamic=True)
    for n, m in ((5, 7), (9, 6), (4, 13)):
        data = (rng.integers(-50, 50, (n, m)) if dtype[0] in "iu" else rng.standard_normal((n, m))).astype(dtype)
        want = gram(data.copy())
        got = compiled(data.copy())
        within_bound(got, want, n, gram_magnitude(data))
    assert jammed(loop_log), loop_log


def test_matrix_moving_with_the_index_times_a_shared_vector(loop_log):
    """`A[i:i + k, :] @ x`: the copies share x's elements; a reassociated dot product each."""
    compiled = ft.compile(windows, dynamic=True)
    for n, m, k in ((11, 6, 3), (9, 5, 4), (20, 7, 5)):
        A, x = rng.standard_normal((n, m)), rng.standard_normal(m)
        want = windows(A, x, np.zeros((n - k + 1, k)))
        got = compiled(A, x, np.zeros((n - k + 1, k)))
        mag = np.stack([np.abs(A[i:i + k]) @ np.abs(x) for i in range(n - k + 1)])
        within_bound(got, want, m, mag)
    assert jammed(loop_log), loop_log


def test_writes_a_later_iteration_reads_stay_in_order(loop_log):
    """The products are jammed (they read only A); each write reads w[i], written by the
    iteration before: the writes run copy after copy, in the loop's order."""
    compiled = ft.compile(chained, dynamic=True)
    for n, m in ((6, 9), (5, 12), (8, 7)):
        A, w = rng.standard_normal((n, m)) * 0.3, rng.standard_normal(m)
        want = chained(A, w.copy())
        got = compiled(A, w.copy())
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert jammed(loop_log), loop_log


def test_a_product_reading_an_earlier_write_is_refused(loop_log):
    """W[:, i] @ ... reads W[0, i], which iteration i - 1 wrote: the product is not pure, nothing
    is jammed, and the nest gives NumPy's result (products computed ahead would read stale values)."""
    compiled = ft.compile(recurrence, dynamic=True)
    for n, m in ((4, 6), (3, 9), (5, 13)):
        W, A = rng.standard_normal((n, m)) * 0.3, rng.standard_normal((n, m)) * 0.3
        want = recurrence(W.copy(), A)
        got = compiled(W.copy(), A)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert any("native loop nest" in line for line in loop_log), loop_log
    assert not jammed(loop_log), loop_log


def test_carried_value_updated_in_order(loop_log):
    """A carried scalar reads each iteration's product: the update keeps the loop's order."""
    compiled = ft.compile(running, dynamic=True)
    for n, m in ((7, 9), (5, 6), (10, 13)):
        A = rng.standard_normal((n, m))
        want = running(A)
        got = compiled(A)
        assert type(got) is type(want)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert jammed(loop_log), loop_log


def test_a_sum_of_what_the_loop_writes_is_read_after_it_is_summed(loop_log):
    """The sum's accumulator is declared ahead with the product, but summed over w in the
    loop's order: its value is read only after that (not computed ahead from the first value)."""
    compiled = ft.compile(prefix_sums, dynamic=True)
    for n, m in ((5, 9), (4, 6), (6, 14)):
        A, w = rng.standard_normal((n, m)) * 0.3, rng.standard_normal(m) * 0.3
        want = prefix_sums(A, w.copy())
        got = compiled(A, w.copy())
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert jammed(loop_log), loop_log


@pytest.mark.parametrize("n,m", [(8, 9), (7, 12), (10, 16)])
def test_static_sizes(n, m, loop_log):
    """Static trip counts (a rows count that divides the rows per pass, or not)."""
    stats = Moments()
    data = rng.standard_normal((n, m))
    want = stats.covariance(data.copy())
    got = ft.compile(stats.covariance, dynamic=False)(data.copy())
    within_bound(got, want, n, gram_magnitude(data - data.mean(axis=0)) / (n - 1))
    assert jammed(loop_log), loop_log
