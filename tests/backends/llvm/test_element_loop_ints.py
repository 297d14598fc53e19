"""Native element loops (backends/llvm/loops.py) with Python int arithmetic (checked int64 ops:
codegen/llvm_kernels/checked.py) and element reads / writes at data-dependent indices, against
the plain Python loop on random inputs: values, types, exceptions and the writes done before
them. On int64 overflow, a zero divisor or an index out of bounds the kernel stops before that
iteration's effects and the generic path runs the rest (loops.runs["resumed"])."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
import frametrace.backends.llvm as llvm_backend
from frametrace.backends.llvm import loops

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    ft.reset()
    loops.runs.clear()
    natives.clear()
    real = llvm_backend.native_loop

    def spy(node, name, object_abi):
        nl = real(node, name, object_abi)
        natives.append(node.attr("body").location)
        return nl
    monkeypatch.setattr(llvm_backend, "native_loop", spy)
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


natives: list = []          # locations of the loops that got a native kernel


def fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def same(got, want):
    if not isinstance(want, tuple):
        got, want = (got,), (want,)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is type(w), (type(g), type(w))
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)
        else:
            assert g == w, (g, w)


def outcome(fn, args):
    """(result or None, exception type and message or None, the arguments after the call)."""
    args = fresh(args)
    try:
        return fn(*args), None, args
    except Exception as exc:            # noqa: BLE001 - compared with the compiled run's
        return None, (type(exc), str(exc)), args


def check(fn, args_list, backend, native=True, compiles=1):
    compiled = ft.compile(fn, backend=backend, dynamic=True)
    for args in args_list:
        want, want_exc, want_args = outcome(fn, args)
        got, got_exc, got_args = outcome(compiled, args)
        assert got_exc == want_exc
        if want_exc is None:
            same(got, want)
        for g, w in zip(got_args, want_args):
            if isinstance(w, np.ndarray):
                np.testing.assert_array_equal(g, w)         # the writes done (before an error)
    assert ft.stats().frames_compiled == compiles      # new dtypes, ints past int64: a recompile
    if backend == "llvm":
        assert bool(natives) == native, natives
    return compiled


# ------------------------------------------------------------------------------ programs

def lcg(pos, seed):
    s = seed
    for i in range(1, pos.shape[0]):
        s = (s * 1103515245 + 12345) % 2147483648
        pos[i] = pos[i - 1] + (1.0 if s % 2 == 0 else -1.0)
    return pos, s


def grow(x, s):
    """s leaves int64 after ~40 iterations: the rest runs with Python's big ints."""
    for i in range(x.shape[0]):
        s = s * 3 + i
        x[i] = s % 7
    return x, s


def floor_ops(x, s, a, d, m):
    for i in range(x.shape[0]):
        s = (s * a - i) // d
        x[i] = s % m - (-s) // m
    return x, s


def countdown(x, d):
    """100 // d for d = d0, d0 - 1, ...: ZeroDivisionError once d reaches 0."""
    for i in range(x.shape[0]):
        x[i] = 100 // d + 100 % d
        d = d - 1
    return x, d


def backtrack(back, path):
    for t in range(back.shape[0] - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def scatter(x, idx, v):
    for i in range(idx.shape[0]):
        x[idx[i]] = v[i]
    return x


def gather2(x, a, b, out):
    for i in range(1, out.shape[0]):
        out[i] = x[a[i], b[i]] * 2.0 + out[i - 1]
    return out


def backtrack_carried(back, path, j):
    """The state index carried as a NumPy int: j = back[t, j]."""
    for t in range(back.shape[0] - 1, 0, -1):
        j = back[t, j]
        path[t - 1] = j
    return path, j


def first_big(x, s, limit):
    """A `break` after checked arithmetic."""
    k = -1
    for i in range(x.shape[0]):
        s = s * 3 + 1
        x[i] = s % 10
        if s > limit:
            k = i
            break
    return x, s, k


def narrow_store(x, y, s, m):
    for i in range(x.shape[0]):
        y[i] = i
        s = s * 7 + 1
        x[i] = s % m - 100
    return x, y, s


def nested_hash(x, idx, s):
    """Checked ops in an inner loop of a loop that writes nothing: leaving redoes the row."""
    for i in range(x.shape[0]):
        for j in range(idx.shape[0]):
            s = (s * 31 + (1 if x[i, idx[j]] > 0 else 2)) // 3
    return s


def nested_write(x, out, s):
    for i in range(x.shape[0]):
        for _j in range(x.shape[1]):
            s = s * 3 + 1
            out[i] = s % 5
    return out, s


def bump_then_gather(x, y, idx):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0
        y[i] = x[idx[i]]
    return x, y


def bump_then_scatter(x, y, idx):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0
        y[idx[i]] = x[i]
    return x, y


def checked_after_write(x, s):
    for i in range(x.shape[0]):
        x[i] = s % 1000
        s = s * 5
    return x, s


def index_after_write(x, idx, out):
    for i in range(out.shape[0]):
        idx[i] = idx[i] + 1
        out[i] = x[idx[i]]
    return out, idx


# ------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("backend", BACKENDS)
def test_lcg_is_an_element_loop(backend):
    rng = np.random.default_rng(0)
    check(lcg, [(np.zeros(n), int(rng.integers(0, 2 ** 31))) for n in (50, 2000, 7)], backend)
    assert loops.runs["resumed"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_overflow_hands_the_rest_to_python_ints(backend):
    # one graph: a dynamic int argument takes any int64 value (no [2, inf] range, no 0/1 specialisation)
    check(grow, [(np.zeros(100), 5), (np.zeros(30), -7), (np.zeros(200), 2 ** 62)], backend)
    if backend == "llvm":
        assert loops.runs["resumed"] == 2          # the 30-iteration loop stays in int64


def test_initial_value_beyond_int64_runs_generic():
    check(grow, [(np.zeros(20), 1), (np.zeros(20), 2 ** 70), (np.zeros(20), -2 ** 64)], "llvm", compiles=3)


@settings(max_examples=40, deadline=None)
@given(s=st.integers(-2 ** 40, 2 ** 40), a=st.integers(-1000, 1000), d=st.integers(-50, 50).filter(bool),
       m=st.integers(-9, 9).filter(bool), n=st.integers(2, 60))
def test_floor_division_and_remainder_as_python(s, a, d, m, n):
    ft.reset()
    natives.clear()
    check(floor_ops, [(np.zeros(n, np.int64), s, a, d, m)], "llvm")


@pytest.mark.parametrize("backend", BACKENDS)
def test_floor_ops_with_zero_divisor(backend):
    check(floor_ops, [(np.zeros(10, np.int64), 5, 3, 2, 4), (np.zeros(10, np.int64), 5, 3, 0, 4),
                      (np.zeros(10, np.int64), 5, 3, 2, 0)], backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_divisor_raises_after_the_earlier_writes(backend):
    check(countdown, [(np.zeros(10, np.int64), 20), (np.zeros(10, np.int64), 4), (np.zeros(10, np.int64), -3)],
          backend)
    if backend == "llvm":
        assert loops.runs["resumed"] == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_backtracking_gather(backend):
    rng = np.random.default_rng(1)
    cases = []
    for steps, states in ((50, 16), (300, 5), (9, 3)):
        back = rng.integers(-states, states, (steps, states))     # negative indices wrap once
        path = np.zeros(steps, np.int64)
        path[-1] = rng.integers(0, states)
        cases.append((back, path))
    check(backtrack, cases, backend)
    assert loops.runs["resumed"] == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bad", [5, 7, -6, -100])
def test_out_of_bounds_data_index_raises_numpys_error(backend, bad):
    rng = np.random.default_rng(2)
    back = rng.integers(0, 5, (40, 5))
    back[17, :] = bad
    path = np.zeros(40, np.int64)
    check(backtrack, [(back, path), (rng.integers(0, 5, (30, 5)), np.zeros(30, np.int64))], backend)
    if backend == "llvm":
        assert loops.runs["resumed"] == 1


@settings(max_examples=30, deadline=None)
@given(steps=st.integers(2, 40), states=st.integers(1, 6), seed=st.integers(0, 2 ** 32 - 1),
       spread=st.integers(0, 3))
def test_backtracking_on_random_indices(steps, states, seed, spread):
    """Indices drawn from [-states - spread, states + spread): in bounds, wrapped, or an
    IndexError at some step, with the same message and the same writes before it."""
    ft.reset()
    natives.clear()
    rng = np.random.default_rng(seed)
    back = rng.integers(-states - spread, states + spread, (steps, states))
    path = np.zeros(steps, np.int64)
    path[-1] = rng.integers(0, states)
    check(backtrack, [(back, path)], "llvm")


@pytest.mark.parametrize("backend", BACKENDS)
def test_scatter_at_data_indices(backend):
    rng = np.random.default_rng(3)
    cases = [(np.zeros(20), rng.integers(-20, 20, 50), rng.standard_normal(50)),     # repeats: last wins
             (np.zeros(20, np.int32), rng.integers(0, 20, 9), rng.standard_normal(9) * 100),
             (np.zeros(20), np.array([3, 4, 20, 5]), np.arange(4.0))]                 # IndexError at 2
    check(scatter, cases, backend, compiles=2)        # the int32 destination


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_data_indices(backend):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 9))
    cases = [(x, rng.integers(-6, 6, 40), rng.integers(-9, 9, 40), np.zeros(40)),
             (x, rng.integers(0, 6, 40), np.full(40, 9), np.zeros(40))]
    check(gather2, cases, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_carried_numpy_int_as_data_index(backend):
    rng = np.random.default_rng(7)
    cases = [(rng.integers(-4, 4, (60, 4)), np.zeros(60, np.int64), np.int64(2)),
             (rng.integers(-4, 5, (60, 4)), np.zeros(60, np.int64), np.int64(1))]    # 4: IndexError at some t
    check(backtrack_carried, cases, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strided_and_reversed_arrays_at_data_indices(backend):
    rng = np.random.default_rng(8)
    base = np.zeros(60)
    cases = [(base[::-3], rng.integers(-20, 20, 30), rng.standard_normal(30)),
             (base[5:45:2], rng.integers(-20, 20, 25), rng.standard_normal(25))]
    check(scatter, cases, backend)
    cases = [(rng.integers(0, 4, (8, 40)).T, np.zeros(40, np.int64)[::-1])]       # F-order back, reversed path
    ft.reset()
    natives.clear()
    check(backtrack, cases, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_after_checked_arithmetic(backend):
    check(first_big, [(np.zeros(50, np.int64), 1, 10 ** 6), (np.zeros(50, np.int64), 1, 10 ** 18),
                      (np.zeros(50, np.int64), 1, 2 ** 63 - 1)], backend)     # overflows before it breaks
    if backend == "llvm":
        assert loops.runs["resumed"] == 1 and loops.runs["native"] == 3


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint64", "float32", "bool"])
def test_python_int_into_a_narrow_array(backend, dtype):
    """NumPy raises OverflowError for a Python int out of the destination's range (int64 would
    wrap): the range check runs before the iteration's first write (y[i] = i)."""
    cases = [(np.zeros(20, dtype), np.zeros(20, np.int64), 3, m) for m in (200, 1000)]
    check(narrow_store, cases, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_checked_ops_in_an_inner_loop(backend):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((7, 5))
    check(nested_hash, [(x, rng.integers(-5, 5, 6), 3), (x, rng.integers(-5, 5, 6), 2 ** 62),
                        (x, np.array([0, 1, 5, 2]), 7)], backend)                # IndexError in row 0
    if backend == "llvm":
        assert loops.runs["resumed"] >= 1


def test_checked_op_in_an_inner_loop_that_writes_is_no_nest():
    """The outer loop writes: it runs its body's graph per iteration, whose inner loop is an
    element loop of its own (a checked op there leaves before that inner iteration's write)."""
    check(nested_write, [(np.zeros((4, 5)), np.zeros(4, np.int64), 2), (np.zeros((9, 12)), np.zeros(9, np.int64), 2)],
          "llvm")
    assert len(set(natives)) == 1 and loops.runs["resumed"] >= 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [bump_then_gather, bump_then_scatter])
def test_bounds_check_after_a_write_moves_before_it(backend, fn):
    """x[i] += 1 is not idempotent: the IndexError must leave iteration i's increment undone,
    as Python does (the check runs before the iteration's first write)."""
    rng = np.random.default_rng(10)
    idx = rng.integers(-12, 12, 12)
    bad = idx.copy()
    bad[7] = 12
    check(fn, [(np.zeros(12), np.zeros(12), idx), (np.zeros(12), np.zeros(12), bad)], backend)
    if backend == "llvm":
        assert loops.runs["resumed"] == 1


def test_data_index_dtypes():
    rng = np.random.default_rng(5)
    for dt in ("int8", "int32", "uint16", "uint32"):
        ft.reset()
        natives.clear()
        check(scatter, [(np.zeros(30), rng.integers(0, 30, 40).astype(dt), rng.standard_normal(40))], "llvm")


@pytest.mark.parametrize("backend", BACKENDS)
def test_checked_op_after_a_write_moves_before_it(backend):
    check(checked_after_write, [(np.zeros(10), 3), (np.zeros(50), 3)], backend)     # overflow at ~25
    if backend == "llvm":
        assert loops.runs["resumed"] == 1


def test_data_index_read_after_its_write_keeps_the_generic_path():
    rng = np.random.default_rng(6)
    check(index_after_write, [(rng.standard_normal(10), rng.integers(-5, 8, 12), np.zeros(12))], "llvm",
          native=False)


def test_loop_ir_shows_checked_ops_and_data_positions():
    from frametrace.backends.llvm import compile_graph
    seen = []
    real = compile_graph

    def spy(graph):
        run = real(graph)
        seen.append(run.loop_ir)
        return run
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(llvm_backend, "compile_graph", spy)
        ft.compile(lcg, dynamic=True)(np.zeros(10), 3)
        ft.compile(backtrack, dynamic=True)(np.zeros((10, 3), np.int64), np.zeros(10, np.int64))
    text = "\n".join(seen)
    assert "checked_multiply(" in text and "checked_remainder(" in text
    assert "checked_index(" in text
