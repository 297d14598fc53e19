"""One record per compile, kept for the report (ft.report()): cheap, plain data, no arrays.

compile_events calls `started`, `succeeded` and `failed` for every compile; ft.reset() clears."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

MAX_RECORDS = 10_000        # a long-running process keeps the first ones (the report is about those)


@dataclass
class Problem:
    """A graph break, or why a frame runs eagerly: the user line, the reason, the hints."""
    location: str            # "file.py:12 in f"
    explanation: str
    source_line: str = ""
    hints: tuple = ()

    @classmethod
    def of(cls, exc, fallback: str) -> "Problem":
        context = getattr(exc, "context", "")
        explanation = getattr(exc, "explanation", None) or str(exc).splitlines()[0]
        if context:
            explanation = f"{context}: {explanation}"
        return cls(getattr(exc, "location", "") or fallback, explanation,
                   (getattr(exc, "source_line", "") or "").strip(), tuple(getattr(exc, "hints", ())))


@dataclass
class Recompile:
    """Why a frame compiled again: the first failing guard, where the code made it, the advice."""
    guard: str               # "L['x'].shape[0] == 10"
    location: str            # the user line that made the guard, else the function's first line
    source_line: str = ""
    advice: str = ""


@dataclass
class CompileRecord:
    compile_id: str
    name: str
    filename: str
    lineno: int
    seconds: float = 0.0
    backend_seconds: float = 0.0
    graph_nodes: int = 0
    graph_break: Problem | None = None      # the frame was split here
    failure: Problem | None = None          # the frame could not be compiled: it runs eagerly
    recompile: Recompile | None = None

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.lineno}"


@dataclass
class _Store:
    lock: threading.Lock = field(default_factory=threading.Lock)
    records: list = field(default_factory=list)
    pending: dict = field(default_factory=dict)       # compile_id -> Recompile (from `started`)


_store = _Store()


def _function_where(code) -> str:
    return f"{code.co_filename}:{code.co_firstlineno} in {code.co_name}"


def _recompile_of(code, reasons) -> Recompile | None:
    guard = getattr(reasons[0], "guard", None) if reasons else None
    if guard is None:
        return Recompile(str(reasons[0]).split(": ", 1)[-1], _function_where(code)) if reasons else None
    from ..guards.failures import recompile_advice
    loc = guard.location
    where = loc.short() if hasattr(loc, "short") else _function_where(code)
    return Recompile(guard.name, where, (getattr(loc, "source_line", "") or "").strip(),
                     recompile_advice([guard]).strip())


def started(code, compile_id, reasons):
    """A compile begins; `reasons`: the guard failures that made it a recompile (or None)."""
    if reasons:
        rec = _recompile_of(code, reasons)
        with _store.lock:
            _store.pending[compile_id] = rec


def _add(record: CompileRecord):
    with _store.lock:
        record.recompile = _store.pending.pop(record.compile_id, None)
        if len(_store.records) < MAX_RECORDS:
            _store.records.append(record)


def succeeded(code, compile_id, info, seconds):
    brk = info.extra.get("graph_break")
    _add(CompileRecord(compile_id, code.co_name, code.co_filename, code.co_firstlineno, seconds,
                       info.extra.get("backend_time", 0.0), info.graph_nodes,
                       graph_break=Problem.of(brk, _function_where(code)) if brk is not None else None))


def failed(code, compile_id, exc, seconds):
    _add(CompileRecord(compile_id, code.co_name, code.co_filename, code.co_firstlineno, seconds,
                       failure=Problem.of(exc, _function_where(code))))


def snapshot() -> list:
    with _store.lock:
        return list(_store.records)


def clear():
    with _store.lock:
        _store.records.clear()
        _store.pending.clear()
