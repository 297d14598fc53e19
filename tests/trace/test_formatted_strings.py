"""Strings formatted from values the graph computes (issue 23 part 5): an f-string, `%`, str()
or repr() of a NumPy or Python scalar no longer makes the whole frame run eagerly; the text is
made from the graph's outputs where it leaves the graph and equals the program's."""
import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import frametrace as ft
from helpers import BACKENDS


def run(fn, *args):
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, redirect_stdout(out):
        warnings.simplefilter("always")
        try:
            result = "ok", fn(*args)
        except Exception as e:                              # noqa: BLE001 - part of the outcome
            result = "raise", (type(e), str(e))
    return result, out.getvalue(), [str(w.message) for w in caught]


def same(fn, *args, backend="llvm", fullgraph=True):
    want = run(fn, *args)
    got = run(ft.compile(fn, backend=backend, fullgraph=fullgraph), *args)
    assert repr(got) == repr(want), (got, want)
    return got


class Logger:
    """A training loop's logger: keeps its lines, as users write them."""

    def __init__(self):
        self.lines = []

    def step(self, w, g, lr):
        w = w - lr * g
        loss = float((w ** 2).sum())
        norm = np.linalg.norm(g)
        self.lines.append(f"loss={loss:.6f} |g|={norm:.3e} lr={lr} w0={w[0]!r} {str(w[-1])}")
        self.lines.append("%.4f %5d %s" % (loss, len(w), max(norm, 0.5)))
        return w


@pytest.mark.parametrize("backend", BACKENDS)
def test_log_lines_in_one_graph(backend):
    eager, compiled = Logger(), Logger()
    f = ft.compile(compiled.step, backend=backend, fullgraph=True)
    w1 = w2 = np.linspace(-1, 1, 6)
    for lr in (0.1, 0.25):
        w1 = eager.step(w1, w1 * 2, lr)
        w2 = f(w2, w2 * 2, lr)
    assert eager.lines == compiled.lines
    assert ft.stats().graph_breaks == 0


def printing_step(x):
    y = np.sqrt(x) * 2
    print(f"step: mean={y.mean():.4f} first={y[0]} total={y.sum()!s:>12}")
    return y + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_print_breaks_at_the_call_not_the_frame(backend):
    """Before: the f-string made the whole frame eager (0 graphs); now the code before and after
    the print compiles."""
    e = ft.explain(printing_step, np.arange(4.0))
    assert e.graph_count == 2 and e.graph_break_count == 1
    assert "print" in str(e.break_reasons[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x in (np.arange(4.0), np.array([-1.0, 2.0]), np.array([np.inf, 0.0, -0.0])):
            ft.reset()
            same(printing_step, x, backend=backend, fullgraph=False)


def test_scalar_kinds_and_specs():
    def f(x, v, n):
        s = x.sum()
        return (f"{s}|{s:.2f}|{s!r}|{s:+.3e}|{np.float32(s)}|{x[0]:>8.2f}|{int(x[1])}|{v:g}|{n:04d}|{x.argmax()}",
                f"{bool(x[0] > 1)}|{x[0] > 1}|{max(s, 0.5)}|{len(x)}|{x.shape[0] * 2}|{round(float(s), 2)}",
                "%s %r %.1f %d" % (s, x[0], v, x.argmin()), str(s) + "/" + repr(x[2]), "=" + f"{s:.1f}" + "!")
    for x in (np.array([1.5, 2.25, -0.0]), np.array([np.nan, np.inf, 3.0]), np.arange(3, dtype=np.float32)):
        ft.reset()
        same(f, x, 2.5, 7, fullgraph=x.dtype == np.float64)   # max(float32, 0.5): a break


def test_arrays_and_other_uses_break_cleanly():
    def arr(x):
        return f"{x}"                                  # an array: formatted eagerly (it could change)
    e = ft.explain(arr, np.arange(3.0))
    assert e.graph_break_count == 1
    same(arr, np.arange(3.0), fullgraph=False)

    def upper(x):
        return f"{x.sum():.2f}".upper()
    e = ft.explain(upper, np.arange(3.0))
    assert e.graph_break_count == 1 and "formatted from values the graph computes" in str(e.break_reasons[0])
    assert "test_formatted_strings.py" in str(e.break_reasons[0])
    same(upper, np.arange(3.0), fullgraph=False)

    def in_if(x):
        s = f"{x.sum()}"
        return x + 1 if s else x
    same(in_if, np.arange(3.0), fullgraph=False)


def summary_line(x):
    stats = [x.min(), x.max(), x.mean()]
    line = ", ".join(f"{v:.3f}" for v in stats)
    return x * 2, line, " | ".join(["n", f"{len(x)}", str(x.sum())]), "-".join(["p", "q"]), "".join([])


@pytest.mark.parametrize("backend", BACKENDS)
def test_join(backend):
    for x in (np.linspace(-1, 2, 7), np.array([np.nan, 1.0])):
        ft.reset()
        same(summary_line, x, backend=backend)
    assert ft.stats().graph_breaks == 0
    same(lambda x: ", ".join([f"{x[0]}", 3]), np.ones(2), fullgraph=False)     # Python's TypeError


def many_specs(x, v):
    s, t = x[0] * 1.0, float(x[1])
    return (f"{s}|{s:.3g}|{s:e}|{s:>+12.4f}|{s!r}|{t}|{t:.2%}|{v:,.2f}|{np.float32(s)}|{x.argmax():03d}",
            "%g %.10f %r %s" % (s, t, s, np.float32(t)))


@settings(max_examples=40, deadline=None)
@given(a=st.floats(allow_nan=True, allow_infinity=True), b=st.floats(allow_nan=True, allow_infinity=True),
       v=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12))
def test_random_values_and_specs(a, b, v):
    with np.errstate(all="ignore"):
        same(many_specs, np.array([a, b]), v)
