"""Loop bodies as native loop nests (backends/llvm/loop_arrays.py): slices with loop-dependent
bounds, their elementwise arithmetic, dot products and sums of them, writes into them, and bit
operations on Python and NumPy integers, inside ONE kernel (the `loops` log says "native loop
nest"; loops.runs counts its calls). Compared with the plain Python/NumPy program on random
inputs: sizes 0 and 1, empty inner ranges, non-contiguous and reversed operands, float32 and
float64 with NaN/inf, every integer width, NumPy's wrap and NEP 50's OverflowError."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import loops
from helpers import assert_same


pytestmark = pytest.mark.usefixtures("fresh_loops")


def fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run_both(fn, args, rtol=None, compiled=None):
    want_args, got_args = fresh(args), fresh(args)
    want = fn(*want_args)
    got = (compiled or ft.compile(fn, dynamic=True))(*got_args)
    assert_same(got, want, rtol)
    for g, w in zip(got_args, want_args):
        if isinstance(w, np.ndarray):
            assert_same(g, w, rtol)


def _small(args) -> bool:
    """Sizes 0 and 1 are specialised (a graph of their own, as TorchDynamo does)."""
    return any(isinstance(a, np.ndarray) and any(d < 2 for d in a.shape) for a in args)


def check(fn, args_list, rtol=None, frames=1):
    """Every case against plain Python; the cases of sizes >= 2 share `frames` compiled frames
    (one per memory layout), and each ran the native loop kernel (none the generic path);
    sizes 0 and 1 have constant ranges and graphs of their own."""
    compiled = ft.compile(fn, dynamic=True)
    for args in sorted(args_list, key=_small):
        run_both(fn, args, rtol, compiled)
        if not _small(args):
            assert ft.stats().frames_compiled <= frames, ft.stats()
    st = ft.stats()
    assert st.graph_breaks == 0 and st.eager_fallbacks == 0, st
    big = sum(not _small(a) for a in args_list)
    assert loops.runs["native"] >= big and not loops.runs["generic"], loops.runs


# ------------------------------------------------------------------ programs as users write them

def lu(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, A.shape[0]):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return A


def cholesky(A):
    A[0, 0] = np.sqrt(A[0, 0])
    for i in range(1, A.shape[0]):
        for j in range(i):
            A[i, j] -= np.dot(A[i, :j], A[j, :j])
            A[i, j] /= A[j, j]
        A[i, i] -= np.dot(A[i, :i], A[i, :i])
        A[i, i] = np.sqrt(A[i, i])


def trisolv(L, x, b):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def durbin(r):
    y = np.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * np.flip(y[:k])             # reads its own destination reversed
        y[k] = alpha
    return y


def symm(alpha, beta, C, A, B):
    temp2 = np.empty((C.shape[1],), dtype=C.dtype)
    C *= beta
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[:i, j] += alpha * B[i, j] * A[i, :i]
            temp2[j] = B[:i, j] @ A[i, :i]
        C[i, :] += alpha * B[i, :] * A[i, i] + alpha * temp2


def syr2k(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += (A[:i + 1, k] * alpha * B[i, k] + B[:i + 1, k] * alpha * A[i, k])


class RowStats:
    """A helper object whose method loops over rows: sums of growing prefixes."""

    def __init__(self, scale):
        self.scale = scale

    def prefix_sums(self, X, out):
        for i in range(X.shape[0]):
            out[i] = self.scale * X[i, :i + 1].sum() - X[:i, i].sum()
        return out


def spd(n, rng, dtype=np.float64):
    M = rng.standard_normal((n, n))
    return (M @ M.T + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_factorisations_are_native_nests(dtype, loop_log):
    rng = np.random.default_rng(0)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    check(lu, [(spd(n, rng, dtype),) for n in (0, 1, 2, 7, 19)], rtol)
    assert any("native loop nest" in line and "test_loop_nests.py" in line for line in loop_log), loop_log
    ft.reset()
    loops.runs.clear()
    check(cholesky, [(spd(n, rng, dtype),) for n in (1, 2, 9, 23)], rtol)


def test_triangular_solve_and_noncontiguous_operands():
    rng = np.random.default_rng(1)
    cases = []
    for n in (1, 3, 16):
        L = np.tril(rng.standard_normal((2 * n, 2 * n))) + 4 * np.eye(2 * n)
        b = rng.standard_normal(2 * n)
        # every other row and column, reversed rows: strided and negative-stride operands
        cases.append((L[::2, ::2], np.zeros(n), b[::2]))
        cases.append((np.asfortranarray(L[:n, :n]), np.zeros(n), b[::-1][:n]))
    check(trisolv, cases, 1e-10, frames=2)


def test_flip_in_place_reads_its_destination_before_writing():
    rng = np.random.default_rng(2)
    # size 2: the peeled first iteration leaves one, which the tracer unrolls (a frame of its own)
    check(durbin, [(rng.random(n) * 0.3,) for n in (1, 3, 5, 40)], 1e-10, frames=2)


def test_symmetric_products_and_slice_writes():
    rng = np.random.default_rng(3)
    cases = []
    for m, n in ((0, 3), (1, 1), (4, 6), (9, 5)):
        cases.append((1.5, 1.2, rng.random((m, n)), rng.random((m, m)), rng.random((m, n))))
    check(symm, cases, 1e-10)
    ft.reset()
    loops.runs.clear()
    cases = [(1.5, 1.2, rng.random((n, n)), rng.random((n, m)), rng.random((n, m)))
             for n, m in ((1, 1), (5, 3), (8, 0), (12, 7))]
    check(syr2k, cases, 1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8])
def test_sums_of_slices_in_a_method(dtype):
    rng = np.random.default_rng(4)
    stats = RowStats(3)
    cases = []
    for n in (0, 1, 6, 13):
        X = (rng.random((n, n)) * 100).astype(dtype)
        cases.append((X, np.zeros(n, np.result_type(dtype, np.int64) if dtype != np.float32 else dtype)))
    check(stats.prefix_sums, cases, 1e-5 if dtype == np.float32 else 1e-10)


def test_nan_and_inf_flow_through_dot_products():
    A = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, -np.inf], [3.0, 0.0, 1.0]])
    x = np.zeros(3)

    def mat_vec_rows(A, x, out):
        for i in range(A.shape[0]):
            out[i] = A[i, :] @ A[:, i] + A[i, :i].sum()
        return out
    check(mat_vec_rows, [(A, x, np.zeros(3)), (A[::-1], x, np.zeros(3))])
    for M in (A, A[::-1]):                  # NumPy's warnings, as many from either
        seen = []
        for fn in (mat_vec_rows, ft.compile(mat_vec_rows, dynamic=True)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn(M.copy(), x, np.zeros(3))
            seen.append([str(m.message) for m in w])
        assert seen[0] == seen[1] and seen[0], seen


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64])
def test_integer_dot_products_wrap_as_numpy(dtype):
    rng = np.random.default_rng(5)

    def gram_rows(V, out):
        for i in range(V.shape[0]):
            for j in range(i + 1):
                out[i, j] = V[i, :] @ V[j, :]
        return out
    info = np.iinfo(dtype)
    cases = [(rng.integers(info.min, info.max, (n, 9), dtype=dtype, endpoint=True), np.zeros((n, n), dtype))
             for n in (0, 1, 5)]
    check(gram_rows, cases)


def test_slice_write_reading_a_shifted_source():
    def shift_rows(X):
        for i in range(1, X.shape[0]):
            X[i, 1:i + 1] = X[i, :i] + X[i - 1, :i]     # reads X[i, :i] while writing X[i, 1:i+1]
        return X
    rng = np.random.default_rng(6)
    check(shift_rows, [(rng.random((n, n + 1)),) for n in (1, 2, 7)])


def test_a_temporary_read_after_a_write_into_its_source(loop_log):
    def stale(X, out):
        for i in range(X.shape[0]):
            t = X[i, :] * 2.0          # computed here: NumPy's t does not see the write below
            X[i, 0] = 100.0
            out[i] = t.sum()
        return out
    rng = np.random.default_rng(7)
    for n in (1, 4):
        run_both(stale, (rng.random((n, 3)), np.zeros(n)))
    assert any("array value read after a write" in line for line in loop_log), loop_log


# ------------------------------------------------------------------ bit operations

def crc16(data, poly=0x8408):
    crc = 0xFFFF
    for k in range(data.shape[0]):
        b = data[k]
        cur_byte = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur_byte & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur_byte >>= 1
    crc = (~crc & 0xFFFF)
    crc = (crc << 8) | ((crc >> 8) & 0xFF)
    return crc & 0xFFFF


def test_crc16_bytes_is_a_native_loop(loop_log):
    rng = np.random.default_rng(8)
    cases = [(rng.integers(0, 256, n, dtype=np.uint8),) for n in (0, 1, 10, 333)]
    check(crc16, cases + [(d[::-2],) for (d,) in cases[2:]])
    assert any("native loop nest" in line for line in loop_log), loop_log


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64,
                                   np.int64])
def test_numpy_integer_bit_operations(dtype):
    def mix(x, out):
        acc = x[0]
        for i in range(1, x.shape[0]):
            v = x[i]
            acc = (acc ^ (v << 3)) | (~v & (acc >> 2))
            out[i] = acc & v
        return out
    rng = np.random.default_rng(9)
    info = np.iinfo(dtype)
    cases = [(rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True), np.zeros(n, dtype))
             for n in (1, 2, 50)]
    check(mix, cases)


def test_python_int_bit_operations_and_their_limits():
    def hash_bytes(x, shift):
        h = 5381
        for i in range(x.shape[0]):
            h = ((h << shift) ^ (h >> 3) ^ ~i) & 0xFFFFFFFF
        return h

    def grow(x, shift):
        h = 1
        for _i in range(x.shape[0]):
            h = (h << shift) | 1          # leaves int64 after a few iterations: a Python big int
        return h
    rng = np.random.default_rng(10)
    data = rng.integers(0, 256, 40, dtype=np.uint8)
    run_both(hash_bytes, (data, 5))
    assert loops.runs["native"] == 1 and not loops.runs["resumed"]
    run_both(grow, (data, 3))            # 121 bits: the kernel stops, the generic path goes on
    assert loops.runs["resumed"] == 1
    with pytest.raises(ValueError, match="negative shift count"):
        ft.compile(grow, dynamic=True)(data, -1)


def test_python_int_meeting_uint8_raises_as_numpy():
    def mask(x, out, m):
        for i in range(x.shape[0]):
            k = m + i                      # a Python int that outgrows uint8
            out[i] = x[i] ^ k
        return out
    f = ft.compile(mask, dynamic=True)
    x = np.arange(10, dtype=np.uint8)
    run_both(mask, (x, np.zeros(10, np.uint8), 3))
    got, want = np.zeros(10, np.uint8), np.zeros(10, np.uint8)
    with pytest.raises(OverflowError) as exc_want:
        mask(x, want, 250)
    with pytest.raises(OverflowError) as exc_got:
        f(x, got, 250)
    assert str(exc_got.value) == str(exc_want.value)
    np.testing.assert_array_equal(got, want)          # the writes before the error


@pytest.mark.parametrize("mask", [0xFF, 0x1FF])
def test_a_masked_python_int_needs_no_range_check_only_when_the_mask_fits(mask):
    def masked(x, out, m):
        k = m
        for i in range(x.shape[0]):
            out[i] = x[i] ^ (k & mask)
            k += 7
        return out
    x = np.arange(60, dtype=np.uint8)
    outs = []
    for fn in (masked, ft.compile(masked, dynamic=True)):
        out = np.zeros(60, np.uint8)
        try:
            fn(x, out, 3)
            outs.append((out, None))
        except OverflowError as exc:
            outs.append((out, str(exc)))
    assert outs[0][1] == outs[1][1] and (outs[0][1] is None) == (mask == 0xFF)
    np.testing.assert_array_equal(outs[0][0], outs[1][0])
    assert loops.runs["native"] == 1


def test_python_int_compared_with_uint8_is_exact():
    def count_below(x, t):
        c = 0
        for i in range(x.shape[0]):
            if x[i] < t:
                c += 1
        return c
    x = np.arange(0, 256, 7, dtype=np.uint8)
    check(count_below, [(x, 300), (x, 100), (x, -1)], frames=2)     # -1: ints are sized >= 2 at first


# ------------------------------------------------------------------ matrix-vector products

def apply_rows(A, C4):
    for r in range(A.shape[0]):
        for q in range(A.shape[1]):
            s = A[r, q, :] @ C4            # vector @ matrix: into a scratch row, then written back
            A[r, q, :] = s
    return A


def leading_blocks(M, x, y):
    for i in range(M.shape[0]):
        y[:i] += np.dot(M[:i, :i], x[:i]) * 0.5       # matrix @ vector of growing blocks
    return y


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_matrix_vector_products_in_a_body(dtype):
    rng = np.random.default_rng(11)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    check(apply_rows, [((rng.random((r, q, m)) * 10).astype(dtype), (rng.random((m, m)) * 10).astype(dtype))
                       for r, q, m in ((3, 4, 5), (2, 2, 0), (4, 3, 2))], rtol)
    ft.reset()
    loops.runs.clear()
    check(leading_blocks, [((rng.random((n, n)) * 10).astype(dtype), (rng.random(n) * 10).astype(dtype),
                            np.zeros(n, np.float64)) for n in (2, 9)], rtol)
    M = rng.random((12, 12))
    run_both(leading_blocks, (M[::-1, ::2][:6], M[0, :6].copy(), np.zeros(6)))   # strided operands


# ------------------------------------------------------------------ random shapes and offsets

def windows(X, y, a, b):
    for i in range(X.shape[0]):
        y[i] = X[i, a:i + b] @ X[a:i + b, i] + np.sum(X[i, ::-1][:i]) * 0.5
        X[i, a:i + b] -= 0.25 * np.flip(X[i, a:i + b])
    return y


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 9), a=st.integers(0, 3), b=st.integers(0, 3), order=st.sampled_from("CF"),
       step=st.sampled_from([1, -1, 2]), seed=st.integers(0, 2 ** 16))
def test_random_windows(n, a, b, order, step, seed):
    """Clamped and empty slices, a reversed view, a write reading its own destination
    reversed, on C and Fortran arrays of random shapes: always NumPy's values."""
    rng = np.random.default_rng(seed)
    X = np.asarray(rng.standard_normal((n * abs(step), n * abs(step))), order=order)[::step, ::step]
    run_both(windows, (X, np.zeros(n), a, b), 1e-10, compiled=_compiled_windows)


_compiled_windows = ft.compile(windows, dynamic=True)


def test_numpy_int8_overflow_wraps_and_warns_as_numpy():
    def acc(x):
        s = x[0]
        for i in range(1, x.shape[0]):
            s = s * np.int8(3) + x[i]          # scalar math: NumPy warns on every overflow
        return s

    def acc_rows(x, out):
        for i in range(1, x.shape[0]):
            out[:i] += x[:i] * np.int8(100)    # array math: wraps silently
        return out
    x = np.arange(1, 30, dtype=np.int8)
    for fn, args in ((acc, (x,)), (acc_rows, (x, np.zeros(29, np.int8)))):
        seen = []
        for g in (fn, ft.compile(fn, dynamic=True)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                a = fresh(args)
                seen.append((g(*a), a, [str(m.message) for m in w]))
        assert_same(seen[1][0], seen[0][0])
        assert_same(seen[1][1][-1], seen[0][1][-1])
        assert seen[1][2] == seen[0][2]
    assert loops.runs["native"] == 2 and not loops.runs["generic"]


def test_an_element_read_again_after_an_inner_loop_wrote_it():
    """The code generator reused x[i, 0] loaded before the inner loop that rewrote row i
    (codegen/llvm_kernels/emit.py drops such loads after a loop storing into their array)."""
    def scale_rows(x, out):
        for i in range(x.shape[0]):
            a = x[i, 0]
            for j in range(x.shape[1]):
                x[i, j] = 3.0 * x[i, j]
            out[i] = a + 10 * x[i, 0]
        return out

    def scale_slices(x, out):
        for i in range(x.shape[0]):
            a = x[i, 0]
            x[i, :] = x[i, :] * 2.0
            out[i] = a + 10 * x[i, 0]
        return out
    for fn in (scale_rows, scale_slices):
        ft.reset()
        loops.runs.clear()
        check(fn, [(np.arange(12.0).reshape(4, 3), np.zeros(4)), (np.arange(35.0).reshape(5, 7), np.zeros(5))])
