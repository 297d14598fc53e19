"""Graph breaks: where a frame can be split, and the entry's hand-off to the break function."""
from __future__ import annotations

from .. import pyversion
from ..errors import NumpyError, Unsupported
from ..resume.codegen import STACK_PREFIX, can_split, make_break_function, make_resume_function
from .variables.base import NullVariable


def breakable_index(cache, exc: Unsupported, options) -> int:
    """The root instruction to split at, or re-raise `exc` when the frame cannot be split."""
    if options.fullgraph or isinstance(exc, NumpyError):
        raise exc
    index = getattr(exc, "root_index", None)
    if index is None:
        raise exc
    why = can_split(cache.code)
    if why is not None:
        exc.explanation += f" (and the frame cannot be split: {why})"
        raise exc
    ins = pyversion.instructions(cache.code)[index]
    if ins.opname != "CALL" and ins.opname not in pyversion.POP_JUMPS and \
            ins.opname not in pyversion.POP_JUMPS_NONE and ins.opname not in pyversion.SIMPLE_STACK_EFFECT:
        raise exc
    if ins.opname == "FORMAT_VALUE" and ins.arg & 0x04:
        raise exc
    return index


def _resume_trampoline(cache, offset, layout, local_names, options):
    store = cache.state.data.setdefault("resume", {})
    key = ("resume", offset, layout, tuple(local_names))
    tramp = store.get(key)
    if tramp is None:
        from ..eval_frame import compile as ft_compile
        fn = make_resume_function(cache.fn, offset, layout, local_names)
        tramp = ft_compile(fn, dynamic=options.dynamic, backend=options.backend)
        store[key] = tramp
    return tramp


def _break_function(cache, index, layout, local_names, options):
    store = cache.state.data.setdefault("resume", {})
    key = ("break", index, layout, tuple(local_names))
    fn = store.get(key)
    if fn is None:
        instrs = pyversion.instructions(cache.code)
        ins = instrs[index]
        if ins.opname == "CALL":
            after = layout[:len(layout) - (ins.arg + 2)] + (False,)
            resumes = {"next": _resume_trampoline(cache, instrs[index + 1].offset, after, local_names, options)}
        elif ins.opname in pyversion.SIMPLE_STACK_EFFECT:
            pops, pushes = pyversion.SIMPLE_STACK_EFFECT[ins.opname]
            after = layout[:len(layout) - pops] + (False,) * pushes
            resumes = {"next": _resume_trampoline(cache, instrs[index + 1].offset, after, local_names, options)}
        else:
            after = layout[:-1]
            resumes = {"next": _resume_trampoline(cache, instrs[index + 1].offset, after, local_names, options),
                       "target": _resume_trampoline(cache, ins.argval, after, local_names, options)}
        fn = make_break_function(cache.fn, index, layout, local_names, resumes)
        store[key] = fn
    return fn


def break_return_code(cache, brk, rebuild, namespace, options) -> str:
    """Python code (inside the entry) that rebuilds stack and locals and calls the break function."""
    tx = brk.tx
    layout = tuple(isinstance(v, NullVariable) for v in tx.stack)
    ins = pyversion.instructions(cache.code)[tx.stop_index]
    if ins.opname == "CALL" and len(layout) < ins.arg + 2:
        raise Unsupported("stack too short at the break", kind="internal")
    args = [rebuild(v) for v in tx.stack if not isinstance(v, NullVariable)]
    local_names = []
    for name in cache.code.co_varnames:
        if name.startswith(STACK_PREFIX):      # a resume function's saved stack: dead after its prologue
            continue
        if name in tx.locals:
            local_names.append(name)
            args.append(rebuild(tx.locals[name]))
        elif name in tx.lazy:
            local_names.append(name)
            args.append(tx.lazy[name][1].code)
    fn = _break_function(cache, tx.stop_index, layout, local_names, options)
    name = f"___break_{len(namespace)}"
    namespace[name] = fn
    return f"{name}({', '.join(args)})"
