"""Never slower than NumPy (issue 23 item 5): a graph that is a lone NumPy call gets the native
entry (the call made through the C API), an unused result of a NumPy call is not computed a
second time, and an entry whose results are exact either way keeps the faster of compiled and
eager, measured on its first calls (csrc_free_runtime/tuning.py)."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import exact as exact_mod
from csrc_free_runtime import all_caches, tuning

rng = np.random.default_rng(235)


def lone_matmul(x, w):
    return x @ w


def histogram_ratio(data, radius, npt):
    counts = np.histogram(radius, npt)[0]
    weighted = np.histogram(radius, npt, weights=data)[0]
    return weighted / counts


def relu_dense(x, w, b):
    return np.maximum(x @ w + b, 0.0)


def _entry(fn):
    """The newest entry of fn's cache (ft.compile made one cache per call of ft.compile)."""
    return next(c for c in all_caches() if c.fn is fn and c.entries).entries[0]


@pytest.mark.parametrize("fn,make", [
    (lone_matmul, lambda: (rng.standard_normal((4, 5)), rng.standard_normal((5, 3)))),
    (lone_matmul, lambda: (rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 2)))),
    (relu_dense, lambda: (rng.standard_normal((3, 8)), rng.standard_normal((8, 4)), rng.standard_normal(4))),
    (histogram_ratio, lambda: (rng.random(500), rng.random(500), 20)),
])
def test_numpy_calls_are_made_by_the_native_entry(fn, make):
    with ft.config.patch(autotune_entries=False):
        f = ft.compile(fn, backend="llvm")
        for _ in range(3):
            args = make()
            got, want = f(*args), fn(*args)
            assert type(got) is type(want)
            np.testing.assert_array_equal(got, want)
        assert _entry(fn).native is not None
        assert _entry(fn).native.hits >= 2


def test_a_numpy_scalar_result_keeps_the_python_path():
    f = ft.compile(lone_matmul, backend="llvm")
    x, y = rng.standard_normal(5), rng.standard_normal(5)
    got = f(x, y)
    assert type(got) is np.float64 and got == lone_matmul(x, y)


def test_numpy_errors_of_a_native_call_are_numpys():
    f = ft.compile(lone_matmul, backend="llvm", dynamic=True)
    f(np.ones((3, 4)), np.ones((4, 2)))
    with pytest.raises(ValueError) as got:
        f(np.ones((3, 4)), np.ones((5, 2)))
    with pytest.raises(ValueError) as want:
        lone_matmul(np.ones((3, 4)), np.ones((5, 2)))
    assert str(got.value) == str(want.value)


def test_an_unused_result_of_a_numpy_call_is_not_computed_again(monkeypatch):
    """np.histogram's edges are unused: their node shares the bin counts' call (same function,
    same arguments), which raises whatever it would: one call per histogram, as NumPy."""
    import frametrace.backends.llvm as backend
    runs, original = [], backend.compile_graph
    monkeypatch.setattr(backend, "compile_graph", lambda g: runs.append(original(g)) or runs[-1])
    f = ft.compile(histogram_ratio, backend="llvm")
    data, radius = rng.random(300), rng.random(300)
    np.testing.assert_array_equal(f(data, radius, 15), histogram_ratio(data, radius, 15))
    assert runs[0].source.count("= _op_histogram_hist") == 2 and "histogram_edges" not in runs[0].source


def _tuned(monkeypatch, eager_cost, compiled_cost):
    """tuning's clock, scripted: a compiled call takes compiled_cost, an eager one eager_cost
    (the calls alternate, compiled first). Built from C callables only: a Python function the
    tuner called would be a callee of the compiled function, and compiled itself."""
    import functools
    import itertools
    import types
    ticks = itertools.accumulate(itertools.cycle([0.0, compiled_cost, 0.0, eager_cost]))
    monkeypatch.setattr(tuning, "time", types.SimpleNamespace(perf_counter=functools.partial(next, ticks)))


def scaled(x):
    return x * 2.0 + 1.0


def summed(x):
    return (x * 2.0).sum()


@pytest.fixture(autouse=True)
def _tuning_on(request):
    """Tuning is opt-in (config.autotune_entries); these tests switch it on."""
    with ft.config.patch(autotune_entries="tuning_off" not in request.node.name):
        yield


@pytest.mark.parametrize("eager_wins", [True, False])
def test_an_exact_entry_keeps_the_faster_of_compiled_and_eager(monkeypatch, eager_wins):
    _tuned(monkeypatch, eager_cost=1.0 if eager_wins else 5.0, compiled_cost=3.0)
    f = ft.compile(scaled, backend="llvm")
    x = rng.standard_normal(50)
    for _ in range(2 * tuning.PAIRS + 3):
        np.testing.assert_array_equal(f(x), scaled(x))
    tuner = _entry(scaled).info.extra["tuning"]
    assert tuner.choice == ("eager" if eager_wins else "compiled")
    assert (_entry(scaled).native is None) == eager_wins          # compiled: its native builtin back
    assert ft.stats().frames_compiled == 1


def test_an_eager_entry_is_measured_again_when_its_inputs_grow(monkeypatch):
    _tuned(monkeypatch, eager_cost=1.0, compiled_cost=3.0)
    f = ft.compile(scaled, backend="llvm", dynamic=True)
    small = rng.standard_normal(10)
    for _ in range(2 * tuning.PAIRS + 1):
        f(small)
    tuner = _entry(scaled).info.extra["tuning"]
    assert tuner.choice == "eager"
    big = rng.standard_normal(10 * tuning.GROWTH + 1)
    np.testing.assert_array_equal(f(big), scaled(big))
    assert tuner.choice is None                                   # measuring again


def test_inexact_entries_are_not_tuned():
    """A reassociated float sum (over two axes of an array: NumPy adds its rows pairwise, ours
    vectorises across them) differs from NumPy's by rounding: such an entry always runs
    compiled (its results do not depend on timings)."""
    f = ft.compile(summed, backend="llvm")
    x = rng.standard_normal((30, 40))
    for _ in range(3):
        f(x)
    assert "tuning" not in _entry(summed).info.extra
    assert _entry(summed).info.extra["same_as_eager"] is False


class Moments:
    """mean and spread of a signal, the way a user writes a helper class."""

    def __init__(self, ddof):
        self.ddof = ddof

    def __call__(self, x):
        centred = x - x.mean()
        return centred.sum(), x.std(ddof=self.ddof), np.mean(x * x)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_whole_array_sums_in_numpys_order_are_exact_and_tuned(monkeypatch, dtype):
    """Sums of a whole 1-d array run in NumPy's pairwise order (codegen/llvm_kernels/pairwise.py):
    bit-identical compiled or eager, so autotuning may pick either."""
    _tuned(monkeypatch, eager_cost=5.0, compiled_cost=1.0)
    m = Moments(1)
    f = ft.compile(m, backend="llvm")
    x = (rng.standard_normal(1003) * 100).astype(dtype)
    for _ in range(2 * tuning.PAIRS + 3):
        for got, want in zip(f(x), m(x)):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    entry = _entry(Moments.__call__)
    assert entry.info.extra["same_as_eager"] is True
    assert entry.info.extra["tuning"].choice == "compiled"


def test_tuning_off_by_default():
    from frametrace.config import _DEFAULTS
    assert _DEFAULTS["autotune_entries"] is False
    f = ft.compile(scaled, backend="llvm")            # (the fixture leaves it off here)
    f(np.ones(3))
    assert "tuning" not in _entry(scaled).info.extra


def column_products(data, out):
    """covariance's loop: `v @ M` of a column and the columns right of it, in a native nest."""
    m = data.shape[1]
    for i in range(m):
        out[i, i:m] = data[:, i] @ data[:, i:m]
    return out


@pytest.mark.parametrize("dtype,exact", [(np.float64, False), (np.complex128, False), (np.int64, True)])
def test_products_in_loop_nests_are_exact_only_for_integers(compiled_graphs, dtype, exact):
    """NumPy computes a float or complex `v @ M` with BLAS (its blocked order); the native nest
    adds row by row: within rounding, not NumPy's bits, so such an entry is not 'same as eager'
    (autotuning must not switch between the two). Integer products wrap the same in any order."""
    ft.reset()
    with ft.config.patch(loop_unroll_budget=0, pgo=False):
        f = ft.compile(column_products, backend="llvm")
        data = (rng.standard_normal((30, 20)) * 10).astype(dtype)
        got, want = f(data, np.zeros((20, 20), dtype)), column_products(data, np.zeros((20, 20), dtype))
    if exact:
        np.testing.assert_array_equal(got, want)
    else:                            # any order of the k additions: within 4 k eps (|a| @ |b|)
        bound = 4 * data.shape[0] * np.finfo(np.float64).eps * column_products(np.abs(data), np.zeros((20, 20)))
        assert np.all(np.abs(got - want) <= bound)
    (run,) = compiled_graphs
    assert len(run.plan.loop_natives) == 1                      # the loop is one native nest
    assert exact_mod.same_as_eager(run) is exact
    assert _entry(column_products).info.extra["same_as_eager"] is exact
