"""Code size of pairwise row sums (codegen/llvm_kernels/pairwise.py): a kernel's IR is what LLVM
compiles on a cold start, so it must not grow much faster than the expression it sums. A model
whose residual stream `h = h + delta` feeds a norm in every layer fuses a longer sum of arrays into
each layer's norm; each array read costs one vector load per unit in the unit-stride copy, and the
strided copy (its reads element by element) runs one leaf at a time instead of GROUP side by side
(GROUP leaves emitted its element-by-element body 2 x GROUP times: ~470 IR lines per array)."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from tracing import A, Traced


class ResidualNorm:
    """The root mean square of a residual stream after some layers' updates, as a model has it."""

    def __init__(self, eps):
        self.eps = eps

    def stream(self, h, deltas):
        for d in deltas:
            h = h + d
        return h

    def __call__(self, h, *deltas):
        h = self.stream(h, deltas)
        return np.sqrt((h * h).mean(axis=-1) + self.eps)


def ir_lines(n_deltas, dtype="f8"):
    norm = ResidualNorm(1e-6)
    t = Traced(lambda h, *ds: norm(h, *ds), *[A(("n", "m"), dtype)] * (1 + n_deltas))
    return t.run.llvm_ir.count("\n")


@pytest.mark.parametrize("dtype", ["f8", "f4"])
def test_ir_of_a_row_sum_grows_by_a_bounded_amount_per_array_it_reads(dtype):
    base, more = ir_lines(1, dtype), ir_lines(5, dtype)
    per_array = (more - base) / 4
    assert 0 < per_array <= 300, per_array          # 472 (f8) when the strided copy ran 4 leaves side by side


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_strided_rows_of_a_residual_stream_sum_in_numpys_order(dtype):
    norm = ResidualNorm(1e-6)
    compiled = ft.compile(norm, dynamic=True)
    for seed, n in enumerate((0, 7, 9, 129, 1025, 4097)):
        r = np.random.default_rng(seed)
        wide = [(r.standard_normal((3, 2 * n)) * 10.0 ** r.uniform(-3, 3, (3, 2 * n))).astype(dtype)
                for _ in range(4)]
        rows = [w[:, ::2] for w in wide[:2]] + [w[:, ::-2] for w in wide[2:]]   # strided and reversed
        with warnings.catch_warnings(record=True) as got_w:   # empty rows: NumPy's warnings, both sides
            warnings.simplefilter("always")
            got = compiled(*rows)
        with warnings.catch_warnings(record=True) as want_w:
            warnings.simplefilter("always")
            want = norm(*rows)
        assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w], n
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")), n
