"""Loop forms the tracer turns into loop nodes rather than unrolling (trace/loops.py,
trace/counted_while.py): `while i < n:` with an int counter, a data-dependent `break` in a `for`
over a symbolic range, nested loops whose carried value changes type once. Each is compared
with plain Python on random inputs (zero trips, NaN, negative steps) on both backends, with
compile counts and the `loops` log."""
import logging
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import assert_identical

BACKENDS = ["llvm", "numpy"]


@pytest.fixture(autouse=True)
def _clean():
    ft.reset()
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False):
        yield
    ft.reset()


same = assert_identical


def copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def loop_nodes(fn, *args):
    """The loop nodes of the graphs of fn (dynamic sizes)."""
    ft.reset()
    out = ft.explain(ft.compile(fn, dynamic=True), *args)
    return [n for g in out.graphs for n in g.nodes if n.op == "loop"]


def loops_log(caplog, fn, *args):
    ft.reset()
    with caplog.at_level(logging.INFO, logger="frametrace.loops"):
        ft.compile(fn, dynamic=True)(*args)
    return caplog.text


# ------------------------------------------------------------------------------ while i < n

def count_up(x, n):
    i = 0
    s = 0.0
    while i < n:
        s = s + x[i] * 0.5
        i += 1
    return s, i


def count_down(x, start):
    i = start
    total = 0
    while i >= 0:                                 # a negative step; `total` becomes a np.float64
        total = total * 0.5 + x[i]
        i -= 1
    return total, i


def by_three(x, lo):
    i = lo
    acc = x[0] * 0
    while i <= x.shape[0] - 1:                    # the bound is a size expression, the step 3
        acc += x[i]
        i = i + 3
    return acc, i


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,firsts", [(count_up, (37, 100, 0, 5, 64, 1)), (count_down, (37, 99, 5, 0, 64)),
                                       (by_three, (0, 7, 98, 99, 150, 2))])
def test_counted_while_matches_python(backend, fn, firsts):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100)
    x[17] = np.nan
    compiled = ft.compile(fn, backend=backend, dynamic=True, fullgraph=True)
    for k in firsts:
        same(compiled(x, k), fn(x, k))
    assert ft.stats().unique_graphs <= 3          # 0 and 1 are specialised (0/1 specialisation)


def test_counted_while_is_one_loop_node_and_says_so(caplog):
    x = np.arange(100.0)
    assert len(loop_nodes(count_up, x, 50)) == 1
    assert "counted while-loop node" in loops_log(caplog, count_up, x, 50)
    assert ft.stats().unique_graphs == 1


def test_counted_while_does_not_recompile_on_a_new_trip_count():
    x = np.random.default_rng(1).standard_normal(300)
    compiled = ft.compile(count_up, dynamic=True)
    for n in (40, 250, 77, 300):
        same(compiled(x, n), count_up(x, n))
    assert ft.stats().unique_graphs == 1


def test_counted_while_out_of_bounds_raises_index_error():
    x = np.arange(10.0)
    compiled = ft.compile(count_up, dynamic=True)
    same(compiled(x, 6), count_up(x, 6))
    with pytest.raises(IndexError):
        compiled(x, 12)


def bound_moves(x, n):
    i = 0
    s = 0.0
    while i < n:                                  # n shrinks: not `range(i, n)`
        s += x[i]
        i += 1
        n -= 1
    return s, i, n


def counter_twice(x, n):
    i = 0
    s = 0.0
    while i < n:                                  # two stores to the counter: not a counted loop
        s += x[i]
        i += 1
        i = i + 1
    return s, i


def counter_not_stepped(x, n):
    i = 0
    s = 0.0
    while i < n:
        s += x[i]
        i = i * 2 + 1                             # not a constant step
    return s, i


def counter_and_data(x, n):
    i = 0
    s = 0.0
    while i < n and s < 3.0:                      # a second part of the test: not a counted loop
        s += x[i]
        i += 1
    return s, i


def data_and_counter(x, n):
    i = 0
    s = x[0] * 0
    while s < 3.0 and i < n:                      # a while on data; the counter is carried
        s += x[i]
        i += 1
    return s, i


@pytest.mark.parametrize("fn", [bound_moves, counter_twice, counter_not_stepped, counter_and_data,
                                data_and_counter])
def test_while_loops_that_are_not_counted_stay_correct(fn):
    x = np.random.default_rng(2).standard_normal(80)
    compiled = ft.compile(fn, dynamic=True)
    for n in (40, 33, 70):
        same(compiled(x, n), fn(x, n))
    assert all(n.attr("body").kind == "while" for n in loop_nodes(fn, x, 40))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 60), start=st.integers(-3, 20), seed=st.integers(0, 5))
def test_counted_while_hypothesis(n, start, seed):
    x = np.random.default_rng(seed).standard_normal(64)
    def fn(x, start, n):
        i = start
        acc = x[0] * 0
        while i < n:
            acc = acc * 0.9 + x[i]
            i += 1
        return acc, i
    compiled = ft.compile(fn, dynamic=True)
    same(compiled(x, start, n), fn(x, start, n))


# ------------------------------------------------------------------------------ nested loops, a type change

def nested_int_sum(a):
    s = 0                                         # a Python int; np.float64 after the first inner step
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j]
    return s


def nested_backwards(a, n, m):
    s = 0
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -2):
            s = s * 0.5 + a[i, j]
    return s


def _has_nested_loop(nodes):
    return any(n.op == "loop" for node in nodes for n in node.attr("body").graph.nodes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_loops_with_a_type_change_peel_not_unroll(backend):
    rng = np.random.default_rng(4)
    compiled = ft.compile(nested_int_sum, backend=backend, dynamic=True, fullgraph=True)
    for shape in ((40, 10), (33, 17), (50, 41)):
        a = rng.standard_normal(shape)
        a[shape[0] // 2, 3] = np.nan if shape[0] == 33 else a[shape[0] // 2, 3]
        same(compiled(a), nested_int_sum(a))
    assert ft.stats().unique_graphs == 1
    nodes = loop_nodes(nested_int_sum, rng.standard_normal((40, 36)))
    assert _has_nested_loop(nodes)                # the outer loop is a loop node holding the inner one
    assert sum(len(n.attr("body").graph.nodes) for n in nodes) < 20


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_loops_with_a_type_change_and_zero_trips(backend):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((50, 80))
    compiled = ft.compile(nested_backwards, backend=backend, dynamic=True, fullgraph=True)
    for n, m in ((40, 30), (0, 5), (7, 0), (45, 73), (1, 1), (50, 80)):
        same(compiled(a, n, m), nested_backwards(a, n, m))
    assert ft.stats().unique_graphs <= 4          # 0 and 1 specialised; 40/30, 45/73, 50/80 share one
    assert _has_nested_loop(loop_nodes(nested_backwards, a, 40, 80))


def test_the_loops_log_says_the_outer_loop_is_peeled(caplog):
    text = loops_log(caplog, nested_int_sum, np.ones((40, 36)))
    assert "peel" in text and "unrolled" not in text


# ------------------------------------------------------------------------------ break on data

def sum_until(x, lo, t):
    total = x[0] * 0
    for i in range(lo, x.shape[0]):
        if x[i] > t:                              # the breaking side falls through
            break
        total += x[i]
    return total


def first_above(x, t):
    idx = -1
    for i in range(x.shape[0]):
        if x[i] > t:
            idx = i                               # the loop index kept as a Python int
            break
    return idx


def tail_until(x, t):
    total = x[0] * 0
    out = np.zeros_like(x)
    for i in range(x.shape[0] - 1, -1, -1):       # a negative step; the jump-taken side breaks
        if x[i] < t:
            total += x[i]
            out[i] = total
        else:
            break
    return total, out


def rows_until(a, t):
    out = np.zeros(a.shape[0])
    for i in range(a.shape[0]):
        acc = a[i, 0] * 0
        for j in range(a.shape[1]):               # the inner loop breaks, the outer one does not
            if a[i, j] > t:
                break
            acc += a[i, j]
        out[i] = acc
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_on_data_in_a_for_is_one_loop_node(backend):
    rng = np.random.default_rng(6)
    cases = [(sum_until, lambda x: (x, 3, 0.9)), (first_above, lambda x: (x, 0.95)), (first_above, lambda x: (x, 2.0)),
             (tail_until, lambda x: (x, 0.93))]
    for fn, make in cases:
        ft.reset()
        compiled = ft.compile(fn, backend=backend, dynamic=True, fullgraph=True)
        for n in (40, 100, 64, 7):
            x = rng.random(n)
            x[n // 3] = np.nan                    # NaN compares False: no break there
            args = make(x)
            same(compiled(*copied(args)), fn(*copied(args)))
        assert ft.stats().unique_graphs == 1, fn.__name__


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_loops_with_zero_trips(backend):
    x = np.random.default_rng(10).random(50)
    compiled = ft.compile(sum_until, backend=backend, dynamic=True, fullgraph=True)
    for lo in (500, 50, 49, 3):
        same(compiled(x, lo, 0.9), sum_until(x, lo, 0.9))


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_in_an_inner_loop(backend):
    rng = np.random.default_rng(7)
    compiled = ft.compile(rows_until, backend=backend, dynamic=True, fullgraph=True)
    for shape in ((40, 50), (33, 70), (64, 40)):
        a = rng.random(shape)
        same(compiled(a, 0.97), rows_until(a, 0.97))
    assert ft.stats().unique_graphs == 1


def test_break_loop_node_kind_and_log(caplog):
    x = np.random.default_rng(8).random(100)
    (node,) = loop_nodes(first_above, x, 0.9)
    assert node.attr("body").kind == "for_break"
    assert "for_break-loop node" in loops_log(caplog, first_above, x, 0.9)


def nested_break(x, t):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            if x[i] > t:                          # a break under two data-dependent `if`s: unrolled
                break
        total += x[i]
    return total


def returns_inside(x, t):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] > t:
            return total * 2                      # not a `break`: what follows differs
        total += x[i]
    return total


@pytest.mark.parametrize("fn", [nested_break, returns_inside])
def test_other_exits_on_data_stay_correct(fn):
    rng = np.random.default_rng(9)
    compiled = ft.compile(fn, dynamic=True)
    for n in (40, 50, 64):
        x = rng.standard_normal(n)
        same(compiled(x, 1.5), fn(x, 1.5))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 60), t=st.floats(-1, 1), lo=st.integers(0, 70), seed=st.integers(0, 5))
def test_break_hypothesis(n, t, lo, seed):
    x = np.random.default_rng(seed).standard_normal(n)
    compiled = ft.compile(sum_until, dynamic=True)
    same(compiled(x, lo, t), sum_until(x, lo, t))


# ------------------------------------------------------------------------------ memory the loop shares

def shift_into(dst, src):
    for i in range(1, src.shape[0]):
        dst[i] = src[i - 1] * 0.5 + dst[i - 1]     # dst and src may be one array
    return dst


def into_fresh(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * 0.5 + x[i]           # out is new: never checked against x
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_that_share_memory_give_pythons_answer(backend):
    rng = np.random.default_rng(11)
    compiled = ft.compile(shift_into, backend=backend, dynamic=True, fullgraph=True)
    for n in (40, 64, 50):
        base = rng.standard_normal(n + 3)
        a, b = base.copy(), base.copy()
        same(compiled(a, a), shift_into(b, b))                       # the same array twice
        a, b = base.copy(), base.copy()
        same(compiled(a[1:n + 1], a[:n]), shift_into(b[1:n + 1], b[:n]))   # overlapping views
        np.testing.assert_array_equal(a, b)
        src = rng.standard_normal(n)
        same(compiled(np.zeros(n), src), shift_into(np.zeros(n), src))   # apart
    ft.reset()
    fresh = ft.compile(into_fresh, backend=backend, dynamic=True, fullgraph=True)
    for n in (40, 64):
        x = rng.standard_normal(n)
        same(fresh(x), into_fresh(x))


def squares_until_huge(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] > 1e100:
            break
        total += x[i] * x[i]                      # would overflow after the break
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_break_stops_the_loop_there(backend):
    """Iterations after the break are not run: their squares would overflow (under
    errstate(over="raise") Python raises nothing)."""
    compiled = ft.compile(squares_until_huge, backend=backend, dynamic=True, fullgraph=True)
    for n in (40, 64):
        x = np.random.default_rng(n).random(n)
        x[n // 2] = 1e120
        x[n // 2 + 1:] = 1e300
        with np.errstate(over="raise"):
            same(compiled(x), squares_until_huge(x))


def strided_steps(x, k):
    out = np.zeros_like(x)
    acc = x[0] * 0
    for i in range(k - 1, -1, -3):                # a step of -3 from an int argument
        acc = acc * 0.5 + x[i]
        out[i] = acc
    for j in range(1, x.shape[0], 2):             # and +2 over a size
        out[j] += 1.0
    return out, acc


@pytest.mark.parametrize("backend", BACKENDS)
def test_steps_other_than_one(backend):
    rng = np.random.default_rng(12)
    compiled = ft.compile(strided_steps, backend=backend, dynamic=True, fullgraph=True)
    x = rng.standard_normal(90)
    for k in (90, 64, 41, 0, 2):
        same(compiled(x, k), strided_steps(x, k))


def nested_whiles(a, n):
    total = a[0, 0] * 0
    i = 0
    while i < n:
        j = a.shape[1] - 1
        while j >= i:                             # the inner bound is the outer counter
            total = total + a[i, j] * (j - i + 1)
            j -= 1
        i += 1
    return total, i


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_counted_whiles(backend):
    rng = np.random.default_rng(13)
    compiled = ft.compile(nested_whiles, backend=backend, dynamic=True, fullgraph=True)
    a = rng.standard_normal((50, 60))
    for n in (40, 50, 33, 0):
        same(compiled(a, n), nested_whiles(a, n))
    assert ft.stats().unique_graphs <= 2


# ------------------------------------------------------------------------------ FP errors on the side not taken

def inverse_sum(x):
    s = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] != 0:
            s += 1 / x[i]                         # 1 / 0 is computed only where Python computes it
    return s


def squares_until_overflow(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] > 1e100:
            break
        total += x[i] * x[i]                      # the breaking iteration does not square 1e300
    return total


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [inverse_sum, squares_until_overflow])
def test_the_side_python_does_not_take_reports_no_fp_error(backend, fn):
    compiled = ft.compile(fn, backend=backend, dynamic=True, fullgraph=True)
    for n in (40, 64):
        x = np.random.default_rng(n).random(n)
        x[n // 3] = 0.0
        x[n // 2:] = 1e300
        with np.errstate(all="raise"):
            same(compiled(x), fn(x))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            same(compiled(x), fn(x))
    x = np.zeros(40)                              # and where Python does divide by zero, it reports
    x[5] = -0.0
    def divides(x):
        s = x[0] * 0
        for i in range(x.shape[0]):
            if x[i] == 0:
                s += 1 / x[i]
        return s
    ft.reset()
    compiled = ft.compile(divides, backend=backend, dynamic=True, fullgraph=True)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        compiled(x)


def break_with_else(x, t):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] > t:
            break
        total += x[i]
    else:
        total = total * -1.0                      # only when the loop did not break
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_for_else_with_a_break_stays_correct(backend):
    rng = np.random.default_rng(14)
    compiled = ft.compile(break_with_else, backend=backend, dynamic=True)
    for n, t in ((40, 0.9), (50, 2.0), (64, 0.5)):
        x = rng.random(n)
        same(compiled(x, t), break_with_else(x, t))
