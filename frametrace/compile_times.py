"""What each compile costs, per phase: ft.explain(...).compile_times and the `compile` log.

    with compile_times.timing() as times:       # around one frame's compile (trace/compile.py)
        with compile_times.phase("trace"): ...   # time spent inside, minus nested phases
        compile_times.count("kernels_compiled")
    times.seconds   # {"trace": 0.12, "lowering": 0.03, "codegen": 0.01, "llvm": 0.2, ...}

Phases: import (the backend's modules, on the first compile of a process), trace (symbolic
interpretation, retraces included), passes (graph passes), lowering
(scheduling, fusion, loop IR), codegen (LLVM IR text), llvm (LLVM optimisation and machine
code: kernels, native entries), wrapper (the generated Python wrapper), entry (guards and the
entry function). A phase nested in another counts only in the inner one, so a loop body
compiled during lowering adds its LLVM time to `llvm`. Code running outside a timed compile
(a background tier-up) is not counted. No imports: any layer may time itself.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from dataclasses import dataclass, field

PHASES = ("import", "trace", "passes", "lowering", "codegen", "llvm", "wrapper", "entry")
SLOW_COMPILE_S = 2.0                   # a compile taking longer says so on the `compile` log
_timer: contextvars.ContextVar = contextvars.ContextVar("frametrace_compile_timer", default=None)
running: dict = {}                     # thread id -> PhaseTimes of its compile (reporting/watch.py reads it)


@dataclass
class PhaseTimes:
    """Seconds per phase of one compile (exclusive), its total, and counts (kernels compiled
    by LLVM, shared with earlier graphs of the process, loaded from the disk cache)."""
    seconds: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    total: float = 0.0
    _open: list = field(default_factory=list, repr=False)

    def main_phase(self) -> tuple:
        """(phase, seconds) that took longest."""
        return max(self.seconds.items(), key=lambda kv: kv[1], default=("", 0.0))

    def kernels(self) -> str:
        c = self.counts
        n = c.get("kernels_compiled", 0) + c.get("kernels_shared", 0) + c.get("kernels_loaded", 0)
        return (f"{n} kernel{'s' * (n != 1)} ({c.get('kernels_compiled', 0)} compiled by LLVM, "
                f"{c.get('kernels_shared', 0)} shared with earlier graphs, {c.get('kernels_loaded', 0)} "
                "from the disk cache)")

    def __str__(self):
        parts = [f"{p} {self.seconds[p]:.3f} s" for p in sorted(self.seconds, key=_phase_order)
                 if self.seconds[p] >= 0.0005]
        return ", ".join(parts) or "nothing timed"


def _phase_order(name):
    return PHASES.index(name) if name in PHASES else len(PHASES)


@contextlib.contextmanager
def timing():
    """Time the compile run inside; a compile nested in it (a callee compiled while tracing)
    gets a timing of its own and does not count in this one."""
    times = PhaseTimes()
    token = _timer.set(times)
    tid = threading.get_ident()
    outer_running = running.get(tid)
    running[tid] = times
    start = time.perf_counter()
    try:
        yield times
    finally:
        times.total = time.perf_counter() - start
        _timer.reset(token)
        if outer_running is None:
            running.pop(tid, None)
        else:
            running[tid] = outer_running
        outer = _timer.get()
        if outer is not None and outer._open:       # the outer compile did not spend it
            name = outer._open[-1][0]
            outer.seconds[name] = outer.seconds.get(name, 0.0) - times.total


@contextlib.contextmanager
def phase(name: str):
    """Count the time inside to phase `name` of the current compile (none: nothing)."""
    times = _timer.get()
    if times is None:
        yield
        return
    start = time.perf_counter()
    times._open.append((name, start))
    try:
        yield
    finally:
        times._open.pop()
        spent = time.perf_counter() - start
        times.seconds[name] = times.seconds.get(name, 0.0) + spent
        if times._open:                  # exclusive times: the enclosing phase did not spend it
            outer = times._open[-1][0]
            times.seconds[outer] = times.seconds.get(outer, 0.0) - spent


def count(name: str, n: int = 1) -> None:
    times = _timer.get()
    if times is not None:
        times.counts[name] = times.counts.get(name, 0) + n


def frame_name(code) -> str:
    """`Model.__call__ (model.py:20)`: how logs and explain name a compiled frame."""
    return f"{getattr(code, 'co_qualname', code.co_name)} ({code.co_filename}:{code.co_firstlineno})"


@dataclass
class CompileTime:
    """One compiled graph's cost, as ft.explain(...).compile_times lists it."""
    compile_id: str
    frame: str                          # function name (file:line)
    graph_nodes: int
    times: PhaseTimes

    @property
    def total(self) -> float:
        return self.times.total

    @property
    def seconds(self) -> dict:
        return self.times.seconds

    def __str__(self):
        return (f"[{self.compile_id}] {self.frame}: {self.times.total:.3f} s, graph of {self.graph_nodes} nodes, "
                f"{self.times.kernels()}: {self.times}")


def log_compile(logger, frame: str, graph_nodes: int, times: PhaseTimes) -> None:
    """One line per compile on the `compile` log; a slow one (SLOW_COMPILE_S) says which phase."""
    if not logger.isEnabledFor(20):
        return
    what = f"{frame}: graph of {graph_nodes} nodes, {times.kernels()}"
    if times.total > SLOW_COMPILE_S:
        name, spent = times.main_phase()
        logger.info("slow compile: %s took %.2f s, most of it in %s (%.2f s): %s", what, times.total, name,
                    spent, times, extra={"long_compile": True})
    else:
        logger.info("compiled %s in %.3f s: %s", what, times.total, times)
