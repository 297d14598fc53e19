"""Per-code-object caches and the dispatch loop that runs on every call."""
from __future__ import annotations

import threading
import weakref

from .native import NATIVE_MISS
from .types import CacheEntry, FrameState, Mode

MISS = type("Miss", (), {"__repr__": lambda self: "MISS", "__slots__": (), "__reduce__": lambda self: "MISS"})()

_callback = None
_mode = Mode.DEFAULT


def set_callback(cb):
    """Install the compiler: cb(cache, frame_values) handles a miss and returns the result."""
    global _callback
    _callback = cb


def set_mode(mode: Mode):
    global _mode
    _mode = mode
    for cache in list(_caches):
        cache.refresh_fast()


def get_mode() -> Mode:
    return _mode


class FrameCache:
    """The cache of one code object: entries newest first, plus compiler-owned state.

    `fast` is the native builtin of the newest entry (or None): trampolines call it before
    `dispatch`, which is exactly the first thing dispatch would do. It is None whenever
    dispatch would not look at the entries (the global SKIP mode). A cache marked SKIP still
    serves the entries it has: SKIP only means "do not compile on a miss".

    `scope` (ft.compile caches only): the opaque options the compiler wants for the frames this
    function calls while it runs (global_hook.scoped_dispatch); `discover_in`/`discover_every`:
    after how many calls the discovery profiler is armed again (backoff while it finds nothing).
    `hooked`: the cache of a hooked function (global_hook); `unhooked`: given its code back for good;
    `options`: how the compiler compiles this frame (ft.compile's arguments).
    These survive `clear()`, which forgets only what was compiled; ft.reset() also clears
    `unhooked` (global_hook.forget_given_up).
    """
    __slots__ = ("code", "fn", "entries", "lock", "state", "_action", "argnames", "run_original",
                 "_hits", "fast", "scope", "discover_in", "discover_every", "hooked", "unhooked",
                 "reached", "options", "__weakref__")

    def __init__(self, code, fn, argnames, run_original):
        self.code = code
        self.fn = fn                   # the original function (globals, defaults, closure)
        self.run_original = run_original   # run_original(*frame_values) calls fn eagerly
        self.entries: tuple = ()       # replaced, never mutated: safe to iterate while compiling
        self.lock = threading.RLock()
        self.state = FrameState()
        self.fast = None
        self._action = Mode.DEFAULT    # SKIP: frame found untraceable; RUN_ONLY: cache limit hit
        self.argnames = argnames       # names of the frame values passed to entries
        self._hits = 0                 # calls served by an entry's Python path
        self.scope = None
        self.discover_in = self.discover_every = 1
        self.hooked = self.unhooked = False
        self.reached = False           # scope: the functions its code names were hooked
        self.options = None            # the compiler's options for this frame (opaque; kept by clear())

    def __del__(self):
        _retired_hits[0] += self.hits

    @property
    def action(self) -> Mode:
        return self._action

    @action.setter
    def action(self, mode: Mode):
        self._action = mode
        self.refresh_fast()

    @property
    def hits(self) -> int:
        """Calls served by an entry, natively or not (ft.stats().cache_hits)."""
        return self._hits + sum(e.native.hits for e in self.entries if e.native is not None)

    @hits.setter
    def hits(self, value: int):
        self._hits = value
        for e in self.entries:
            if e.native is not None:
                e.native.reset_hits()

    def refresh_fast(self):
        entries = self.entries
        native = entries[0].native if entries else None
        self.fast = native.fn if native is not None and _mode is not Mode.SKIP else None

    def add(self, entry: CacheEntry):
        with self.lock:
            self.entries = (entry,) + self.entries
            self.refresh_fast()

    def clear(self):
        with self.lock:
            self.hits = 0
            self.entries = ()
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


def dispatch(cache: FrameCache, values: tuple, tried=None):
    """The fast path: first entry whose guards pass runs; otherwise the compiler decides.
    `tried`: a native builtin the caller already ran and that missed (not run twice).
    A cache marked SKIP or RUN_ONLY still serves its entries; only a miss runs eagerly."""
    if _mode is Mode.SKIP:
        return cache.run_original(*values)
    for entry in cache.entries:
        native = entry.native
        if native is not None and native.fn is not tried:    # counts its own hits
            result = native.fn(*values)
            if result is not NATIVE_MISS:
                return result
        result = entry.call(*values)
        if result is not MISS:
            cache._hits += 1
            return result
    if _mode is Mode.RUN_ONLY or cache._action is not Mode.DEFAULT:
        return cache.run_original(*values)
    return _callback(cache, values)
