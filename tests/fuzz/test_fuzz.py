"""Differential fuzzing: random NumPy programs, eager vs compiled (see fuzzgen.py and
fuzzshapes.py).

`FRAMETRACE_FUZZ_EXAMPLES` sets the number of programs per test (default 120 straight-line
programs and 120 shaped ones, ~30 s of CPU in all); `FRAMETRACE_FUZZ_RANDOM=1` draws new programs
each run (default: derandomized, so plain `pytest` is reproducible); `FRAMETRACE_FUZZ_SHRINK=1`
lets hypothesis shrink a failure (slow: minutes). Failures that match a known, reported bug
(KNOWN_BUGS in fuzzrun.py, each pinned by an xfail test in test_regressions.py) are not
reported here. Longer runs: `python tests/fuzz/run_fuzz.py --minutes N`.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import frametrace as ft
import fuzzgen
import fuzzmodules
import fuzzrun
import fuzzshapes
import modrun

EXAMPLES = int(os.environ.get("FRAMETRACE_FUZZ_EXAMPLES", "120"))
RANDOM = os.environ.get("FRAMETRACE_FUZZ_RANDOM", "0") == "1"
# shrinking a program takes minutes; run_fuzz.py --replay is faster
SHRINK = os.environ.get("FRAMETRACE_FUZZ_SHRINK", "0") == "1"

_settings = settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM,
                     database=None if not RANDOM else settings.default.database,
                     suppress_health_check=list(HealthCheck), print_blob=True,
                     phases=[p for p in Phase if SHRINK or p is not Phase.shrink])


def _check(prog):
    ft.reset()
    failures = fuzzrun.unknown_failures(fuzzrun.run_program(prog), prog.source)
    if failures:
        pytest.fail("\n\n".join(failures) + "\n\n--- program ---\n" + prog.describe(),
                    pytrace=False)


@_settings
@given(st.data())
def test_random_programs(data):
    _check(fuzzgen.gen_program(fuzzgen.HypothesisSource(data)))


@_settings
@given(st.data())
def test_shaped_programs(data):
    """Containers, scalars, closures, data-dependent sizes, slicing chains, error states,
    layouts (fuzzshapes.py); compile counts asserted where the program says so."""
    _check(fuzzshapes.gen_shaped(fuzzgen.HypothesisSource(data)))


# the per-commit tier: a handful of whole programs (the long runs: run_fuzz.py --modules 1)
MODULE_SEEDS = [int(s) for s in os.environ.get("FRAMETRACE_FUZZ_MODULE_SEEDS", "3,11,26,41,78").split(",")]


@pytest.mark.parametrize("seed", MODULE_SEEDS)
def test_programs_in_modules(seed):
    """Whole programs over two or three modules (fuzzmodules.py): imports, a class hierarchy,
    globals of each module, a graph break, closures, class attributes, loops with breaks on data;
    in every compiled mode, against plain Python (results, exceptions, warnings, printed lines,
    state)."""
    prog = fuzzmodules.gen_modules(fuzzgen.RandomSource(seed), seed)
    failures = modrun.run_program(prog, modrun.MODES)
    if failures:
        pytest.fail("\n\n".join(failures) + "\n\n--- program ---\n" + prog.describe(), pytrace=False)


def test_generator_makes_valid_programs():
    """Most generated programs run eagerly without error on their first call (sanity)."""
    ok = 0
    for seed in range(60):
        prog = fuzzgen.gen_program(fuzzgen.RandomSource(seed))
        fn = fuzzrun.load(prog.source)
        _, exc, _ = fuzzrun.run_once(fn, fuzzgen.make_inputs(prog, prog.calls[0]))
        ok += exc is None
    assert ok >= 35, ok


@pytest.mark.parametrize("shape", fuzzshapes.SHAPES, ids=lambda s: s.__name__)
def test_every_shape_makes_runnable_programs(shape):
    """Each shape's programs mostly run eagerly (error-state ones may raise by design)."""
    ok = 0
    for seed in range(20):
        prog = shape(fuzzgen.RandomSource(seed))
        fn = fuzzrun.load(prog.source)
        _, exc, _ = fuzzrun.run_once(fn, prog.factories[0](), prog.errstate)
        ok += exc is None or isinstance(exc, FloatingPointError)
    assert ok >= 14, (shape.__name__, ok)
