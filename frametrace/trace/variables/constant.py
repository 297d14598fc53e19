"""Python constants and symbolic numbers (sizes)."""
from __future__ import annotations

from .base import VariableTracker


class ConstantVariable(VariableTracker):
    """A Python value fixed for this trace (guarded if it came from an input)."""

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def as_python_constant(self):
        return self.value

    def python_type(self):
        return type(self.value)

    def truth(self, tx):
        return bool(self.value)

    def unpack(self, tx):
        if isinstance(self.value, (tuple, list, str, range, dict, set, frozenset)):
            return [ConstantVariable(v) for v in self.value]
        return super().unpack(tx)

    def var_getattr(self, tx, name):
        import numpy as np
        value = self.value
        if isinstance(value, (int, float, complex, str, bytes, np.generic, np.dtype, type(None))) \
                or isinstance(value, type):
            try:
                return ConstantVariable(getattr(value, name))
            except AttributeError:
                pass
        return super().var_getattr(tx, name)

    def describe(self):
        from ...guards.text import value_text
        return f"constant {value_text(self.value)}"

    def __repr__(self):
        return f"ConstantVariable({self.value!r})"


class ReadGuardedConstant(ConstantVariable):
    """A str or bytes input (an argument, an attribute, a value a resume function receives): its
    type is guarded at once, its value only when the trace reads it. A message that only flows
    into a call after a graph break (`log.write(f"step {i}")`) or out as a result is passed
    through from its source, so a new text each call is no recompile."""

    def __init__(self, value, source, guards):
        self._value, self.source, self._guards = value, source, guards
        self.read = False

    @property
    def value(self):
        if not self.read:
            self.read = True
            self._guards.equals(self.source, self._value)
        return self._value

    def python_type(self):
        return type(self._value)

    def describe(self):
        return f"{type(self._value).__name__} input"


class SymNumberVariable(VariableTracker):
    """A SymInt / SymFloat / SymBool: a number computed from sizes."""

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        from ...shapes import SymBool, SymFloat
        if isinstance(self.value, SymBool):
            return bool
        if isinstance(self.value, SymFloat):
            return float
        return int

    def truth(self, tx):
        return bool(self.value)        # consults the hint and records a guard

    def describe(self):
        return f"symbolic {self.value}"

    def __repr__(self):
        return f"SymNumberVariable({self.value})"


def wrap_number(value, source=None):
    """A Python number or a Sym* value as a VariableTracker."""
    from ...shapes import is_symbolic
    if is_symbolic(value):
        return SymNumberVariable(value, source)
    constant = getattr(value, "maybe_as_constant", None)
    if constant is not None:            # a Sym value whose expression became a number: a plain one
        value = constant()
    return ConstantVariable(value, source)
