"""try/with blocks in a compiled frame: the code before and after the block compiles, the block
(with its handlers) runs in Python through a region function (resume/region.py)."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frametrace as ft

BACKENDS = ["llvm", "numpy"]
log = []


class Recorder:
    """A user context manager with side effects; `swallow` suppresses exceptions of that type."""

    def __init__(self, tag, swallow=None):
        self.tag, self.swallow = tag, swallow

    def __enter__(self):
        log.append(("enter", self.tag))
        return 2.0

    def __exit__(self, kind, value, tb):
        log.append(("exit", self.tag, kind.__name__ if kind else None))
        return kind is not None and self.swallow is not None and issubclass(kind, self.swallow)


def with_side_effects(x, y):
    a = x * 2 + 1
    with Recorder("w") as c:
        a = a * c
        log.append(round(float(a.sum()), 6))
    return np.sin(a) + y


def with_swallowed(x, y):
    a = x + y
    with Recorder("s", swallow=ZeroDivisionError):
        a = a * 3
        if a.shape[0] > 2:
            a = a / 0.0 if False else a + 1 // 0
        a = a - 100
    return a * 2


def try_except(x, y):
    b = np.cos(x) + y
    try:
        d = b * 3
        d = d + int("nope" if d.shape[0] > 1 else "1")
    except ValueError as e:
        log.append(type(e).__name__)
        d = b - 1
    return d * d + 2


def try_finally(x, y):
    b = x - y
    try:
        b = b * 2
        log.append("body")
    finally:
        log.append("finally")
    c = b.sum()
    return b / (c + 10.0)


def try_else(x, y):
    b = x * y
    try:
        k = int(b.shape[0])
    except TypeError:
        k = 0
    else:
        k = k + 1
    return b * k + 1


def uncaught(x, y):
    b = x + 1
    try:
        b = b * undefined_name        # noqa: F821
    except ValueError:
        b = b * 0
    return b


def return_inside(x, y):
    a = x * 2
    with Recorder("r"):
        return a + y


def loop_with_continue(x, y):
    out = x * 0
    for i in range(3):
        out = out + i
        try:
            if i == 1:
                raise KeyError(i)
            out = out * 2
        except KeyError:
            log.append("skip")
            continue
        out = out + y
    return out


def errstate(x, y):
    a = x - x.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(a * 0.0) + a / (a * 0)
    return np.nan_to_num(r, neginf=-7.0, posinf=7.0, nan=3.0) + y


def nested(x, y):
    a = x + y
    with Recorder("outer"):
        try:
            with Recorder("inner", swallow=KeyError):
                a = a * 2
                {}["k"]
            a = a + 1
        except KeyError:
            a = a - 1000
    return a * a


PROGRAMS = [with_side_effects, with_swallowed, try_except, try_finally, try_else, return_inside,
            loop_with_continue, errstate, nested]


def run_plain(fn, x, y):
    log.clear()
    out = fn(x, y)
    return out, list(log)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_same_as_python(fn, backend):
    ft.reset()
    rng = np.random.default_rng(0)
    g = ft.compile(fn, backend=backend)
    for n in (5, 5, 7):
        x, y = rng.random(n), rng.random(n)
        want, want_log = run_plain(fn, x, y)
        got, got_log = run_plain(g, x, y)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert got.dtype == want.dtype
        assert got_log == want_log


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_compiles_before_and_after(backend):
    ft.reset()
    g = ft.compile(try_except, backend=backend)
    x, y = np.random.rand(4), np.random.rand(4)
    g(x, y)
    first = ft.stats()
    assert first.graph_breaks == 1             # one break: before the try block
    assert first.unique_graphs == 2            # the code before it, the code after it
    g(x, y)
    again = ft.stats()
    assert again.frames_compiled == first.frames_compiled and again.recompiles == 0
    assert again.cache_hits > first.cache_hits


def test_two_blocks_three_graphs():
    ft.reset()
    g = ft.compile(with_side_effects)
    x, y = np.random.rand(6), np.random.rand(6)
    want, want_log = run_plain(with_side_effects, x, y)
    got, got_log = run_plain(g, x, y)
    np.testing.assert_allclose(got, want)
    assert got_log == want_log
    s = ft.stats()
    assert s.graph_breaks >= 1 and s.unique_graphs >= 2 and s.eager_fallbacks == 0


def test_uncaught_exception_propagates():
    g = ft.compile(uncaught)
    with pytest.raises(NameError):
        uncaught(np.ones(3), np.ones(3))
    with pytest.raises(NameError):
        g(np.ones(3), np.ones(3))


def test_errstate_is_restored_and_warnings_match():
    g = ft.compile(errstate)
    x, y = np.random.rand(5), np.random.rand(5)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(g(x, y), errstate(x, y))
    assert np.geterr() == before


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 9), st.sampled_from(PROGRAMS), st.sampled_from(BACKENDS))
def test_random_inputs(n, fn, backend):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    g = ft.compile(fn, backend=backend)
    want, want_log = run_plain(fn, x, y)
    got, got_log = run_plain(g, x, y)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got_log == want_log


def locals_in_block(x, y):
    a = x + y
    with Recorder("l"):
        names = sorted(locals())
    b = a * 2
    print(end="")                     # a graph break: the rest runs in a resume function
    return b, names, sorted(locals())


def test_no_generated_names_in_locals():
    g = ft.compile(locals_in_block)
    x, y = np.random.rand(3), np.random.rand(3)
    want, got = locals_in_block(x, y), g(x, y)
    np.testing.assert_allclose(got[0], want[0])
    assert got[1:] == want[1:]


def helper_with_block(a):
    b = a * 2
    with Recorder("h"):
        b = b + 1
    return b - 3


def calls_helper(x, y):
    z = x + y
    w = helper_with_block(z)
    return w * z


@pytest.mark.parametrize("backend", BACKENDS)
def test_callee_with_block_compiles_as_its_own_frame(backend):
    ft.reset()
    g = ft.compile(calls_helper, backend=backend)
    x, y = np.random.rand(5), np.random.rand(5)
    want, want_log = run_plain(calls_helper, x, y)
    got, got_log = run_plain(g, x, y)
    np.testing.assert_allclose(got, want)
    assert got_log == want_log
    s = ft.stats()
    # the caller splits at the call; the callee compiles its code before and after its block
    assert s.eager_fallbacks == 0 and s.unique_graphs >= 3
    run_plain(g, x, y)
    assert ft.stats().frames_compiled == s.frames_compiled and ft.stats().recompiles == 0


BLOCK_STATEMENTS = [
    "x = x * {c}",
    "x = np.sin(x) + {c}",
    "with Recorder({c}) as r:\n    x = x * r",
    "with Recorder({c}, swallow=KeyError):\n    x = x + 1\n    if x.shape[0] > 2:\n        {{}}['k']\n    x = x - 1",
    "try:\n    x = x / {c}\n    int('q' if x.shape[0] > 3 else '1')\n"
    "except ValueError:\n    log.append({c})\n    x = x + 2",
    "try:\n    x = x - {c}\nfinally:\n    log.append('f')",
    "if x.sum() > {c}:\n    x = x + 1",
]


def build_program(indices, consts):
    import textwrap
    body = "\n".join(BLOCK_STATEMENTS[i].format(c=c) for i, c in zip(indices, consts))
    src = "def prog(x):\n" + textwrap.indent(body + "\nreturn x * 2", "    ")
    ns = {"np": np, "Recorder": Recorder, "log": log}
    exec(compile(src, f"<blocks {indices}>", "exec"), ns)
    return ns["prog"]


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(0, len(BLOCK_STATEMENTS) - 1), min_size=1, max_size=5),
       st.integers(1, 6), st.sampled_from(BACKENDS), st.data())
def test_generated_programs(indices, n, backend, data):
    consts = data.draw(st.lists(st.integers(1, 4), min_size=len(indices), max_size=len(indices)))
    prog = build_program(indices, consts)
    x = np.random.default_rng(n).standard_normal(n)
    g = ft.compile(prog, backend=backend)
    for _ in range(2):
        log.clear()
        want = prog(x.copy())
        want_log = list(log)
        log.clear()
        got = g(x.copy())
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert got.dtype == want.dtype and list(log) == want_log
