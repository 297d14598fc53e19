"""A loop's iterator live across a graph break (`for i, (x, w) in enumerate(zip(xs, ws))` with a
break in the body) reaches the resume function as a list iterator: its items are read where
the trace takes them and the iterator is advanced by the entry, so the resume function
compiles instead of running eagerly. A break inside a resume function continues in the resume
function of the same place in the user's code, so a loop that breaks in every iteration
compiles a bounded number of frames whatever its trip count."""
import io

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same


class Recorder:
    """What a training script logs to: a C method call (a graph break) per step."""

    def __init__(self):
        self.out = io.StringIO()

    def step(self, k):
        print("step", k, file=self.out)


def weighted_sum(xs, ws, rec):
    acc = np.zeros(3)
    for i, (x, w) in enumerate(zip(xs, ws)):
        acc = acc + x * w
        rec.step(i)
    return acc


def running_mean(xs, rec):
    total = np.zeros(xs[0].shape)
    for x in xs:
        total = total + x
        rec.out.write("+")
    return total / len(xs)


@pytest.mark.parametrize("n", [1, 4, 23])
def test_zip_enumerate_iterator_across_a_break_compiles_a_bounded_number_of_frames(n):
    rng = np.random.default_rng(n)
    xs = [rng.standard_normal(3) for _ in range(n)]
    ws = [float(w) for w in rng.standard_normal(n)]
    f = ft.compile(weighted_sum)
    want_rec, got_rec = Recorder(), Recorder()
    for _ in range(3):
        assert_same(f(xs, ws, got_rec), weighted_sum(xs, ws, want_rec))
    assert got_rec.out.getvalue() == want_rec.out.getvalue()
    s = ft.stats()
    assert s.graph_breaks >= 1 and s.eager_fallbacks == 0, s
    # the frame, the resume function of the loop body (index static, then dynamic), its end,
    # and the break at formatting a dynamic index: not one resume function per iteration
    assert s.frames_compiled <= 7, s


def test_list_iterator_across_a_break_is_one_resume_function():
    xs = [np.full(4, float(k)) for k in range(30)]
    f = ft.compile(running_mean)
    want_rec, got_rec = Recorder(), Recorder()
    for _ in range(2):
        assert_same(f(xs, got_rec), running_mean(xs, want_rec))
    assert got_rec.out.getvalue() == want_rec.out.getvalue()
    s = ft.stats()
    assert s.eager_fallbacks == 0 and s.frames_compiled <= 4, s


def take_two(it, scale):
    a = next(it)
    b = next(it, None)
    return a * scale + (0.0 if b is None else b), it


def take_rest(it):
    return sum(it)


def zip_some(it, ws):
    return [a * w for a, w in zip(it, ws)]


def test_a_list_iterator_argument_is_advanced_as_python_does():
    f = ft.compile(take_two)
    for items in ([1.0, 2.0, 3.0], [4.0, 5.0], [6.0]):
        want_it, got_it = iter(items), iter(items)
        want = take_two(want_it, np.float64(2.0))
        got = f(got_it, np.float64(2.0))
        assert_same(got[0], want[0])
        assert got[1] is got_it                   # the caller's own iterator, advanced
        assert list(got_it) == list(want_it)
    s = ft.stats()
    assert s.eager_fallbacks == 0 and s.graph_breaks == 0 and s.frames_compiled <= 3, s
    with pytest.raises(StopIteration):            # next() of an empty iterator: Python raises it
        f(iter([]), np.float64(2.0))
    # taken whole (sum, zip, any, ...): Python takes items one by one and zip stops early, so these
    # run in Python and the caller's iterator is left exactly where Python leaves it
    g = ft.compile(take_rest)
    it = iter([1, 2, 3])
    next(it)
    assert g(it) == 5 and list(it) == []
    h = ft.compile(zip_some)
    got_it, want_it = iter(range(6)), iter(range(6))
    assert h(got_it, [1.0, 2.0]) == zip_some(want_it, [1.0, 2.0])
    assert list(got_it) == list(want_it) == [3, 4, 5]


def simulate(x, steps, log):
    k = 0
    while k < steps:
        x = 0.5 * x + 1.0
        log.write("*")                            # a C method: a graph break in every iteration
        k += 1
    return x, k


def test_a_while_loop_that_breaks_in_every_iteration_reuses_its_resume_function():
    f = ft.compile(simulate)
    x = np.linspace(0.0, 1.0, 5)
    compiled = []
    for steps in (3, 40, 0, 90):
        want_log, got_log = io.StringIO(), io.StringIO()
        got, want = f(x, steps, got_log), simulate(x, steps, want_log)
        assert_same(got[0], want[0])
        assert got[1] == want[1] and got_log.getvalue() == want_log.getvalue()
        compiled.append(ft.stats().frames_compiled)
    s = ft.stats()
    assert s.eager_fallbacks == 0, s
    # the frame and one resume function (static, then dynamic k and steps, each outcome of the
    # loop test an entry), not one resume function per iteration; 90 iterations compile nothing new
    assert s.frames_compiled <= 8 and compiled[-1] == compiled[-2], (s, compiled)


def test_a_loop_of_many_iterations_that_break_stays_within_the_recursion_limit():
    # each iteration returns through a break function into the resume function: past a bounded
    # nesting, the rest of the loop runs in the resume function's own frame in Python
    f = ft.compile(simulate)
    x = np.linspace(0.0, 1.0, 5)
    want_log, got_log = io.StringIO(), io.StringIO()
    got, want = f(x, 1500, got_log), simulate(x, 1500, want_log)
    assert_same(got[0], want[0])
    assert got[1] == want[1] == 1500 and got_log.getvalue() == want_log.getvalue()
    xs = [np.full(2, float(k)) for k in range(1200)]
    g = ft.compile(running_mean)
    want_rec, got_rec = Recorder(), Recorder()
    assert_same(g(xs, got_rec), running_mean(xs, want_rec))
    assert got_rec.out.getvalue() == want_rec.out.getvalue()
