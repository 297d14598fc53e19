"""Per-code-object caches and the dispatch loop that runs on every call."""
from __future__ import annotations

import threading
import weakref

from .types import CacheEntry, FrameState, Mode

MISS = type("Miss", (), {"__repr__": lambda self: "MISS", "__slots__": ()})()

_callback = None
_mode = Mode.DEFAULT


def set_callback(cb):
    """Install the compiler: cb(cache, frame_values) handles a miss and returns the result."""
    global _callback
    _callback = cb


def set_mode(mode: Mode):
    global _mode
    _mode = mode


def get_mode() -> Mode:
    return _mode


class FrameCache:
    """The cache of one code object: entries newest first, plus compiler-owned state."""
    __slots__ = ("code", "fn", "entries", "lock", "state", "action", "argnames", "run_original",
                 "hits", "__weakref__")

    def __init__(self, code, fn, argnames, run_original):
        self.code = code
        self.fn = fn                   # the original function (globals, defaults, closure)
        self.run_original = run_original   # run_original(*frame_values) calls fn eagerly
        self.entries: tuple = ()       # replaced, never mutated: safe to iterate while compiling
        self.lock = threading.RLock()
        self.state = FrameState()
        self.action = Mode.DEFAULT     # SKIP: frame found untraceable; RUN_ONLY: cache limit hit
        self.argnames = argnames       # names of the frame values passed to entries
        self.hits = 0                  # calls served by an entry (ft.stats().cache_hits)

    def __del__(self):
        _retired_hits[0] += self.hits

    def add(self, entry: CacheEntry):
        with self.lock:
            self.entries = (entry,) + self.entries

    def clear(self):
        with self.lock:
            self.entries = ()
            self.hits = 0
            self.state = FrameState()
            self.action = Mode.DEFAULT


_caches = weakref.WeakSet()
_retired_hits = [0]      # hits of caches that were dropped (e.g. after ft.disable())


def _retire(hits):
    _retired_hits[0] += hits


def total_hits() -> int:
    return _retired_hits[0] + sum(c.hits for c in list(_caches))


def reset_hits():
    _retired_hits[0] = 0


def new_frame_cache(code, fn, argnames, run_original) -> FrameCache:
    """A cache for one function object (closures of one code object differ in their cells)."""
    cache = FrameCache(code, fn, argnames, run_original)
    _caches.add(cache)
    return cache


def all_caches():
    return list(_caches)


def dispatch(cache: FrameCache, values: tuple):
    """The fast path: first entry whose guards pass runs; otherwise the compiler decides."""
    if _mode is Mode.SKIP or cache.action is Mode.SKIP:
        return cache.run_original(*values)
    for entry in cache.entries:
        result = entry.call(*values)
        if result is not MISS:
            cache.hits += 1
            return result
    if _mode is Mode.RUN_ONLY or cache.action is Mode.RUN_ONLY:
        return cache.run_original(*values)
    return _callback(cache, values)
