"""Elementwise chains deeper than one kernel expression may nest (schedule.py deep_expression):
every MAX_INLINE_DEPTH-th level is stored and read back by the next kernel, so a model of
hundreds of layers compiles instead of overflowing the builder's recursion (which used to
send the whole graph to NumPy) and computes NumPy's values."""
import sys

import numpy as np
import pytest

from frametrace.lower import schedule
from tracing import A, Traced, kernel_count

rng = np.random.default_rng(11)


def layers(n):
    ws = [float(w) for w in rng.uniform(0.5, 1.5, n)]

    def model(x):
        for w in ws:
            x = np.tanh(x * w + 0.25)
        return x
    return model


def test_a_chain_is_cut_every_max_inline_depth_levels(monkeypatch):
    monkeypatch.setattr(schedule, "MAX_INLINE_DEPTH", 4)
    t = Traced(layers(10), A(("n", 7)))                       # 30 elementwise levels
    assert 30 // 4 <= kernel_count(t) <= 30 // 4 + 2             # a store every 4 levels or sooner
    for n in (0, 1, 5):
        t.check(rng.standard_normal((n, 7)))


def test_short_chains_stay_one_kernel():
    t = Traced(layers(schedule.MAX_INLINE_DEPTH // 3), A(("n", 7)))
    assert kernel_count(t) == 1
    t.check(rng.standard_normal((4, 7)))


def test_chain_deeper_than_the_recursion_limit():
    levels = 3 * 100
    assert levels * 4 > sys.getrecursionlimit()              # ~4 frames a level, uncut
    t = Traced(layers(levels // 3), A((3, 7)))
    cuts = levels // schedule.MAX_INLINE_DEPTH
    assert cuts <= kernel_count(t) <= cuts + 2
    t.check(rng.standard_normal((3, 7)))


@pytest.mark.parametrize("order", ["C", "F"])
def test_cut_values_read_back_through_views(order):
    def f(x):
        for _ in range(12):
            x = np.sin(x) * 0.9 + 0.1
        return x.T[1:] + x.T[:-1]                                  # read at other positions
    t = Traced(f, A((5, 6)))
    x = np.asarray(rng.standard_normal((5, 6)), order=order)
    t.check(x)
