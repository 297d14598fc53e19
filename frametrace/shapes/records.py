"""Plain records the ShapeEnv keeps: where user code asked something, the guards it added,
the specialisations it made, and guards rendered as Python source."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional


class Location(NamedTuple):
    """The user code that caused a symbol or a guard (what the location provider returns)."""
    filename: str
    lineno: int
    funcname: str
    source_line: str = ""

    def short(self) -> str:
        """`file.py:12 in f`."""
        return f"{self.filename}:{self.lineno} in {self.funcname}"


def format_sloc(loc) -> str:
    """PyTorch's sloc: `<source line>  # file.py:12 in f` (empty when unknown)."""
    if loc is None:
        return ""
    line = (getattr(loc, "source_line", "") or "").strip()
    where = f"{loc.filename}:{loc.lineno} in {loc.funcname}"
    return f"{line}  # {where}" if line else f"# {where}"


def sloc_suffix(loc) -> str:
    """" <sloc>" for the end of a log line, or "" when the location is unknown."""
    text = format_sloc(loc)
    return " " + text if text else ""


def format_user_stack(loc) -> str:
    """A traceback-style frame for error messages (`  File "f.py", line 12, in f` + source)."""
    if loc is None:
        return "  (no user code location recorded)"
    out = f'  File "{loc.filename}", line {loc.lineno}, in {loc.funcname}'
    line = (getattr(loc, "source_line", "") or "").strip()
    return out + (f"\n    {line}" if line else "")


@dataclass(frozen=True)
class ShapeGuard:
    """A fact the trace relied on: `expr` (a sympy boolean that was True for the hints)."""
    expr: object
    location: Optional[Location] = None


@dataclass(frozen=True)
class ShapeGuardCode:
    """One produced guard: its sympy form `expr`, the source name each of its symbols reads
    (`names`: Symbol -> name), its origin, and `code`, the text printed from those two
    (printer.guard_source; consumers print their own form from `expr` and `names`).

    kind: "equality" (two sources of one symbol, duck sizing), "specialization" (a source
    equals a constant or an expression of other sources), "guard" (a recorded guard) or
    "range" (a value-range bound of a symbol)."""
    code: str
    expr: object
    location: Optional[Location] = None
    kind: str = "guard"
    names: dict = field(default_factory=dict, compare=False)

    def __str__(self):
        sloc = format_sloc(self.location)
        return f"{self.code}  {sloc}" if sloc else self.code


@dataclass(frozen=True)
class Specialization:
    """A symbol replaced by a constant (for logs and the structured trace)."""
    symbol: object
    sources: tuple
    value: int
    reason: str
    location: Optional[Location] = None


@dataclass(frozen=True)
class RuntimeAssert:
    """A fact asserted with ft.check about data-dependent sizes; the compiled code checks it."""
    expr: object
    msg: str = ""
    location: Optional[Location] = None
