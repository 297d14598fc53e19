"""locals()/vars()/dir() and sys._getframe() in compiled frames see the user's frame, never a
generated function's names."""
import sys

import numpy as np
import pytest

import frametrace as ft

BACKENDS = ["llvm", "numpy"]


def use_locals(x, k):
    y = x * k + 1
    d = locals()
    return d["y"] * 2 + d["x"], sorted(d)


def use_vars(x, k):
    z = np.cos(x)  # noqa: F841 - read through vars()
    return vars()["z"] - k, list(vars())


def locals_twice(x, k):
    d = locals()
    y = x + k
    e = locals()
    return d is e, sorted(d), sorted(e), y


def locals_refresh(x, k):
    d = locals()
    y = x + k
    e = locals()
    return sorted(d), sorted(e), e["y"] * 2     # 3.11/3.12: one dict, refreshed; 3.13: snapshots


def returns_locals(x, k):
    y = x - k
    return locals()


def locals_after_break(x, k):
    y = x * 2
    print(end="")                     # a graph break: the rest runs in a resume function
    w = y + k
    return sorted(locals()), w


def use_dir(x, k):
    y = x + k
    return y * 2, dir()


def use_getframe(x, k):
    y = x + k
    f = sys._getframe()
    return y * 2, sorted(f.f_locals), f.f_code.co_name


def peek_caller():
    return sorted(sys._getframe().f_locals)


def calls_getframe(x, k):
    y = x * k
    names = peek_caller()
    return y + 1, names


def inner_locals(a):
    b = a * 3
    return locals()


def calls_inner_locals(x, k):
    d = inner_locals(x + k)
    return d["b"] - d["a"], sorted(d)


PROGRAMS = [use_locals, use_vars, locals_twice, locals_refresh, returns_locals, locals_after_break, use_dir,
            use_getframe, calls_getframe, calls_inner_locals]


def same(a, b):
    if isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        assert a.dtype == b.dtype
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for p, q in zip(a, b):
            same(p, q)
    else:
        assert a == b


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_same_as_python(fn, backend):
    rng = np.random.default_rng(1)
    g = ft.compile(fn, backend=backend)
    for n in (4, 4, 6):
        x, k = rng.random(n), float(rng.integers(1, 5))
        same(g(x, k), fn(x, k))


@pytest.mark.parametrize("fn", [use_locals, use_vars, locals_refresh, returns_locals, calls_inner_locals],
                         ids=lambda f: f.__name__)
def test_locals_is_traced_without_break(fn):
    ft.reset()
    g = ft.compile(fn)
    g(np.ones(3), 2.0)
    g(np.ones(3), 2.0)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0 and s.unique_graphs == 1 and s.recompiles == 0


@pytest.mark.parametrize("fn", [use_dir, use_getframe], ids=lambda f: f.__name__)
def test_frame_builtins_keep_the_real_frame(fn):
    ft.reset()
    g = ft.compile(fn)
    g(np.ones(3), 2.0)
    s = ft.stats()
    assert s.eager_fallbacks == 1 and s.unique_graphs == 0


def test_callee_getframe_breaks_at_the_call():
    ft.reset()
    g = ft.compile(calls_getframe)
    same(g(np.ones(3), 2.0), calls_getframe(np.ones(3), 2.0))
    s = ft.stats()
    assert s.graph_breaks >= 1 and s.eager_fallbacks == 0 and s.unique_graphs >= 1


def test_no_generated_names_after_a_break():
    g = ft.compile(locals_after_break)
    names, _ = g(np.ones(3), 1.0)
    assert not [n for n in names if n.startswith("___")]
