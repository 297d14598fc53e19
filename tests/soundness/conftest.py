from soundness_helpers import BACKENDS
import pytest


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Every guard-soundness scenario runs on each available backend."""
    return request.param
