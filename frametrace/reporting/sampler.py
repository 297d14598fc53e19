"""Where one thread spends its time: compiling, running compiled code, or eager Python.

A daemon thread looks at the thread's stack every INTERVAL seconds (sys._current_frames, as
sampling profilers do), so the per-call path is untouched. A sample is *compiling* while a
compile is in flight in that thread (watch.py); otherwise the innermost frame that is either
compiled code (frametrace's generated entries and wrappers, the runtime's dispatch) or user
code decides; library frames in between (NumPy, the standard library) count for their caller.
A kernel that holds the GIL is seen when it returns, in the frame that called it.
"""
from __future__ import annotations

import os
import sys
import threading
import time

from ..file_kinds import FRAMETRACE, is_library, is_ours, normalized
from . import watch

INTERVAL = 0.002

_REPORTING = os.path.join(FRAMETRACE, "reporting") + os.sep
_CLI = os.path.join(FRAMETRACE, "cli.py")

COMPILING, COMPILED, EAGER = "compiling", "compiled", "eager"


def _kind(filename: str) -> str | None:
    """COMPILED, EAGER, or None for a frame that counts for its caller."""
    if filename.startswith("<"):
        if filename.startswith("<frametrace"):
            return COMPILED
        return None if filename.startswith("<frozen") else EAGER      # <stdin>, <ipython-input-..>
    if is_ours(filename):
        return None if normalized(filename).startswith((_REPORTING, _CLI)) else COMPILED
    if is_library(filename):
        return None
    return EAGER


def classify(frame, ident: int) -> str:
    """The kind of one sample of thread `ident`, whose innermost frame is `frame`."""
    if watch.compiling_thread(ident):
        return COMPILING
    while frame is not None:
        kind = _kind(frame.f_code.co_filename)
        if kind is not None:
            return kind
        frame = frame.f_back
    return EAGER


class Sampler:
    """Samples thread `ident` (default: the calling thread) between start() and stop()."""

    def __init__(self, ident: int | None = None, interval: float = INTERVAL):
        self.ident = ident if ident is not None else threading.get_ident()
        self.interval = interval
        self.counts = {COMPILING: 0, COMPILED: 0, EAGER: 0}
        self._stop = threading.Event()
        self._thread = None
        self.started = self.stopped = None
        self.compile_seconds = 0.0
        self._compile_at_start = 0.0

    def start(self) -> "Sampler":
        self.started = time.perf_counter()
        self._compile_at_start = watch.total_seconds()
        self._thread = threading.Thread(target=self._run, name="frametrace-report-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> "Sampler":
        if self._thread is not None and self.stopped is None:
            self._stop.set()
            self._thread.join()
            self.stopped = time.perf_counter()
            self.compile_seconds = watch.total_seconds() - self._compile_at_start
        return self

    @property
    def wall_seconds(self) -> float:
        end = self.stopped if self.stopped is not None else time.perf_counter()
        return end - self.started if self.started is not None else 0.0

    def split(self) -> dict:
        """Seconds compiling (measured), and the rest shared between compiled code and eager
        Python in the proportion of the samples."""
        compile_s = self.compile_seconds if self.stopped is not None else \
            watch.total_seconds() - self._compile_at_start
        rest = max(self.wall_seconds - compile_s, 0.0)
        compiled, eager = self.counts[COMPILED], self.counts[EAGER]
        share = compiled / (compiled + eager) if compiled + eager else 0.0
        return {"wall_s": self.wall_seconds, "compiling_s": compile_s, "compiled_s": rest * share,
                "eager_s": rest * (1.0 - share), "samples": sum(self.counts.values())}

    def _run(self):
        ident, counts, wait = self.ident, self.counts, self._stop.wait
        while not wait(self.interval):
            frame = sys._current_frames().get(ident)
            if frame is None:
                break                      # the thread ended
            counts[classify(frame, ident)] += 1
            del frame
