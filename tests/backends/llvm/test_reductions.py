"""Reductions and scans equal NumPy's (within reassociation tolerance), fused with their
producers and consumers: softmax / layernorm in one kernel, var/std, argmax with NaN."""
import numpy as np
import pytest

from tracing import A, Traced, kernel_count

rng = np.random.default_rng(1)
REDS = ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all")


def data(dtype, shape):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.3
    return rng.integers(-5, 6, size=shape).astype(dt)


@pytest.mark.parametrize("dtype", ("float64", "float32", "int32", "int64", "uint8", "bool"))
@pytest.mark.parametrize("axis", (None, 0, 1, -1, (0, 2)))
def test_reductions_all_axes(dtype, axis):
    keep = [False, True]

    def fn(x):
        out = []
        for name in REDS:
            for k in keep:
                if name == "prod" and dtype not in ("float64", "float32"):
                    continue
                out.append(getattr(np, name)(x, axis=axis, keepdims=k))
        return tuple(out)
    t = Traced(fn, A(("a", "b", 5), dtype))
    for shape in ((3, 4, 5), (1, 7, 5), (6, 1, 5)):
        t.check(data(dtype, shape), rtol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("dtype", ("float64", "float32", "int16", "bool"))
def test_argmax_argmin(dtype):
    t = Traced(lambda x: (np.argmax(x, axis=1), np.argmin(x, axis=0), np.argmax(x),
                          np.argmin(x, axis=1, keepdims=True)), A(("n", "m"), dtype))
    x = data(dtype, (6, 9))
    t.check(x)
    if dtype.startswith("float"):
        x[2, 3] = x[2, 5] = np.nan
        x[4, :] = np.inf
        t.check(x)


def test_nan_propagates_through_max_min():
    t = Traced(lambda x: (x.max(axis=1), x.min(axis=0), x.max()), A(("n", "m")))
    x = data("float64", (5, 40))
    x[1, 17] = np.nan
    t.check(x)


def test_reduction_dtype_attr_and_bool_sum():
    t = Traced(lambda x, b: (x.sum(axis=1, dtype=np.float32), x.mean(dtype=np.float32),
                             b.sum(axis=0), np.count_nonzero(b) if False else b.sum()),
               A(("n", "m")), A(("n", "m"), "bool"))
    t.check(data("float64", (4, 7)), data("bool", (4, 7)))


def test_scalar_results_are_numpy_scalars():
    t = Traced(lambda x: (x.sum(), x.max(), np.argmax(x), x.mean()), A(("n",), "f4"))
    got = t.check(data("float32", (100,)))
    assert all(isinstance(g, np.generic) for g in got)


def test_empty_reductions():
    t = Traced(lambda x: (x.sum(axis=0), x.mean(axis=1), x.prod(axis=0), x.any(axis=0)), A(("n", "m")))
    t.check(np.zeros((0, 3)))
    t.check(np.zeros((3, 0)))


def test_softmax_is_one_kernel():
    t = Traced(lambda x: (lambda e: e / e.sum(axis=1, keepdims=True))(np.exp(x - x.max(axis=1, keepdims=True))),
               A(("n", "m")))
    assert kernel_count(t) == 1
    assert t.run.source.count("_empty(") == 1          # only the output is allocated
    for shape in ((1, 1), (4, 33), (64, 128), (0, 4), (3, 0)):
        t.check(data("float64", shape))


def test_layernorm_is_one_kernel():
    t = Traced(lambda x: (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5),
               A(("n", "m"), "f4"))
    assert kernel_count(t) == 1
    for shape in ((1, 1), (5, 8), (17, 33), (64, 128)):
        t.check(data("float32", shape), rtol=1e-4)


def test_full_reduction_feeds_consumer_in_same_kernel():
    t = Traced(lambda x: x / x.sum() - x.mean(), A(("n", "m")))
    assert kernel_count(t) == 1
    t.check(data("float64", (7, 9)))


def test_column_reductions_and_consumer():
    t = Traced(lambda x: (x - x.mean(axis=0, keepdims=True)) * x.std(axis=0), A(("n", "m")))
    for shape in ((5, 8), (1, 3), (40, 2)):
        t.check(data("float64", shape))


def test_reduction_of_fused_expression_and_stack():
    t = Traced(lambda x: np.stack([x.sum(axis=0), x.max(axis=0), x.min(axis=0), x.mean(axis=0)]),
               A(("n", "m")))
    t.check(data("float64", (5, 8)))
    t = Traced(lambda x, y: ((x > 0) & (y < 0)).sum(axis=0), A(("n", "m")), A(("n", "m")))
    t.check(data("float64", (6, 5)), data("float64", (6, 5)))


@pytest.mark.parametrize("dtype", ("float64", "int32", "bool"))
def test_cumsum_cumprod(dtype):
    t = Traced(lambda x, y: (np.cumsum(x, axis=1) - y, np.cumsum(x, axis=0), np.cumprod(x, axis=1),
                             np.cumsum(x[0])), A(("n", "m"), dtype), A(("n", "m"), dtype))
    for shape in ((4, 6), (1, 1), (2, 0)):
        t.check(data(dtype, shape), data(dtype, shape))


def test_reassociated_sum_tolerance_float32():
    """fadd reassoc: the documented tolerance (~1e-6 relative for 1e6 float32)."""
    t = Traced(lambda x: x.sum(axis=1), A(("n", "m"), "f4"))
    x = rng.random((4, 1_000_000)).astype(np.float32)
    got = t.llvm(x)[0]
    exact = x.astype(np.float64).sum(axis=1)
    assert np.max(np.abs(got - exact) / exact) < 1e-5


def test_dependent_column_reductions_do_not_share_a_pass():
    def f(x):
        v1 = x[-3:-1]
        v2 = np.prod(v1, axis=0, keepdims=True)
        return (v2 == v1).all(axis=-2), (x - x.sum(axis=0)).sum(axis=0)
    t = Traced(f, A(("m", "n"), "i4"))
    t.check(rng.integers(-3, 3, (4, 5)).astype(np.int32))


@pytest.mark.parametrize("dtype", ("float64", "float32"))
def test_signed_zeros_of_sums_and_scans_match_numpy(dtype):
    # NumPy sums start from +0.0 (sum([-0.0]) is 0.0) but cumsum starts from the first
    # element (cumsum([-0.0]) is [-0.0]); compare sign bits, which assert_allclose ignores.
    def fn(x):
        return x.sum(), x.sum(axis=-1), np.cumsum(x, axis=-1), np.cumsum(x, axis=0), x.prod(axis=0)
    import frametrace as ft
    f = ft.compile(fn, dynamic=True)
    for x in (np.full((1, 1), -0.0, dtype), np.full((3, 2), -0.0, dtype), np.zeros((0, 2), dtype),
              np.array([[-0.0, 1.0], [-0.0, -1.0]], dtype)):
        for got, want in zip(f(x), fn(x)):
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
