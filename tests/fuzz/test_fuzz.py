"""Differential fuzzing: random NumPy programs, eager vs compiled (see fuzzgen.py).

`FRAMETRACE_FUZZ_EXAMPLES` sets the number of programs (default 300, 25-60 s with the llvm
backend); `FRAMETRACE_FUZZ_RANDOM=1` draws new programs each run (default: derandomized,
so plain `pytest` is reproducible); `FRAMETRACE_FUZZ_SHRINK=1` lets hypothesis shrink a
failure (slow: minutes). Failures that match a known, reported bug (KNOWN_BUGS in
fuzzgen.py, each pinned by an xfail test in test_regressions.py) are not reported here.
Longer runs: `python tests/fuzz/run_fuzz.py --minutes N`.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import fuzzgen
import fuzzrun

EXAMPLES = int(os.environ.get("FRAMETRACE_FUZZ_EXAMPLES", "300"))
RANDOM = os.environ.get("FRAMETRACE_FUZZ_RANDOM", "0") == "1"
# shrinking a program takes minutes; fuzzrun.minimize / run_fuzz.py --replay do it faster
SHRINK = os.environ.get("FRAMETRACE_FUZZ_SHRINK", "0") == "1"

_settings = settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM,
                     database=None if not RANDOM else settings.default.database,
                     suppress_health_check=list(HealthCheck), print_blob=True,
                     phases=[p for p in Phase if SHRINK or p is not Phase.shrink])


@_settings
@given(st.data())
def test_random_programs(data):
    prog = fuzzgen.gen_program(fuzzgen.HypothesisSource(data))
    import frametrace as ft
    ft.reset()
    failures = fuzzrun.unknown_failures(fuzzrun.run_program(prog), prog.source)
    if failures:
        pytest.fail("\n\n".join(failures) + "\n\n--- program ---\n" + prog.describe(),
                    pytrace=False)


def test_generator_makes_valid_programs():
    """Most generated programs run eagerly without error on their first call (sanity)."""
    ok = 0
    for seed in range(60):
        prog = fuzzgen.gen_program(fuzzgen.RandomSource(seed))
        fn = fuzzrun.load(prog.source)
        _, exc = fuzzrun.run_once(fn, fuzzgen.make_inputs(prog, prog.calls[0]))
        ok += exc is None
    assert ok >= 35, ok
