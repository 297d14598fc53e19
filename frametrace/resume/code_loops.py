"""The loops of a code object, found in its bytecode: where each starts, its body and its exit.

A loop is the natural loop of its back edges (a jump from j back to a header h <= j): the header
and every instruction that reaches a back edge without passing the header. The compilers of
CPython 3.11-3.13 lay loops out as

    for x in it:      GET_ITER; FOR_ITER (header) ... JUMP_BACKWARD header; exit (3.12+: END_FOR)
    while test:       test (jumps to the exit when false); header: body; the test again, jumping
                      back to the header while it holds; exit. A `continue` jumps back to the
                      first copy of the test. A long test is not copied: the back edge then goes
                      to the test itself, which is the header.
    while True:       header: body; JUMP_BACKWARD header; exit

so a `while` loop with a `continue` has two headers (the test and the body): they make one loop,
whose header is the body's first instruction (the one most back edges reach). The first copy
of the test runs once, before the loop: it belongs to the loop's `start`, not to its body.

Graph breaks (trace/graph_break.py) split a frame before the outermost loop around the break
(the loop then runs in Python: resume/region.py); the tracer traces one iteration of a `while`
loop's body (trace/while_loops.py).
"""
from __future__ import annotations

import dis
import weakref
from dataclasses import dataclass

from .. import pyversion

_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)
_ENDS = frozenset(pyversion.RETURNS | {"RAISE_VARARGS", "RERAISE"})


@dataclass(frozen=True)
class CodeLoop:
    """One loop of a code object; every field is an instruction index (pyversion.instructions)."""
    kind: str                  # "for" | "while"
    start: int                 # the first instruction: GET_ITER of a `for`, the first copy of a
                               # `while`'s test (its header when the test is not copied)
    header: int                # FOR_ITER; the first instruction of a `while` body
    back: int                  # the last back edge to the header
    exit: int                  # where the loop goes on when it ends without `break`/`return` (see
                               # _while_exit: 3.12+ may copy that code into each `break` instead)
    body: frozenset            # the instructions of its cycles

    def contains(self, index: int) -> bool:
        """Is the instruction part of the loop: its body, or the code before its header that
        starts it (GET_ITER, the first copy of a `while` test)?"""
        return index in self.body or self.start <= index < self.header


def successors(instrs, index: int, at: dict) -> list:
    """Where control goes after instruction `index` without raising (indices)."""
    ins = instrs[index]
    out = []
    if ins.opcode in _JUMPS and isinstance(ins.argval, int):
        target = at[ins.argval]
        out.append(target + pyversion.FOR_ITER_SKIP if ins.opname == "FOR_ITER" else target)
    if ins.opname not in pyversion.UNCONDITIONAL_JUMPS and ins.opname not in _ENDS and index + 1 < len(instrs):
        out.append(index + 1)
    return out


_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def loops_of(code) -> tuple:
    """The loops of `code`, outermost first (a loop comes before the loops inside it)."""
    found = _CACHE.get(code)
    if found is None:
        found = _CACHE[code] = _find_loops(code)
    return found


def enclosing(code, index: int) -> list:
    """The loops that contain instruction `index`, outermost first."""
    return [loop for loop in loops_of(code) if loop.contains(index)]


def _find_loops(code) -> tuple:
    instrs = pyversion.instructions(code)
    at = {ins.offset: i for i, ins in enumerate(instrs)}
    succ = [successors(instrs, i, at) for i in range(len(instrs))]
    preds: list = [[] for _ in instrs]
    for i, targets in enumerate(succ):
        for t in targets:
            preds[t].append(i)
    backs: dict = {}                                    # header -> back edge sources
    for i, targets in enumerate(succ):
        for t in targets:
            if t <= i:
                backs.setdefault(t, []).append(i)
    cycles = {h: _natural_loop(h, srcs, preds) for h, srcs in backs.items()}
    is_for = {h: instrs[h].opname == "FOR_ITER" for h in cycles}
    starts = {h: _test_start(instrs, h, max(backs[h]), succ, cycles[h]) for h in cycles if not is_for[h]}
    # a `while` with a `continue`: the continue jumps back to the first copy of the test, the
    # header of a loop around the body's loop that adds only that test: one loop, headed by the body
    continue_of = {}
    for b in cycles:
        for h in cycles:
            if h < b and not is_for[b] and not is_for[h] and starts[b] == h and b in cycles[h] and \
                    all(h <= i < b or i in backs[h] for i in cycles[h] - cycles[b]):
                continue_of[h] = b
    loops = []
    for header in sorted(h for h in cycles if h not in continue_of):
        parts = [header] + [h for h, b in continue_of.items() if b == header]
        body = frozenset().union(*(cycles[h] for h in parts))
        back = max(backs[header])
        if is_for[header]:
            exit_ = at[instrs[header].argval] + pyversion.FOR_ITER_SKIP
            start = header - 1 if header and instrs[header - 1].opname == "GET_ITER" else header
            loops.append(CodeLoop("for", start, header, back, exit_, body))
        else:
            start = starts[header]
            loops.append(CodeLoop("while", start, header, back, _while_exit(back, body, start, header, succ), body))
    return tuple(sorted(loops, key=lambda lp: (lp.start, -len(lp.body))))


def _while_exit(back: int, body, start: int, header: int, succ) -> int:
    """Where a `while` loop goes on when its test fails: the instruction after its last back
    edge. CPython 3.12+ leaves none after `while True:` when the code after the loop is a short
    `return`, copied into each `break`: the first of those copies then."""
    leaving = sorted({t for i in body | set(range(start, header)) for t in succ[i]
                      if t not in body and not start <= t < header})
    if back + 1 in leaving or not leaving:
        return back + 1
    return leaving[0]


def _natural_loop(header: int, sources, preds) -> frozenset:
    body = {header}
    work = [s for s in sources if s != header]
    while work:
        n = work.pop()
        if n in body:
            continue
        body.add(n)
        work.extend(preds[n])
    return frozenset(body)


def _test_start(instrs, header: int, back: int, succ, body) -> int:
    """The first instruction of the first copy of a `while` test that ends just before `header`
    (`header` when there is none): the instructions before the header on the lines of the loop's
    bottom test that only lead into the header or out of the loop."""
    exit_ = back + 1
    test_jump = header - 1
    if header == 0 or instrs[test_jump].opname not in pyversion.POP_JUMPS or exit_ not in succ[test_jump]:
        return header                                   # `while True:`, or a test at the top
    lines = {instrs[back].positions.lineno, instrs[test_jump].positions.lineno} - {None}
    start = test_jump
    while start > 0:
        k = start - 1
        line = instrs[k].positions.lineno
        if (line is not None and line not in lines) or k in body or \
                any(t not in range(k, header + 1) and t != exit_ for t in succ[k]):
            break
        start = k
    return start
