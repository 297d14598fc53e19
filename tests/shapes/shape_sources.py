"""What the shape tests name sizes with (a module of its own: `conftest` is a name every test
folder has, so importing it from a test picks whichever folder's was loaded first)."""
from frametrace.shapes import Location

LOC = Location("user.py", 7, "f", "if x.shape[0] == 10:")


def X(i=0, name="x"):
    """The size source of dim i of argument `name`."""
    return f"L['{name}'].shape[{i}]"
