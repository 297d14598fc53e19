"""The per-call fast path of frametrace, in pure Python (what TorchDynamo writes in C).

hook   builds the trampoline that replaces a function and routes its calls here (ft.compile)
global_hook  hooked functions, their discovery, and when they are active (ft.enable, compiled calls)
cache  per-code-object cache entries (guard + compiled code), newest first
types  the small contract between this runtime and the compiler
native native entries: compiled guards + kernel launch as a METH_FASTCALL builtin per entry

This package never imports the compiler: the compiler installs a callback
(`cache.set_callback`) and hands the runtime plain callables.
"""
from .cache import FrameCache, MISS, dispatch, new_frame_cache, all_caches, set_callback, set_mode, get_mode
from .global_hook import active_options, is_hooked, original_function, scoped_dispatch, suspend_discovery
from .hook import make_trampoline
from . import pickling  # noqa: F401 - registers how a FrameCache pickles (copyreg)
from .types import CacheEntry, Mode

__all__ = ["FrameCache", "MISS", "dispatch", "new_frame_cache", "all_caches", "set_callback", "set_mode", "get_mode",
           "make_trampoline", "CacheEntry", "Mode", "active_options", "is_hooked", "original_function",
           "scoped_dispatch", "suspend_discovery"]
