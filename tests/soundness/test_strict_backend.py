"""Strictness and the IR verifier (issue 12, item 7): tests see backend bugs; users do not.

`config.strict_backend` (FRAMETRACE_STRICT_BACKEND) is on in every test run (tests/conftest.py):
an internal error of the LLVM backend raises. Off (a user's run), the graph falls back to the
NumPy backend with a logged warning and the answer is still NumPy's. `config.verify_ir` runs
ir/verify.py after tracing, after each pass and at backend entry.
"""
import logging

import numpy as np
import pytest

import frametrace as ft
import frametrace.backends.llvm as llvm_backend
from frametrace.ir.verify import IRVerifyError
from frametrace.passes import pipeline


def _broken_plan(graph):
    raise RuntimeError("injected backend bug")


@pytest.fixture
def broken_llvm(monkeypatch):
    stages = dict(llvm_backend.PIPELINE)
    stages["plan"] = _broken_plan
    monkeypatch.setattr(llvm_backend, "PIPELINE", tuple(stages.items()))


def test_tests_run_strict():
    assert ft.config.strict_backend and ft.config.verify_ir


def test_a_backend_bug_raises_when_strict(broken_llvm):
    f = ft.compile(lambda x: x * 2 + 1, backend="llvm")
    with pytest.raises(RuntimeError, match="injected backend bug"):
        f(np.ones(3))


def test_a_user_run_falls_back_with_a_warning(broken_llvm, caplog):
    f = ft.compile(lambda x: x * 2 + 1, backend="llvm")
    with ft.config.patch(strict_backend=False), caplog.at_level(logging.WARNING):
        np.testing.assert_array_equal(f(np.ones(3)), np.full(3, 3.0))
    assert any("running it with NumPy instead" in r.getMessage() for r in caplog.records)


def test_the_environment_sets_strictness(tmp_path):
    import subprocess
    import sys
    code = "import frametrace as ft; print(ft.config.strict_backend, ft.config.verify_ir)"
    env = {"FRAMETRACE_STRICT_BACKEND": "1", "FRAMETRACE_VERIFY_IR": "0", "PATH": ""}
    import os
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["True", "False"], out.stderr[-2000:]


def test_a_malformed_graph_is_caught_after_a_pass(monkeypatch):
    def drop_everything(graph):
        graph.nodes[:] = []              # outputs now name values the graph lost
        return 0
    monkeypatch.setattr(pipeline, "PASSES", (("drop", drop_everything),))
    f = ft.compile(lambda x: x * 2 + 1, backend="numpy")
    with pytest.raises(IRVerifyError, match="after drop"):
        f(np.ones(3))
