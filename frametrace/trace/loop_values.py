"""Loop-carried values while a loop body is traced once (trace/loops.py, trace/branches.py):
what type a value has across iterations, and the stand-in for a local a loop leaves undefined."""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from ..ir.fake import FakeArray, FakeScalar
from .variables.array import ArrayVariable
from .variables.base import VariableTracker
from .variables.constant import ConstantVariable, SymNumberVariable


class PoisonVariable(VariableTracker):
    """A local whose value after a loop node is not known to the trace (the loop index, a
    temporary of the body): any use of it is unsupported."""

    def __init__(self, name, in_body=False):
        self.name, self.in_body = name, in_body

    def describe(self):
        return f"{self.name!r} after a compiled loop"

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        if self.in_body:        # a value the body rebinds that is no number or array, read before it does
            raise Unsupported(f"{self.name!r} is carried from one iteration to the next and is not a number "
                              "or an array", kind="loop")
        raise Unsupported(f"using {self.name!r} after the loop that assigned it", kind="loop",
                          hints=("keep the value in a variable assigned before the loop",))


def carried_type(vt):
    """(abstract value of the body input, value the loop node passes in) or (None, None)."""
    if isinstance(vt, ArrayVariable):
        return vt.proxy.fake, vt.proxy
    if isinstance(vt, SymNumberVariable) and vt.python_type() is int:
        return FakeScalar(int), vt.value
    if isinstance(vt, ConstantVariable):
        v = vt.value
        if type(v) in (bool, int, float, complex) and not (type(v) is int and not -2 ** 63 <= v < 2 ** 63):
            return FakeScalar(type(v)), v
        if isinstance(v, np.generic) and v.dtype.kind in "biufc":
            return FakeArray((), v.dtype, True), v
    return None, None


def variable(proxy, like):
    vt = ArrayVariable(proxy)
    if getattr(like, "derived_python_scalar", False):
        vt.derived_python_scalar = True
    return vt


def type_key(vt):
    if isinstance(vt, ArrayVariable):
        fake = vt.proxy.fake
        if isinstance(fake, FakeScalar):
            return ("py", fake.pytype, vt.derived_python_scalar)
        return ("np", fake.dtype, fake.scalar, fake.ndim, False)
    fake, _ = carried_type(vt) if vt is not None else (None, None)
    if isinstance(fake, FakeScalar):
        return ("py", fake.pytype, False)
    if isinstance(fake, FakeArray):
        return ("np", fake.dtype, True, 0, False)
    return None


def kind_text(key):
    if key is None:
        return "?"
    if key[0] == "py":
        return key[1].__name__
    return f"{'scalar ' if key[2] else ''}{key[1]}[{key[3]}d]"
