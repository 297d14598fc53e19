"""Compiles in flight: the time spent compiling (for the report) and a `compile` log line while
one runs longer than ANNOUNCE_AFTER_S, so a user waiting knows why: the frame, the phase it is
in (compile_times) and the graph size.

    with watch.compiling(code, compile_id): ...      # convert_frame, around one compile
    watch.graph_size(len(graph.nodes))               # trace/compile.py, once the graph is traced

A daemon thread wakes only while a compile is in flight, at its deadline. (The line at the end
of a slow compile, with its phases, is compile_times.log_compile's.)
"""
from __future__ import annotations

import contextlib
import os
import threading
import time

from .. import compile_times
from ..logs import get_logger

log = get_logger("compile")

ANNOUNCE_AFTER_S = 2.0        # as compile_times.SLOW_COMPILE_S, which names the slow phase at the end


class _Active:
    __slots__ = ("code", "compile_id", "start", "nodes", "announced", "thread")

    def __init__(self, code, compile_id):
        self.code, self.compile_id, self.start = code, compile_id, time.perf_counter()
        self.nodes, self.announced, self.thread = None, False, threading.get_ident()

    def describe(self) -> str:
        times = compile_times.running.get(self.thread)
        opened = list(times._open) if times is not None else []
        phase = f"in {opened[-1][0]}" if opened else "tracing" if self.nodes is None else "compiling"
        size = f", graph of {self.nodes} nodes" if self.nodes is not None else ""
        return f"{compile_times.frame_name(self.code)} [{self.compile_id}]: {phase}{size}"


_cond = threading.Condition()
_active: dict = {}            # thread id -> its outermost compile in flight
_total = [0.0]                # seconds spent in outermost compiles, all threads
_thread = [None]


def total_seconds() -> float:
    """Seconds spent compiling so far in this process (outermost compiles)."""
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
        _total[0] += time.perf_counter() - active.start


def graph_size(nodes: int):
    """The compile running in this thread traced a graph of `nodes` nodes."""
    active = _active.get(threading.get_ident())
    if active is not None:
        active.nodes = nodes


def _ensure_thread():
    if _thread[0] is None or not _thread[0].is_alive():
        _thread[0] = threading.Thread(target=_run, name="frametrace-compile-watch", daemon=True)
        _thread[0].start()


def _run():
    while True:
        with _cond:
            now = time.perf_counter()
            limit = ANNOUNCE_AFTER_S
            waiting = [a for a in _active.values() if not a.announced]
            due = [a for a in waiting if now - a.start >= limit]
            for a in due:
                a.announced = True
            later = [a.start + limit - now for a in waiting if a not in due]
            if not due:
                _cond.wait(timeout=min(later) if later else None)
                continue
            lines = [(a.describe(), now - a.start) for a in due]
        for what, seconds in lines:
            log.info("still compiling %s, %.1f s so far", what, seconds, extra={"long_compile": True})


def _after_fork():
    global _cond
    _cond = threading.Condition()      # the parent's may have been held by another thread
    _active.clear()
    _thread[0] = None


os.register_at_fork(after_in_child=_after_fork)
