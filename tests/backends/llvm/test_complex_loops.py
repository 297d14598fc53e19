"""complex128 / complex64 values in native loop nests (codegen/llvm_kernels/complex_ops.py,
backends/llvm/loops.py): NumPy's own formulas for arithmetic, abs and comparisons, bit for bit
against the plain program (NaN, inf and -0.0 included); small complex matrix products, data-
indexed sub-arrays (`G[k, idx[a, b]] @ H[a]`) within the products' tolerance; what is not
supported keeps the generic path with NumPy's values and warnings. Sizes 0, 1 and odd,
strided and reversed views; one compiled frame per layout, the native kernel counted."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import loops
from frametrace.codegen.llvm_kernels import complex_ops
from frametrace.codegen.llvm_kernels.ops import RULES
from frametrace.lower.pointwise import COMPLEX_LOOP_OPS
from helpers import assert_same

CTYPES = [np.complex128, np.complex64]


pytestmark = pytest.mark.usefixtures("fresh_loops")


def cplx(rng, shape, dtype, specials=False):
    parts = rng.standard_normal((2,) + tuple(shape)) * 10.0 ** rng.integers(-3, 4, (2,) + tuple(shape))
    if specials and parts.size:
        flat = parts.reshape(-1)
        picks = rng.integers(0, flat.size, max(1, flat.size // 5))
        flat[picks] = rng.choice([np.inf, -np.inf, np.nan, -0.0, 0.0], picks.size)
    out = np.empty(shape, dtype)
    out.real, out.imag = parts
    return out


def same_bits(got, want):
    """Identical values: NaN where NumPy has NaN, the sign of every zero."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    real = np.float32 if want.dtype in (np.complex64, np.float32) else np.float64
    g, w = (np.ascontiguousarray(x).view(real) if x.dtype.kind == "c" else x for x in (got, want))
    np.testing.assert_array_equal(g, w)
    if w.dtype.kind == "f":                      # (a NaN's sign is not NumPy's contract)
        np.testing.assert_array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(w) & ~np.isnan(w))


def fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def run_both(fn, args, compiled, exact=True, rtol=None):
    want_args, got_args = fresh(args), fresh(args)
    with np.errstate(all="ignore"):
        want = fn(*want_args)
        got = compiled(*got_args)
    for g, w in zip([got] + got_args, [want] + want_args):
        if isinstance(w, np.ndarray):
            same_bits(g, w) if exact else assert_same(g, w, rtol)


def test_every_complex_loop_op_has_a_rule():
    assert set(COMPLEX_LOOP_OPS) - {"cast", "where"} <= set(RULES["c"])


def test_numpy_loops_are_the_ones_built():
    # the AVX2 / AVX-512F loops this machine's NumPy runs: fused multiply, vectorised abs
    assert complex_ops.numpy_loops_known("complex128") and complex_ops.numpy_loops_known("complex64")


# ------------------------------------------------------------------ programs as users write them

class Rotor:
    """Element-wise complex updates written as a loop over NumPy scalars (NumPy's scalar math)."""

    def __init__(self, gain):
        self.gain = gain

    def step(self, z, w, out, hits):
        for i in range(z.shape[0]):
            u = z[i] * w[i] - z[i] / w[i]
            out[i] = -u + np.conj(w[i]) * self.gain
            hits[i] = z[i] == w[i]
        return out


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("specials", [False, True])
def test_scalar_arithmetic_is_numpys_bits(dtype, specials, loop_log):
    rng = np.random.default_rng(7)
    rotor = Rotor(0.5 - 2j)
    compiled = ft.compile(rotor.step, dynamic=True)
    for n in (37, 101, 1, 0):
        z, w = cplx(rng, (n,), dtype, specials), cplx(rng, (n,), dtype, specials)
        if n > 2:
            w[0] = z[0]
        run_both(rotor.step, [z, w, np.empty(n, dtype), np.empty(n, bool)], compiled)
        if n == 101:
            assert ft.stats().frames_compiled == 1      # one graph for every size >= 2
    # strided and reversed views of larger arrays: the same frame
    z, w = cplx(rng, (202,), dtype, specials), cplx(rng, (303,), dtype, specials)
    run_both(rotor.step, [z[::2], w[::-3], np.empty(101, dtype), np.empty(101, bool)], compiled)
    assert ft.stats().frames_compiled == 3              # sizes 0 and 1 have graphs of their own
    assert any("native loop nest" in line and "test_complex_loops" in line for line in loop_log), loop_log
    assert loops.runs["native"] >= 3 and not loops.runs["generic"], loops.runs
    assert ft.stats().graph_breaks == 0 and ft.stats().eager_fallbacks == 0


def mix_rows(A, B, C, out, mag):
    """Row-wise array arithmetic (NumPy's ufunc loops: fused multiply, vectorised abs)."""
    for i in range(A.shape[0]):
        Z = A[i] * B[i] + C[i] / B[i] - np.conj(A[i])
        out[i] = Z * Z - 1j * C[i]
        mag[i] = np.abs(Z) + np.abs(A[i] - C[i])
    return mag


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("specials", [False, True])
def test_row_arithmetic_and_abs_are_numpys_bits(dtype, specials):
    rng = np.random.default_rng(11)
    real = np.float32 if dtype == np.complex64 else np.float64
    compiled = ft.compile(mix_rows, dynamic=True)
    for rows, cols in ((41, 7), (40, 1), (45, 0), (1, 9)):
        A, B, C = (cplx(rng, (rows, cols), dtype, specials) for _ in range(3))
        run_both(mix_rows, [A, B, C, np.empty((rows, cols), dtype), np.empty((rows, cols), real)], compiled)
    big = cplx(rng, (90, 26), dtype, specials)
    A, B, C = big[::2, ::3], big[::-2, 1::3], cplx(rng, (45, 9), dtype, specials).T.copy().T
    run_both(mix_rows, [A, B, C, np.empty((45, 9), dtype), np.empty((45, 9), real)], compiled)
    assert loops.runs["native"] >= 3 and not loops.runs["generic"], loops.runs


def ordered(z, w, out):
    for i in range(z.shape[0]):
        out[i, 0] = z[i] < w[i]
        out[i, 1] = z[i] <= w[i]
        out[i, 2] = z[i] > w[i]
        out[i, 3] = z[i] != w[i]
        out[i, 4] = np.isnan(z[i]) | np.isinf(w[i]) | ~np.isfinite(z[i] + w[i])
    return out


def pairs(rng):
    z = cplx(rng, (300,), np.complex128, True)
    w = z.copy()
    w[::3] = cplx(rng, (100,), np.complex128, True)
    w[1::3].real = z[1::3].real                                  # equal real parts
    w[1::3].imag = rng.choice([-np.inf, -1.0, np.nan, 2.0], 100)
    return z, w


def test_comparisons_of_rows_are_numpys_lexicographic_order(loop_log):
    z, w = pairs(np.random.default_rng(3))
    z, w = z.reshape(60, 5), w.reshape(60, 5)
    run_both(ordered, [z, w, np.empty((60, 5, 5), bool)], ft.compile(ordered, dynamic=True))
    assert loops.runs["native"] == 1, loop_log


def test_comparisons_of_numpy_scalars_keep_the_generic_path():
    # NumPy's scalar `<` orders a NaN imaginary part otherwise than its ufunc: not built
    z, w = pairs(np.random.default_rng(3))
    run_both(ordered, [z, w, np.empty((300, 5), bool)], ft.compile(ordered, dynamic=True))
    assert not loops.runs["native"]


def row_products(A, B, v, out, dots):
    for i in range(A.shape[0]):
        out[i] = A[i] @ B[i] + out[i]
        dots[i] = v[i] @ v[i]
    return out


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("m,k,p", [(3, 3, 3), (5, 2, 3), (2, 4, 1)])
def test_small_matrix_products_in_a_loop(dtype, m, k, p):
    rng = np.random.default_rng(5)
    compiled = ft.compile(row_products)
    rows = 40
    A, B, v = cplx(rng, (rows, m, k), dtype), cplx(rng, (rows, k, p), dtype), cplx(rng, (rows, 7), dtype)
    run_both(row_products, [A, B, v, cplx(rng, (rows, m, p), dtype), np.empty(rows, dtype)], compiled,
             exact=False)
    assert loops.runs["native"] == 1 and not loops.runs["generic"], loops.runs
    # transposed and reversed operands
    run_both(row_products, [A[::-1], B.transpose(0, 2, 1).copy().transpose(0, 2, 1), v[:, ::-1],
                            cplx(rng, (rows, m, p), dtype), np.empty(rows, dtype)], compiled, exact=False)


def self_energy(neigh, dH, G, D, Sigma):
    """A scattering self-energy nest (as public physics codes write it): sub-matrices picked
    through an index table, small complex products accumulated in place."""
    for k in range(G.shape[0]):
        for E in range(G.shape[1]):
            for w in range(D.shape[0]):
                for i in range(D.shape[-1]):
                    for a in range(neigh.shape[0]):
                        for b in range(neigh.shape[1]):
                            if E - w >= 0:
                                dHG = G[k, E - w, neigh[a, b]] @ dH[a, b, i]
                                dHD = dH[a, b, i] * D[w, a, b, i]
                                Sigma[k, E, a] += dHG @ dHD
    return Sigma


def self_energy_args(rng, na=5, nb=2, norb=3, neigh=None):
    if neigh is None:
        neigh = (np.arange(na)[:, None] + np.arange(nb)[None, :] - 1) % na
    return [neigh.astype(np.int32), cplx(rng, (na, nb, 2, norb, norb), np.complex128),
            cplx(rng, (2, 3, na, norb, norb), np.complex128), cplx(rng, (2, na, nb, 2), np.complex128),
            np.zeros((2, 3, na, norb, norb), np.complex128)]


def test_a_self_energy_nest_is_one_native_kernel(loop_log):
    rng = np.random.default_rng(9)
    compiled = ft.compile(self_energy)
    run_both(self_energy, self_energy_args(rng), compiled, exact=False)
    assert loops.runs["native"] == 1 and not loops.runs["generic"], loops.runs
    assert any("native loop nest" in line for line in loop_log), loop_log
    # negative indices wrap as NumPy's do
    args = self_energy_args(rng, neigh=-1 - (np.arange(10).reshape(5, 2) % 5))
    run_both(self_energy, args, compiled, exact=False)
    assert ft.stats().frames_compiled == 1 and ft.stats().graph_breaks == 0


def test_an_out_of_bounds_index_raises_numpys_error_after_the_same_writes():
    rng = np.random.default_rng(2)
    args = self_energy_args(rng)
    args[0][3, 1] = 7                                   # G has 5 sites: NumPy raises at a = 3
    want_args, got_args = fresh(args), fresh(args)
    with pytest.raises(IndexError) as want:
        self_energy(*want_args)
    with pytest.raises(IndexError) as got:
        ft.compile(self_energy)(*got_args)
    assert str(got.value) == str(want.value)
    np.testing.assert_allclose(got_args[-1], want_args[-1], rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ what keeps the generic path

def scalar_abs(z, out):
    for i in range(z.shape[0]):
        out[i] = abs(z[i]) + abs(z[i] / 3j)       # NumPy scalars: the C library's hypot
    return out


@pytest.mark.parametrize("dtype", CTYPES)
def test_abs_of_numpy_scalars_is_hypot(dtype):
    rng = np.random.default_rng(4)
    real = np.float32 if dtype == np.complex64 else np.float64
    z = cplx(rng, (80,), dtype, True)
    big = np.finfo(real).max
    z[:4] = [complex(big, big), complex(3e-320, 4e-320), complex(np.inf, np.nan), complex(np.nan, -np.inf)]
    run_both(scalar_abs, [z, np.empty(80, real)], ft.compile(scalar_abs))
    assert loops.runs["native"] == 1, loops.runs


def roots(z, out):
    for i in range(z.shape[0]):
        out[i] = np.sqrt(z[i]) + z[i] ** 3               # no native complex sqrt / power: NumPy's
    return out


def squares(Z, out, sq):
    for i in range(Z.shape[0]):
        out[i] = np.square(Z[i]) + Z[i] ** 2              # rows: NumPy's multiply (fused)
        sq[i] = np.square(Z[i, 0])                        # a NumPy scalar: unfused, kept generic
    return out


def test_squares_of_rows_and_of_scalars():
    rng = np.random.default_rng(14)
    Z = cplx(rng, (50, 9), np.complex128, True)
    run_both(squares, [Z, np.empty((50, 9), complex), np.empty(50, complex)], ft.compile(squares))


def test_what_numpy_computes_otherwise_keeps_the_generic_path(loop_log):
    rng = np.random.default_rng(4)
    z = cplx(rng, (80,), np.complex128, True)
    compiled = ft.compile(roots)
    run_both(roots, [z, np.empty(80, complex)], compiled)
    assert not loops.runs["native"], loops.runs
    assert any("the wrapper runs it" in line for line in loop_log), loop_log


def into_real(z, out):
    for i in range(z.shape[0]):
        out[i] = z[i] * 2
    return out


def test_complex_into_a_real_array_warns_as_numpy():
    rng = np.random.default_rng(6)
    z = cplx(rng, (80,), np.complex128)
    want_out, got_out = np.empty(80), np.empty(80)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        into_real(z, want_out)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ft.compile(into_real)(z, got_out)
    assert [w.category for w in got][:1] == [w.category for w in want][:1] == [np.exceptions.ComplexWarning]
    same_bits(got_out, want_out)
    assert not loops.runs["native"]


def grow(z, out):
    for i in range(z.shape[0]):
        out[i] = z[i] * z[i] * 1e300
    return out


def test_overflow_warns_as_numpy():
    z = np.full(70, 1e10 + 1e10j)
    want_out, got_out = np.empty(70, complex), np.empty(70, complex)
    with pytest.warns(RuntimeWarning) as want:
        grow(z, want_out)
    with pytest.warns(RuntimeWarning) as got:
        ft.compile(grow)(z, got_out)
    assert {str(w.message) for w in got} == {str(w.message) for w in want}
    same_bits(got_out, want_out)


def _entry(fn):
    from csrc_free_runtime import all_caches
    return next(c for c in all_caches() if c.fn is fn and c.entries).entries[0]


def test_a_loop_run_per_iteration_is_timed_against_the_eager_frame():
    # the wrapper calls the body's graph once per iteration (slower than the Python loop in
    # most such programs): the entry, exact either way, keeps the faster of compiled and eager
    from csrc_free_runtime import tuning
    rng = np.random.default_rng(8)
    compiled = ft.compile(roots)
    z = cplx(rng, (80,), np.complex128, True)
    for _ in range(2 * tuning.PAIRS + 3):
        run_both(roots, [z, np.empty(80, complex)], compiled)
    extra = _entry(roots).info.extra
    assert extra["wrapper_loops"] and extra["same_as_eager"]
    assert extra["tuning"].choice in ("compiled", "eager"), extra["tuning"].describe()
    assert ft.stats().frames_compiled == 1


def test_a_native_loop_is_not_timed():
    rng = np.random.default_rng(8)
    compiled = ft.compile(scalar_abs)
    z = cplx(rng, (80,), np.complex128)
    run_both(scalar_abs, [z, np.empty(80)], compiled)
    assert "tuning" not in _entry(scalar_abs).info.extra


# ------------------------------------------------------------------ carried complex scalars

def conj_dot(a, b):
    acc = 0j
    for i in range(a.shape[0]):
        acc += a[i] * np.conj(b[i])
    return acc


def escape_times(cs, out, maxiter):
    """Escape-time iteration (a Mandelbrot set) written with scalars."""
    for j in range(cs.shape[0]):
        c = cs[j]
        z = 0j
        n = 0
        while n < maxiter and abs(z) <= 2.0:
            z = z * z + c
            n += 1
        out[j] = n
    return out


@pytest.mark.parametrize("dtype", CTYPES)
def test_a_carried_complex_sum_is_a_native_loop(dtype):
    rng = np.random.default_rng(12)
    compiled = ft.compile(conj_dot)
    for n in (301, 2, 1, 0):
        a, b = cplx(rng, (n,), dtype, True), cplx(rng, (n,), dtype, True)
        with np.errstate(all="ignore"):
            want, got = conj_dot(a, b), compiled(a, b)
        assert type(got) is type(want)
        same_bits(np.array([got]), np.array([want]))
    assert loops.runs["native"] >= 2, loops.runs


def test_escape_times_with_complex_scalars():
    rng = np.random.default_rng(13)
    cs = rng.uniform(-2, 1, 400) + 1j * rng.uniform(-1.5, 1.5, 400)
    run_both(escape_times, [cs, np.empty(400, np.int64), 60], ft.compile(escape_times))
    assert loops.runs["native"] >= 400, loops.runs      # the inner `while`, once per point


def gather_rows(idx, X, out):
    """Rows picked through an index table, accumulated (float and complex alike)."""
    for i in range(out.shape[0]):
        for j in range(idx.shape[1]):
            out[i] += X[idx[i, j]] * (j + 1)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_rows_picked_by_an_index_table(dtype):
    rng = np.random.default_rng(15)
    X = cplx(rng, (9, 5), np.complex128).astype(dtype) if dtype == np.complex128 else rng.standard_normal((9, 5))
    idx = rng.integers(-9, 9, (40, 3))
    compiled = ft.compile(gather_rows)
    run_both(gather_rows, [idx, X, np.zeros((40, 5), dtype)], compiled)
    run_both(gather_rows, [idx[::-1], X[:, ::-2], np.zeros((40, 3), dtype)], compiled)
    assert loops.runs["native"] == 2 and not loops.runs["generic"], loops.runs
    bad = idx.copy()
    bad[17, 2] = 9                                     # out of bounds: NumPy's IndexError, same writes
    want_out, got_out = np.zeros((40, 5), dtype), np.zeros((40, 5), dtype)
    with pytest.raises(IndexError) as want:
        gather_rows(bad, X, want_out)
    with pytest.raises(IndexError) as got:
        compiled(bad, X, got_out)
    assert str(got.value) == str(want.value)
    same_bits(got_out, want_out)
