import pytest

from frametrace.shapes import Location, ShapeEnv

LOC = Location("user.py", 7, "f", "if x.shape[0] == 10:")


@pytest.fixture
def env():
    e = ShapeEnv()
    e.set_location_provider(lambda: LOC)
    return e


def X(i=0, name="x"):
    """The size source of dim i of argument `name`."""
    return f"L['{name}'].shape[{i}]"
