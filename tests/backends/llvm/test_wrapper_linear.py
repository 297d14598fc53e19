"""Wrapper generation is linear in the graph size (issue 20, item 4): a straight-line program of
thousands of NumPy steps that may warn (scalar writes into an array: NumPy's `x[k] = v`) has a
barrier of the reports protocol before and after each step (backends/llvm/reports.py). Each
barrier's point used to walk every step before it (quadratic: 90 s of wrapper generation at
16,666 nodes); the Ledger visits each step once and a point is a mark into its lists.

Counted without timers: the ledger's node visits, for n and 4n lines. The warnings and values
of the same programs (FP errors, a redo at a late point with committed warnings given) are
NumPy's.
"""
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import reports


class Relaxation:
    """Writes one element at a time from its neighbour, with size warnings along the way."""

    def __init__(self, n):
        self.n = n

    def source(self):
        lines = ["def run(x, y, t):", "    x = x.copy()", "    out = []"]
        for i in range(self.n):
            lines.append(f"    x[{i % 9 + 1}] = x[{i % 9}] * 0.5 + 1.0")
            if i % 7 == 3:                            # np.mean over nothing: a pending event
                lines.append(f"    out.append(y[y > t + {i}].mean())")
        lines += ["    x[0] = x[1] / y[0]", "    return x, out"]
        return "\n".join(lines)

    def function(self):
        ns = {"np": np}
        exec(compile(self.source(), f"<relaxation_{self.n}>", "exec"), ns)
        return ns["run"]


_VISIT, _POINT, _MARK = reports.Ledger._visit, reports.Reports.point, reports.Ledger.mark


def _compiled_run(n, y, monkeypatch):
    """(ledger visits, points, result, warnings) of the first compiled call."""
    counts = {"visits": 0, "points": 0}
    visit, point = _VISIT, _POINT

    def counting_visit(self, step):
        counts["visits"] += 1
        return visit(self, step)

    def counting_point(self, mark):
        counts["points"] += 1
        return point(self, mark)

    monkeypatch.setattr(reports.Ledger, "_visit", counting_visit)
    monkeypatch.setattr(reports.Reports, "point", counting_point)
    fn = Relaxation(n).function()
    x = np.linspace(0.0, 1.0, 12)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = ft.compile(fn)(x, y, 0.5)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        ref = fn(x, y, 0.5)
    np.testing.assert_array_equal(out[0], ref[0])
    np.testing.assert_array_equal(np.array(out[1]), np.array(ref[1]))
    assert [(w.category, str(w.message)) for w in got] == [(w.category, str(w.message)) for w in want]
    return counts, got


@pytest.mark.parametrize("y0", [0.0, 1.0])       # 0: x[1] / 0 warns (a redo of the call), 1: no FP flag
def test_points_cost_linear_in_steps(y0, monkeypatch):
    y = np.array([y0, 0.25, 0.75])
    small, warned = _compiled_run(40, y, monkeypatch)
    ft.reset()
    large, _ = _compiled_run(160, y, monkeypatch)
    assert small["points"] >= 40 and large["points"] >= 4 * small["points"] - 8
    # each step visited once for all the points together (was: once per later point)
    assert large["visits"] <= 4 * small["visits"] + 8
    assert any("Mean of empty slice" in str(w.message) for w in warned)
    assert any("divide by zero" in str(w.message) for w in warned) == (y0 == 0.0)


def test_marks_resolve_as_a_walk_per_point(monkeypatch):
    """Each point's mark resolves to what one walk over the steps before it gives (`committed`,
    the former per-point walk), for programs whose points have warnings given and skipped."""
    marks = []
    mark = _MARK

    def recording_mark(self, upto_step, upto):
        m = mark(self, upto_step, upto)
        marks.append((self, upto_step, upto, m))
        return m

    monkeypatch.setattr(reports.Ledger, "mark", recording_mark)
    fn = Relaxation(30).function()
    y = np.array([0.0, 0.25, 0.75])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ft.compile(fn)(np.linspace(0.0, 1.0, 12), y, 0.5)
    assert len(marks) >= 30
    monkeypatch.setattr(reports.Ledger, "mark", _MARK)     # (committed's own walk makes marks too)
    given = 0
    for ledger, upto_step, upto, m in list(marks):
        want = reports.committed(ledger.plan, ledger.steps[:upto_step], upto, ledger.event_nodes,
                                 ledger.overwritten)
        assert ledger.resolve(m) == want
        given += len(want[0])
    assert given > 0                                  # (warning reductions given to a redo)
