"""Loop nodes keep Python's semantics where they used to differ (issue 22): the index after a
`break` on data, builtins on carried scalars, Python ints stored into narrow integer arrays,
float indices, ints that outgrow int64, a `break` in an inner loop (3.12+ bytecode). Each is
compared with plain Python on both backends, static and dynamic sizes, including the
exceptions and the state the caller sees."""
import copy

import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_identical


def outcome(fn, args):
    args = copy.deepcopy(args)
    try:
        return fn(*args), None, args
    except Exception as exc:            # noqa: BLE001 - the exception is the outcome
        return None, (type(exc), str(exc)), args


def compare(fn, calls, backend, dynamic):
    ft.reset()
    compiled = ft.compile(fn, backend=backend, dynamic=dynamic)
    for args in calls:
        want, want_exc, want_args = outcome(fn, args)
        got, got_exc, got_args = outcome(compiled, args)
        assert got_exc == want_exc
        if want_exc is None:
            assert_identical(got, want)
        for a, b in zip(got_args, want_args):
            if isinstance(a, np.ndarray):
                assert_identical(a, b)


MODES = [(b, d) for b in BACKENDS for d in (None, True)]


def index_at_break(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            break
    return i, x[i]


def nested_break(a):
    c = 0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] > 1.5:
                break
            c += 1
    return c, j


@pytest.mark.parametrize("backend,dynamic", MODES)
def test_the_index_after_a_break_is_the_one_that_broke(backend, dynamic):
    rng = np.random.default_rng(0)
    calls = [(rng.random(n) - 0.2,) for n in (3, 8, 40)] + [(np.ones(5),)]
    compare(index_at_break, calls, backend, dynamic)
    calls = [(rng.standard_normal(s) * 2,) for s in ((2, 3), (3, 3), (5, 4), (9, 2), (30, 40))]
    compare(nested_break, calls, backend, dynamic)


def running_min(x):
    lo = np.inf
    for i in range(x.shape[0]):
        lo = min(lo, x[i])               # float, then np.float64: a type that depends on the data
    return lo


def running_max_typed(x):
    hi = x[0]
    for i in range(x.shape[0]):
        hi = max(hi, x[i])
    return hi


@pytest.mark.parametrize("backend,dynamic", MODES)
def test_min_and_max_of_carried_scalars(backend, dynamic):
    calls = [(np.arange(3.0),), (np.arange(4.0) - 7,), (np.array([2.0, np.nan, 1.0]),), (np.arange(40.0),)]
    compare(running_min, calls, backend, dynamic)
    compare(running_max_typed, calls, backend, dynamic)


def store_ints(x, v):
    for i in range(x.shape[0]):
        x[i] = v + i
    return x


@pytest.mark.parametrize("backend,dynamic", MODES)
@pytest.mark.parametrize("dtype,start", [(np.int8, 120), (np.uint8, 250), (np.int16, 32700), (np.uint8, -3)])
def test_a_python_int_out_of_a_narrow_array_range_raises(backend, dynamic, dtype, start):
    calls = [(np.zeros(n, dtype=dtype), start) for n in (2, 3, 40)]
    compare(store_ints, calls, backend, dynamic)


def float_index(x):
    for i in range(x.shape[0]):
        x[i * 1.0] = 0
    return x


def float_index_read(x, k):
    return x[k * 0.5]


@pytest.mark.parametrize("backend,dynamic", MODES)
def test_a_float_index_raises_index_error(backend, dynamic):
    compare(float_index, [(np.ones(3),), (np.ones(40),)], backend, dynamic)
    compare(float_index_read, [(np.ones(5), 4), (np.ones(9), 6)], backend, dynamic)


def grows_past_int64(x):
    s = 2 ** 62
    for _ in range(x.shape[0]):
        s += 2 ** 61
    return x * 0 + s % 7, s


def hash_then_mod(x):
    h = 7
    for i in range(x.shape[0]):
        h = h * 31 + int(i)
    return x + h % 1000, h


@pytest.mark.parametrize("backend,dynamic", MODES)
def test_an_int_grown_past_int64_then_used_with_arrays(backend, dynamic):
    compare(grows_past_int64, [(np.zeros(n),) for n in (3, 10, 40)], backend, dynamic)
    compare(hash_then_mod, [(np.zeros(n),) for n in (3, 20, 70)], backend, dynamic)
