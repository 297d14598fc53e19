"""Everything that depends on the CPython bytecode version lives here: one table module per version.

py311.py is the baseline; py312.py and py313.py say what changed. Opcode handlers never test the
version: where a handler differs, HANDLERS names the method the dispatch table uses on this version.
"""
from __future__ import annotations

import dis
import sys

from . import py311, py312, py313

PY = sys.version_info[:2]
_TABLES = {(3, 11): py311, (3, 12): py312, (3, 13): py313}
SUPPORTED = PY in _TABLES
_T = _TABLES.get(PY, py313)

POP_JUMPS = _T.POP_JUMPS
POP_JUMPS_NONE = _T.POP_JUMPS_NONE
JUMP_OR_POP = _T.JUMP_OR_POP
UNCONDITIONAL_JUMPS = _T.UNCONDITIONAL_JUMPS
EMIT_JUMPS = _T.EMIT_JUMPS
JUMP_NEEDS_TO_BOOL = _T.JUMP_NEEDS_TO_BOOL
NO_OPS = _T.NO_OPS
CALLS = _T.CALLS
CALL_PREFIX = _T.CALL_PREFIX
NULL_BELOW_CALLABLE = _T.NULL_BELOW_CALLABLE
FOR_ITER_SKIP = _T.FOR_ITER_SKIP
SIMPLE_STACK_EFFECT = _T.SIMPLE_STACK_EFFECT
HANDLERS = _T.HANDLERS
GRAPH_BREAKS = _T.GRAPH_BREAKS
line_started = _T.line_started
NOT_TRACED = _T.NOT_TRACED
WITH_STARTS = _T.WITH_STARTS
FRAME_EXITS = _T.FRAME_EXITS
RETURNS = _T.RETURNS
LOCALS_SNAPSHOT = _T.LOCALS_SNAPSHOT
LOCAL_NAME_OPS = _T.LOCAL_NAME_OPS
LOCAL_PAIR_OPS = _T.LOCAL_PAIR_OPS

# BINARY_OP's argument -> Python operator symbol ("+=" forms are in-place).
BINARY_OPS = {i: sym for i, (_, sym) in enumerate(dis._nb_ops)} if hasattr(dis, "_nb_ops") else {}
# CALL_INTRINSIC_1's argument -> its name (3.12+).
INTRINSIC_1 = dict(enumerate(getattr(dis, "_intrinsic_1_descs", ())))

# Instructions whose format spec is on the stack (their break must not split the spec from the value).
_SPEC_ON_STACK = {"FORMAT_VALUE"}


def instructions(code):
    """The instructions of a code object (caches hidden, jump targets as offsets)."""
    return list(dis.get_instructions(code))


def load_global_pushes_null(instr) -> bool:
    """LOAD_GLOBAL's low argument bit asks for a NULL beside the global (3.11-3.13)."""
    return bool(instr.arg & 1)


def load_attr_is_method(instr) -> bool:
    """3.12+: LOAD_ATTR's low argument bit asks for the method form (callable and self or NULL)."""
    return bool(instr.arg & 1)


def format_has_spec(instr) -> bool:
    """FORMAT_VALUE with a format spec on the stack (3.11, 3.12)."""
    return instr.opname in _SPEC_ON_STACK and bool(instr.arg & 0x04)


_CLEANUP_OPS = frozenset({"SWAP", "POP_TOP", "STORE_FAST", "STORE_FAST_MAYBE_NULL"})


def _is_comprehension_cleanup(handler) -> bool:
    """PEP 709: an inlined comprehension's handler only restores the shadowed locals and re-raises."""
    for ins in handler:
        if ins.opname == "RERAISE":
            return True
        if ins.opname not in _CLEANUP_OPS:
            return False
    return False


def _is_generator_stop_handler(code, handler) -> bool:
    """3.12+: a generator's body is covered by an implicit handler that turns a StopIteration escaping
    it into RuntimeError (PEP 479): `CALL_INTRINSIC_1 INTRINSIC_STOPITERATION_ERROR; RERAISE`."""
    return bool(code.co_flags & 0x20) and [ins.opname for ins in handler[:2]] == ["CALL_INTRINSIC_1", "RERAISE"] \
        and INTRINSIC_1.get(handler[0].arg) == "INTRINSIC_STOPITERATION_ERROR"


def exception_entries(code):
    return list(dis.Bytecode(code).exception_entries) if getattr(code, "co_exceptiontable", b"") else []


def user_exception_entries(code) -> list:
    """The exception-table entries of try/except/with blocks in the source.

    Not the ones the compiler adds by itself (3.12+): an inlined comprehension's cleanup, which
    restores the locals it shadows, and a generator's StopIteration -> RuntimeError handler. A traced
    frame never raises through them (a trace that would raise stops and the frame runs eagerly).
    """
    entries = exception_entries(code)
    if not entries:
        return []
    instrs = instructions(code)
    at = {ins.offset: i for i, ins in enumerate(instrs)}
    out = []
    for e in entries:
        handler = instrs[at[e.target]:]
        if not (_is_comprehension_cleanup(handler) or _is_generator_stop_handler(code, handler)):
            out.append(e)
    return out


def has_exception_table(code) -> bool:
    """try/except/with blocks (kept in an exception table, not in SETUP_* instructions since 3.11)."""
    return bool(user_exception_entries(code))


def protected_offsets(code) -> set:
    """Offsets of the instructions inside try/with ranges (not the 3.12+ implicit handlers)."""
    return {off for e in user_exception_entries(code) for off in range(e.start, e.end, 2)}
