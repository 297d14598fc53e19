"""One iteration of a `while` loop traced as predicated paths (if-conversion of any forward flow).

Inside an iteration (trace/while_loops.py) every conditional jump on array data forks the trace:
both sides are traced, each under the bool value that says it is the side Python takes (its
*predicate*: writes into arrays are predicated on it, GraphBuilder.push_predicate). Paths that
reach the same instruction are merged there before it runs: a value they hold differently
becomes `select(predicate, a, b)`. Paths run in the order of their instruction (the first copy
of the loop's test, which only a `continue` reaches inside the loop, counts as coming after the
body), so every path that can reach an instruction has reached it when it runs: any pattern of
`if`/`elif`, `and`/`or`, `continue` and `break` meets this way, nested or not.

A path ends when it comes back to the loop's header (the next iteration runs) or leaves the loop
(its test is false, `break`, or CPython 3.12+'s copy of the code after the loop). The iteration's
result: the paths that ended, merged, and `go`, the bool saying a path that reached the header is
the one Python takes.

Not supported (Unsupported: the loop is not a node): a path that leaves the loop elsewhere (a
`return` in its body), a backward jump while paths are apart (a loop unrolled inside one
branch), an array value that differs between paths (`np.where` says what to keep), a value
whose type differs between paths.
"""
from __future__ import annotations

from .. import pyversion
from ..errors import Unsupported
from . import errstate
from .branches import merge_values, truth_value
from .loop_values import PoisonVariable, kind_text, type_key


class Path:
    """Where one path of the iteration is (`ip`), under which predicate (None: always), with
    its own locals and stack."""
    __slots__ = ("ip", "pred", "locals", "stack")

    def __init__(self, ip, pred, locals_, stack):
        self.ip, self.pred, self.locals, self.stack = ip, pred, locals_, stack


class LoopIteration:
    """The region of one iteration of `loop` (resume/code_loops.CodeLoop): a path ends at the
    header ("next") or where it leaves the loop for its exit ("exit")."""

    def __init__(self, loop):
        self.loop = loop

    def end(self, tx, ip):
        loop = self.loop
        if ip == loop.header:
            return "next"
        if loop.contains(ip):
            return None
        if same_code(tx, ip, loop.exit):
            return "exit"
        raise Unsupported("a `return` (or a jump elsewhere than after the loop) inside a `while` loop",
                          kind="loop", hints=("compute the result after the loop",))

    def rank(self, tx, ip) -> int:
        # the first copy of the test (before the header) runs after the body: a `continue` reaches it
        return ip if ip >= self.loop.header else ip + len(tx.instructions)

    def loops_back(self, ip) -> bool:
        """A jump to `ip` that is not to a later instruction starts another pass of a loop."""
        return self.loop.contains(ip) and ip != self.loop.header


class FunctionRest:
    """The region of the rest of an inlined function, from a branch on data inside it: a path
    ends at a `return` (the function's value is the returned values, merged)."""

    def end(self, tx, ip):
        return "return" if tx.instructions[ip].opname in pyversion.RETURNS else None

    def rank(self, tx, ip) -> int:
        return ip

    def loops_back(self, ip) -> bool:
        return True


class Paths:
    """The paths of a region of the code `tx` traces (a LoopIteration or a FunctionRest)."""

    def __init__(self, tx, region):
        self.tx, self.region = tx, region
        self.pending: dict = {}            # rank of an instruction -> paths waiting to run it
        self.ended: list = []              # (how it ended: "next", "exit", "return"; Path)
        self.current: Path | None = None
        self.forked = False
        self.siblings: dict = {}           # id(predicate of one side of a fork) -> (other side, parent)

    # -- running ------------------------------------------------------------------------------------
    def run(self, first: Path | None = None) -> None:
        """Trace the region from `first` (or from the paths a fork already made) to its end."""
        tx = self.tx
        output = tx.output
        output.side_effects.frozen += 1     # a Python side effect would happen whichever path runs
        try:
            if first is not None:
                self._advance(first, at_start=True)
            while self.pending:
                rank = min(self.pending)
                self._advance(self._merge(self.pending.pop(rank)))
        finally:
            output.side_effects.frozen -= 1
        if not self.ended:
            raise Unsupported("a region of a loop body that never ends", kind="loop")

    def fork(self, ins, cond) -> None:
        """A conditional jump on data at `ins` (the current path's instruction): both sides go on
        as paths of their own."""
        tx, path = self.tx, self.current
        bb = tx.output.builder
        holds = truth_value(tx, cond, True)
        fails = bb.emit("logical_not", holds)
        taken, not_taken = (holds, fails) if pyversion.POP_JUMPS[ins.opname] else (fails, holds)
        if path.pred is not None:
            taken, not_taken = (bb.emit("logical_and", path.pred, p) for p in (taken, not_taken))
        self.siblings[id(taken)] = (not_taken, path.pred)
        self.siblings[id(not_taken)] = (taken, path.pred)
        self._add(Path(tx.offset_to_index[ins.argval], taken, dict(tx.locals), list(tx.stack)))
        self._add(Path(tx.ip, not_taken, dict(tx.locals), list(tx.stack)))
        self.forked = True

    def _advance(self, path: Path, at_start=False) -> None:
        tx, region = self.tx, self.region
        bb = tx.output.builder
        tx.locals, tx.stack, tx.ip = path.locals, path.stack, path.ip
        self.current = path
        while True:
            if not at_start:
                end = region.end(tx, tx.ip)
                if end is not None:
                    self.ended.append((end, Path(tx.ip, path.pred, tx.locals, tx.stack)))
                    return
                if self.pending and self._rank(tx.ip) >= min(self.pending):
                    self._add(Path(tx.ip, path.pred, tx.locals, tx.stack))   # others may reach it first
                    return
            at_start = False
            if tx.ip in tx.region_starts and not errstate.trace_block(tx):
                raise Unsupported("a try/with block inside a `while` loop's body", kind="loop")
            before = tx.ip
            self.forked = False
            if path.pred is not None:
                bb.push_predicate(path.pred)
            try:
                tx.step()
            except Unsupported as exc:
                if not exc.location:                     # where in the body (the loop's log says it)
                    loc = tx.location()
                    exc.location, exc.source_line = loc.short(), loc.source_line
                raise
            finally:
                if path.pred is not None:
                    bb.pop_predicate()
            if self.forked:
                return                                   # the fork made the paths that go on
            if self.pending and self._rank(tx.ip) <= self._rank(before) and region.loops_back(tx.ip):
                raise Unsupported("a loop inside one branch of a data-dependent `if`", kind="loop")

    def _rank(self, ip) -> int:
        return self.region.rank(self.tx, ip)

    def _add(self, path: Path) -> None:
        self.pending.setdefault(self._rank(path.ip), []).append(path)

    # -- merging ------------------------------------------------------------------------------------
    def _merge(self, paths: list) -> Path:
        """The paths at one instruction as one: values they hold differently are selected."""
        if len(paths) == 1:
            return paths[0]
        if any(len(p.stack) != len(paths[0].stack) for p in paths):
            raise Unsupported("paths of a `while` body meet with different stacks", kind="loop")
        pred = self._either([p.pred for p in paths])
        names = set().union(*(p.locals for p in paths))
        merged_locals = {name: self._merge_value([p.locals.get(name) for p in paths], paths, name)
                         for name in names}
        stack = [self._merge_value([p.stack[k] for p in paths], paths, "a value on the stack")
                 for k in range(len(paths[0].stack))]
        return Path(paths[0].ip, pred, merged_locals, stack)

    def _either(self, preds):
        """The predicate of "one of these paths": both sides of a fork make the path it forked
        (None: always), so code after an `if` runs unpredicated again; else their `or`."""
        preds = list(preds)
        joined = True
        while joined and len(preds) > 1:
            joined = False
            for a in preds:
                other, parent = self.siblings.get(id(a), (None, None))
                if other is not None and any(b is other for b in preds):
                    preds = [b for b in preds if b is not a and b is not other] + [parent]
                    joined = True
                    break
        if any(p is None for p in preds):
            return None
        out = preds[0]
        for p in preds[1:]:
            out = self.tx.output.builder.emit("logical_or", out, p)
        return out

    def _merge_value(self, values, paths, name):
        first = values[0]
        if all(v is first for v in values):
            return first
        if any(v is None or isinstance(v, PoisonVariable) for v in values):
            return PoisonVariable(name)                 # assigned on some paths only
        out = values[-1]
        for v, p in zip(reversed(values[:-1]), reversed(paths[:-1])):
            if v is out:
                continue
            try:
                out = merge_values(self.tx, self.tx.output.builder, p.pred, v, out, name)
            except Unsupported as exc:
                if exc.kind == "loop_type":
                    exc.explanation = (f"{name} is {kind_text(type_key(v))} on one path and "
                                       f"{kind_text(type_key(out))} on another")
                self._locate(exc, paths[0].ip)
                raise
        return out

    def _locate(self, exc, ip) -> None:
        """Name the line where paths meet (or end) in an error raised while merging them."""
        if not exc.location and ip < len(self.tx.instructions):
            ins = self.tx.instructions[ip]
            line = ins.positions.lineno if ins.positions else None
            exc.location = f"{self.tx.code.co_filename}:{line or self.tx.code.co_firstlineno}"

    # -- results ------------------------------------------------------------------------------------
    def iteration(self) -> tuple:
        """(go, the merged end state): go is a bool value, True when every path that Python may
        take comes back to the header, False when none does. tx's locals and stack are left at
        the merged end state."""
        state = self._merge([p for _, p in self.ended])
        nexts = [p for how, p in self.ended if how == "next"]
        go = self._either([p.pred for p in nexts]) if nexts else False
        if go is None:
            go = True
        self.tx.locals, self.tx.stack = state.locals, state.stack
        return go, state

    def returned(self):
        """The value the function returns: the values its paths return, merged."""
        from .variables.constant import ConstantVariable
        values, paths = [], []
        for _, p in self.ended:
            ins = self.tx.instructions[p.ip]
            values.append(p.stack[-1] if ins.opname == "RETURN_VALUE" else ConstantVariable(ins.argval))
            paths.append(p)
        return self._merge_value(values, paths, "the returned value")


def same_code(tx, a, b, limit=64) -> bool:
    """The code at instruction `a` does what the code at `b` does: it is `b`, it jumps to `b`, or
    it is a copy of it up to a return (CPython 3.12+ copies a short exit block into each `break`,
    after a NOP for the `break` itself)."""
    ins = tx.instructions
    if b >= len(ins):
        return False
    while a != b and a < len(ins) and ins[a].opname == "NOP":
        a += 1
    while a != b and b < len(ins) and ins[b].opname == "NOP":
        b += 1
    if a == b or (ins[a].opname in pyversion.UNCONDITIONAL_JUMPS and tx.offset_to_index.get(ins[a].argval) == b):
        return True
    for k in range(min(limit, len(ins) - max(a, b))):
        x, y = ins[a + k], ins[b + k]
        if x.opname != y.opname or x.argval != y.argval or x.opname in pyversion.UNCONDITIONAL_JUMPS or \
                x.opname in pyversion.POP_JUMPS or x.opname.startswith(("FOR_ITER", "JUMP", "SEND")):
            return False
        if x.opname in pyversion.RETURNS:
            return True
    return False
