"""Trampolines: a function with the same signature as the user's that routes calls to `dispatch`.

The frame values handed to cache entries are the function's parameters in `co_varnames`
order (positional, keyword-only, *args, **kwargs) followed by the contents of its closure
cells, so guards and compiled code can name them `L['x']` just as a frame would.

The trampoline's Python path is `scoped_dispatch`: while the function runs, the functions it
calls are candidates too (global_hook). The native path (`cache.fast`) runs no Python code.
"""
from __future__ import annotations

import inspect
import types

from .cache import new_frame_cache
from .global_hook import TRAMPOLINE_FILE, original_function, register_trampoline, scoped_dispatch
from .native import NATIVE_MISS
from .types import frame_value_names


_DEFAULT = type("Default", (), {"__repr__": lambda self: "<default of the compiled function>",
                                "__slots__": (), "__reduce__": lambda self: "_DEFAULT"})()


def _current_default(fn, name: str, from_end):
    """What `fn` now has as the default of parameter `name` (positional: the `from_end`-th
    default from the end; keyword-only: None); a removed default raises like a call would."""
    if from_end is None:
        kw = fn.__kwdefaults__
        if kw is None or name not in kw:
            raise TypeError(f"{fn.__name__}() missing 1 required keyword-only argument: {name!r}")
        return kw[name]
    d = fn.__defaults__
    if d is None or len(d) < from_end:
        raise TypeError(f"{fn.__name__}() missing 1 required positional argument: {name!r}")
    return d[-from_end]


def _signature_parts(code):
    names = code.co_varnames
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    pos = list(names[:npos])
    kwonly = list(names[npos:npos + nkw])
    i = npos + nkw
    varargs = varkw = None
    if code.co_flags & inspect.CO_VARARGS:
        varargs = names[i]
        i += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        varkw = names[i]
    return pos, kwonly, varargs, varkw


def make_trampoline(fn, *, dispatch_fn=scoped_dispatch):
    """Return (trampoline, cache): calling the trampoline is calling `fn` through the cache.
    `fn` may be hooked (its code swapped) or itself a trampoline: the user's function is used."""
    fn = original_function(fn)
    code = fn.__code__
    # eager calls run a private copy: `fn.__code__` may be swapped by the hook later
    own = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    own.__kwdefaults__, own.__qualname__ = fn.__kwdefaults__, fn.__qualname__
    own.__dict__.update(getattr(fn, "__dict__", {}))
    pos, kwonly, varargs, varkw = _signature_parts(code)
    params = list(pos)
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    if varargs:
        params.append("*" + varargs)
    elif kwonly:
        params.append("*")
    params += kwonly
    if varkw:
        params.append("**" + varkw)
    ordered = pos + kwonly + ([varargs] if varargs else []) + ([varkw] if varkw else [])
    cells = [f"___c{i}.cell_contents" for i in range(len(code.co_freevars))]
    values = ", ".join(ordered + cells) + ("," if len(ordered) + len(cells) == 1 else "")
    call_args = ", ".join(pos + ([f"*{varargs}"] if varargs else []) + [f"{k}={k}" for k in kwonly]
                          + ([f"**{varkw}"] if varkw else []))
    cell_params = "".join(f", ___c{i}" for i in range(len(code.co_freevars)))
    fname = code.co_name if code.co_name.isidentifier() else "___fn_" + "".join(
        ch if ch.isalnum() else "_" for ch in code.co_name)
    # defaults are read from the user's function at each call (it may change them), through
    # a sentinel default on the trampoline
    defaults = fn.__defaults__ or ()
    first_default = len(pos) - len(defaults)
    fill = "".join(f"        if {p} is ___D:\n            {p} = ___fill(___user, {p!r}, {len(pos) - i})\n"
                   for i, p in enumerate(pos) if i >= first_default)
    fill += "".join(f"        if {k} is ___D:\n            {k} = ___fill(___user, {k!r}, None)\n"
                    for k in (fn.__kwdefaults__ or {}))
    # the newest entry's native builtin first (cache.fast: see FrameCache), then dispatch
    src = (f"def ___make(___dispatch, ___cache, ___fn, ___NMISS, ___D, ___fill, ___user{cell_params}):\n"
           f"    def {fname}({', '.join(params)}):\n"
           f"{fill}"
           f"        ___fast = ___cache.fast\n"
           f"        if ___fast is not None:\n"
           f"            ___r = ___fast({values.rstrip(',')})\n"
           f"            if ___r is not ___NMISS:\n"
           f"                return ___r\n"
           f"            return ___dispatch(___cache, ({values}), ___fast)\n"
           f"        return ___dispatch(___cache, ({values}))\n"
           f"    def run_original({', '.join(ordered + [f'___v{i}' for i in range(len(cells))])}):\n"
           f"        return ___fn({call_args})\n"
           f"    return {fname}, run_original\n")
    ns: dict = {}
    exec(compile(src, f"{TRAMPOLINE_FILE} {code.co_name}>", "exec"), ns)
    cache = new_frame_cache(code, fn, frame_value_names(code), None)
    tramp, cache.run_original = ns["___make"](dispatch_fn, cache, own, NATIVE_MISS, _DEFAULT, _current_default, fn,
                                              *(fn.__closure__ or ()))
    tramp.__defaults__ = (_DEFAULT,) * len(defaults) or None
    tramp.__kwdefaults__ = dict.fromkeys(fn.__kwdefaults__, _DEFAULT) if fn.__kwdefaults__ else None
    tramp.__name__ = fn.__name__
    tramp.__doc__, tramp.__qualname__, tramp.__module__ = fn.__doc__, fn.__qualname__, fn.__module__
    tramp.__wrapped__ = fn
    tramp.__dict__.update(getattr(fn, "__dict__", {}))
    register_trampoline(tramp, fn)
    return tramp, cache
