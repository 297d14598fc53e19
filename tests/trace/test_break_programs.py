"""Hypothesis-generated programs mixing array code with untraceable Python: compiled results,
printed output and side effects equal plain Python's."""
import contextlib
import io
import textwrap

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frametrace as ft
from helpers import assert_same

# sums are compared after rounding; `+ 0.0` because a reassociated (vectorised) sum of values
# that cancel may round to 0.0 where NumPy's pairwise sum rounds to -0.0 (documented tolerance)
STATEMENTS = [
    "x = x * {c}",
    "x = np.sin(x) + {c}",
    "print('sum', round(float(x.sum()), 6) + 0.0)",
    "log.append(round(float(x.max()), 6))",
    "if x.sum() > {c}:\n    x = x + 1\nelse:\n    x = x - 1",
    "x = noisy(x)",
    "m = x.mean().item()\nx = x - m",
    "x = x[::-1] * x.shape[0]",
    "if x.shape[0] > 3:\n    x = x[1:]",
]


def noisy(v):
    print("noisy", v.shape)
    return v * 0.5


def build(indices, consts):
    body = []
    for i, c in zip(indices, consts):
        body.append(STATEMENTS[i].format(c=c))
    src = "def prog(x, log):\n" + textwrap.indent("\n".join(body) + "\nreturn x", "    ")
    ns = {"np": np, "noisy": noisy}
    exec(compile(src, "<generated>", "exec"), ns)
    return ns["prog"], src


def run(fn, x):
    out, log = io.StringIO(), []
    with contextlib.redirect_stdout(out):
        result = fn(x.copy(), log)
    return result, out.getvalue(), log


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(indices=st.lists(st.integers(0, len(STATEMENTS) - 1), min_size=1, max_size=6),
       consts=st.lists(st.sampled_from([0.5, -1.0, 2.0, 3.0]), min_size=6, max_size=6),
       sizes=st.lists(st.integers(2, 9), min_size=2, max_size=3))
def test_generated_programs_match_python(indices, consts, sizes):
    ft.reset()
    prog, src = build(indices, consts)
    compiled = ft.compile(prog)
    rng = np.random.default_rng(len(src))
    for n in sizes:
        x = rng.standard_normal(n)
        got, got_out, got_log = run(compiled, x)
        want, want_out, want_log = run(prog, x)
        assert_same(got, want)
        assert got_out == want_out, src
        assert got_log == want_log, src
    assert ft.stats().frames_compiled >= 1 and ft.stats().eager_fallbacks == 0, src
