"""ft.compile: wrap a function so each call goes through the runtime's cache."""
from __future__ import annotations

import functools
import types

import csrc_free_runtime as rt

from .convert_frame import FrameOptions


def compile(fn=None, *, dynamic=None, fullgraph=False, backend=None):
    """Compile `fn` on its first call (and on guard failures), run the compiled code afterwards.

    Usable bare (`@ft.compile`), with arguments (`@ft.compile(dynamic=True)`), on a bound
    method (`ft.compile(model.forward)`), an object with `__call__` or a `functools.partial`.

    dynamic:   None = static first, sizes that change become dynamic (automatic dynamic);
               True = every size symbolic; False = every size static (one graph per size).
    fullgraph: raise GraphBreakError instead of falling back when something cannot be traced.
    backend:   "llvm" or "numpy" (default: ft.config.backend).
    """
    if fn is None:
        return functools.partial(compile, dynamic=dynamic, fullgraph=fullgraph, backend=backend)
    if dynamic not in (None, True, False):
        raise ValueError("dynamic must be None, True or False")
    if isinstance(fn, types.MethodType):
        inner = compile(fn.__func__, dynamic=dynamic, fullgraph=fullgraph, backend=backend)
        return types.MethodType(inner, fn.__self__)
    if isinstance(fn, functools.partial):
        # the function it wraps is compiled; the bound arguments are passed as at each call
        # (they are the frame's inputs then, guarded like any other argument)
        inner = compile(fn.func, dynamic=dynamic, fullgraph=fullgraph, backend=backend)
        return functools.partial(inner, *fn.args, **fn.keywords)
    if not isinstance(fn, types.FunctionType):
        call = vars(type(fn)).get("__call__")
        if isinstance(call, types.FunctionType):
            return compile(types.MethodType(call, fn), dynamic=dynamic, fullgraph=fullgraph, backend=backend)
        raise TypeError(f"ft.compile expects a Python function, got {type(fn).__name__}")
    if backend is not None and backend not in ("llvm", "numpy"):    # known names load on the first compile
        from .backends import get_backend
        get_backend(backend)
    tramp, cache = rt.make_trampoline(fn)
    cache.options = FrameOptions(dynamic, backend, fullgraph)       # kept by ft.reset()
    # while it runs, the functions it calls compile as their own frames (never fullgraph)
    cache.scope = FrameOptions(dynamic, backend, False)
    tramp._frametrace_cache = cache
    return tramp
