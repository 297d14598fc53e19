"""Random `while` bodies against plain Python (trace/paths.py): nested `if`/`else` on data,
`break` and `continue` under them, a helper that returns from inside its branches. Every
program is one loop node; the merges of paths must give exactly Python's values."""
import random
import textwrap

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_identical

CONDS = ["x[k % n] > 0", "a > b", "b < 0.3", "x[(k + 1) % n] < a", "c > 3"]
UPDATES = ["a = a + x[k % n]", "b = b * 0.5 + a", "c += 1", "a = b - a", "b = clamp(a + b, 2.0)",
           "a = a * 0.9", "c = c + 2"]

HELPER = '''
def clamp(v, cap):
    if v > cap:
        return v - cap
    if v < -cap:
        return -cap + v * 0
    return v
'''


def body(rng, depth, exits):
    """Random statements (indented by the caller): updates, `if` on data, break/continue."""
    lines = []
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.45 or depth >= 2:
            lines.append(rng.choice(UPDATES))
        elif roll < 0.65 and exits:
            lines.append(f"if {rng.choice(CONDS)}:")
            lines.append("    " + rng.choice(["break", "continue"]))
        else:
            lines.append(f"if {rng.choice(CONDS)}:")
            lines += ["    " + s for s in body(rng, depth + 1, exits)]
            if rng.random() < 0.5:
                lines.append("else:")
                lines += ["    " + s for s in body(rng, depth + 1, exits)]
    return lines


# the loop's test: on data before the loop (a node from the test), or one the trace decides
# (`r = 1.0`, `k < steps` with a constant `steps`: the loop runs at least once): the node starts
# at its header where the values keep their types (`r` is only read by the test), after a
# peeled first iteration where one becomes a np.float64 (`t`, carried)
TESTS = {"data": ("", "k < steps and a < 1e6", "k += 1"),
         "decided": ("    r = 1.0\n", "r > 1e-12 and k < steps", "k += 1\nr = b * b + 1e-3"),
         "peeled": ("    t = 0.0\n", "t < 1e6 and k < steps", "k += 1\nt = t + b * 0 + 0.5")}


def make_program(seed, test="data"):
    rng = random.Random(seed)
    before, cond, first = TESTS[test]
    stmts = first.split("\n") + body(rng, 0, exits=True)
    src = (HELPER + "\ndef prog(x, steps):\n    n = x.shape[0]\n    a = x[0] * 0\n    b = x[1] * 0 + 1.0\n"
           f"    c = 0\n    k = 0\n{before}    while {cond}:\n"
           + textwrap.indent("\n".join(stmts), " " * 8) + "\n    return a, b, c, k\n")
    ns = {"np": np}
    exec(compile(src, f"<while program {seed}>", "exec"), ns)
    return ns["prog"], src


@pytest.mark.parametrize("test", sorted(TESTS))
@pytest.mark.parametrize("seed", range(16))
def test_random_while_body_matches_python(seed, test):
    prog, src = make_program(seed, test)
    f = ft.compile(prog)
    rng = np.random.default_rng(seed)
    for n, steps in ((5, 12), (5, 0), (3, 30)):
        x = rng.standard_normal(n)
        try:
            assert_identical(f(x, steps), prog(x, steps))
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{src}") from None
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0, (s, src)
