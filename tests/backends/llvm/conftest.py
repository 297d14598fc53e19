import logging
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def strict_llvm_backend(monkeypatch):
    """Backend bugs must fail these tests, not fall back to NumPy silently."""
    import frametrace.backends.llvm as backend
    monkeypatch.setattr(backend, "STRICT", True)


@pytest.fixture(autouse=True)
def products_in_our_nests():
    """These tests exercise our product nests (lower/matmul.py), which by default serve only mixed
    dtypes and integers (`config.exact_float_products`: one-dtype float products are NumPy's
    call); tests/soundness/test_exact_products.py checks the default."""
    from frametrace.config import config
    with config.patch(exact_float_products=False):
        yield


@pytest.fixture
def compiled_graphs(monkeypatch):
    """The compiled graphs (kernels, steps, wrapper source) of the ft.compile'd calls, in order."""
    import frametrace.backends.llvm as backend
    runs, original = [], backend.compile_graph

    def capture(*args, **kwargs):
        runs.append(original(*args, **kwargs))
        return runs[-1]
    monkeypatch.setattr(backend, "compile_graph", capture)
    return runs


class LoopLog(logging.Handler):
    """Collects the `loops` log's lines (what each loop became: native nest, jammed, ...)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@pytest.fixture
def loop_log():
    """The `loops` log lines of the test, as a list."""
    import frametrace as ft
    ft.set_logs(loops=True)
    handler = LoopLog()
    logger = logging.getLogger("frametrace.loops")
    logger.addHandler(handler)
    yield handler.lines
    logger.removeHandler(handler)
    ft.set_logs()


@pytest.fixture
def fresh_loops(request):
    """A fresh frametrace with the loop-run log cleared (backends/llvm/loops.runs), strict, the IR
    verified, no PGO, plus the test module's LOOP_CONFIG (config overrides). A module uses it
    with `pytestmark = pytest.mark.usefixtures("fresh_loops")`."""
    import frametrace as ft
    from frametrace.backends.llvm import loops
    ft.reset()
    loops.runs.clear()
    with ft.config.patch(strict_backend=True, verify_ir=True, pgo=False, **getattr(request.module, "LOOP_CONFIG", {})):
        yield
    ft.reset()
