"""Everything that depends on the CPython bytecode version lives here (3.11 today).

Adding 3.12/3.13 means adding their tables below, not touching opcode handlers.
"""
from __future__ import annotations

import dis
import sys

PY = sys.version_info[:2]
SUPPORTED = PY == (3, 11)

# BINARY_OP's argument -> Python operator symbol ("+=" forms are in-place).
BINARY_OPS = {i: sym for i, (_, sym) in enumerate(dis._nb_ops)} if hasattr(dis, "_nb_ops") else {}

# Conditional jumps: opname -> (pops the condition?, jump when the value is truthy?, compares with None?)
POP_JUMPS = {
    "POP_JUMP_FORWARD_IF_TRUE": True, "POP_JUMP_BACKWARD_IF_TRUE": True,
    "POP_JUMP_FORWARD_IF_FALSE": False, "POP_JUMP_BACKWARD_IF_FALSE": False,
}
POP_JUMPS_NONE = {
    "POP_JUMP_FORWARD_IF_NONE": True, "POP_JUMP_BACKWARD_IF_NONE": True,
    "POP_JUMP_FORWARD_IF_NOT_NONE": False, "POP_JUMP_BACKWARD_IF_NOT_NONE": False,
}
JUMP_OR_POP = {"JUMP_IF_TRUE_OR_POP": True, "JUMP_IF_FALSE_OR_POP": False}
UNCONDITIONAL_JUMPS = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE"}

# Instructions that only mark the frame's start or are no-ops for a symbolic interpreter.
NO_OPS = {"NOP", "RESUME", "PRECALL", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS"}


# Straight-line instructions a graph break can run on their own: opname -> (pops, pushes).
SIMPLE_STACK_EFFECT = {
    "STORE_ATTR": (2, 0), "STORE_SUBSCR": (3, 0), "DELETE_SUBSCR": (2, 0), "STORE_GLOBAL": (1, 0),
    "DELETE_GLOBAL": (0, 0), "DELETE_ATTR": (1, 0), "BINARY_SUBSCR": (2, 1), "LOAD_ATTR": (1, 1),
    "BINARY_OP": (2, 1), "COMPARE_OP": (2, 1), "CONTAINS_OP": (2, 1), "IS_OP": (2, 1),
    "UNARY_NEGATIVE": (1, 1), "UNARY_POSITIVE": (1, 1), "UNARY_INVERT": (1, 1), "UNARY_NOT": (1, 1),
    "FORMAT_VALUE": (1, 1),
}


def instructions(code):
    """The instructions of a code object (caches hidden, jump targets as offsets)."""
    return list(dis.get_instructions(code))


def load_global_pushes_null(instr) -> bool:
    """3.11: LOAD_GLOBAL's low argument bit asks for a NULL below the global."""
    return bool(instr.arg & 1)


def has_exception_table(code) -> bool:
    """try/with blocks (3.11 keeps them in an exception table, not in SETUP_* instructions)."""
    return bool(getattr(code, "co_exceptiontable", b""))
