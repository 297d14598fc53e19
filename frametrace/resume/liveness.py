"""Which locals of a code object are live where: read later on some path before being written.

A loop node carries only the locals its body reads before writing them, or that the code after
the loop reads (trace/while_loops.py): a temporary of the body (`un = u.copy()` at its top, a
residual only the loop's test reads) is not carried, so its value before the loop neither costs
a carried slot nor has to agree in type with the body's.
"""
from __future__ import annotations

import weakref

from .. import pyversion
from .code_loops import successors

_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST"})
_WRITES = frozenset({"STORE_FAST", "DELETE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_MAYBE_NULL"})


def live_before(code, index: int) -> frozenset:
    """The local names live just before instruction `index` (all of them when the code reads its
    own locals with `locals()`, `vars()`, `dir()` or `eval`)."""
    live = _CACHE.get(code)
    if live is None:
        live = _CACHE[code] = _solve(code)
    return live[index]


def _names(arg) -> tuple:
    return tuple(arg) if isinstance(arg, tuple) else (arg,)


def _solve(code) -> list:
    instrs = pyversion.instructions(code)
    at = {ins.offset: i for i, ins in enumerate(instrs)}
    everything = frozenset(code.co_varnames)
    if any(ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.argval in ("locals", "vars", "dir", "eval", "exec")
           for ins in instrs):
        return [everything] * len(instrs)
    succ = [successors(instrs, i, at) for i in range(len(instrs))]
    for entry in pyversion.exception_entries(code):        # a handler may read what its block left
        for i, ins in enumerate(instrs):
            if entry.start <= ins.offset < entry.end:
                succ[i].append(at[entry.target])
    use, kill = [], []
    for ins in instrs:
        name = ins.opname
        if name == "STORE_FAST_LOAD_FAST":                  # 3.13: store the first, then read the second
            stored, read = ins.argval
            use.append(frozenset({read} - {stored}))
            kill.append(frozenset({stored}))
        else:
            use.append(frozenset(_names(ins.argval)) if name in _READS else frozenset())
            kill.append(frozenset(_names(ins.argval)) if name in _WRITES else frozenset())
    live = [frozenset()] * len(instrs)
    changed = True
    while changed:
        changed = False
        for i in range(len(instrs) - 1, -1, -1):
            out = frozenset().union(*(live[s] for s in succ[i])) if succ[i] else frozenset()
            new = use[i] | (out - kill[i])
            if new != live[i]:
                live[i], changed = new, True
    return live
