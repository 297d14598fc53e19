"""Compiles in flight: the time spent compiling (for the report) and a `compile` log line when
one runs long, while the user waits, naming the frame, the phase and the graph size.

    with watch.compiling(code, compile_id): ...      # convert_frame, around one compile
    watch.phase("graph passes", nodes)               # trace/compile.py, as a compile moves on

A daemon thread wakes only while a compile is in flight, at its deadline (config.long_compile_s).
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading
import time

from ..config import config
from ..logs import get_logger

log = get_logger("compile")


class _Active:
    __slots__ = ("code", "compile_id", "start", "phase", "nodes", "announced")

    def __init__(self, code, compile_id):
        self.code, self.compile_id, self.start = code, compile_id, time.perf_counter()
        self.phase, self.nodes, self.announced = "tracing the bytecode", None, False

    def describe(self, phase=True) -> str:
        code = self.code
        size = f"graph of {self.nodes} nodes" if self.nodes is not None else ""
        what = f"{self.phase}, {size}" if phase and size else self.phase if phase else size
        return f"{code.co_name} ({code.co_filename}:{code.co_firstlineno}) [{self.compile_id}]" + \
            (f": {what}" if what else "")


_cond = threading.Condition()
_active: dict = {}            # thread id -> its outermost compile in flight
_total = [0.0]                # seconds spent in outermost compiles, all threads
_thread = [None]


def total_seconds() -> float:
    """Seconds spent compiling so far in this process (outermost compiles; a compile that runs
    another, rare, counts once)."""
    return _total[0]


def compiling_thread(ident: int) -> bool:
    return ident in _active


@contextlib.contextmanager
def compiling(code, compile_id):
    tid = threading.get_ident()
    if tid in _active:                     # nested: the outer compile is the one users wait for
        yield
        return
    active = _Active(code, compile_id)
    with _cond:
        _active[tid] = active
        _ensure_thread()
        _cond.notify()
    try:
        yield
    finally:
        with _cond:
            del _active[tid]
        seconds = time.perf_counter() - active.start
        _total[0] += seconds
        if seconds > config.long_compile_s:
            log.info("compiled %s in %.1f s (longer than config.long_compile_s)", active.describe(False), seconds)
        elif log.isEnabledFor(logging.DEBUG):
            log.debug("compiled %s in %.3f s", active.describe(False), seconds)


def phase(name: str, nodes: int | None = None):
    """The compile running in this thread moved on to `name` (with a graph of `nodes` nodes)."""
    active = _active.get(threading.get_ident())
    if active is not None:
        active.phase, active.nodes = name, nodes


def _ensure_thread():
    if _thread[0] is None or not _thread[0].is_alive():
        _thread[0] = threading.Thread(target=_run, name="frametrace-compile-watch", daemon=True)
        _thread[0].start()


def _run():
    while True:
        with _cond:
            now = time.perf_counter()
            limit = config.long_compile_s
            waiting = [a for a in _active.values() if not a.announced]
            due = [a for a in waiting if now - a.start >= limit]
            for a in due:
                a.announced = True
            later = [a.start + limit - now for a in waiting if a not in due]
            if not due:
                _cond.wait(timeout=min(later) if later else None)
                continue
        for a in due:
            log.info("still compiling %s, %.1f s so far", a.describe(), now - a.start)


def _after_fork():
    global _cond
    _cond = threading.Condition()      # the parent's may have been held by another thread
    _active.clear()
    _thread[0] = None


os.register_at_fork(after_in_child=_after_fork)
