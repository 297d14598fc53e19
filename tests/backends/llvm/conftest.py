import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True)
def strict_llvm_backend(monkeypatch):
    """Backend bugs must fail these tests, not fall back to NumPy silently."""
    import frametrace.backends.llvm as backend
    monkeypatch.setattr(backend, "STRICT", True)
