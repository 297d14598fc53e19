"""Graph breaks: where a frame can be split, and the entry's hand-off to the break function."""
from __future__ import annotations

import dis
import threading

from .. import pyversion
from ..errors import NumpyError, Unsupported
from ..ir.fake import FakeArray
from ..resume.codegen import (ORIGIN_ATTR, STACK_PREFIX, can_split, make_break_function, make_resume_function,
                              parameter_name, stack_args, stack_effect)
from ..resume.region import RegionError, find_exits, is_block_start, make_region_function, region_base
from .variables.array import ArrayVariable
from .variables.base import NullVariable


def _is_array_scalar(vt) -> bool:
    """A NumPy scalar the graph computes (`x.sum()`): the resume function takes it as a 0-d input."""
    return isinstance(vt, ArrayVariable) and isinstance(vt.proxy.fake, FakeArray) and vt.proxy.fake.scalar


def breakable_index(cache, exc: Unsupported, options) -> int:
    """The root instruction to split at, or re-raise `exc` when the frame cannot be split."""
    if options.fullgraph or isinstance(exc, NumpyError):
        raise exc
    index = getattr(exc, "root_index", None)
    if index is None or getattr(exc, "frame_bound", False):
        raise exc
    why = can_split(cache.code)
    if why is not None:
        exc.explanation += f" (and the frame cannot be split: {why})"
        raise exc
    if getattr(exc, "stack_depth", None) is not None:       # a try/with block starts here
        try:
            find_exits(cache.code, index, exc.stack_depth)
        except RegionError as why:
            exc.explanation += f" (and the block cannot be split out: {why})"
            raise exc from None
        return index
    ins = pyversion.instructions(cache.code)[index]
    if ins.opname not in pyversion.CALLS and ins.opname not in pyversion.POP_JUMPS and \
            ins.opname not in pyversion.POP_JUMPS_NONE and stack_effect(ins) is None:
        raise exc
    if pyversion.format_has_spec(ins):
        raise exc
    return index


class _Origin:
    """The user's frame a resume function was cut from, standing in for its FrameCache: a break
    inside a resume function continues in the resume function of the same place in the user's
    code (one function however many iterations of a loop break), not in a resume function of
    the resume function."""

    def __init__(self, fn, state):
        self.fn, self.code, self.state = fn, fn.__code__, state


def _origin_of(cache):
    origin = getattr(cache.fn, ORIGIN_ATTR, None)
    return origin if origin is not None else _Origin(cache.fn, cache.state)


def _real(code) -> list:
    return [k for k, ins in enumerate(pyversion.instructions(code)) if ins.opname != "EXTENDED_ARG"]


_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _same_instruction(a, b) -> bool:
    """The same instruction in two copies of one code (jump targets moved with the prologue)."""
    return a.opname == b.opname and (a.opcode in _JUMPS or a.argval == b.argval)


def break_target(cache, index):
    """(frame, index): where a break at instruction `index` of `cache`'s code is split. In a
    resume function, the same instruction of the user's code it was cut from when the two
    align (the resume code is the user's code with a prologue after RESUME), so the break
    function and the resume function after it are shared with the user's frame."""
    origin = getattr(cache.fn, ORIGIN_ATTR, None)
    if origin is None or is_block_start(cache.code, index) or \
            any(parameter_name(n) != n for n in origin.code.co_varnames):
        return cache, index
    mine, theirs = pyversion.instructions(cache.code), pyversion.instructions(origin.code)
    r, o = _real(cache.code), _real(origin.code)
    shift = len(r) - len(o)
    try:
        start = next(p for p, k in enumerate(o) if theirs[k].opname == "RESUME") + 1
        pos = r.index(index)
    except (StopIteration, ValueError):
        return cache, index
    if pos - shift < start or not all(_same_instruction(mine[r[p + shift]], theirs[o[p]])
                                      for p in range(start, len(o))):
        return cache, index
    mapped = o[pos - shift]
    if is_block_start(origin.code, mapped):
        return cache, index
    return origin, mapped


def _resume_trampoline(cache, offset, layout, local_names, options, scalars):
    """scalars: names of the resume function's parameters that hold graph NumPy scalars."""
    params = set(stack_args(layout)) | set(local_names)
    scalars = tuple(sorted(n for n in scalars if n in params))
    store = cache.state.data.setdefault("resume", {})
    key = ("resume", offset, layout, tuple(local_names), scalars)
    tramp = store.get(key)
    if tramp is None:
        from ..eval_frame import compile as ft_compile
        fn = make_resume_function(cache.fn, offset, layout, local_names, scalars)
        setattr(fn, ORIGIN_ATTR, _origin_of(cache))
        tramp = store[key] = _bounded(ft_compile(fn, dynamic=options.dynamic, backend=options.backend))
    return tramp


# resume functions called from break functions, nested, in this thread: a loop that breaks in
# every iteration nests one break function and one resume function per iteration
_nesting = threading.local()
MAX_NESTED_RESUMES = 48


def _bounded(tramp):
    """The resume function as break functions call it: compiled while fewer than
    MAX_NESTED_RESUMES are running in this thread, else its own code in Python (it runs the
    rest of the loop in one frame), so a long loop that breaks in every iteration never
    exceeds Python's recursion limit."""
    cache = tramp._frametrace_cache

    def resume(*args):
        depth = getattr(_nesting, "depth", 0)
        if depth >= MAX_NESTED_RESUMES:
            return cache.run_original(*args)
        _nesting.depth = depth + 1
        try:
            return tramp(*args)
        finally:
            _nesting.depth = depth

    resume.__name__ = resume.__qualname__ = tramp.__name__
    resume._frametrace_cache = cache
    return resume


def _region_break_function(cache, index, layout, local_names, options, scalars):
    """The break function of a try/with block: run the block in Python (its region function), then
    call the resume function of the exit it reached with the locals it left bound."""
    code = cache.code
    try:
        exits = find_exits(code, index, len(layout))
        region = make_region_function(cache.fn, index, layout, local_names, exits)
    except (RegionError, ValueError, KeyError, RuntimeError) as why:   # `bytecode` rejects the copy
        raise Unsupported(f"the block cannot be split out: {why}", kind="exception_table") from None
    below = layout[:region_base(code, index, len(layout))]
    nbelow = len(stack_args(below))
    # the stack below the block is untouched by it; locals may be rebound to anything inside it
    live = frozenset(n for n in scalars if n.startswith(STACK_PREFIX) and int(n[len(STACK_PREFIX):]) < len(below))
    varnames = [n for n in code.co_varnames if not n.startswith(STACK_PREFIX)]
    resumes: dict = {}

    def run_block(*args):
        where, bound = region(*args)
        names = tuple(n for n in varnames if parameter_name(n) in bound)
        resume = resumes.get((where, names))
        if resume is None:
            resume = resumes[where, names] = _resume_trampoline(cache, where, below, names, options, live)
        return resume(*args[:nbelow], *[bound[parameter_name(n)] for n in names])

    run_block.__qualname__ = run_block.__name__ = region.__name__
    return run_block


def _break_function(cache, index, layout, local_names, options, scalars=frozenset()):
    """scalars: the stack slots (`___stack<i>`) and locals that hold graph NumPy scalars."""
    store = cache.state.data.setdefault("resume", {})
    key = ("break", index, layout, tuple(local_names), tuple(sorted(scalars)))
    fn = store.get(key)
    if fn is None and is_block_start(cache.code, index):
        fn = store[key] = _region_break_function(cache, index, layout, local_names, options, scalars)
    if fn is None:
        instrs = pyversion.instructions(cache.code)
        ins = instrs[index]
        if ins.opname in pyversion.CALLS:
            kept = len(layout) - (ins.arg + pyversion.CALLS[ins.opname])
            after = layout[:kept] + (False,)
        elif stack_effect(ins) is not None:
            pops, pushes = stack_effect(ins)
            kept = len(layout) - pops
            after = layout[:kept] + (False,) * pushes
        else:
            kept = len(layout) - 1
            after = layout[:-1]
        # slots at or above `kept` hold the instruction's results, not the values saved here
        live = {n for n in scalars if not n.startswith(STACK_PREFIX) or int(n[len(STACK_PREFIX):]) < kept}
        resumes = {"next": _resume_trampoline(cache, instrs[index + 1].offset, after, local_names, options, live)}
        if ins.opname not in pyversion.CALLS and stack_effect(ins) is None:
            resumes["target"] = _resume_trampoline(cache, ins.argval, after, local_names, options, live)
        fn = make_break_function(cache.fn, index, layout, local_names, resumes)
        store[key] = fn
    return fn


def break_return_code(cache, brk, rebuild, namespace, options) -> str:
    """Python code (inside the entry) that rebuilds stack and locals and calls the break function."""
    tx = brk.tx
    layout = tuple(isinstance(v, NullVariable) for v in tx.stack)
    ins = pyversion.instructions(cache.code)[tx.stop_index]
    if ins.opname in pyversion.CALLS and len(layout) < ins.arg + pyversion.CALLS[ins.opname]:
        raise Unsupported("stack too short at the break", kind="internal")
    rebuild.allow_iterators = True        # a loop's iterator continues in the resume function
    args = [rebuild(v) for v in tx.stack if not isinstance(v, NullVariable)]
    scalars = {f"{STACK_PREFIX}{i}" for i, v in enumerate(tx.stack) if _is_array_scalar(v)}
    target, index = break_target(cache, tx.stop_index)
    local_names = []
    for name in target.code.co_varnames:
        if name.startswith(STACK_PREFIX):      # a resume function's saved stack: dead after its prologue
            continue
        if name in tx.locals:
            local_names.append(name)
            args.append(rebuild(tx.locals[name]))
            if _is_array_scalar(tx.locals[name]):
                scalars.add(name)
        elif name in tx.lazy:
            local_names.append(name)
            args.append(tx.lazy[name][1].code)
    fn = _break_function(target, index, layout, local_names, options, frozenset(scalars))
    name = f"___break_{len(namespace)}"
    namespace[name] = fn
    # pending side effects land before the break function runs (its arguments are evaluated first)
    arg_tuple = f"({', '.join(args)},)" if args else "()"
    return tx.output.side_effects.replay_code(rebuild, namespace, name, arg_tuple)
