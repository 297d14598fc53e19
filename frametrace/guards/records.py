"""Guard records: what one guard checks, as data (a kind, the `Source` it reads, a payload).

Every consumer is generated from these records, never from text: the Python check
(python_check.py, used by trace/entry.py), the native check (backends/llvm/native_guards.py),
the text users read in logs and recompile reasons (text.py) and the recompile advice
(convert_frame.py). Records are made only by `builder.GuardBuilder`.
"""
from __future__ import annotations

from dataclasses import dataclass

from .kinds import GuardKind
from .python_check import guard_code
from .text import guard_text


@dataclass(frozen=True, eq=False)
class Guard:
    """One guard. `ref` is the name under which generated checks see the payload object (for
    kinds that compare with an object: a type, an identity, a dtype, a code object...)."""
    kind: GuardKind
    source: object                 # frametrace.sources.Source, or None (SHAPE_ENV)
    payload: object = None
    ref: str | None = None
    location: object = None        # user location (shape-env guards)
    sources: dict | None = None    # SHAPE_ENV: sympy Symbol -> the Source that binds it

    @property
    def code(self) -> str:
        """The Python condition the entry's check evaluates."""
        return guard_code(self)

    @property
    def name(self) -> str:
        """The condition as a user reads it: `L['x'].shape[0] == 10`."""
        return guard_text(self)

    @property
    def source_name(self) -> str:
        return self.source.name if self.source is not None else ""
