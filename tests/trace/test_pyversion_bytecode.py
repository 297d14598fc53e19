"""Bytecode shapes that differ between CPython 3.11, 3.12 and 3.13, traced and compared with eager.

3.12 inlines comprehensions (LOAD_FAST_AND_CLEAR/SWAP and an exception-table entry that only
restores the shadowed name), splits slices into BINARY_SLICE/STORE_SLICE and returns constants
with RETURN_CONST; 3.13 adds TO_BOOL before conditional jumps (which then test `is True`), CALL_KW,
closures loaded with LOAD_FAST and SET_FUNCTION_ATTRIBUTE. Each program runs on every version.
"""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same, check

RNG = np.random.default_rng(13)


def shadowing_comprehension(x, v):
    v = v * 2                                        # a bound name the comprehension shadows and restores
    parts = [x[i] * v for i in range(x.shape[0] // 2)]
    total = [v for v in (1, 2, 3)]                   # the comprehension's own `v`
    return sum(parts) + v + len(total)


def comprehension_over_unbound_name(x):
    rows = [x * k for k in range(3)]
    return rows[0] + rows[-1]                        # `k` stays unbound after the comprehension


def slices_and_constants(x, n):
    y = x[1:n] * 2.0
    z = x.copy()
    z[: n - 1] = y
    if n > 100:
        return None                                  # RETURN_CONST, not taken
    return z[1:] + z[:-1]


def truth_and_not(x):
    n = x.shape[0]
    flag = not n                                     # TO_BOOL + UNARY_NOT on 3.13
    if n and x.ndim == 1:                            # TO_BOOL before each jump
        return x + flag
    return x


def defaults_closures_and_keywords(x, scale=2.0):
    offset = x.shape[0]

    def inner(y, *, k=3, s=scale):                   # SET_FUNCTION_ATTRIBUTE (defaults, kwdefaults, closure)
        return y * s + k + offset
    return inner(x, k=4) + inner(x)                  # CALL_KW on 3.13


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", [
    (shadowing_comprehension, (RNG.standard_normal(6), 1.5)),
    (comprehension_over_unbound_name, (RNG.standard_normal(5),)),
    (slices_and_constants, (RNG.standard_normal(7), 4)),
    (truth_and_not, (RNG.standard_normal(4),)),
    (defaults_closures_and_keywords, (RNG.standard_normal(5),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_traced_in_one_graph(fn, args, backend):
    check(fn, *args, graphs=1, backend=backend)


def break_inside_comprehension(x):
    ys = [np.sin(x) * k for k in range(2)]
    out = [print("k", k) or y.sum() for k, y in enumerate(ys)]     # print: a graph break in the comprehension
    return out[0] + out[1] + x


def branch_on_array_data(x):
    if x.sum() > 0:                                   # 3.13: COMPARE_OP bool(>), then the jump tests `is True`
        return x * 2
    if not (x < 0).all():                             # TO_BOOL, UNARY_NOT on data
        return x - 1
    return -x


@pytest.mark.parametrize("backend", BACKENDS)
def test_graph_break_inside_an_inlined_comprehension(backend, capsys):
    f = ft.compile(break_inside_comprehension, backend=backend)
    for n in (4, 6):
        x = RNG.standard_normal(n)
        want = break_inside_comprehension(x)
        got = f(x)
        assert_same(got, want)
    assert capsys.readouterr().out.count("k ") == 8            # each print ran once per call, eager and compiled
    # a break inside a loop (the iterator is on the stack) runs the frame eagerly, on every version
    assert ft.stats().graph_breaks >= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_data_dependent_branches_take_the_same_side_as_python(backend):
    f = ft.compile(branch_on_array_data, backend=backend)
    for x in (np.arange(1.0, 5.0), -np.arange(1.0, 5.0), np.array([-3.0, 1.0, 1.0]), -np.ones(3)):
        assert_same(f(x), branch_on_array_data(x))
    assert ft.stats().graph_breaks >= 1


def with_try(x):
    try:
        return x + 1
    except ValueError:
        return x


def test_try_blocks_still_run_eagerly_and_say_so():
    f = ft.compile(with_try)
    x = np.ones(3)
    assert_same(f(x), with_try(x))
    assert ft.stats().eager_fallbacks == 1 and ft.stats().unique_graphs == 0
