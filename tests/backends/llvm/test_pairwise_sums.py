"""Float sums in NumPy's pairwise order (codegen/llvm_kernels/pairwise.py): bit for bit NumPy's
sum, mean, var and std of a whole 1-d array and along the last axis of C-ordered rows, at every
size around NumPy's block edges (8, 128, the recursion's splits), float32 and float64, strided and
reversed views, NaN, inf and -0.0; both compile tiers give the same bits."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import compile_graph
from tracing import A, Traced

SIZES = [0, 1, 2, 7, 8, 9, 15, 16, 17, 120, 127, 128, 129, 135, 136, 255, 256, 257, 1000, 2049, 4099]
rng = np.random.default_rng(11)


def same_bits(got, want):
    """Equal bits, a NaN matching any NaN: which NaN a sum holding inf and -inf (or NaNs of
    several signs) ends with depends on the operand order of each add, which neither NumPy (its
    SIMD and scalar loops differ) nor LLVM (fadd commutes) keeps."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    nan = np.isnan(want)
    return np.array_equal(np.isnan(got), nan) and got[~nan].tobytes() == want[~nan].tobytes()


def data(n, dtype, seed=0, special=0):
    """Values over many magnitudes (every rounding matters), with `special` NaN/inf/-0.0 in."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal(n) * 10.0 ** r.uniform(-4, 4, n)).astype(dtype)
    for _ in range(special if n else 0):
        x[r.integers(n)] = r.choice([np.nan, np.inf, -np.inf, -0.0, 0.0])
    return x


def layout(x, how):
    if how == "strided":
        y = np.empty(2 * len(x), x.dtype)
        y[::2] = x
        return y[::2]
    if how == "reversed":
        return x[::-1].copy()[::-1]
    return x


class Stats:
    """Summary statistics of a signal, as a user writes them: several reductions of one array."""

    def __call__(self, x):
        return x.sum(), np.mean(x), np.sum(x * 0.5), x.var(), x.std()


STATS = Stats()
compiled_stats = ft.compile(STATS, dynamic=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # (empty means, ddof: NumPy's, both sides)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.sampled_from(SIZES), dtype=st.sampled_from([np.float64, np.float32]),
       how=st.sampled_from(["contiguous", "strided", "reversed"]), seed=st.integers(0, 2**31),
       special=st.sampled_from([0, 0, 1, 3]))
def test_whole_array_sums_are_numpys_bits(n, dtype, how, seed, special):
    x = layout(data(n, dtype, seed, special), how)
    with np.errstate(all="ignore"):
        want = STATS(x)
        got = compiled_stats(x)
    for g, w, what in zip(got, want, ("sum", "mean", "sum(x*0.5)", "var", "std")):
        assert same_bits(g, w), (what, n, dtype, how, g, w)


@pytest.mark.parametrize("n", [10**5 + 3, 2**17 + 5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_sums_are_numpys_bits(n, dtype):
    x = data(n, dtype, n)
    f = ft.compile(lambda x: (x.sum(), x.mean()))
    for g, w in zip(f(x), (x.sum(), x.mean())):
        assert same_bits(g, w), (n, dtype, g, w)


def row_stats(x):
    return x.sum(axis=-1), x.mean(axis=-1, keepdims=True), x.std(axis=1), np.sum(x * x, axis=1)


compiled_rows = ft.compile(row_stats, dynamic=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.sampled_from([0, 1, 3]), n=st.sampled_from(SIZES[1:]),
       dtype=st.sampled_from([np.float64, np.float32]), strided=st.booleans(), seed=st.integers(0, 2**31))
def test_row_sums_of_c_ordered_rows_are_numpys_bits(rows, n, dtype, strided, seed):
    """NumPy sums each row pairwise when the rows are its innermost axis (C order, sliced rows)."""
    x = data(rows * n * (2 if strided else 1), dtype, seed).reshape(rows, n * (2 if strided else 1))
    if strided:
        x = x[:, ::2]
    for g, w in zip(compiled_rows(x), row_stats(x)):
        assert same_bits(g, w), (rows, n, dtype, strided)


def centre(mass, vel):
    return vel - np.mean(mass * vel, 0) / np.mean(mass), np.sum(mass)


def test_column_vector_sums_are_numpys_bits():
    """An (n, 1) array: NumPy drops the axis of size 1 and sums the n elements pairwise (nbody's
    np.mean(mass))."""
    f = ft.compile(centre)
    for n in (5, 50, 300):
        mass, vel = data(n, np.float64, n).reshape(n, 1) ** 2, data(3 * n, np.float64, n + 1).reshape(n, 3)
        for g, w in zip(f(mass, vel), centre(mass, vel)):
            assert same_bits(g, w), n


class ColumnStats:
    """Per-feature statistics of samples stored as a column (n, 1) or a (1, n, 1) block."""

    def __init__(self, axis, keepdims=False):
        self.axis, self.keepdims = axis, keepdims

    def __call__(self, x):
        a, k = self.axis, self.keepdims
        return x.sum(axis=a, keepdims=k), x.mean(axis=a, keepdims=k), x.var(axis=a), x.std(axis=a, ddof=1)


@pytest.mark.parametrize("shape, axis, keepdims", [((-1, 1), 0, False), ((1, -1, 1), 1, True)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reducing_the_axis_of_a_column_is_numpys_pairwise_sum(shape, axis, keepdims, dtype):
    """x.reshape(n, 1).sum(axis=0): the kept axis has size 1, so NumPy drops it and sums the n
    elements pairwise, not row by row as it does a wider array's columns (found comparing random
    inputs with what exact.py claims: these were summed row by row, differing in ~9 of 10)."""
    stats = ColumnStats(axis, keepdims)
    f = ft.compile(stats)
    for n in (9, 40, 300):
        x = data(n, dtype, n).reshape(shape)
        for g, w in zip(f(x), stats(x)):
            assert same_bits(g, w), (n, g, w)


def test_fortran_ordered_rows_stay_within_rounding():
    """An F-ordered array's rows NumPy sums one element at a time (its inner axis is the kept
    one): not our order; the results agree to rounding (README)."""
    x = np.asfortranarray(data(40 * 300, np.float64, 3).reshape(40, 300))
    f = ft.compile(lambda x: x.sum(axis=-1))
    np.testing.assert_allclose(f(x), x.sum(axis=-1), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("fn, shape", [(lambda x: x.sum(), ("n",)), (lambda x: x.mean(axis=1), (3, "n")),
                                       (lambda x: ((x - x.mean()) ** 2).sum(), ("n",))])
@pytest.mark.parametrize("dtype", ["f8", "f4"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_both_tiers_give_numpys_bits(fn, shape, dtype):
    quick, full = Traced(fn, A(shape, dtype)), Traced(fn, A(shape, dtype))
    quick.graph.hints = {s: 3 for s in quick.graph.symbols}
    full.graph.hints = {s: 1 << 20 for s in full.graph.symbols}
    quick.run, full.run = compile_graph(quick.graph), compile_graph(full.graph)
    assert quick.run.kernels[0].tier == "quick" and full.run.kernels[0].tier == "full"
    for n in (0, 1, 7, 129, 1001, 4099):
        x = data(n if len(shape) == 1 else 3 * n, dtype, n).reshape((n,) if len(shape) == 1 else (3, n))
        with np.errstate(all="ignore"):
            want = fn(x)
        (q,), (f,) = quick.llvm(x), full.llvm(x)
        assert same_bits(q, want) and same_bits(f, want), n
