"""Loops whose body works on arrays (backends/llvm/array_loops.py, loop_driver.py): one native
loop calling the body's kernels, compared with plain NumPy on both backends, with compile counts
and the count of calls that took the native path (array_loops.runs)."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.backends.llvm import array_loops, loop_driver, loops

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    ft.reset()
    array_loops.runs.clear()
    loops.runs.clear()
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 1)     # short loops run natively too
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


def same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.flags.c_contiguous == want.flags.c_contiguous
        assert got.flags.f_contiguous == want.flags.f_contiguous
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    elif isinstance(want, np.floating):         # sums are reassociated (vectorised): rounding
        assert type(got) is type(want) and np.isclose(got, want, rtol=1e-12, atol=0, equal_nan=True), (got, want)
    else:
        assert got == want or (got != got and want != want), (got, want)


def check(fn, args_list, backend, dynamic=True):
    compiled = ft.compile(fn, backend=backend, dynamic=dynamic)
    for args in args_list:
        want = fn(*[a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args])
        got = compiled(*args)
        same(got, want)
    return compiled


def native_runs():
    return array_loops.runs["native"]


# ------------------------------------------------------------------------------ programs

def viterbi_forward(log_emit, log_trans):
    steps, states = log_emit.shape
    score = log_emit[0].copy()
    back = np.zeros((steps, states), dtype=np.int64)
    for t in range(1, steps):
        cand = score[:, None] + log_trans
        back[t] = cand.argmax(axis=0)
        score = cand.max(axis=0) + log_emit[t]
    return back, score


def jacobi(u, iters):
    for _ in range(iters):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def newton(a):
    x = a.copy()
    while np.abs(x * x - a).max() > 1e-12 * a.max():
        x = 0.5 * (x + a / x)
    return x


def halve_until_small(x):
    v = x.astype(np.float64)
    while np.abs(v).max() > 1.0:
        v = v * 0.5
    return v


def newton_counted(a):
    x = a.copy()
    it = 0
    while np.abs(x * x - a).max() > 1e-12 * a.max() and it < 100:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it


def two_carried(x, n):
    y = x * 2
    z = x[::-1] + 0
    for _ in range(n):
        y, z = z * 0.5 + 1, y - z
    return y, z


def backwards_sum(x):
    acc = np.zeros(x.shape[1], x.dtype)
    for i in range(x.shape[0], 0, -1):
        acc = acc * 3 + x[i - 1]
    return acc


def matmul_power(w, v, n):
    for _ in range(n):
        v = w @ v
    return v


def rows_recurrence(u):
    for i in range(u.shape[0] - 1):
        u[i + 1] = u[i] * 0.5 + u[i + 1]
    return u


def carried_view_of_a_written_array(x, n):
    y = x[0]
    for i in range(1, n):
        x[i] = y * 2
        y = x[i] + 1
    return y, x


def shifted_update(u, iters):
    for _ in range(iters):
        u[1:] = u[:-1] + u[1:] * 0.5
    return u


def carried_scalar(x, n):
    s = x.sum()
    y = x.copy()
    for _ in range(n):
        y = y * 0.5 + s
        s = y.max() - s // 4
    return y, s


def until_change_is_small(x):
    err = np.abs(x).max()
    while err > 1e-3:
        new = 0.5 * x + 0.25
        err = np.abs(new - x).max()
        x = new
    return x, err


# ------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("backend", BACKENDS)
def test_viterbi_forward_pass(backend):
    rng = np.random.default_rng(0)
    args = [(np.log(rng.random((t, s))), np.log(rng.random((s, s)))) for t, s in ((50, 16), (7, 3), (200, 16))]
    args += [(np.log(rng.random((1, 4))), np.log(rng.random((4, 4)))),     # no iteration
             (np.log(rng.random((2, 4))), np.log(rng.random((4, 4))))]     # one iteration
    check(viterbi_forward, args, backend)
    if backend == "llvm":
        assert native_runs() == 3                                  # two trips or more
    assert ft.stats().unique_graphs <= 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobi_in_place_sweeps(backend):
    rng = np.random.default_rng(1)
    args = [(rng.standard_normal((n, n)), k) for n, k in ((8, 5), (8, 0), (8, 1), (16, 7), (30, 3))]
    compiled = check(jacobi, args, backend)
    if backend == "llvm":
        assert native_runs() == 3
    before = ft.stats().unique_graphs
    u = rng.standard_normal((16, 16))
    same(compiled(u.copy(), 11), jacobi(u.copy(), 11))         # a new trip count: no recompile
    assert ft.stats().unique_graphs == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_newton_while_on_data(backend):
    rng = np.random.default_rng(2)
    args = [(rng.random(n) + 0.5,) for n in (10, 1000, 3)]
    check(newton, args, backend)
    if backend == "llvm":
        assert native_runs() == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loop_iterations_below_and_above_the_switch_to_native(backend, monkeypatch):
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 8)
    xs = [np.array([0.5, -0.25]), np.array([3.0, 1.0]), np.array([2.0 ** 8, 1.0]), np.array([2.0 ** 9, 7.0]),
          np.array([-1e30, 2.0]), np.asfortranarray(np.full((3, 2), 1e5))]
    check(halve_until_small, [(x,) for x in xs], backend)
    if backend == "llvm":
        assert native_runs() == 3                   # 9 or more iterations: 2 ** 9, 1e30, 1e5


@pytest.mark.parametrize("chunk", [2, 4])
def test_driver_runs_long_loops_in_chunks(chunk, monkeypatch):
    monkeypatch.setattr(loop_driver, "CHUNK", chunk)
    rng = np.random.default_rng(9)
    check(backwards_sum, [(rng.standard_normal((r, 3)),) for r in (2, 3, 4, 5, 9, 12)], "llvm")
    xs = [np.array([2.0 ** k, 1.0]) for k in (1, 2, 3, 4, 5, 6, 9)]
    check(halve_until_small, [(x,) for x in xs], "llvm")
    assert native_runs() >= 10


def test_short_for_loops_stay_on_the_wrapper_path(monkeypatch):
    monkeypatch.setattr(array_loops, "NATIVE_MIN_TRIPS", 8)
    x = np.arange(10.0)
    check(two_carried, [(x, n) for n in (0, 1, 2, 8, 9, 30)], "llvm")
    assert native_runs() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_newton_with_a_python_counter(backend):
    rng = np.random.default_rng(3)
    check(newton_counted, [(rng.random(n) + 0.5,) for n in (10, 100)], backend)
    if backend == "llvm":                       # `it += 1`, `it < 100`: the driver's int ops
        assert native_runs() == 2


def halve_counted(x, limit, start):
    it = start
    flag = False
    while np.abs(x).max() > 1.0 and it < limit:
        x = x * 0.5
        it = it + 1
        flag = it >= limit - 2
    return x, it, flag


def count_up(x, n, start):
    k = start
    for _ in range(n):
        x = x + k
        k = k + 3
    return x, k


@pytest.mark.parametrize("backend", BACKENDS)
def test_python_int_and_bool_counters(backend):
    x = np.array([2.0 ** 30, 3.0])
    args = [(x, 100, 0), (x, 12, 0), (x, 12, 5), (x, 10 ** 9, -7), (x, 3, 0), (x, 2 ** 63 + 5, 2 ** 63 - 3)]
    check(halve_counted, args, backend)
    check(count_up, [(np.arange(3.0), n, s) for n, s in ((20, 0), (9, -5), (30, 2 ** 40), (0, 4))], backend)
    if backend == "llvm":
        assert native_runs() >= 5


def test_python_ints_near_int64_limits_continue_in_python(monkeypatch):
    monkeypatch.setattr(array_loops, "INT_LIMIT", 50)
    monkeypatch.setattr(loop_driver, "CHUNK", 4)
    check(count_up, [(np.arange(3.0), 40, 0), (np.arange(3.0), 40, 60)], "llvm")
    check(halve_counted, [(np.array([2.0 ** 40]), 1000, 30)], "llvm")
    assert native_runs() == 2 and array_loops.runs["generic"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8", "complex128"])
def test_carried_arrays_of_each_dtype(backend, dtype):
    rng = np.random.default_rng(4)
    args = [((rng.random(m) * 10).astype(dtype), n) for m, n in ((7, 5), (1, 4), (0, 3), (33, 0), (12, 1))]
    check(two_carried, args, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_negative_step_and_index_dependent_reads(backend):
    rng = np.random.default_rng(5)
    args = [(rng.standard_normal((r, c)),) for r, c in ((5, 4), (1, 3), (2, 1), (40, 17))]
    check(backwards_sum, args, backend)
    if backend == "llvm":
        assert native_runs() == 3                               # one trip: the body's wrapper only


@pytest.mark.parametrize("backend", BACKENDS)
def test_fortran_and_strided_inputs_keep_numpy_layouts(backend):
    rng = np.random.default_rng(6)
    f = np.asfortranarray(rng.standard_normal((6, 5)))
    strided = rng.standard_normal((12, 10))[::2, ::-2]
    check(two_carried, [(f, 4), (strided, 3), (f, 0)], backend)
    if backend == "llvm":
        assert native_runs() == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_opaque_body_keeps_the_generic_path(backend):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((5, 5)) / 3
    check(matmul_power, [(w, rng.standard_normal(5), n) for n in (0, 1, 6)], backend)
    assert native_runs() == 0


def test_large_kernels_use_the_threaded_wrapper_path():
    x = np.random.default_rng(8).standard_normal(1 << 21)
    check(two_carried, [(x, 3)], "llvm")
    assert array_loops.runs["generic"] == 1 and native_runs() == 0


def test_fp_errors_of_a_later_iteration_are_reported_as_numpy_does():
    def grow(x, n):
        for _ in range(n):
            x = x * 1e200
        return x
    x = np.ones(4)
    compiled = ft.compile(grow, backend="llvm")
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError):
            grow(x, 3)
        with pytest.raises(FloatingPointError):
            compiled(x, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(compiled(x, 3), grow(x, 3))
    same(compiled(x, 1), grow(x, 1))


def test_kernels_on_an_opaque_result_keep_numpy_k_order():
    def padded(x):
        y = np.pad(x, 1)
        return y * 2 + 1
    def sorted_rows(x):
        return np.sort(x, axis=1) * 2 + 1
    x = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    for a in (x, np.ascontiguousarray(x), x.T, x[:, ::-1]):
        same(ft.compile(padded, backend="llvm")(a), padded(a))
        same(ft.compile(sorted_rows, backend="llvm")(a), sorted_rows(a))


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 9), cols=st.integers(1, 9), n=st.integers(0, 6),
       order=st.sampled_from("CF"), seed=st.integers(0, 2 ** 16))
def test_random_sizes_and_orders(rows, cols, n, order, seed):
    x = np.asarray(np.random.default_rng(seed).standard_normal((rows, cols)), order=order)
    check(two_carried, [(x, n)], "llvm")


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_into_captured_arrays_read_by_later_iterations(backend):
    rng = np.random.default_rng(10)
    check(rows_recurrence, [(rng.standard_normal((r, c)),) for r, c in ((6, 3), (1, 4), (20, 1), (9, 9))], backend)
    check(carried_view_of_a_written_array, [(rng.standard_normal((n, 4)), n) for n in (1, 2, 5, 12)], backend)
    check(shifted_update, [(rng.standard_normal(n), k) for n, k in ((10, 4), (3, 9), (1, 3), (50, 20))], backend)
    if backend == "llvm":       # slice writes in the body: native loop nests now (loop_arrays.py)
        assert native_runs() + loops.runs["native"] >= 8


def test_captured_arrays_sharing_memory_keep_the_generic_path():
    def mix(a, b, n):
        for _ in range(n):
            a[:] = b * 0.5 + 1
        return a
    compiled = ft.compile(mix, backend="llvm", dynamic=True)
    for n in (5, 20):
        b2, b3 = np.arange(12.0), np.arange(12.0)
        got, want = compiled(b2[:8], b2[2:10], n), mix(b3[:8], b3[2:10], n)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(b2, b3)
    assert native_runs() == 0 and array_loops.runs["generic"] == 2
    b2, b3 = np.arange(12.0), np.arange(12.0)
    same(compiled(b2[:6], b2[6:], 20), mix(b3[:6], b3[6:], 20))       # disjoint: native
    assert native_runs() == 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "int64", "float32"])
def test_carried_numpy_scalars_are_kernel_arguments(backend, dtype):
    rng = np.random.default_rng(11)
    args = [((rng.random(m) * 100).astype(dtype), n) for m, n in ((5, 6), (1, 3), (17, 2), (4, 0))]
    check(carried_scalar, args, backend)
    if backend == "llvm":                       # 8-byte scalars are loaded as they are; others convert
        assert (native_runs() >= 2) if dtype != "float32" else native_runs() == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_on_a_carried_numpy_scalar(backend):
    rng = np.random.default_rng(12)
    check(until_change_is_small, [(rng.standard_normal(n) * 10,) for n in (1, 7, 100)], backend)
    if backend == "llvm":
        assert native_runs() == 3


def test_a_python_counter_meeting_a_narrow_dtype_raises_as_numpy_does():
    def bump(x, n):
        it = 0
        for _ in range(n):
            x = x + it
            it = it + 20
        return x, it
    x = np.zeros(3, np.int8)
    compiled = ft.compile(bump, backend="llvm", dynamic=True)
    same(compiled(x, 5), bump(x, 5))
    with pytest.raises(OverflowError):
        bump(x, 12)
    with pytest.raises(OverflowError):
        compiled(x, 12)
    assert native_runs() == 0


def test_pointer_abi_when_the_array_object_layout_is_not_known(monkeypatch):
    from frametrace.backends.llvm import runtime
    monkeypatch.setattr(runtime, "ARRAY_LAYOUT_OK", False)     # kernels take data pointers + strides
    rng = np.random.default_rng(13)
    check(two_carried, [(np.asfortranarray(rng.standard_normal((5, 4))), 6), (rng.standard_normal(7), 3)], "llvm")
    check(viterbi_forward, [(np.log(rng.random((30, 5))), np.log(rng.random((5, 5))))], "llvm")
    check(jacobi, [(rng.standard_normal((9, 9)), 6)], "llvm")
    check(carried_scalar, [(rng.random(6), 5)], "llvm")
    assert native_runs() == 5
