import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True, params=["interpret", "llvm"])
def backend(request, monkeypatch):
    """Every op test runs on the reference interpreter and on the LLVM backend."""
    import ir_helpers
    monkeypatch.setattr(ir_helpers, "BACKEND", request.param)
    return request.param
