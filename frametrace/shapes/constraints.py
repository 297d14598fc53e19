"""mark_dynamic constraints: a strict symbol must stay symbolic over its declared range.

A guard that mentions a strict symbol is, by construction, not implied by the symbol's range
(implied facts never become guards), so each such guard is a violation: it specialises the
symbol to a constant, ties it to another size, or cuts its declared range. Violations are
collected while tracing and raised together by `ShapeEnv.check_constraints()`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import sympy

from frametrace.errors import ConstraintViolationError

from .records import Location, format_user_stack
from .value_ranges import ValueRanges, fmt_bound

_FIX = "If you're using mark_dynamic, either remove it or use maybe_mark_dynamic."


@dataclass(frozen=True)
class StrictConstraint:
    """A symbol created with strict=True (mark_dynamic) and the range the user declared."""
    symbol: object
    source: str
    declared: ValueRanges


@dataclass(frozen=True)
class Violation:
    source: str
    message: str
    location: Optional[Location] = None


def specialized_to_constant(source: str, value, location=None, why: str = "your code") -> Violation:
    return Violation(source, f"You marked {source} as dynamic but {why} specialized it to be a "
                             f"constant ({value}). {_FIX}", location)


def violation_for_guard(c: StrictConstraint, guard, code: str, location=None, implied=None) -> Violation:
    """The violation a recorded guard (sympy, True on the hints) makes for constraint c.
    `implied`: what the guard implies for c's symbol alone (refine.range_from_relational)."""
    if isinstance(guard, sympy.Eq):
        others = guard.free_symbols - {c.symbol}
        if not others:
            r = implied
            value = r[1].lower if r and isinstance(r[1], ValueRanges) and r[1].is_singleton else code
            return specialized_to_constant(c.source, value, location)
        return Violation(c.source, f"You marked {c.source} as dynamic but your code requires "
                                   f"{code}, tying it to another size. {_FIX}", location)
    lo, hi = fmt_bound(c.declared.lower), fmt_bound(c.declared.upper)
    return Violation(c.source, f"Not all values of {c.source} in the specified range "
                               f"{lo} <= {c.source} <= {hi} satisfy the generated guard {code}. "
                               "If you're using mark_dynamic, either remove it, give it a min/max "
                               "within which the guard holds, or use maybe_mark_dynamic.", location)


def raise_violations(violations: list) -> None:
    """Raise ConstraintViolationError naming every violated source, PyTorch style."""
    if not violations:
        return
    sources = list(dict.fromkeys(v.source for v in violations))
    lines = [f"Constraints violated ({', '.join(sources)})! For more information, run with "
             f'FRAMETRACE_LOGS="+dynamic".']
    lines += [f"  - {v.message}" for v in violations]
    stacks = list(dict.fromkeys(format_user_stack(v.location) for v in violations))
    lines += ["", "User stack:"] + stacks
    raise ConstraintViolationError("\n".join(lines))
