"""Hooked functions and their discovery: what TorchDynamo's eval-frame callback does, in pure Python.

A hooked function keeps its identity; its `__code__` is swapped for a trampoline (built with
`bytecode`: same signature and free variables) that routes each call through a FrameCache.
The cache belongs to the code object (to the function for closures: their cells differ) for
the life of the process, so compiled entries survive `disable()`/`enable()` and scopes.

Two things make a hooked function *active* (compile and look up) in a thread:
  - `ft.enable()`: the global options are set (every thread);
  - a scope: an `ft.compile`d function is running in this thread (`scoped_dispatch` pushes the
    options for its callees on a thread-local stack, pops them on return or exception), as in
    Dynamo, where the callback stays installed while the compiled frame and everything it calls
    (its eager parts, break and resume functions) run.
When neither holds, the trampoline calls the original code at once (`hooked_dispatch`).

Discovery: a `sys.setprofile` callback sees each new code object once; for a candidate (the
compiler's rules, `set_rules`) it finds the function object and hooks it. The call that revealed
a function runs as it started (eagerly); later calls go through the trampoline. CPython 3.11
runs every frame on its slow path while any profile function is set, so the callback steps aside
after QUIET_CALLS calls in a row of known code; hooked dispatches re-arm it every REARM_EVERY
calls, and a compiled function arms it on entry with a backoff (every call at first, then at
most every MAX_ARM_INTERVAL calls while nothing new turns up). A profiler the user had set is
called first from ours and put back when ours steps aside.
"""
from __future__ import annotations

import contextlib
import gc
import inspect
import sys
import threading
import types
import weakref

from .cache import dispatch, new_frame_cache
from .types import frame_value_names

QUIET_CALLS = 256
REARM_EVERY = 1024
MAX_ARM_INTERVAL = 64
MAX_GC_SEARCHES = 64          # closures found through gc.get_referrers (a heap walk each)


class _Local(threading.local):
    def __init__(self):
        self.stack = []            # callee options of the compiled calls running here, innermost last
        self.prev = _thread_prev[0] if _global_options[0] is not None else None   # profiler chained to
        self.quiet = 0             # calls in a row of known code
        self.discovering = False   # a compiled call running here armed discovery (scoped_dispatch)


_global_options = [None]          # options of ft.enable(); None while it is off
# one token per thread running a compiled call (outermost) and one while ft.enable() is on:
# a trampoline whose list is empty calls the original code at once (append/pop are atomic)
class _Tokens(list):
    __hash__ = object.__hash__    # a constant of trampoline code objects, which are hashed

    def __reduce__(self):         # the one list, when a hooked function is pickled by value
        return "_active"


_active = _Tokens()
_thread_prev = [None]             # threading's profiler before enable()
_local = _Local()
_rules = {"consider": lambda code: False, "on_install": lambda fn, cache: None}
_seen: set = set()                # code objects discovery has looked at
_lock = threading.RLock()
_installs = [0]
_dispatches = [0]
_gc_searches = [0]


def set_rules(consider, on_install):
    """The compiler's skip rules (code -> bool) and its hook on each new cache."""
    _rules["consider"], _rules["on_install"] = consider, on_install


# --- dispatch -----------------------------------------------------------------------------

def active_options():
    """The options a hooked function compiles with in this thread now (None: inactive)."""
    stack = _local.stack
    return stack[-1] if stack else _global_options[0]


def hooked_dispatch(cache, values):
    """The trampoline of a hooked function: dispatch when active, else the original code."""
    if not _local.stack and _global_options[0] is None:
        return cache.run_original(*values)
    n = _dispatches[0] = _dispatches[0] + 1
    if not n % REARM_EVERY:
        arm()
    return dispatch(cache, values)


def scoped_dispatch(cache, values, tried=None):
    """dispatch() for an ft.compile'd function: the functions it calls, however deep, are
    candidates while it runs (its callee options are pushed for this thread)."""
    if not cache.reached:
        cache.reached = True
        try:
            hook_reachable(cache.fn)
        except Exception:    # the hook must never break the user's program
            pass
    stack = _local.stack
    if stack or _global_options[0] is not None:        # nested, or ft.enable() on: no arming here
        stack.append(cache.scope)
        try:
            return dispatch(cache, values, tried)
        finally:
            stack.pop()
    stack.append(cache.scope)
    _active.append(None)
    cache.discover_in -= 1
    armed = cache.discover_in <= 0 and arm()
    _local.discovering = armed
    before = _installs[0]
    try:
        return dispatch(cache, values, tried)
    finally:
        stack.pop()
        _active.pop()
        _local.discovering = False
        if sys.getprofile() is _profile:                # armed here or re-armed by a hooked dispatch
            disarm()
        if armed:
            every = 1 if _installs[0] != before else min(2 * cache.discover_every, MAX_ARM_INTERVAL)
            cache.discover_every = cache.discover_in = every


@contextlib.contextmanager
def suspend_discovery():
    """No discovery while the compiler works (its own calls are not candidates anyway); then
    discovery again if this thread's compiled call armed it, even if the profiler stepped aside
    meanwhile (the miss path before the compile, e.g. the compiler's first import, is more than
    QUIET_CALLS known calls): the user's code runs next, with the callees to find."""
    armed = sys.getprofile() is _profile or _local.discovering
    if armed:
        disarm()
    try:
        yield
    finally:
        if armed:
            arm()


# --- discovery ----------------------------------------------------------------------------

def arm() -> bool:
    """Put the discovery profiler on this thread (chaining to a profiler already set)."""
    current = sys.getprofile()
    if current is _profile:
        return True
    if current is not None and not callable(current):
        return False               # a C profiler we cannot chain to (cProfile): leave it alone
    _local.prev, _local.quiet = current, 0
    sys.setprofile(_profile)
    return True


def disarm():
    """Take the discovery profiler off this thread, giving back the profiler it chained to."""
    if sys.getprofile() is _profile:
        prev, _local.prev = _local.prev, None
        sys.setprofile(prev)


def _profile(frame, event, arg):
    local = _local
    prev = local.prev
    if prev is not None:
        prev(frame, event, arg)
    if event != "call":
        return
    if not local.stack and _global_options[0] is None:
        disarm()                   # left over in a thread after ft.disable(): nothing to discover for
        return
    code = frame.f_code
    if code in _seen:
        local.quiet += 1
        if local.quiet > QUIET_CALLS:
            disarm()               # step aside until a hooked dispatch or a compiled call re-arms
        return
    if code in _compiled_codes and _through_trampoline(frame):
        return                     # an ft.compile'd function run by its own trampoline's fallback
    local.quiet = 0
    _seen.add(code)
    try:
        if _rules["consider"](code):
            fn = find_function(frame, code)
            if fn is not None:
                install(fn, global_owned=_global_options[0] is not None and not local.stack)
    except Exception:      # the hook must never break the user's program
        pass


def find_function(frame, code):
    """The function object running `code` in `frame`: a global, a method of the first
    argument's class, a function the caller or the module holds, or (closures) the heap's."""
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
    caller = frame.f_back
    for scope in ((caller.f_locals,) if caller is not None else ()) + (frame.f_globals,):
        for value in list(scope.values()):
            if isinstance(value, types.FunctionType) and value.__code__ is code:
                return value
    if code.co_freevars and _gc_searches[0] < MAX_GC_SEARCHES:
        _gc_searches[0] += 1
        found = [r for r in gc.get_referrers(code) if isinstance(r, types.FunctionType)]
        if len(found) == 1:
            return found[0]
    return None


def hook_reachable(fn, depth=4):
    """Hook the candidates `fn` reaches by name (globals its code reads, functions in its
    closure cells), transitively: unlike a function discovery finds, their first call compiles."""
    todo, done = [(fn, 0)], {fn}
    while todo:
        f, d = todo.pop()
        for g in _named_functions(f):
            if g in done or g in _originals:
                continue           # an ft.compile trampoline has its cache (and hooks its reach when it runs)
            done.add(g)
            g_code = original_function(g).__code__
            if not _rules["consider"](g_code):
                continue
            _seen.add(g_code)
            install(g)
            if d < depth:
                todo.append((g, d + 1))


def _named_functions(fn):
    fn = original_function(fn)
    names, codes = set(), [fn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    found = [fn.__globals__.get(name) for name in names]
    for cell in fn.__closure__ or ():
        try:
            found.append(cell.cell_contents)
        except ValueError:        # an empty cell
            pass
    return [f for f in found if isinstance(f, types.FunctionType)]


# --- hooking ------------------------------------------------------------------------------

class _Record:
    __slots__ = ("code", "tramp", "cache", "global_owned")

    def __init__(self, code, tramp, cache):
        self.code, self.tramp, self.cache, self.global_owned = code, tramp, cache, False


_records = weakref.WeakKeyDictionary()      # function -> _Record (kept while it is unhooked too)
_code_caches = weakref.WeakKeyDictionary()  # code without free variables -> (cache, trampoline code)
_originals = weakref.WeakKeyDictionary()    # ft.compile trampoline -> the user's function
_compiled_codes = weakref.WeakSet()         # code objects of ft.compile'd functions
TRAMPOLINE_FILE = "<frametrace trampoline"  # the file name of trampolines' code (hook.py)


def register_trampoline(tramp, fn):
    """An ft.compile trampoline: the tracer inlines `fn` for it, and discovery leaves `fn`'s
    code alone where the trampoline runs it (its calls through the trampoline already have a
    cache). Called directly (the class's method on another instance than the one compiled,
    under ft.enable()), it is a candidate like any other: else it would run eagerly and each
    function it calls would compile on its own, specialised on every int argument it indexes
    a list with (a layer index)."""
    _originals[tramp] = fn
    _compiled_codes.add(fn.__code__)


def _through_trampoline(frame) -> bool:
    back = frame.f_back
    return back is not None and back.f_code.co_filename.startswith(TRAMPOLINE_FILE)


def original_function(fn):
    """What the tracer inlines for `fn`: the user's function behind a trampoline, else `fn`."""
    rec = _records.get(fn)
    if rec is not None:
        return rec.cache.fn if fn.__code__ is rec.tramp else fn
    return _originals.get(fn, fn)


def is_hooked(cache) -> bool:
    return cache.hooked


def install(fn, global_owned=False):
    """Hook `fn` (again): swap its code for the trampoline of its code object's cache."""
    if not isinstance(fn, types.FunctionType):
        return
    with _lock:
        rec = _records.get(fn)
        if rec is None:
            code = fn.__code__
            if code.co_freevars:
                cache = _new_cache(fn, code)
                rec = _Record(code, make_trampoline_code(code, cache), cache)
            else:
                # shared by the functions of this code object; code objects compare equal by
                # content (a module imported twice, one source exec'd in two namespaces): another
                # code object, or other globals, gets a cache of its own
                pair = _code_caches.get(code)
                if pair is None or pair[0].code is not code or pair[0].fn.__globals__ is not fn.__globals__:
                    cache = _new_cache(fn, code)
                    own = (cache, make_trampoline_code(code, cache))
                    if pair is None:
                        _code_caches[code] = own
                    pair = own
                rec = _Record(code, pair[1], pair[0])
            _records[fn] = rec
        rec.global_owned |= global_owned
        if rec.cache.unhooked:
            return                 # the compiler gave up on it: leave its own code
        if fn.__code__ is rec.code:
            fn.__code__ = rec.tramp
            _installs[0] += 1


def hooked_cache_for(fn):
    """The cache a hooked copy of `fn` uses in this process (a function pickled by value while
    hooked: its trampoline code names the cache); `fn` is the user's function."""
    with _lock:
        code = fn.__code__
        pair = None if code.co_freevars else _code_caches.get(code)
        if pair is not None:
            return pair[0]
        cache = _new_cache(fn, code)
        if not code.co_freevars:
            _code_caches[code] = (cache, make_trampoline_code(code, cache))
        return cache


def _new_cache(fn, code):
    original, run_original = _run_original_for(fn, code)
    cache = new_frame_cache(code, original, frame_value_names(code), run_original)
    cache.hooked = True
    _rules["on_install"](fn, cache)
    return cache


def unhook(cache):
    """Give every function using `cache` its original code back, for good (not worth compiling)."""
    with _lock:
        cache.unhooked = True
        for fn, rec in list(_records.items()):
            if rec.cache is cache and fn.__code__ is rec.tramp:
                fn.__code__ = rec.code


def forget_given_up():
    """ft.reset(): the functions the compiler gave their code back (`unhook`) become candidates
    again, as everything else it learnt is forgotten: hooked again where they were (functions
    ft.enable() hooked only while it is on)."""
    with _lock:
        for fn, rec in list(_records.items()):
            if rec.cache.unhooked:
                rec.cache.unhooked = False
                if not rec.global_owned or _global_options[0] is not None:
                    install(fn)


def hooked_functions() -> list:
    """Functions whose code is a trampoline now."""
    return [fn for fn, rec in list(_records.items()) if fn.__code__ is rec.tramp]


def make_trampoline_code(code, cache):
    """A code object with `code`'s signature whose body is `return hooked_dispatch(cache, (values))`;
    for plain positional signatures, preceded by `if not _active: return original(args)`."""
    from bytecode import Bytecode, FreeVar, Instr, Label    # loaded by the first hook, not at import

    from . import calls
    nargs = code.co_argcount + code.co_kwonlyargcount
    nargs += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    argnames = list(code.co_varnames[:nargs])
    lineno = code.co_firstlineno
    body = []
    if code.co_freevars:
        body.append(Instr("COPY_FREE_VARS", len(code.co_freevars), lineno=lineno))
    body.append(Instr("RESUME", 0, lineno=lineno))
    if nargs == code.co_argcount:
        dispatch_label = Label()
        body += [Instr("LOAD_CONST", _active, lineno=lineno)] + calls.jump_if_true(dispatch_label, lineno)
        body += calls.load_callable(cache.fn, lineno)
        body += [Instr("LOAD_FAST", name, lineno=lineno) for name in argnames]
        body += calls.call(nargs, lineno) + [Instr("RETURN_VALUE", lineno=lineno), dispatch_label]
    body += calls.load_callable(hooked_dispatch, lineno) + [Instr("LOAD_CONST", cache, lineno=lineno)]
    body += [Instr("LOAD_FAST", name, lineno=lineno) for name in argnames]
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
    """(a function running the original `code`, a callable taking frame values that calls it)."""
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
    if not (kwonly or varargs or varkw):
        if not code.co_freevars:
            return original, original          # frame values are exactly the positional arguments
        return original, lambda *values: original(*values[:npos])

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


# --- ft.enable() --------------------------------------------------------------------------

def _functions_of(value, module_name):
    if isinstance(value, types.FunctionType):
        if value.__module__ == module_name:
            yield value
    elif isinstance(value, type) and value.__module__ == module_name:
        for attr in vars(value).values():
            attr = getattr(attr, "__func__", attr)
            if isinstance(attr, types.FunctionType):
                yield attr


def enable(options, modules=()):
    """Hook every candidate function from now on, in every thread (ft.enable())."""
    with _lock:
        if _global_options[0] is not None:
            _global_options[0] = options
            return
        _thread_prev[0] = threading.getprofile()
        _global_options[0] = options
        _active.append(None)
        for fn, rec in list(_records.items()):       # what an earlier enable() hooked, with its entries
            if rec.global_owned:
                install(fn)
        for module in modules:                          # functions user modules already define
            hook_module(module)
        arm()
        threading.setprofile(_profile)


def hook_module(module):
    """Hook the candidate functions (and methods of classes) `module` defines, for ft.enable()."""
    with _lock:
        for value in list(vars(module).values()):
            for fn in _functions_of(value, module.__name__):
                code = fn.__code__
                if fn not in _records and code not in _seen and _rules["consider"](code):
                    _seen.add(code)
                    install(fn, global_owned=True)


def disable():
    """Stop ft.enable(): profilers as they were, functions it hooked get their code back
    (their caches and entries stay, for the next enable())."""
    with _lock:
        if _global_options[0] is None:
            return
        _global_options[0] = None
        _active.pop()
        threading.setprofile(_thread_prev[0])
        _thread_prev[0] = None
        if not _local.stack:
            disarm()
        for fn, rec in list(_records.items()):
            if rec.global_owned and fn.__code__ is rec.tramp:
                fn.__code__ = rec.code
                _seen.discard(rec.code)         # a compiled function's scope may find it again


def enabled() -> bool:
    return _global_options[0] is not None
