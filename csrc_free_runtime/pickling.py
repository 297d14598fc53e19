"""Compiled functions across processes (Dask workers, multiprocessing).

An `ft.compile` trampoline is a plain function: pickle takes it by reference when its module
holds it under its name (`@ft.compile` at module level); otherwise cloudpickle takes it by value,
and its closure holds its FrameCache, which pickles as (the user's function, the compiler's
options). The receiving process rebuilds the cache with `make_trampoline`, once per function and
options, so every task a worker unpickles shares one cache: it compiles there (static for the
first shape, then dynamic), never once per task. The compiled entries themselves never travel.

Functions with closures (cells may hold different values) and functions whose globals are not a
module's (cloudpickle rebuilds `__main__` functions with fresh globals each time) get a cache of
their own per unpickle: sharing one would run them with another's values.
"""
from __future__ import annotations

import copyreg
import threading

from .cache import FrameCache

_lock = threading.Lock()
_rebuilt: dict = {}          # (code, module, qualname, options, scope) -> FrameCache


def _key(fn, options, scope):
    import sys
    module = sys.modules.get(fn.__module__)
    if fn.__closure__ or module is None or getattr(module, "__dict__", None) is not fn.__globals__:
        return None
    try:
        key = (fn.__code__, fn.__module__, fn.__qualname__, options, scope)
        hash(key)
    except TypeError:                 # options the compiler made unhashable: no sharing
        return None
    return key


def rebuild_cache(fn, options, scope):
    """The FrameCache of `fn` compiled with `options` (`scope`: its callees' options) here."""
    from .hook import make_trampoline
    key = _key(fn, options, scope)
    with _lock:
        cache = _rebuilt.get(key) if key is not None else None
        if cache is None:
            _, cache = make_trampoline(fn)
            cache.options, cache.scope = options, scope
            # the blocks of a chunked array differ in any dimension: once an array input's shape
            # changes, every dimension of it turns dynamic (dynamic_policy.FrameState.whole_arrays)
            cache.state.data["whole_arrays"] = True
            if key is not None:
                _rebuilt[key] = cache
    return cache


def rebuild_hooked_cache(fn):
    """A hooked function's cache (its trampoline code holds it as a constant)."""
    from .global_hook import hooked_cache_for
    return hooked_cache_for(fn)


def reduce_cache(cache: FrameCache):
    """A FrameCache pickled with a trampoline (by value): the function and options, rebuilt and
    compiled again in the receiving process."""
    if cache.hooked:
        return rebuild_hooked_cache, (cache.fn,)
    return rebuild_cache, (cache.fn, cache.options, cache.scope)


copyreg.pickle(FrameCache, reduce_cache)
