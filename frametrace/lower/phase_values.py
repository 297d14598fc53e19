"""Small pieces the reduction lowerings share (reductions.py, arg_reductions.py): a dtype's
extreme values, and a value computed once after a phase's loop (a Let in its post block)."""
from __future__ import annotations

import numpy as np

from .loop_ir import Let, Var
from .pointwise import kind


def limits(dt: str):
    """(lowest, highest) of dtype `dt`: -inf/inf for floats, False/True for bool."""
    if kind(dt) == "f":
        return float("-inf"), float("inf")
    if kind(dt) == "b":
        return False, True
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def phase_let(b, phase, value, hint="r"):
    """`value` bound to a fresh name after `phase`'s loop; the Var that reads it."""
    name = b.fresh(hint)
    phase.post.append(Let(name, value))
    phase.defines.add(name)
    return Var(name, value.dtype)
