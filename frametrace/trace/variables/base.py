"""VariableTracker: what the symbolic interpreter keeps on its stack and in its locals."""
from __future__ import annotations

import itertools

from ...errors import Unsupported

_SERIALS = itertools.count()


def new_serial() -> int:
    """A number larger than every one handed out before (what was made before a loop body)."""
    return next(_SERIALS)


class NotConstant(Exception):
    pass


class VariableTracker:
    """A traced Python value. `source` says where it came from when it is (part of) an input."""

    source = None

    def python_type(self):
        raise Unsupported(f"type of {self} is not known while tracing", kind="type")

    def is_python_constant(self) -> bool:
        try:
            self.as_python_constant()
            return True
        except NotConstant:
            return False

    def as_python_constant(self):
        raise NotConstant(repr(self))

    def var_getattr(self, tx, name: str) -> "VariableTracker":
        raise Unsupported(f"attribute {name!r} of {self.describe()}", kind="getattr")

    def call_function(self, tx, args: list, kwargs: dict) -> "VariableTracker":
        raise Unsupported(f"calling {self.describe()}", kind="call")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> "VariableTracker":
        method = self.var_getattr(tx, name)
        return method.call_function(tx, args, kwargs)

    def unpack(self, tx) -> list:
        """The items when iterated (loops are unrolled)."""
        raise Unsupported(f"iterating over {self.describe()}", kind="iter")

    def truth(self, tx) -> bool:
        raise Unsupported(f"truth value of {self.describe()}", kind="branch")

    def describe(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"{type(self).__name__}()"


class NullVariable(VariableTracker):
    """The NULL that 3.11 pushes below a callable."""

    def describe(self):
        return "NULL"


class CellBox:
    """A closure cell during tracing: holds the VariableTracker of its contents. `owner`: the
    code object whose frame made it (None: a cell of a closure the trace did not make).
    `cell_source`: where the entry finds such a real cell (an inlined function's closure, the
    frame's own free variables), so a write to it is replayed (side_effects.store_cell); None
    for a cell the trace made."""
    __slots__ = ("value", "name", "owner", "cell_source", "serial")

    def __init__(self, value=None, name="", owner=None, cell_source=None):
        self.value, self.name, self.owner, self.cell_source = value, name, owner, cell_source
        self.serial = new_serial()


class CellVariable(VariableTracker):
    def __init__(self, box: CellBox):
        self.box = box
