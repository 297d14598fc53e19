"""Bytecode for graph breaks (built with the `bytecode` package).

A graph break at instruction i of a frame becomes three pieces:

  entry (Python source, trace/entry.py)  guards -> graph for the code before i -> rebuild the
                                         live stack and locals -> call the break function
  break function (this module)           push the stack, run instruction i itself (a CALL, or
                                         a conditional jump on array data), then call the
                                         resume function of the instruction that comes next
  resume function (this module)          a copy of the frame's code whose prologue pushes the
                                         saved stack and jumps to the next instruction; it is
                                         an ordinary function, compiled by the hook on its
                                         first call (its own frame id, guards, recompiles)

The bytecode emitted differs by CPython version (PRECALL, jump forms, where the NULL of a call
goes, TO_BOOL): those facts live in the pyversion tables.
"""
from __future__ import annotations

import dis
import inspect
import types

from bytecode import Bytecode, Instr, Label, TryBegin

from .. import pyversion

STACK_PREFIX = "___stack"
# attribute of a resume function: the names of its parameters that receive a
# NumPy scalar the graph before the break computed; its trace takes them as 0-d graph
# inputs guarded on type (so dtype), not as constants guarded on value (no recompile per value)
ARRAY_SCALARS_ATTR = "__frametrace_array_scalars__"
# attribute of a resume function: the user's frame it was cut from (trace/graph_break.py)
ORIGIN_ATTR = "__frametrace_resume_origin__"


def _abstract_with_labels(code):
    """The abstract instructions of `code` and a map from dis offset to list index."""
    bc = Bytecode.from_code(code)
    real = [ins for ins in dis.get_instructions(code) if ins.opname not in ("EXTENDED_ARG", "CACHE")]
    positions = [k for k, item in enumerate(bc) if isinstance(item, Instr)]
    if len(real) != len(positions):
        raise ValueError("instruction streams disagree")
    offset_to_pos = {}
    for ins, k in zip(real, positions):
        if bc[k].name != ins.opname:
            raise ValueError(f"instruction mismatch {bc[k].name} vs {ins.opname}")
        offset_to_pos[ins.offset] = k
    return bc, offset_to_pos


def stack_effect(ins):
    """(pops, pushes) of an instruction a break function replays as it is, or None."""
    if ins.opname == "CALL_FUNCTION_EX":          # NULL, callable, args tuple[, kwargs dict] -> result
        return 3 + (ins.arg & 1), 1
    if pyversion.format_has_spec(ins):
        return None
    if ins.opname == "STORE_DEREF":               # `nonlocal x; x = v` in a frame with free variables
        return 1, 0
    return pyversion.SIMPLE_STACK_EFFECT.get(ins.opname)


def stack_args(layout) -> list:
    """Parameter names of the non-NULL stack slots (layout: tuple of bools, True = NULL)."""
    return [f"{STACK_PREFIX}{i}" for i, is_null in enumerate(layout) if not is_null]


def _push_stack(layout, lineno):
    out = []
    for i, is_null in enumerate(layout):
        out.append(Instr("PUSH_NULL", lineno=lineno) if is_null
                   else Instr("LOAD_FAST", f"{STACK_PREFIX}{i}", lineno=lineno))
    return out


def can_split(code) -> str | None:
    """Why this frame's code cannot be split at a break (None if it can)."""
    if code.co_cellvars:
        # a cell made before the break may be shared with a closure made before it too; a resume
        # function would give the variable a new cell and the closure would stop seeing writes
        return "the function has variables captured by inner functions (cells)"
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return "generators and coroutines are not split"
    return None


def _super_first_local(code, argnames) -> list:
    """Instructions that make the first local of a generated function hold the method's first
    argument (`self`), for a frame whose code may call `super()` without arguments: CPython finds
    `super()`'s object in the frame's first local slot, which in a break or resume function is a
    saved stack value. Empty when nothing is needed. (Run after the saved stack is pushed: that
    slot is dead from then on in a resume function; a break function saves and restores it.)"""
    if "__class__" not in code.co_freevars or not argnames:
        return []
    first = next((n for n in code.co_varnames if not n.startswith(STACK_PREFIX)), None)
    first = parameter_name(first) if first is not None else None
    if first is None or first == argnames[0] or first not in argnames:
        return []
    return [Instr("LOAD_FAST", first), Instr("STORE_FAST", argnames[0])]


def parameter_name(local: str) -> str:
    """The resume function's parameter for a local: the local's own name when it is an identifier
    (pytest's assertion rewriting makes locals like `@py_assert1`, which generated Python source
    such as a trampoline cannot name), else a stable identifier made from it."""
    if local.isidentifier():
        return local
    return "___local_" + "".join(c if c.isalnum() else "_" for c in local)


def make_resume_code(code, offset: int, layout: tuple, local_names: list, stop_offsets=(), name=None):
    """A copy of `code` that starts at `offset` with the given stack layout and locals as arguments.

    stop_offsets: the copy returns `(offset, locals())` (locals(): a dict of its bound locals) when
    control reaches one of these instructions instead of running it (resume/region.py)."""
    bc, offset_to_pos = _abstract_with_labels(code)
    for stop_offset in sorted(stop_offsets, reverse=True):
        stop = offset_to_pos[stop_offset]
        added = _return_locals(stop_offset, bc[stop].lineno)
        bc[stop:stop] = added
        offset_to_pos = {o: p + len(added) if p >= stop else p for o, p in offset_to_pos.items()}
    renames = {n: parameter_name(n) for n in code.co_varnames if parameter_name(n) != n}
    if renames:
        for item in bc:
            if not isinstance(item, Instr):
                continue
            if item.name in pyversion.LOCAL_NAME_OPS and item.arg in renames:
                item.arg = renames[item.arg]
            elif item.name in pyversion.LOCAL_PAIR_OPS:
                item.arg = tuple(renames.get(n, n) for n in item.arg)
        local_names = [renames.get(n, n) for n in local_names]
    target = offset_to_pos[offset]
    while target and isinstance(bc[target - 1], TryBegin):
        target -= 1            # jump into a try range through its start: the range's depth is known
    label = Label()
    lineno = bc[target].lineno if isinstance(bc[target], Instr) else code.co_firstlineno
    body = list(bc)
    body.insert(target, label)
    # keep the prologue up to RESUME (COPY_FREE_VARS comes before it), then restore the stack
    # and jump to the resume point
    first = next(k for k, item in enumerate(body) if isinstance(item, Instr) and item.name == "RESUME")
    # a region function runs the user's block in Python: its saved stack's parameters are unbound
    # once pushed, so `locals()` in the block never sees them (a resume function is traced, and the
    # tracer's locals() leaves them out; when one runs eagerly they stay visible there)
    unbind = [Instr("DELETE_FAST", name, lineno=lineno) for name in stack_args(layout)] if stop_offsets else []
    argnames = stack_args(layout) + list(local_names)
    prologue = _push_stack(layout, lineno) + unbind + _at_line(_super_first_local(code, argnames), lineno) \
        + [Instr("JUMP_FORWARD", label, lineno=lineno)]
    body[first + 1:first + 1] = prologue
    new = Bytecode(body)
    new.freevars, new.cellvars = list(bc.freevars), list(bc.cellvars)
    new.argnames = argnames
    new.argcount = len(new.argnames)
    new.posonlyargcount = 0
    new.kwonlyargcount = 0
    new.flags = code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    new.name = name or f"__resume_at_{offset}_{code.co_name}"
    new.qualname = new.name
    new.filename = code.co_filename
    new.first_lineno = code.co_firstlineno
    new.docstring = None
    return new.to_code()


def _at_line(instrs, lineno):
    for ins in instrs:
        ins.lineno = lineno
    return instrs


def _return_locals(offset, lineno):
    """`return (offset, locals())`: the builtin reads the calling frame, so it is loaded as a constant."""
    out = [Instr("PUSH_NULL", lineno=lineno), Instr("LOAD_CONST", locals, lineno=lineno)]
    if not pyversion.NULL_BELOW_CALLABLE:
        out.reverse()
    out = [Instr("LOAD_CONST", offset, lineno=lineno)] + out
    out += [Instr(name, 0, lineno=lineno) for name in pyversion.CALL_PREFIX]
    return out + [Instr("CALL", 0, lineno=lineno), Instr("BUILD_TUPLE", 2, lineno=lineno),
                  Instr("RETURN_VALUE", lineno=lineno)]


def make_resume_function(fn, offset, layout, local_names, array_scalars=()):
    """The resume function; `array_scalars`: its parameters that hold graph-computed NumPy scalars."""
    code = make_resume_code(fn.__code__, offset, layout, local_names)
    resume = types.FunctionType(code, fn.__globals__, code.co_name, None, fn.__closure__)
    setattr(resume, ARRAY_SCALARS_ATTR, frozenset(parameter_name(n) for n in array_scalars))
    return resume


def make_break_code(code, index: int, layout: tuple, local_names: list, resume_fns: dict):
    """The break function: run instruction `index` of `code` on the restored stack, then resume.

    resume_fns maps "next" (and "target" for a conditional jump) to the resume function objects.
    """
    instrs = pyversion.instructions(code)
    ins = instrs[index]
    lineno = ins.positions.lineno or code.co_firstlineno
    argnames = stack_args(layout) + list(local_names)
    swap = _at_line(_super_first_local(code, argnames), lineno)
    if swap:          # the first local is a saved stack value the resume call needs: keep it aside
        saved = [Instr("LOAD_FAST", argnames[0], lineno=lineno), Instr("STORE_FAST", "___first", lineno=lineno)]
        restore = [Instr("LOAD_FAST", "___first", lineno=lineno), Instr("STORE_FAST", argnames[0], lineno=lineno)]
        swap, unswap = saved + swap, restore
    else:
        unswap = []
    out = [Instr("RESUME", 0, lineno=lineno)]
    if code.co_freevars:            # the break function shares the frame's closure (a STORE_DEREF writes it)
        out.insert(0, Instr("COPY_FREE_VARS", len(code.co_freevars), lineno=lineno))
    if ins.opname in pyversion.CALLS:
        consumed = ins.arg + pyversion.CALLS[ins.opname]
        below, top = layout[:-consumed], layout[-consumed:]
        out += _push_at(top, len(below), lineno)
        kw_names = _kw_names_before(code, instrs, index)
        if kw_names is not None:
            out.append(Instr("KW_NAMES", kw_names, lineno=lineno))
        out += swap + [Instr(name, ins.arg, lineno=lineno) for name in pyversion.CALL_PREFIX]
        out += [Instr(ins.opname, ins.arg, lineno=lineno), Instr("STORE_FAST", "___result", lineno=lineno)]
        out += unswap + _call_resume(resume_fns["next"], below + (False,), local_names, lineno,
                                     result_slot=len(below))
    elif ins.opname in pyversion.POP_JUMPS or ins.opname in pyversion.POP_JUMPS_NONE:
        below = layout[:-1]
        jump_if = pyversion.POP_JUMPS.get(ins.opname)
        target = Label()
        out += _push_at((False,), len(below), lineno)
        if_true, if_false, if_none, if_not_none = pyversion.EMIT_JUMPS
        if jump_if is None:
            opname = if_none if pyversion.POP_JUMPS_NONE[ins.opname] else if_not_none
        else:
            opname = if_true if jump_if else if_false
            if pyversion.JUMP_NEEDS_TO_BOOL:
                out.append(Instr("TO_BOOL", lineno=lineno))
        out.append(Instr(opname, target, lineno=lineno))
        out += _call_resume(resume_fns["next"], below, local_names, lineno)
        out.append(target)
        out += _call_resume(resume_fns["target"], below, local_names, lineno)
    elif stack_effect(ins) is not None:
        pops, pushes = stack_effect(ins)
        below, top = layout[:len(layout) - pops], layout[len(layout) - pops:]
        out += _push_at(top, len(below), lineno)
        bc_orig, offset_to_pos = _abstract_with_labels(code)
        original = bc_orig[offset_to_pos[ins.offset]]
        out += swap
        out.append(Instr(original.name, original.arg, lineno=lineno) if original.require_arg()
                   else Instr(original.name, lineno=lineno))
        out += unswap
        if pushes:
            out.append(Instr("STORE_FAST", "___result", lineno=lineno))
            out += _call_resume(resume_fns["next"], below + (False,), local_names, lineno, result_slot=len(below))
        else:
            out += _call_resume(resume_fns["next"], below, local_names, lineno)
    else:
        raise ValueError(f"cannot break at {ins.opname}")
    bc = Bytecode(out)
    bc.freevars = list(code.co_freevars)
    # a function's own locals (without these flags `locals()` in its frame would be the module's globals)
    bc.flags = inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS | (0 if code.co_freevars else inspect.CO_NOFREE)
    bc.argnames = argnames
    bc.argcount = len(bc.argnames)
    bc.name = f"__break_at_{ins.offset}_{code.co_name}"
    bc.qualname = bc.name
    bc.filename = code.co_filename
    bc.first_lineno = code.co_firstlineno
    return bc.to_code()


def _kw_names_before(code, instrs, index):
    """The keyword names of a 3.11/3.12 CALL (a KW_NAMES before it, past PRECALL), or None."""
    j = index - 1
    while j >= 0 and instrs[j].opname in pyversion.CALL_PREFIX:
        j -= 1
    if j >= 0 and instrs[j].opname == "KW_NAMES":
        return code.co_consts[instrs[j].arg]
    return None


def _push_at(layout, start, lineno):
    return [Instr("PUSH_NULL", lineno=lineno) if is_null
            else Instr("LOAD_FAST", f"{STACK_PREFIX}{start + i}", lineno=lineno)
            for i, is_null in enumerate(layout)]


def _call_resume(resume_fn, layout, local_names, lineno, result_slot=None):
    out = [Instr("PUSH_NULL", lineno=lineno), Instr("LOAD_CONST", resume_fn, lineno=lineno)]
    if not pyversion.NULL_BELOW_CALLABLE:
        out.reverse()
    n = 0
    for i, is_null in enumerate(layout):
        if is_null:
            continue
        name = "___result" if i == result_slot else f"{STACK_PREFIX}{i}"
        out.append(Instr("LOAD_FAST", name, lineno=lineno))
        n += 1
    for name in local_names:
        out.append(Instr("LOAD_FAST", name, lineno=lineno))
        n += 1
    out += [Instr(name, n, lineno=lineno) for name in pyversion.CALL_PREFIX]
    out += [Instr("CALL", n, lineno=lineno), Instr("RETURN_VALUE", lineno=lineno)]
    return out


def make_break_function(fn, index, layout, local_names, resume_fns):
    code = make_break_code(fn.__code__, index, layout, local_names, resume_fns)
    return types.FunctionType(code, fn.__globals__, code.co_name, None, fn.__closure__)
