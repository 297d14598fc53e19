"""GuardSet: the guards one trace collects (a GuardBuilder), with the method names the tracer
used before guards were records. The wrappers stay until their call sites move to the builder."""
from __future__ import annotations

from .builder import GuardBuilder
from .records import Guard

__all__ = ["Guard", "GuardSet"]


class GuardSet(GuardBuilder):
    def type_match(self, source, value):
        return self.type(source, value)

    def id_match(self, source, value):
        return self.identity(source, value)

    def equals_match(self, source, value):
        return self.equals(source, value)

    def add(self, code: str, name: str, kind: str = "RAW", source: str = "", location=None):
        """A guard given as code and text (kind and source are only informative)."""
        return self.raw(code, name, location)
