"""A graph break inside a loop (trace/graph_break.py, resume/region.py): the frame splits before the
outermost loop around it, the loop runs in Python with the functions it calls compiled as frames
of their own, and the code after it is compiled; what is compiled never grows with the trip
count (no resume function per iteration). Compared with plain Python, frames counted."""
import io
import contextlib
import random

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import global_hook
from helpers import assert_identical, assert_same

RNG = np.random.default_rng(7)


def step(x):
    return 0.5 * x + 1.0


def report(x):
    print("step", x.shape[0])


def noisy_while(x, tol):
    y = x * 2.0                                   # before the loop: compiled
    err = 1.0
    while err > tol:
        y = step(y)
        report(y)                                 # a graph break inside the loop
        err = np.abs(y - step(y)).max()
    return y * 3.0, err                           # after the loop: compiled


def noisy_for(x, n):
    y = x + 1.0
    for i in range(n):
        y = step(y)
        print("it", i)
    return y - 1.0


def unknown_call_in_while(x):
    k = 0
    while x.sum() > 1.0:
        x = x * random.uniform(0.5, 0.9)          # not traced (random state): a break
        k += 1
    return x, k


def nested_break(x, n, m):
    total = x * 0
    for _ in range(n):
        j = 0
        while j < m:
            total = total + step(x) * j
            print(end="")                          # breaks inside the inner loop: the outer one runs in Python
            j += 1
    return total


def returns_from_loop(x):
    for i in range(x.shape[0]):
        print(end="")
        if i == 3:
            return x[:i] * 2
    return x


class Model:
    """A loop over layers whose forward graph-breaks: each layer's call still compiles."""

    def __init__(self, ws):
        self.ws = ws

    def forward(self, x):
        for w in self.ws:
            x = layer(x, w)
            print(end="")
        return np.tanh(x)


def layer(x, w):
    return np.maximum(x @ w, 0.0)


def own_cache(fn):
    rec = global_hook._records.get(fn)
    return None if rec is None else rec.cache


def quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        result = fn(*args)
    return result, out.getvalue()


def test_break_inside_a_while_keeps_the_graph_before_and_after():
    f = ft.compile(noisy_while)
    frames = []
    for tol in (10.0, 1e-2, 1e-9, 1e-12):             # no iteration, a few, about 30, about 40
        x = RNG.random(4)
        got, out_c = quiet(f, x.copy(), tol)
        want, out_e = quiet(noisy_while, x.copy(), tol)
        assert_identical(got, want)
        assert out_c == out_e                         # every print ran once per iteration, in order
        frames.append(ft.stats().frames_compiled)
    s = ft.stats()
    assert s.eager_fallbacks == 0, s
    # the frame, the code after the loop, `step` and `report` (which breaks at its print) as frames
    # of their own, compiled once: the same frames whatever the number of iterations
    assert frames[1] == frames[-1] <= 6, (frames, s)
    assert own_cache(step) is not None and own_cache(step).entries


def test_break_inside_a_for_loop_over_many_iterations_is_bounded():
    f = ft.compile(noisy_for)
    for n in (3, 200, 1000):
        x = RNG.random(5)
        got, out_c = quiet(f, x.copy(), n)
        want, out_e = quiet(noisy_for, x.copy(), n)
        assert_identical(got, want)
        assert out_c == out_e
    s = ft.stats()
    assert s.graph_breaks <= 2 and s.frames_compiled <= 4, s      # n=3, then n dynamic: two compiles


def test_unknown_call_inside_a_while_runs_the_loop_in_python():
    f = ft.compile(unknown_call_in_while)
    for seed in (1, 2, 3):
        x = RNG.random(6) * 10
        random.seed(seed)
        want = unknown_call_in_while(x.copy())
        random.seed(seed)
        got = f(x.copy())
        assert_identical(got, want)
    s = ft.stats()
    assert s.graph_breaks <= 2 and s.frames_compiled <= 4, s


def test_break_in_an_inner_loop_runs_the_outer_loop_in_python():
    f = ft.compile(nested_break)
    for n, m in ((2, 3), (4, 5), (0, 2)):
        x = RNG.random(3)
        got, _ = quiet(f, x.copy(), n, m)
        assert_identical(got, nested_break(x.copy(), n, m))
    s = ft.stats()
    assert s.graph_breaks <= 2 and s.frames_compiled <= 6, s


def test_a_return_inside_a_loop_that_runs_in_python_returns():
    f = ft.compile(returns_from_loop)
    for n in (2, 6, 0):
        x = RNG.random(n)
        got, _ = quiet(f, x.copy())
        assert_identical(got, returns_from_loop(x.copy()))


def test_layers_called_from_a_loop_with_a_break_compile_as_frames():
    model = Model([RNG.standard_normal((6, 6)) * 0.3 for _ in range(4)])
    f = ft.compile(model.forward)
    for n in (5, 5, 9):
        x = RNG.standard_normal((n, 6))
        got, _ = quiet(f, x)
        assert_same(got, model.forward(x))                 # matmul: within its tolerance
    assert own_cache(layer) is not None and own_cache(layer).entries
    assert ft.stats().frames_compiled <= 5, ft.stats()


def test_fullgraph_still_refuses_a_break_inside_a_loop():
    f = ft.compile(noisy_for, fullgraph=True)
    with pytest.raises(ft.errors.GraphBreakError):
        quiet(f, np.ones(3), 2)
