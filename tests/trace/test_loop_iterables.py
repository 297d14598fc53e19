"""Loops over arrays, enumerate, zip and reversed of arrays and ranges are loop nodes
(trace/loop_iter.py, variables/indexed.py), with Python's target after the loop.

Each program is compared with plain Python/NumPy on random inputs: sizes 0 and 1, views that
are strided, reversed or Fortran-ordered, several dtypes, breaks on data; compile counts are
asserted (one dynamic graph over sizes)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import BACKENDS, assert_identical, assert_same


def loop_count(fn, *args):
    """(graph breaks, top-level loop nodes) of compiling fn on args (their sizes static)."""
    ft.reset()
    out = ft.explain(fn, *args)
    return out.graph_break_count, sum(1 for g in out.graphs for n in g.nodes if n.op == "loop")


def copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def check_sizes(fn, make, sizes, backend, exact=True):
    """fn compiled (dynamic) against fn eager over `sizes`; one graph for all of them."""
    ft.reset()
    f = ft.compile(fn, backend=backend, dynamic=True)
    for n in sizes:
        args = make(n)
        want = fn(*copied(args))
        got = f(*args)
        (assert_identical if exact else assert_same)(got, want)
    st = ft.stats()
    assert st.graph_breaks == 0 and st.eager_fallbacks == 0, st
    return st


# ---------------------------------------------------------------- elements and rows

def crc16(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:
        cur = b
        for _ in range(8):
            if (crc & 0x0001) ^ (cur & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur >>= 1
    crc = ~crc & 0xFFFF
    return (crc << 8) | ((crc >> 8) & 0xFF)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_over_the_bytes_of_an_array(backend):
    rng = np.random.default_rng(0)
    assert loop_count(crc16, rng.integers(0, 256, 40, dtype=np.uint8)) == (0, 1)
    st = check_sizes(crc16, lambda n: (rng.integers(0, 256, n, dtype=np.uint8),), (0, 1, 7, 300), backend)
    assert st.unique_graphs <= 3, st                      # sizes 0 and 1 are specialised


def running_norms(A):
    total = np.zeros(A.shape[1])
    best = np.float64(0.0)
    for row in A:
        total += row                              # updated in place: captured, not carried
        best = max(best, np.sqrt(row @ row))
    return total, best, row


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", ["C", "F", "reversed", "strided"])
def test_a_loop_over_the_rows_of_a_matrix(backend, layout):
    rng = np.random.default_rng(1)

    def make(n):
        A = rng.standard_normal((2 * n + 1, 5))
        return ({"C": A[:n].copy(), "F": np.asfortranarray(A[:n]), "reversed": A[:n][::-1],
                 "strided": A[: 2 * n: 2]}[layout],)
    check_sizes(running_norms, make, (1, 2, 9, 40), backend, exact=False)


# ---------------------------------------------------------------- enumerate, zip, reversed

def weighted(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y), start=3):
        s = s + i * a * b
    return s, i, a, b


def zipped_with_range(x):
    acc = np.zeros(())
    for k, v in zip(range(10, 1000, 3), x):
        acc = acc + k * v
    return acc, k, v


def backwards(x):
    out = np.empty_like(x)
    for k, v in enumerate(reversed(x)):
        out[k] = v * 2
    s = 0
    for j in reversed(range(x.shape[0])):
        s = s * 3 + j
    return out, s


@pytest.mark.parametrize("backend", BACKENDS)
def test_enumerate_zip_and_reversed_are_loop_nodes(backend):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(40)
    assert loop_count(weighted, x, x[::-1]) == (0, 1)
    assert loop_count(zipped_with_range, x) == (0, 1)
    assert loop_count(backwards, x) == (0, 2)
    check_sizes(weighted, lambda n: (rng.standard_normal(n), rng.standard_normal(n + 3)), (2, 7, 50), backend)
    check_sizes(zipped_with_range, lambda n: (rng.standard_normal(n),), (2, 9, 80), backend)
    check_sizes(backwards, lambda n: (rng.standard_normal(n),), (1, 2, 9, 80), backend)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float64, np.bool_])
def test_loop_over_elements_of_every_dtype(dtype):
    rng = np.random.default_rng(3)

    def count_and_last(x):
        n = 0
        for v in x:  # noqa: B007 - read after the loop
            if v:
                n += 1
        return n, v

    check_sizes(count_and_last, lambda k: ((rng.standard_normal(k) * 3).astype(dtype),), (2, 5, 40), "llvm")


# ---------------------------------------------------------------- the target after the loop

def first_negative(x):
    for k, v in enumerate(x):  # noqa: B007 - read after the loop
        if v < 0:
            break
    return k, v


def last_row_used(A):
    i = -1
    for i in range(A.shape[0]):
        if A[i].sum() > 2.0:
            break
    return i, A[i] if i >= 0 else None


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_target_after_a_break_is_the_item_it_broke_at(backend):
    rng = np.random.default_rng(4)
    assert loop_count(first_negative, np.ones(20))[1] == 1
    check_sizes(first_negative, lambda n: (rng.random(n) - 0.1,), (2, 9, 40), backend)
    check_sizes(first_negative, lambda n: (np.ones(n),), (3, 12), backend)   # never breaks: the last item


def test_an_empty_loop_leaves_the_target_as_it_was():
    def f(x):
        v = -1.0
        for v in x:  # noqa: B007 - read after the loop
            pass
        return v
    ft.reset()
    g = ft.compile(f, dynamic=True)
    for n in (0, 3, 9):
        x = np.arange(float(n))
        assert_identical(g(x), f(x))


def test_a_target_the_body_rebinds_keeps_the_body_value():
    def f(x):
        i = 0
        for i in range(x.shape[0]):
            i = i * 2
        return i, x.sum()
    ft.reset()
    g = ft.compile(f, dynamic=True)
    for n in (2, 5, 40):
        assert_identical(g(np.ones(n)), f(np.ones(n)))


# ---------------------------------------------------------------- other consumers

def test_enumerate_and_zip_of_arrays_used_as_sequences():
    def f(x, y):
        pairs = list(zip(x, y))
        d = dict(enumerate(x))
        return pairs[-1][0] + pairs[0][1] + d[1], len(pairs)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal(4), rng.standard_normal(6)
    ft.reset()
    assert_identical(ft.compile(f)(x, y), f(x, y))


def test_the_index_after_a_loop_with_a_symbolic_step():
    def f(x, k):
        i = -1
        s = 0.0
        for i in range(1, x.shape[0], k):
            s = s + x[i]
        return s, i
    ft.reset()
    g = ft.compile(f, dynamic=True)
    for n, k in ((10, 3), (20, 4), (5, 7), (9, 2)):
        x = np.arange(float(n))
        assert_identical(g(x, k), f(x, k))


def scan_pairs(x, y, t, start):
    best, at = x[0] * 0, -1
    k, a, b = -1, 0.0, 0.0
    for k, (a, b) in enumerate(zip(x, reversed(y)), start):
        if a * b > t:
            break
        best = best + a * b
        at = k
    return best, at, k, a, b


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 40), t=st.floats(-1, 3), start=st.integers(-5, 5),
       seed=st.integers(0, 5), dtype=st.sampled_from([np.float64, np.float32, np.int32]))
def test_enumerate_zip_reversed_with_a_break_hypothesis(n, m, t, start, seed, dtype):
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal(n) * 2).astype(dtype), (rng.standard_normal(m) * 2).astype(dtype)
    ft.reset()
    compiled = ft.compile(scan_pairs, dynamic=True)
    assert_identical(compiled(x, y, t, start), scan_pairs(x, y, t, start))
    st_ = ft.stats()
    assert st_.graph_breaks == 0 and st_.eager_fallbacks == 0, st_
