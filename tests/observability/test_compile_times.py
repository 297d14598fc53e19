"""What each compile cost: ft.explain(...).compile_times and the `compile` log channel
(frametrace/compile_times.py)."""
import logging

import numpy as np
import pytest

import frametrace as ft
from frametrace import compile_times
from frametrace.reporting import watch
from helpers import assert_same


class Model:
    def __init__(self):
        self.w = np.linspace(0.0, 1.0, 16)

    def features(self, x):
        return np.tanh(x * self.w)

    def __call__(self, x):
        h = self.features(x)
        print("", end="")                    # a graph break: the rest is a resume function
        return (h * h).sum(axis=-1)


def test_explain_lists_each_graph_with_its_phases():
    m, x = Model(), np.random.default_rng(1).random((4, 16))
    out = ft.explain(m.__call__, x)
    assert out.graph_count == 2 and len(out.compile_times) == 2
    for c in out.compile_times:
        assert isinstance(c, compile_times.CompileTime) and c.graph_nodes >= 1
        assert set(c.seconds) >= {"trace", "lowering", "codegen", "llvm", "wrapper", "entry"}
        assert set(c.seconds) <= set(compile_times.PHASES)
        assert all(v >= -1e-9 for v in c.seconds.values())
        assert sum(c.seconds.values()) <= c.total * 1.01 + 1e-6
        assert sum(v for k, v in c.times.counts.items() if k.startswith("kernels_")) >= 1
        assert "Model.__call__" in c.frame or "__resume" in c.frame
    text = str(out)
    assert "Compile times:" in text and "graph of" in text and "compiled by LLVM" in text
    assert_same(ft.compile(m.__call__)(x), m(x))


def test_numpy_backend_has_no_llvm_phase():
    with ft.config.patch(backend="numpy"):
        out = ft.explain(lambda x: np.sin(x) + 1.0, np.ones(5))
    (c,) = out.compile_times
    assert "llvm" not in c.seconds and c.seconds["trace"] >= 0.0


def test_phases_are_exclusive():
    with compile_times.timing() as times:
        with compile_times.phase("lowering"):
            with compile_times.phase("llvm"):
                pass
            compile_times.count("kernels_compiled")
    assert times.counts == {"kernels_compiled": 1}
    assert times.seconds["lowering"] >= 0.0 and sum(times.seconds.values()) <= times.total + 1e-6
    with compile_times.phase("trace"):        # outside any compile: nothing is recorded
        compile_times.count("kernels_compiled")


@pytest.fixture
def compile_log(caplog, monkeypatch):
    # compiles that pass 2 s on a loaded machine would log "slow compile" and "still compiling" lines
    monkeypatch.setattr(compile_times, "SLOW_COMPILE_S", 3600.0)
    monkeypatch.setattr(watch, "ANNOUNCE_AFTER_S", 3600.0)
    ft.set_logs(compile=True)
    try:
        with caplog.at_level(logging.INFO, logger="frametrace.compile"):
            yield caplog
    finally:
        ft.set_logs(compile=False)


def lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "frametrace.compile"]


def scale(x):
    return np.exp(x) * 3.0


def test_compile_log_line_per_compile(compile_log):
    f = ft.compile(scale)
    f(np.ones(10))
    f(np.ones(20))                           # automatic dynamic: a second compile
    got = lines(compile_log)
    assert len(got) == 2
    for line in got:
        assert line.startswith("compiled scale (") and "test_compile_times.py" in line
        assert "graph of 2 nodes" in line and "trace " in line and "llvm " in line


def test_slow_compile_names_the_phase(compile_log, monkeypatch):
    monkeypatch.setattr(compile_times, "SLOW_COMPILE_S", 0.0)
    ft.compile(scale)(np.ones(7))
    (line,) = lines(compile_log)
    assert line.startswith("slow compile: scale (") and "most of it in " in line and "graph of 2 nodes" in line
