"""The global hook behind `ft.enable()`: every Python function called afterwards is a candidate.

A `sys.setprofile` (and `threading.setprofile`) callback sees each new code object once. For a
candidate (the compiler decides, through `consider(code)`), it finds the function object and
swaps its `__code__` for a trampoline built with `bytecode` that has the same signature and
free variables and routes the call through the function's cache. `disable()` restores every
original `__code__`. The call that revealed a function runs as it started (eagerly); later
calls are compiled. Functions that already exist in user modules when the hook starts are
swapped at once (`scan`), so their first call is compiled too.

CPython 3.11 runs every frame on its slow profiling path while any profile function is set
(a C profile function that does nothing still costs 3x on call-heavy code), so the callback
steps aside once it has seen QUIET_CALLS calls in a row of code it already knows, and the
trampolines of hooked functions put it back every REARM_EVERY dispatches to look for new code.
"""
from __future__ import annotations

import inspect
import sys
import threading
import types

from bytecode import Bytecode, Instr

from . import calls
from .cache import dispatch, new_frame_cache
from .hook import frame_value_names

QUIET_CALLS = 4096
REARM_EVERY = 1024


def make_trampoline_code(code, cache):
    """A code object with `code`'s signature whose body is `return dispatch(cache, (frame values))`."""
    nargs = code.co_argcount + code.co_kwonlyargcount
    nargs += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    argnames = list(code.co_varnames[:nargs])
    lineno = code.co_firstlineno
    body = []
    if code.co_freevars:
        body.append(Instr("COPY_FREE_VARS", len(code.co_freevars), lineno=lineno))
    body.append(Instr("RESUME", 0, lineno=lineno))
    body += calls.load_callable(hooked_dispatch, lineno) + [Instr("LOAD_CONST", cache, lineno=lineno)]
    body += [Instr("LOAD_FAST", name, lineno=lineno) for name in argnames]
    from bytecode import FreeVar
    body += [Instr("LOAD_DEREF", FreeVar(name), lineno=lineno) for name in code.co_freevars]
    body.append(Instr("BUILD_TUPLE", len(argnames) + len(code.co_freevars), lineno=lineno))
    body += calls.call(2, lineno) + [Instr("RETURN_VALUE", lineno=lineno)]
    bc = Bytecode(body)
    bc.argnames = argnames
    bc.argcount = code.co_argcount
    bc.posonlyargcount = code.co_posonlyargcount
    bc.kwonlyargcount = code.co_kwonlyargcount
    bc.freevars = list(code.co_freevars)
    bc.flags = code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_NESTED
                                | inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS)
    bc.name, bc.qualname = code.co_name, code.co_qualname
    bc.filename, bc.first_lineno = code.co_filename, code.co_firstlineno
    return bc.to_code()


def _run_original_for(fn, code):
    """A function that calls `code` (the original body) with frame values."""
    original = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    original.__kwdefaults__ = fn.__kwdefaults__
    original.__qualname__ = fn.__qualname__
    pos = list(code.co_varnames[:code.co_argcount])
    kwonly = list(code.co_varnames[code.co_argcount:code.co_argcount + code.co_kwonlyargcount])
    i = code.co_argcount + code.co_kwonlyargcount
    varargs = code.co_varnames[i] if code.co_flags & inspect.CO_VARARGS else None
    i += bool(varargs)
    varkw = code.co_varnames[i] if code.co_flags & inspect.CO_VARKEYWORDS else None
    npos, nkw = len(pos), len(kwonly)

    def run_original(*values):
        args = list(values[:npos])
        kwargs = dict(zip(kwonly, values[npos:npos + nkw]))
        k = npos + nkw
        if varargs:
            args.extend(values[k])
            k += 1
        if varkw:
            kwargs.update(values[k])
        return original(*args, **kwargs)
    return original, run_original


_dispatches = [0]


def hooked_dispatch(cache, values):
    """dispatch() for hooked functions; now and then it puts the discovery callback back."""
    n = _dispatches[0] = _dispatches[0] + 1
    if not n % REARM_EVERY and _active:
        _active[0].arm()
    return dispatch(cache, values)


class GlobalHook:
    """State of one `enable()`: which code objects were seen and which functions were swapped."""

    def __init__(self, consider, on_install):
        self.consider = consider            # code -> bool (compiler's skip rules)
        self.on_install = on_install        # (function, cache) -> None (compiler sets options)
        self.seen: set = set()
        self.swapped: dict = {}             # function -> original code
        self.lock = threading.RLock()
        self.local = threading.local()      # per thread: calls in a row of known code

    def arm(self):
        if sys.getprofile() is None:
            self.local.quiet = 0
            sys.setprofile(self.profile)

    def profile(self, frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code in self.seen:
            quiet = getattr(self.local, "quiet", 0) + 1
            self.local.quiet = quiet
            if quiet > QUIET_CALLS:
                sys.setprofile(None)         # step aside until a hooked dispatch re-arms us
            return
        self.local.quiet = 0
        self.seen.add(code)
        try:
            if self.consider(code):
                fn = find_function(frame, code)
                if fn is not None:
                    self.install(fn)
        except Exception:      # the hook must never break the user's program
            pass

    def install(self, fn):
        with self.lock:
            if fn in self.swapped or not isinstance(fn, types.FunctionType):
                return
            code = fn.__code__
            original, run_original = _run_original_for(fn, code)
            cache = new_frame_cache(code, original, frame_value_names(code), run_original)
            fn.__code__ = make_trampoline_code(code, cache)
            self.swapped[fn] = code
            cache.state.data["global_hook_function"] = fn
            self.on_install(fn, cache)

    def scan(self, modules):
        """Swap the functions (and methods of classes) that user modules already define."""
        for module in modules:
            for value in list(vars(module).values()):
                for fn in _functions_of(value, module.__name__):
                    if fn.__code__ not in self.seen and self.consider(fn.__code__):
                        self.seen.add(fn.__code__)
                        self.install(fn)

    def restore(self, fn):
        with self.lock:
            code = self.swapped.pop(fn, None)
            if code is not None:
                fn.__code__ = code

    def restore_all(self):
        with self.lock:
            for fn, code in self.swapped.items():
                fn.__code__ = code
            self.swapped.clear()


def _functions_of(value, module_name):
    if isinstance(value, types.FunctionType):
        if value.__module__ == module_name and not value.__code__.co_freevars:
            yield value
    elif isinstance(value, type) and value.__module__ == module_name:
        for attr in vars(value).values():
            attr = getattr(attr, "__func__", attr)
            if isinstance(attr, types.FunctionType) and not attr.__code__.co_freevars:
                yield attr


def find_function(frame, code):
    """The function object running `code` in `frame` (module-level functions and methods)."""
    if code.co_freevars:
        return None        # closures: one code, many functions; left to the decorator
    candidate = frame.f_globals.get(code.co_name)
    if isinstance(candidate, types.FunctionType) and candidate.__code__ is code:
        return candidate
    if code.co_argcount:
        first = frame.f_locals.get(code.co_varnames[0])
        cls = first if isinstance(first, type) else type(first)
        for klass in getattr(cls, "__mro__", ()):
            attr = klass.__dict__.get(code.co_name)
            attr = getattr(attr, "__func__", attr)
            if isinstance(attr, types.FunctionType) and attr.__code__ is code:
                return attr
    return None


_active: list = []


def enable(consider, on_install, modules=()):
    if _active:
        return _active[0]
    hook = GlobalHook(consider, on_install)
    _active.append(hook)
    hook.scan(modules)
    sys.setprofile(hook.profile)
    threading.setprofile(hook.profile)
    return hook


def disable():
    if not _active:
        return
    hook = _active.pop()
    sys.setprofile(None)
    threading.setprofile(None)
    hook.restore_all()


def active():
    return _active[0] if _active else None
