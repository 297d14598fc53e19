"""Compiled or eager, per cache entry: the faster of the two, measured on the entry's first calls.

A compiled entry is not always faster than the NumPy it replaces: a lone BLAS call, a few tiny
arrays, an opaque NumPy call. For an entry whose results are the same either way (the
compiler decides: no reassociated float reduction, no approximated math, no graph break),
the first calls after the compiling one alternate between the compiled code and the original
function (its guards still checked, so the entry still answers only for the values it was
built for), timing each; after PAIRS of each the entry keeps the compiled code (and its
native builtin) unless the fastest eager call took at most MARGIN of the fastest compiled one
(the fastest: noise from a busy machine only ever adds time). An entry that went
eager is measured again when its inputs grow past GROWTH times the bytes it was measured on
(a graph too small to win may win at larger sizes).

Cost: 2 * PAIRS calls through the Python dispatch (about 1 us each) with two clock reads; an
eager entry then costs its Python guard check on top of NumPy's call.
"""
from __future__ import annotations

import time

from .cache import MISS as _MISS
from .native import NATIVE_MISS

PAIRS = 5           # timed calls of each kind
MARGIN = 0.8        # eager is kept when its fastest call took at most MARGIN x the compiled one's
GROWTH = 8          # an eager entry is measured again when its array bytes grow this much

def _nbytes(values) -> int:
    return sum(getattr(v, "nbytes", 0) for v in values if hasattr(v, "__array_interface__"))


class Tuner:
    """Takes over entry.call (and switches its native builtin off) while measuring."""

    __slots__ = ("cache", "entry", "compiled", "native", "check", "compiled_t", "eager_t", "choice", "bytes")

    def __init__(self, cache, entry):
        self.cache, self.entry = cache, entry
        self.compiled, self.native, self.check = entry.call, entry.native, entry.check
        self.compiled_t, self.eager_t = [], []
        self.choice = None              # None while measuring; "compiled" | "eager"
        self.bytes = 0
        entry.call, entry.native = self, None
        cache.refresh_fast()

    def __call__(self, *values):
        if self.choice == "eager":
            return self._eager_call(values)
        eager = len(self.eager_t) < len(self.compiled_t)
        t0 = time.perf_counter()
        result = self._eager_call(values) if eager else self._compiled_call(values)
        t = time.perf_counter() - t0
        if result is _MISS:
            return result
        (self.eager_t if eager else self.compiled_t).append(t)
        self.bytes = max(self.bytes, _nbytes(values))
        if len(self.eager_t) >= PAIRS:
            self._decide()
        return result

    def _compiled_call(self, values):
        if self.native is not None:
            result = self.native.fn(*values)
            if result is not NATIVE_MISS:
                return result
        return self.compiled(*values)

    def _eager_call(self, values):
        if not self.check(*values):
            return _MISS
        if self.choice == "eager" and _nbytes(values) > GROWTH * self.bytes:
            self.choice = None          # grown: measure again
            self.compiled_t, self.eager_t = [], []
        return self.cache.run_original(*values)

    def _decide(self):
        if min(self.eager_t) <= MARGIN * min(self.compiled_t):
            self.choice = "eager"
            return
        self.choice = "compiled"
        self.entry.call, self.entry.native = self.compiled, self.native
        self.cache.refresh_fast()

    def describe(self) -> str:
        def best(ts):
            return f"{min(ts) * 1e6:.1f} us" if ts else "-"
        return f"{self.choice or 'measuring'} (compiled {best(self.compiled_t)}, eager {best(self.eager_t)})"


def tune(cache, entry) -> Tuner:
    """Measure `entry` (of `cache`) against the original function on its next calls."""
    return Tuner(cache, entry)


__all__ = ["tune", "Tuner", "PAIRS", "MARGIN", "GROWTH"]
