"""Graph breaks at calls with *args/**kwargs, inside inlined callees, in frames with free
variables, and in frames whose locals are not identifiers (pytest's `@py_assert1`)."""
import types

import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same

rng = np.random.default_rng(9)


def star_break(x, parts, opts):
    y = x * 2.0
    print(*parts, **opts)                  # CALL_FUNCTION_EX to a function that is not traced
    return y + 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_break_at_a_call_with_star_args(capsys, backend):
    x = rng.standard_normal(3)
    got = ft.compile(star_break, backend=backend)(x, ("a", 1), {"sep": "-"})
    assert_same(got, star_break(x, ("a", 1), {"sep": "-"}))
    assert capsys.readouterr().out == "a-1\na-1\n"
    s = ft.stats()
    assert s.graph_breaks == 1 and s.unique_graphs == 2, s


def noisy(x):
    x = np.tanh(x)
    print("inside", x.shape)
    return x * 3.0


def make_caller():
    helper = noisy

    def caller(x):                        # a free variable: the frame can still be split
        y = helper(x + 1.0)
        return y.sum(0)
    return caller


def test_a_break_inside_an_inlined_callee_breaks_at_the_call(capsys):
    caller = make_caller()
    x = rng.standard_normal((4, 2))
    assert_same(ft.compile(caller)(x), caller(x))
    assert capsys.readouterr().out.count("inside (4, 2)") == 2
    s = ft.stats()
    assert s.graph_breaks >= 1 and s.unique_graphs >= 2 and s.eager_fallbacks == 0, s


def odd_locals(x):
    tmp = x * 2.0
    print("break")
    return tmp + x


def test_resume_functions_take_locals_that_are_not_identifiers(capsys):
    code = odd_locals.__code__
    names = tuple("@py_tmp" if n == "tmp" else n for n in code.co_varnames)
    fn = types.FunctionType(code.replace(co_varnames=names), odd_locals.__globals__, "odd_locals")
    x = rng.standard_normal(5)
    assert_same(ft.compile(fn)(x), odd_locals(x))
    assert ft.stats().graph_breaks == 1


def loop_with_a_break(x, ws):
    x = x * 2.0
    for w in ws:
        x = np.tanh(x @ w)
        print("layer", x.shape)
    return x.sum(0)


def test_a_break_inside_a_loop_keeps_the_graph_before_the_loop(capsys):
    ws = [rng.standard_normal((3, 3)) for _ in range(3)]
    x = rng.standard_normal((2, 3))
    assert_same(ft.compile(loop_with_a_break)(x, ws), loop_with_a_break(x, ws))
    assert capsys.readouterr().out.count("layer (2, 3)") == 6
    assert ft.stats().unique_graphs >= 1


def make_counter():
    count = 0

    def step(x):
        nonlocal count
        y = x * 2.0
        count = count + x.shape[0]          # a write to the enclosing function's variable: a split
        return y + count
    return step, lambda: count


def test_nonlocal_writes_in_the_compiled_frame_land_in_the_cell():
    step, read = make_counter()
    eager_step, eager_read = make_counter()
    f = ft.compile(step)
    for n in (3, 3, 5):
        x = rng.standard_normal(n)
        assert_same(f(x), eager_step(x))
        assert read() == eager_read()
    assert ft.stats().unique_graphs >= 1


@ft.compile
def compiled_helper(x):
    return np.tanh(x) * 2.0


def calls_a_compiled_function(x):
    return compiled_helper(x + 1.0).sum()


def test_a_compiled_function_called_from_a_compiled_function_is_inlined():
    x = rng.standard_normal(4)
    got = ft.compile(calls_a_compiled_function)(x)
    assert_same(got, (np.tanh(x + 1.0) * 2.0).sum())
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0 and s.unique_graphs == 1, s


def test_functions_under_the_global_hook_are_inlined_from_their_original_code():
    def act(x):
        return x / (1.0 + np.exp(-x))

    def layer(x, w):
        return act(x @ w)

    def net(x, ws):
        for w in ws:
            x = layer(x, w)
        return x

    ws = [rng.standard_normal((4, 4)) for _ in range(2)]
    x = rng.standard_normal((3, 4))
    want = net(x, ws)
    with ft.enabled():
        net(x, ws)
        got = net(x, ws)
    assert_same(got, want)
    assert ft.stats().graph_breaks == 0
