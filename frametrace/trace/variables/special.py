"""Functions the tracer treats specially: frametrace's own API, and library code it does not inline."""
from __future__ import annotations

from ...errors import Unsupported
from .base import VariableTracker
from .constant import ConstantVariable


class SkipFunctionVariable(VariableTracker):
    """A function from the standard library or an installed package: not traced."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def as_python_constant(self):
        return self.fn

    def call_function(self, tx, args, kwargs):
        module = getattr(self.fn, "__module__", "?")
        raise Unsupported(f"call to {module}.{self.fn.__qualname__}, which is not traced", kind="call",
                          context=self.fn.__qualname__)

    def describe(self):
        return f"library function {self.fn.__qualname__}"


class CheckVariable(VariableTracker):
    """ft.check(cond): a fact about sizes; true by the hint now, guarded from then on."""

    def call_function(self, tx, args, kwargs):
        if not args:
            raise Unsupported("ft.check() needs a condition", kind="call")
        cond = args[0]
        if not cond.truth(tx):
            raise Unsupported("ft.check() failed while tracing", kind="check")
        return ConstantVariable(None)


def special_function_variable(value):
    try:
        import frametrace
    except ImportError:      # pragma: no cover
        return None
    if value is getattr(frametrace, "check", None):
        return CheckVariable()
    return None
