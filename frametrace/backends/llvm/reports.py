"""Warnings and errors of a compiled call in NumPy's order (the wrapper's side: wrapper.py).

Eager NumPy reports as it goes: each ufunc's FP errors right after its loop, a function's own
Python warnings ("Mean of empty slice", "All-NaN slice encountered") where its code calls
`warnings.warn`, and a warning issued before an exception stays issued. A compiled call has
three kinds of reports, and keeps them in that order:

* FP flags of kernels (fp_errors.py): only a "maybe", with no position. NumPy must redo the
  call to know what it reports, and then reports everything itself.
* Events: what NumPy's Python code warns from values the kernels computed (report_if nodes:
  `if flag: _w.append(id)`) or from sizes (registry `OpDef.warns`: np.mean over nothing,
  np.var with ddof >= the count). They are exact; the wrapper collects them in `_w` and
  issues them in program order at the next barrier.
* Live steps: NumPy functions the wrapper calls (np.nanvar, a loop's body): they warn as they
  run, out of our hands.

A barrier comes before each live step that may warn and at the end (`flush`): FP flags set
and not ignored -> NumPy redoes the call now, so nothing has been issued twice; else the
pending events before that step are issued, and the call is "committed" up to there (`_b`,
a point). After a live step that ran kernels (a loop) a second barrier checks its flags, then
commits the step. An exception anywhere (`failed`) makes the same decision: NumPy redoes the
call and raises (after its own warnings), or the pending events before the raising node are
issued, then the exception propagates.

A redo after some reports were issued must not issue them again: NumPy re-runs the graph with
the committed live steps and warning reductions given their computed values and the committed
report_if nodes left out (numpy_backend.generate_source `given`, `skip`), one variant per
point. What a committed kernel computed is recomputed: it had nothing to report (no flag, or
its kinds ignored). A committed node whose value a later step overwrites (a mutation into it,
a buffer reused in place) cannot be given: it is recomputed and may warn again (a known
difference, listed in README).

`reported` counts the calls that issued something (a redo or events): the array-loop driver
runs the rest of a loop natively only when its first iterations reported nothing, so that a
flag its kernels leave can be handed to NumPy for the whole loop (array_loops.py).
"""
from __future__ import annotations

import warnings

import numpy as np
import sympy

from ...codegen.llvm_kernels import fpflags
from ...ir.graph import Node
from ...ir.ops.loops import written_values
from ...ir.ops.nan_reductions import user_stacklevel
from ...ir.registry import get_op, size_warnings
from ...lower.fusion import KernelStep
from ...shapes import pycode
from ..numpy_backend import compile_graph as numpy_compile

reported = [0]          # calls that issued a report (redo or events): read by the array-loop driver


def runs_kernels(node: Node) -> bool:
    """Does the wrapper step run kernels of its own (their FP flags are in the word after it)?"""
    return node.op == "loop"


class Reports:
    """The run-time half: events, points and the NumPy redo of one compiled graph."""

    def __init__(self, graph, fallback):
        self.graph, self.fb = graph, fallback
        self.events: dict = {}          # event id -> (order: node position, message)
        self.points: list = [None]      # point -> its Ledger mark (None: the call's start)
        self.ledger = None              # the Ledger the marks index (ReportCode)
        self._resolved: dict = {0: ((), ())}   # point -> (given: ((pos, var, scalar), ...), skip positions)
        self._variants: dict = {}       # point -> its NumPy redo (built on first use)

    # -- compile time (wrapper.py) ------------------------------------------------------------
    def event(self, order: int, message: str) -> int:
        self.events[len(self.events)] = (order, message)
        return len(self.events) - 1

    def point(self, mark) -> int:
        self.points.append(mark)
        return len(self.points) - 1

    def committed(self, point) -> tuple:
        """(given, skip) of a point, resolved from its mark on first use (a redo)."""
        if point not in self._resolved:
            self._resolved[point] = self.ledger.resolve(self.points[point])
        return self._resolved[point]

    # -- run time -----------------------------------------------------------------------------
    def flush(self, pending, point, upto, inputs, symbol_values, saved, scope):
        """A barrier: NumPy's redo (its outputs) when a flag must be reported, else None after
        issuing the pending events before position `upto` (None: all)."""
        flags = fpflags.take()
        if flags and not self.fb.quiet(flags):
            try:
                redo = self.redo(point, inputs, symbol_values, saved, scope)
            except BaseException:             # NumPy's own error: it reported what came before
                if pending:
                    pending.clear()
                raise
            if redo is not None:
                return redo
        self.issue(pending, upto)
        return None

    def loud(self) -> bool:
        """Must a flag raised so far be reported (flush then redoes the call in NumPy)? The
        generated check asks this before it calls flush, whose last argument is the wrapper's
        `locals()` (~20-60 us for a graph of a few hundred values, on every call whose kernels
        raised a flag NumPy ignores: the underflow of exp in a masked softmax). Quiet flags are
        taken here, as flush would: the same as a call that raised none."""
        flags = fpflags.take()
        if not flags or self.fb.quiet(flags):
            return False
        fpflags.WORD.value |= flags               # flush takes them again
        return True

    def failed(self, pending, point, at, inputs, symbol_values, saved, scope):
        """An exception at node position `at` (None: unknown): NumPy's redo when a flag must
        be reported (it raises, or returns its outputs), else None after issuing the pending
        events before the raising node; the caller re-raises."""
        flags = fpflags.take()
        if flags and not self.fb.quiet(flags):
            try:
                return self.redo(point, inputs, symbol_values, saved, scope)
            except Exception as exc:
                exc.__suppress_context__ = True     # NumPy's error, not the compiled call's
                raise
        self.issue(pending, at)
        return None

    def issue(self, pending, upto=None):
        if not pending:
            return
        events = sorted(pending, key=lambda e: self.events[e][0])
        keep = [e for e in events if upto is not None and self.events[e][0] >= upto]
        level = user_stacklevel()
        for e in events:
            if upto is None or self.events[e][0] < upto:
                warnings.warn(self.events[e][1], RuntimeWarning, stacklevel=level)
        pending[:] = keep
        reported[0] += 1

    def redo(self, point, inputs, symbol_values, saved, scope):
        """NumPy re-runs the call from the state before it, the reports issued up to `point`
        kept out; None when it cannot (inputs written and nothing saved)."""
        if not self.fb.restore(saved):
            return None
        reported[0] += 1
        given, skip = self.committed(point)
        run = self._variants.get(point)
        if run is None:
            run = self._variants[point] = numpy_compile(self.graph, tuple(p for p, _, _ in given), skip)
        values = []
        for _, var, scalar in given:
            v = scope.get(var)                # (None: dropped, read by no node the redo computes)
            values.append(v[()] if scalar and isinstance(v, np.ndarray) and v.ndim == 0 else v)
        return run(inputs, symbol_values, values)


def static(cond):
    """True / False when a size condition is decided by its form alone, else None."""
    if cond is True or cond is sympy.true:
        return True
    if cond is False or cond is sympy.false:
        return False
    return None


class ReportCode:
    """The compile-time half: the wrapper's lines of the protocol (module doc). wrapper.py calls
    `before` / `after` around each wrapper step, `after_kernel` after each kernel step,
    `report_if` for a report_if step, and `finish` for the whole body."""

    def __init__(self, plan, steps, fp: bool):
        self.plan, self.steps, self.fp = plan, steps, fp
        self.event_nodes = {}             # node -> [(condition, message)] of its size warnings
        for s in steps:
            if isinstance(s, KernelStep):
                for j in s.jobs:
                    found = size_warnings(j.node)
                    if found:
                        self.event_nodes[j.node] = found
        self.events = bool(self.event_nodes) or any(
            not isinstance(s, KernelStep) and s.node.op == "report_if" and not s.node.attr("error") for s in steps)
        self.on = fp or self.events
        self.rp = Reports(plan.graph, None)
        self.pending = "_w" if self.events else "()"
        self.state = self.events              # the body sets _b / _p (a point, a raising report_if)
        self._ledger = None

    def _overwritten(self) -> set:
        """Values a later step overwrites: never given to a redo (computed once)."""
        return {donor for s in self.steps if isinstance(s, KernelStep) for _, donor in s.reuse} | \
            _written_nodes(self.plan.graph)

    def redo_reads(self) -> set:
        """The values a NumPy redo may read from the wrapper's locals (`given`, Ledger) after
        their last reader in the call ran: a committed live step or warning reduction whose
        value some node the redo recomputes reads (a kernel's job, a view, a step that is not
        given). One that only given live steps read is not read by any redo after them, so the
        wrapper drops it as NumPy drops its temporaries (dead_values.py): a chain of NumPy calls
        on complex arrays no longer keeps every temporary alive until the call returns."""
        if not self.on:
            return set()
        plan, overwritten = self.plan, self._overwritten()
        live = {s.node for s in self.steps if not isinstance(s, KernelStep)
                and plan.warns_in_wrapper(s.node)} - overwritten
        return {n for n in live | set(self.event_nodes)
                if not plan.users[n] or any(u not in live for u in plan.users[n])}

    def _check(self) -> str:
        if not self.events:                   # nothing to issue: only a loud flag needs flush
            return "_fpw.value and _rp.loud()" if self.fp else ""
        return " or ".join(x for x, ok in (("_w", self.events), ("_fpw.value", self.fp)) if ok)

    def _flush(self, upto, point) -> list:
        pos = "None" if upto is None else str(upto)
        lines = [f"    if {self._check()}:",
                 f"        _r = _rp.flush({self.pending}, _b, {pos}, inputs, symbol_values, _saved, locals())",
                 "        if _r is not None: return _r"]
        if point is not None:
            lines.append(f"        _b = {point}")
        return lines

    def _point(self, upto_step: int, upto: int) -> int:
        self.state = True
        if self._ledger is None:              # (values a redo cannot be given: computed once)
            self._ledger = self.rp.ledger = Ledger(self.plan, self.steps, self.event_nodes, self._overwritten())
        return self.rp.point(self._ledger.mark(upto_step, upto))

    def before(self, i: int, node) -> list:
        """A barrier before a wrapper step that may warn: the reports before it, in order."""
        if not self.on or not self.plan.warns_in_wrapper(node):
            return []
        return self._flush(self.plan.pos[node], self._point(i, self.plan.pos[node]))

    def after(self, i: int, node) -> list:
        """The step ran (and warned as NumPy does): its flags checked (a loop's kernels), then
        it is committed."""
        if not self.on or not self.plan.warns_in_wrapper(node):
            return []
        lines = []
        if self.fp and runs_kernels(node):
            lines = ["    if _fpw.value and _rp.loud():",
                     "        _r = _rp.flush((), _b, None, inputs, symbol_values, _saved, locals())",
                     "        if _r is not None: return _r"]
        return lines + [f"    _b = {self._point(i + 1, self.plan.pos[node])}"]

    def after_kernel(self, step) -> list:
        """The size warnings of the reductions a kernel step computed: pending events."""
        lines = []
        for j in step.jobs:
            for cond, message in self.event_nodes.get(j.node, ()):
                event = self.rp.event(self.plan.pos[j.node], message)
                if static(cond):
                    lines.append(f"    _w.append({event})")
                else:
                    lines.append(f"    if {pycode(cond, self.plan.sym_names)}: _w.append({event})")
        return lines

    def report_if(self, node, flag: str) -> list:
        """A warning NumPy's Python code issues from a computed flag: a pending event; an
        error (ValueError) raises here, with its position for `failed`."""
        message = node.attr("message")
        self.state = True
        if node.attr("error"):
            return [f"    if {flag}: _p = {self.plan.pos[node]}; raise ValueError({message!r})"]
        return [f"    if {flag}: _w.append({self.rp.event(self.plan.pos[node], message)})"]

    def finish(self, pre, body, fallback) -> list:
        """The whole body: `pre` (the snapshot), then `body` (ending with `_o = [...]`) in a
        try whose exceptions go through `failed`, then the last barrier."""
        self.rp.fb = fallback
        saved = [] if any(line.lstrip().startswith("_saved =") for line in pre) else ["    _saved = None"]
        state = [f"    _w, _b, _p = {'[]' if self.events else '()'}, 0, None"] if self.state else []
        where = "_b, _p" if self.state else "0, None"      # (no point, no raising report: constants)
        inner = ["    " + line for line in body]
        lines = pre + saved + state + ["    try:"] + inner + [
            "    except Exception:",
            f"        _r = _rp.failed({self.pending}, {where}, inputs, symbol_values, _saved, locals())",
            "        if _r is None: raise",
            "        return _r"] + self._flush(None, None) + ["    return _o"]
        return lines if self.state else [line.replace("_rp.flush((), _b,", "_rp.flush((), 0,") for line in lines]


class Ledger:
    """What a NumPy redo is given at each point (`given`: committed live steps and warning
    reductions with their computed values; `skip`: committed report_if nodes), gathered in one
    pass over the steps in run order. A point after the steps `steps[:upto_step]`, whose events
    before position `upto` were issued, is a mark: prefix lengths of the append-only lists below
    and `upto`; it becomes (given, skip) only when a redo needs it (`resolve`). So the wrapper's
    points cost O(1) each, however many steps come before them (walking every earlier step
    per point made the wrapper of a long chain of NumPy steps quadratic in the graph size).

    A committed node whose value a later step overwrites (`overwritten`: a mutation into it, a
    buffer reused in place) is not given: the redo recomputes it (it may warn twice)."""

    def __init__(self, plan, steps, event_nodes, overwritten):
        self.plan, self.steps, self.event_nodes, self.overwritten = plan, steps, event_nodes, overwritten
        self.done = 0                     # steps visited
        self.live: list = []              # (pos, var, scalar) of live steps: given at every later point
        self.events: list = []            # (pos, (pos, var, scalar)) of warning reductions: given once pos < upto
        self.skips: list = []             # positions of warning report_if nodes: skipped once pos < upto
        self.visits = 0                   # nodes looked at (tests: linear in the steps)

    def mark(self, upto_step: int, upto: int) -> tuple:
        if upto_step < self.done:         # (points come in run order; an earlier one is resolved at once)
            return ("resolved",) + committed(self.plan, self.steps[:upto_step], upto, self.event_nodes,
                                             self.overwritten)
        while self.done < upto_step:
            self._visit(self.steps[self.done])
            self.done += 1
        return len(self.live), len(self.events), len(self.skips), upto

    def resolve(self, mark) -> tuple:
        if mark[0] == "resolved":
            return mark[1], mark[2]
        n_live, n_events, n_skips, upto = mark
        given = self.live[:n_live] + [g for pos, g in self.events[:n_events] if pos < upto]
        return tuple(sorted(given)), tuple(sorted(p for p in self.skips[:n_skips] if p < upto))

    def _visit(self, step):
        plan = self.plan
        nodes = [step.node] if not isinstance(step, KernelStep) else [j.node for j in step.jobs]
        for n in nodes:
            self.visits += 1
            pos = plan.pos.get(n)
            if pos is None:                   # a kernel's own value (a mask's count)
                continue
            if n.op == "report_if" and not n.attr("error"):
                self.skips.append(pos)
                continue
            live = not isinstance(step, KernelStep) and plan.warns_in_wrapper(n)
            if not live and n not in self.event_nodes:
                continue
            if n.dtype is None or n in self.overwritten or n not in plan.var or (
                    not live and n not in plan.stored):
                continue                      # recomputed by the redo (may warn twice)
            entry = (pos, plan.var[n], bool(n.scalar and n.shape == ()))
            if live:
                self.live.append(entry)
            else:
                self.events.append((pos, entry))


def committed(plan, done, upto: int, event_nodes, overwritten) -> tuple:
    """(given, skip) of a point after the steps `done`, whose events before position `upto`
    were issued, in one walk over `done` (Ledger: the same, shared by all points of a call)."""
    ledger = Ledger(plan, list(done), event_nodes, overwritten)
    return ledger.resolve(ledger.mark(len(done), upto))


def _written_nodes(graph) -> set:
    """Values a mutation writes into (and the views it writes through)."""
    out = set()
    for n in graph.nodes:
        for d in written_values(n):
            while isinstance(d, Node):
                out.add(d)
                if d.op == "input" or get_op(d.op).kind != "view" or not d.args:
                    break
                d = d.args[0]
    return out


__all__ = ["Ledger", "ReportCode", "Reports", "committed", "reported", "runs_kernels", "static"]
