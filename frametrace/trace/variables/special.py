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
        msg = args[1].as_python_constant() if len(args) > 1 else None
        from .constant import SymNumberVariable
        if isinstance(cond, SymNumberVariable):
            expr = getattr(cond.value, "expr", None)
            if expr is not None:
                # a fact about sizes: guarded when backed, asserted at run time when unbacked
                try:
                    tx.output.shape_env.defer_runtime_assert(expr, msg or f"ft.check({expr})")
                except AssertionError as exc:
                    from ...errors import NumpyError
                    raise NumpyError(exc, context="ft.check") from None
                return ConstantVariable(None)
        if not cond.truth(tx):
            from ...errors import NumpyError
            raise NumpyError(AssertionError(msg or "ft.check failed"), context="ft.check")
        return ConstantVariable(None)


def special_function_variable(value):
    try:
        import frametrace
    except ImportError:      # pragma: no cover
        return None
    if value is getattr(frametrace, "check", None):
        return CheckVariable()
    return None
