"""Pairwise row sums of computed values (codegen/llvm_kernels/pairwise.py, _vectorisable): a
sum, mean, var or std along rows of an expression (`((x - m) ** 2).mean(-1)`, `(x * y).sum(-1)`)
computes each group of 8 elements straight into NumPy's 8 lanes as vectors, no stack buffer; the
bits are NumPy's at every row length around the 8 / 128 edges, float32 and float64, contiguous,
strided and reversed rows, NaN and inf. Bodies it does not take (a store, a call such as exp) keep
the buffer and the same bits."""
import re

import numpy as np
import pytest

import frametrace as ft
from tracing import A, Traced

LENGTHS = [0, 1, 7, 8, 9, 127, 128, 129, 255, 1023, 1024, 1025, 4097]


def same_bits(got, want):
    """np.array_equal of the bits; a NaN matches any NaN (which NaN a sum of inf and -inf ends
    with depends on each add's operand order, which neither NumPy nor LLVM keeps)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    nan = np.isnan(want)
    return np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan].view(f"u{got.itemsize}"),
                                                                 want[~nan].view(f"u{want.itemsize}"))


class RowStats:
    """What a normalisation layer computes per row, written the way users write it."""

    def __init__(self, eps):
        self.eps = eps

    def centred(self, x):
        return x - x.mean(axis=-1, keepdims=True)

    def __call__(self, x, w):
        d = self.centred(x)
        var = (d ** 2).mean(axis=-1, keepdims=True)
        return (var, np.sqrt((d * d).sum(axis=-1) / x.shape[-1]), (x * w).sum(axis=-1),
                (-(x * 0.5) + 1.0).sum(axis=-1), x.var(axis=-1), x.std(axis=-1),
                d / np.sqrt(var + self.eps) * w)


def exp_sums(x):                                  # a store and a call: the buffer path
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True), e.sum(axis=-1)


STATS = RowStats(1e-5)
compiled_stats = ft.compile(STATS, dynamic=True)
compiled_exp = ft.compile(exp_sums, dynamic=True)


def rows(n, dtype, how, special, seed):
    """4 rows of n values over several magnitudes, laid out `how`, with NaN/inf where asked."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal((4, n)) * 10.0 ** r.uniform(-3, 3, (4, n))).astype(dtype)
    if special and n:
        x[1, r.integers(n)] = np.nan
        x[2, r.integers(n)] = np.inf
        x[3, r.integers(n)] = -np.inf
        x[3, r.integers(n)] = np.inf
    if how == "strided":                          # every other element of wider rows
        y = np.zeros((4, 2 * n), dtype)
        y[:, ::2] = x
        return y[:, ::2]
    if how == "reversed":                         # a negative-stride view of the same rows
        return x[:, ::-1].copy()[:, ::-1]
    if how == "reversed_strided":                 # every other element, last to first
        y = np.zeros((4, 2 * n), dtype)
        y[:, ::-2] = x
        return y[:, ::-2]
    return x


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # empty means, inf - inf: NumPy's, both sides
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("how", ["contiguous", "strided", "reversed", "reversed_strided"])
def test_row_sums_of_computed_values_are_numpys_bits(dtype, how):
    for n in LENGTHS:
        for special in (False, True):
            x = rows(n, dtype, how, special, n)
            w = np.random.default_rng(n).standard_normal(n).astype(dtype)
            with np.errstate(all="ignore"):
                want = STATS(x, w)
                got = compiled_stats(x, w)
            for k, (g, e) in enumerate(zip(got, want)):
                assert same_bits(g, e), (n, how, special, k)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_sums_the_vector_path_does_not_take_keep_numpys_order(dtype):
    for n in LENGTHS[1:]:                         # (a max of no elements raises, both sides)
        for how in ("contiguous", "strided", "reversed"):
            x = rows(n, dtype, how, False, n)
            with np.errstate(all="ignore"):
                (p, s), (wp, ws) = compiled_exp(x), exp_sums(x)
            # exp is NumPy's loop in chunks inside the pairwise loop (test_pairwise_numpy_loops.py)
            assert same_bits(s, ws) and same_bits(p, wp), (n, how)


@pytest.mark.parametrize("dt, vec", [("f8", "<4 x double>"), ("f4", "<8 x float>")])
def test_computed_row_sum_adds_vectors_into_the_lanes_without_a_buffer(dt, vec):
    t = Traced(lambda x: ((x - x.mean(axis=-1, keepdims=True)) ** 2).mean(axis=-1), A(("n", "m"), dt))
    ir = t.run.llvm_ir
    assert re.search(rf"fsub {re.escape(vec)} ", ir) and re.search(rf"fmul {re.escape(vec)} ", ir)
    assert ".buf." not in ir                      # neither copy (unit stride, strided) stores the values
    for shape in ((3, 0), (2, 7), (3, 129), (2, 1025)):
        t.check(np.random.default_rng(1).standard_normal(shape).astype(dt))


def test_a_body_with_a_call_keeps_the_buffer():
    t = Traced(lambda x: np.exp(x - x.max(axis=-1, keepdims=True)).sum(axis=-1), A(("n", "m")))
    assert ".buf." in t.run.llvm_ir
