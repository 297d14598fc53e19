"""Under ft.enable(), a function is compiled when it does array work, whatever its arguments: a
`main()` without arguments that makes arrays and loops, a callback that updates module-level
arrays. Functions without NumPy get their code back at their first call, and so does one whose
graph turns out to hold only scalar arithmetic."""
import importlib
import sys
import textwrap

import numpy as np
import pytest

import frametrace as ft
from frametrace.candidates import code_uses_numpy, has_arrays
from helpers import assert_same

GRID = np.zeros((6, 5))
STEPS = [0]


def update(frame):
    GRID[:, frame % 5] += 1.0                 # module-level array, written in place
    STEPS[0] += 1
    return GRID.sum()


def main():
    n, steps = 12, 40
    u = np.linspace(0.0, 1.0, n)
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return float(u.sum())


def scaled(x):
    return x * np.pi + 1.0


def plain(a, b):
    return a * b + 1


def test_a_main_without_arguments_is_compiled():
    want = main()
    with ft.enabled():
        got = main()
        again = main()
    assert got == pytest.approx(want, rel=1e-12) and again == got
    s = ft.stats()
    assert s.frames_compiled == 1 and s.unique_graphs == 1 and s.cache_hits == 1, s


def test_a_callback_on_module_level_arrays_is_compiled():
    want_grid = GRID.copy()
    wants = []
    for frame in range(7):
        want_grid[:, frame % 5] += 1.0
        wants.append(want_grid.sum())
    with ft.enabled():
        gots = [update(frame) for frame in range(7)]
    assert_same(GRID, want_grid)
    assert STEPS[0] == 7
    for g, w in zip(gots, wants):
        assert_same(g, w)
    s = ft.stats()
    assert s.frames_compiled >= 1 and s.cache_hits >= 4, s


def test_scalar_arithmetic_with_numpy_constants_gets_its_code_back():
    original = scaled.__code__
    with ft.enabled():
        for x in (1.0, 2.5, -3.0):
            assert scaled(x) == x * np.pi + 1.0
        assert scaled.__code__ is original        # compiled once, found not worth it
    assert ft.stats().frames_compiled == 1


def test_functions_without_numpy_are_left_alone():
    original = plain.__code__
    with ft.enabled():
        for i in range(3):
            assert plain(i, 2) == 2 * i + 1
        assert plain.__code__ is original
    assert ft.stats().frames_compiled == 0


def test_what_counts_as_using_numpy():
    weights = {"w": np.ones(3)}

    def reads_closure():
        return weights["w"].sum()

    def no_numpy(a):
        return [a, a]

    assert code_uses_numpy(main) and code_uses_numpy(update) and code_uses_numpy(reads_closure)
    assert not code_uses_numpy(no_numpy) and not code_uses_numpy(plain)
    assert has_arrays(([1, 2, (np.ones(1),)],)) and not has_arrays(([1.0] * 10_000,))


SIM_STATE = """
import numpy as np
FIELD = np.zeros(16)
HISTORY = []
"""

SIM_PHYSICS = """
import numpy as np
from sim import state

def diffuse(u, k):
    out = u.copy()
    out[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
    return out

def record(t):
    state.HISTORY.append(float(state.FIELD.sum()) + t)
"""

SIM_MAIN = """
import numpy as np
from sim import physics, state

def main():
    state.FIELD[:] = 0.0
    state.FIELD[8] = 1.0
    t = 0
    for step in range(12):
        state.FIELD[:] = physics.diffuse(state.FIELD, 0.2)
        t = t + 0.5
        physics.record(t)
    return state.FIELD.copy()
"""


def test_a_program_over_several_modules(tmp_path, monkeypatch):
    pkg = tmp_path / "sim"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in (("state", SIM_STATE), ("physics", SIM_PHYSICS), ("run", SIM_MAIN)):
        (pkg / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "sim" or m.startswith("sim.")]:
        monkeypatch.delitem(sys.modules, name)
    run = importlib.import_module("sim.run")
    state = importlib.import_module("sim.state")
    want = run.main()
    want_history = list(state.HISTORY)
    state.HISTORY.clear()
    with ft.enabled():
        got = run.main()
        state.HISTORY.clear()
        again = run.main()
    assert_same(got, want)
    assert_same(again, want)
    assert state.HISTORY == pytest.approx(want_history, rel=1e-12)
    s = ft.stats()
    # main() itself is compiled (it reads state.FIELD), its callees inlined: one frame, then a hit
    assert s.frames_compiled == 1 and s.cache_hits == 1 and s.eager_fallbacks == 0, s
