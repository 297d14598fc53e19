"""How bytecode calls a constant callable, per CPython version (used by the global hook's trampolines).

The runtime never imports the compiler, so it keeps the two call-protocol facts it needs here; the
compiler's tables (frametrace/pyversion) say the same, and tests/hook checks that they agree.
"""
from __future__ import annotations

import sys

from bytecode import Instr

# version -> (instructions before CALL, is the NULL pushed below the callable?, the jump-if-true
# sequence: 3.11 has only directed jumps; 3.13 jumps on exact bools, made by TO_BOOL)
_PROTOCOL = {
    (3, 11): (("PRECALL",), True, ("POP_JUMP_FORWARD_IF_TRUE",)),
    (3, 12): ((), True, ("POP_JUMP_IF_TRUE",)),
    (3, 13): ((), False, ("TO_BOOL", "POP_JUMP_IF_TRUE")),
}
CALL_PREFIX, NULL_BELOW_CALLABLE, _JUMP_IF_TRUE = _PROTOCOL.get(sys.version_info[:2], _PROTOCOL[(3, 13)])


def load_callable(value, lineno) -> list:
    """Push `value` (a constant) and the NULL that marks a plain call, in this version's order."""
    out = [Instr("PUSH_NULL", lineno=lineno), Instr("LOAD_CONST", value, lineno=lineno)]
    return out if NULL_BELOW_CALLABLE else out[::-1]


def call(nargs: int, lineno) -> list:
    return [Instr(name, nargs, lineno=lineno) for name in CALL_PREFIX] + [Instr("CALL", nargs, lineno=lineno)]


def jump_if_true(label, lineno) -> list:
    """Pop the top of the stack and jump forward to `label` when it is true."""
    *convert, jump = _JUMP_IF_TRUE
    return [Instr(name, lineno=lineno) for name in convert] + [Instr(jump, label, lineno=lineno)]
