"""Counters users read with ft.stats()."""
from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Stats:
    frames_compiled: int = 0     # compiles that produced an entry
    unique_graphs: int = 0       # graphs handed to a backend
    recompiles: int = 0          # compiles of a frame that already had an entry
    graph_breaks: int = 0        # frames (or parts) that could not be traced as one graph
    cache_hits: int = 0          # calls served by an existing entry
    eager_fallbacks: int = 0     # calls run eagerly because the frame could not be compiled
    internal_errors: int = 0     # bugs of frametrace that made a frame run eagerly, or a graph run
                                 #   on the NumPy backend (frametrace/internal_errors.py)


class _Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.values = dict.fromkeys(Stats.__dataclass_fields__, 0)

    def bump(self, name, n=1):
        with self.lock:
            self.values[name] += n

    def snapshot(self, cache_hits=0) -> Stats:
        values = dict(self.values)
        values["cache_hits"] += cache_hits
        return Stats(**values)


counters = _Counters()
