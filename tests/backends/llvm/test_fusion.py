"""Scheduling: what fuses, what is materialised, views and aliasing, mutation order."""
import numpy as np

from tracing import A, S, Traced, kernel_count

rng = np.random.default_rng(2)


def r(*shape):
    return rng.standard_normal(shape)


def test_five_op_chain_is_one_kernel_without_intermediates():
    t = Traced(lambda x, y: np.exp(x * 2.0 + y) - np.sqrt(np.abs(y)) / 3.0, A(("n", "m")), A(("n", "m")))
    assert kernel_count(t) == 1
    assert t.run.source.count("_empty(") == 1
    for n, m in ((3, 4), (100, 7), (1, 1), (0, 5)):
        t.check(r(n, m), r(n, m))


def test_two_outputs_share_one_loop():
    t = Traced(lambda x: (np.exp(x), np.exp(x).sum(axis=1)), A(("n", "m")))
    assert kernel_count(t) == 1
    t.check(r(6, 9))


def test_in_place_updates_in_program_order():
    def scale_(x, y):
        x *= 2.0
        x[0] = -1.0
        y[1:] += x[:-1]
        return x.sum()
    t = Traced(scale_, A(("n",)), A(("n",)))
    t.check(np.arange(6.0), np.ones(6))


def test_view_mutation_visible_through_base():
    def through_view(x):
        v = x[2:]
        v += 1.0
        return x * 1.0
    t = Traced(through_view, A(("n",)))
    t.check(np.zeros(6))


def test_value_computed_before_a_later_write():
    def f(x):
        y = x * 2.0
        x[...] = 0.0
        x += 1.0
        return y + x
    t = Traced(f, A(("n", 3)))
    t.check(r(4, 3))


def test_overlapping_assignment_reads_source_first():
    def shift(x):
        x[1:] = x[:-1] + 1.0
        return x
    t = Traced(shift, A(("n",)))
    t.check(np.arange(8.0))

    def rev(x):
        x[...] = x[::-1] * 2.0
        return x
    t = Traced(rev, A(("n",)))
    t.check(np.arange(7.0))


def test_aliased_inputs_are_copied_when_they_overlap():
    def add_(a, b):
        a[1:] += b[:-1] * 1.0
        return a
    t = Traced(add_, A(("n",)), A(("n",)))
    x = np.arange(6.0)
    t.check(x, x.copy())
    y = np.arange(6.0)
    want = y.copy()
    want[1:] += want[:-1].copy()
    got = t.llvm(y, y)[0]                       # the same array twice
    np.testing.assert_array_equal(got, want)


def test_returned_views_and_identity():
    t = Traced(lambda x, s: (x, x[1:], x.T, s), A(("n", "m")), S(float))
    a = np.arange(12.0).reshape(3, 4)
    out = t.run([a, 2.5], [3, 4])
    assert out[0] is a and out[3] == 2.5 and type(out[3]) is float
    assert np.shares_memory(out[1], a) and np.shares_memory(out[2], a)
    assert out[1].base is not None and out[2].base is not None


def test_views_inside_kernels_are_index_maps():
    t = Traced(lambda x, y: x[1:, ::2] + y[:-1, ::2] * x.T[::2, :-1].T[:, :1], A(("n", "m")), A(("n", "m")))
    assert kernel_count(t) == 1
    assert "_op_getitem" not in t.run.source           # no NumPy view built at run time
    t.check(r(5, 8), r(5, 8))


def test_transpose_reshape_and_fallback_reshape():
    t = Traced(lambda x: (x.T.reshape(-1) * 2.0)[::3], A(("n", "m")))
    for shape in ((2, 3), (5, 8), (1, 7)):
        t.check(r(*shape))


def test_matmul_epilogue():
    t = Traced(lambda x, w, b: np.maximum(x @ w + b, 0.0), A(("n", "k")), A(("k", "m")), A(("m",)))
    assert kernel_count(t) == 1
    t.check(r(8, 5), r(5, 3), r(3))
    t = Traced(lambda x, y: np.maximum(x @ y.T + 1.0, 0.0), A(("n", "k")), A(("n", "k")))
    t.check(r(7, 4), r(7, 4))


def test_fallback_ops_mix_with_kernels():
    t = Traced(lambda x, y: np.concatenate([x, y * 2], axis=0).sum(axis=1), A(("n", "m")), A(("n", "m")))
    t.check(r(3, 4), r(3, 4))


def test_mixed_scalar_args_and_creation():
    t = Traced(lambda x, s: (x * s + np.ones_like(x) - np.zeros_like(x), np.full_like(x, s)),
               A(("n", 3)), S(float))
    t.check(r(5, 3), 0.75)


def test_in_place_on_fresh_value_and_column_assign():
    def f(x):
        y = x * 2.0
        y[:, 0] = y.sum(axis=1)
        y[1] += 1.0
        return y
    t = Traced(f, A(("n", "m")))
    t.check(r(4, 3))


def test_integer_program():
    t = Traced(lambda x: (x.astype(np.int64) * 3 + 7) // 2 % 5, A(("n", "m")))
    t.check(r(6, 5) * 10)


def test_matmul_epilogue_runs_in_place_over_the_product():
    t = Traced(lambda x, w, b: np.maximum(x @ w + b, 0.0), A(("n", "k")), A(("k", "m")), A(("m",)))
    # one allocation: the product's rows, which the epilogue then overwrites in place
    assert "in place" in t.run.source and t.run.source.count("_empty(") == 1
    t.check(r(6, 4), r(4, 5), r(5))


def test_integer_matmul_kernel():
    t = Traced(lambda a, b: (a @ b, np.dot(a, b.T[:, :2].T.T) if False else a @ b + 1),
               A(("n", "k"), "i8"), A(("k", "m"), "i4"))
    assert "_op_matmul" not in t.run.source
    for n, k, m in ((3, 4, 5), (1, 1, 1), (0, 3, 2), (7, 0, 3)):
        t.check(rng.integers(-50, 50, (n, k)), rng.integers(-50, 50, (k, m)).astype(np.int32))


def test_numpy_scalar_inputs_and_read_only_destination():
    t = Traced(lambda x, s: x * s + s, A(("n",), "f4"), np.float32(2.5))
    t.check(r(5).astype(np.float32), np.float32(1.5))
    t = Traced(lambda x, s: (x + s, s * 2), A(("n",), "i4"), np.int16(3))
    t.check(np.arange(5, dtype=np.int32), np.int16(-2))

    def f(x):
        x += 1.0
        return x
    t = Traced(f, A(("n",)))
    ro = np.broadcast_to(np.ones(1), (4,))
    with np.testing.assert_raises(ValueError):
        t.llvm(ro)


def test_element_read_before_a_write_is_a_copy():
    def f(x):
        v1 = x[1]
        x[...] = 2
        return x[2:3] // v1, x[0] * v1
    t = Traced(f, A(("n",), "i4"))
    t.check(np.array([0, 5, 7, 9], dtype=np.int32))


def test_assign_of_a_stored_value_into_its_own_reversed_view():
    def f(y):
        v1 = np.where(y > 0, y, -y)
        v4 = v1[::-1]
        v4[...] = v1
        return v4, v1
    t = Traced(f, A(("n",)))
    t.check(r(5))


def test_nan_scalar_into_int_array_raises_like_numpy():
    def f(x, z):
        v2 = x[::-1]
        v2[...] = z.var()
        return x
    t = Traced(f, A(("k", "k"), "i4"), A(("k", "k")))
    t.check(np.zeros((2, 2), np.int32), r(2, 2))
    t.check(np.zeros((0, 0), np.int32), np.zeros((0, 0)))


def test_mean_assigned_into_a_slice_of_itself():
    def f(x):
        v = x.mean(axis=-1)
        v[1:] = v[:-1] * 2
        return v
    t = Traced(f, A(("n", 2)))
    for n in (1, 3):
        t.check(np.arange(2.0 * n).reshape(n, 2))


def test_nansum_and_nanprod_fuse_with_their_operands():
    t = Traced(lambda x: np.nansum(x * 2.0, axis=1) + np.nanprod(x, axis=1), A(("n", "m")))
    assert kernel_count(t) == 1
    x = r(7, 9)
    x[1, 2], x[3, :] = np.nan, np.nan
    for v in (x, x[::-1], np.asfortranarray(x), r(0, 3), r(1, 1)):
        t.check(v, rtol=1e-12)


def test_nancumsum_scans_the_replaced_values_in_one_kernel():
    t = Traced(lambda x: np.nancumsum(x * 2.0, axis=1) - np.nancumprod(x, axis=0), A(("n", "m")))
    x = r(6, 5)
    x[1, 2], x[4, :] = np.nan, np.nan
    for v in (x, x[::-1], np.asfortranarray(x), r(0, 3), r(1, 1)):
        t.check(v, rtol=1e-12)
