"""mark_dynamic and friends: markings kept beside the array in a side table.

NumPy arrays take no attributes and are unhashable, so markings live in a dict keyed by
`id(array)`, holding a weak reference that proves the entry still belongs to that array
and a finalizer that drops it when the array dies.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mark:
    kind: str                 # "dynamic" (strict), "maybe_dynamic", "static", "unbacked"
    min: int | None = None
    max: int | None = None


_table: dict = {}
_lock = threading.Lock()


def _set(x, dim: int, mark: Mark):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"expected a numpy.ndarray, got {type(x).__name__}")
    dims = range(x.ndim) if dim is None else [dim]
    for d in dims:
        if not -x.ndim <= d < x.ndim:
            raise IndexError(f"dimension {d} out of range for an array of {x.ndim} dimensions")
    key = id(x)
    with _lock:
        entry = _table.get(key)
        if entry is None or entry[0]() is not x:
            entry = (weakref.ref(x), {})
            _table[key] = entry
            weakref.finalize(x, _table.pop, key, None)
        for d in dims:
            entry[1][d % x.ndim] = mark


def marks_of(x) -> dict:
    """{dim: Mark} for an array (empty if none)."""
    entry = _table.get(id(x))
    if entry is None or entry[0]() is not x:
        return {}
    return entry[1]


def mark_dynamic(x, dim, min=None, max=None):
    """Size `dim` of `x` must be symbolic in the compiled code; specialising it is an error
    (ConstraintViolationError). `min`/`max` bound it and become guards."""
    if min is not None and max is not None and min > max:
        raise ValueError(f"min ({min}) > max ({max})")
    _set(x, dim, Mark("dynamic", min, max))


def maybe_mark_dynamic(x, dim):
    """Start size `dim` of `x` dynamic; the code may still specialise it."""
    _set(x, dim, Mark("maybe_dynamic"))


def mark_static(x, dim):
    """Size `dim` of `x` is never dynamic (overrides dynamic=True)."""
    _set(x, dim, Mark("static"))


def mark_unbacked(x, dim):
    """Size `dim` of `x` is dynamic with no hint: never 0/1 specialised."""
    _set(x, dim, Mark("unbacked"))
