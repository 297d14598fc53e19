import pytest

from shape_sources import LOC

from frametrace.shapes import ShapeEnv


@pytest.fixture
def env():
    e = ShapeEnv()
    e.set_location_provider(lambda: LOC)
    return e

