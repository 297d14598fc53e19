"""Blocks of a traced frame that a break function runs in Python: try/with blocks and loops.

The tracer does not interpret exception handling. It splits the frame before a `with` statement
(BEFORE_WITH, the context manager on the stack) or before the first instruction of a `try` body
(the first instruction inside an exception-table range), as TorchDynamo splits at a block it
cannot trace. A graph break inside a loop splits the frame before the loop (the outermost one
around the break, resume/code_loops.py): the whole loop runs in Python, its callees compiled as
frames of their own, rather than a resume function per iteration. The break function calls a
*region function*: a copy of the frame's code that pushes the saved stack, jumps to the block's
first instruction and runs the block as CPython would, and returns `(exit offset, locals())`
when control reaches one of the block's exits, or `(None, value)` when the block returns
`value` from the frame. The resume function of the exit runs the rest (and is compiled like any
resume function).

A region can be extracted when, following every normal and exception edge from its start:
  - control leaves it only by raising, by returning or by reaching an exit: an instruction
    outside the block (outside every exception range, or outside the loop), at the stack depth
    below the block, that is not an unconditional jump (CPython 3.12+ copies small tails into
    each handler or `break`, so a block may have several exits: each has its own resume function);
  - it never pops the stack below the block (the caller's saved stack stays as it was), and
    reaches every instruction at one stack depth;
  - it contains no `yield` (generators are not split), and a try/with block no `return` (a
    loop may return: its region function then returns `(None, value)`).
The region function's saved-stack parameters are unbound after its prologue, so `locals()` in
the block sees the user's names only; a local whose name is not an identifier (pytest's
`@py_assert1`) is seen there under its parameter name (`___local__py_assert1`).
"""
from __future__ import annotations

import dis
import types

from .. import pyversion
from .codegen import make_resume_code

REGION_PREFIX = "__break_at_region_"     # a generated name the hook skips (enable._GENERATED)


class RegionError(Exception):
    """The block cannot be extracted; the message says why."""


def is_block_start(code, index: int) -> bool:
    """Does a try/with block start at instruction `index` (where the tracer splits before it)?"""
    ins = pyversion.instructions(code)[index]
    return ins.opname in pyversion.WITH_STARTS or ins.offset in pyversion.protected_offsets(code)


def region_base(code, index: int, depth: int, loop=None) -> int:
    """The stack depth below the block that starts at instruction `index` (depth: the stack
    there): a `with` block consumes its context manager, a `for` loop its iterator (or, from
    GET_ITER, the iterable it makes one of)."""
    ins = pyversion.instructions(code)[index]
    if loop is not None:
        return depth - 1 if loop.kind == "for" else depth
    return depth - 1 if ins.opname in pyversion.WITH_STARTS else depth


def find_exits(code, index: int, depth: int, loop=None) -> tuple:
    """The offsets where the block starting at instruction `index` (stack `depth` there) ends:
    a try/with block, or `loop` (a CodeLoop, entered at its start or, in a resume function
    that starts inside it, at the instruction where the resume function enters it)."""
    instrs = pyversion.instructions(code)
    by_offset = {ins.offset: ins for ins in instrs}
    if loop is None:
        inside = pyversion.protected_offsets(code)
    else:
        if loop.kind == "for" and index not in (loop.start, loop.header):
            raise RegionError("a `for` loop entered in its body")
        inside = {ins.offset for i, ins in enumerate(instrs) if loop.contains(i)}
    entries = pyversion.exception_entries(code)
    base = region_base(code, index, depth, loop)
    start = instrs[index]
    seen: dict = {}
    exits = set()
    work = [(start.offset, depth)]
    while work:
        offset, d = work.pop()
        if offset in seen:
            if seen[offset] != d:
                raise RegionError("the block reaches an instruction at two stack depths")
            continue
        ins = by_offset.get(offset)
        if ins is None:
            raise RegionError("the block runs off the end of the code")
        if offset != start.offset and offset not in inside and d == base and \
                ins.opname not in pyversion.UNCONDITIONAL_JUMPS:
            exits.add(offset)
            seen[offset] = d
            continue
        seen[offset] = d
        if ins.opname in pyversion.RETURNS and loop is not None:
            continue                               # the region function returns (None, value)
        if ins.opname in pyversion.FRAME_EXITS:
            raise RegionError(f"the block leaves the function ({ins.opname})")
        if d < base or (offset != start.offset and d + _min_effect(ins) < base):
            raise RegionError("the block pops values below it (a `break` or `continue` out of it?)")
        for entry in entries:
            if entry.start <= offset < entry.end:
                if entry.depth < base:
                    raise RegionError("a handler of the block runs below its stack")
                work.append((entry.target, entry.depth + 1 + int(entry.lasti)))
                break
        for target, after in _successors(ins, instrs, by_offset, d):
            work.append((target, after))
    if not exits and loop is None:
        raise RegionError("the block never falls through (it always raises or leaves)")
    return tuple(sorted(exits))


def _min_effect(ins) -> int:
    """The lowest net stack effect of an instruction (over its jump and fall-through)."""
    effects = [_effect(ins, False)]
    if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
        effects.append(_effect(ins, True))
    return min(effects)


def _effect(ins, jump: bool) -> int:
    return dis.stack_effect(ins.opcode, ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None, jump=jump)


def _successors(ins, instrs, by_offset, depth):
    """(offset, stack depth) of where control goes after `ins` without raising."""
    name = ins.opname
    out = []
    is_jump = ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs
    if is_jump:
        target = ins.argval
        if name == "FOR_ITER":
            # exhausted: the iterator is popped and FOR_ITER_SKIP instructions after the target skipped
            k = next(i for i, x in enumerate(instrs) if x.offset == target) + pyversion.FOR_ITER_SKIP
            out.append((instrs[k].offset, depth - 1))
        else:
            out.append((target, depth + _effect(ins, True)))
    if name in pyversion.UNCONDITIONAL_JUMPS or name in ("RERAISE", "RAISE_VARARGS") or \
            name in pyversion.FRAME_EXITS:
        return out
    k = next(i for i, x in enumerate(instrs) if x.offset == ins.offset) + 1
    if k < len(instrs):
        out.append((instrs[k].offset, depth + _effect(ins, False)))
    return out


def make_region_function(fn, index: int, layout: tuple, local_names: list, exits: tuple):
    """The region function of the block at instruction `index` of `fn`'s code (see the module doc)."""
    code = fn.__code__
    start = pyversion.instructions(code)[index].offset
    new = make_resume_code(code, start, layout, local_names, stop_offsets=exits,
                           name=f"{REGION_PREFIX}{start}_{code.co_name}")
    return types.FunctionType(new, fn.__globals__, new.co_name, None, fn.__closure__)
