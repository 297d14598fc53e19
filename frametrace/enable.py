"""ft.enable() / ft.disable() / ft.enabled(): compile every user function without decorators.

The runtime's global hook (csrc_free_runtime.global_hook) sees each new code object once;
these are the compiler's skip rules for it: the standard library, installed packages,
frametrace itself, generated code, module and class bodies, generators and coroutines.
A function whose first trace does no array work gets its original code back.

The same rules pick the callees of an `ft.compile`d function while it runs (global_hook).
"""
from __future__ import annotations

import contextlib
import inspect
import sys

from csrc_free_runtime import Mode, global_hook

from .candidates import graph_does_array_work
from .file_kinds import is_library, is_ours
from .frame_options import FrameOptions

_GENERATED = ("__break_at_", "__resume_at_")


def consider(code) -> bool:
    """Is this code object a candidate for compilation?"""
    filename = code.co_filename
    if filename.startswith("<") and not filename.startswith("<ipython-input-") \
            or code.co_name.startswith("<") and code.co_name != "<lambda>":
        return False              # generated code; IPython's terminal cells are user code
    if code.co_name.startswith(_GENERATED):
        return False              # break and resume functions: the compiler made and runs them
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                        | inspect.CO_ITERABLE_COROUTINE):
        return False
    if is_library(filename) or is_ours(filename):
        return False
    return True


def _on_install(fn, cache):
    cache.options = global_hook.active_options() or FrameOptions()


def restore(cache):
    """Not worth compiling: every function using this cache gets its original code back (near
    zero cost from then on); entries it already has keep serving calls that reach the cache."""
    cache.action = Mode.SKIP
    if not cache.entries:
        global_hook.unhook(cache)


def restore_if_no_array_work(cache, info):
    """Called after a compile: a hooked function whose graph holds no array (only Python or
    NumPy scalar arithmetic, or nothing) and that did not break gets its original code back
    (near zero cost from then on: a guard check costs more than such a body)."""
    if not global_hook.is_hooked(cache):
        return
    if "graph_break" not in info.extra and not graph_does_array_work(info.graph):
        global_hook.unhook(cache)


_is_user_module: dict = {}      # module name -> (module, is it a user module): decided once


def is_user_file(filename) -> bool:
    """A source file of the user's (not the standard library, an installed package or frametrace)."""
    return bool(filename) and not is_library(filename) and not is_ours(filename)


def _user_modules():
    for name, module in list(sys.modules.items()):
        known = _is_user_module.get(name)
        if known is None or known[0] is not module:
            user = is_user_file(getattr(module, "__file__", None))
            known = _is_user_module[name] = (module, user)
        if known[1]:
            yield module


def enable(dynamic=None, backend=None):
    """Compile every Python function called from now on (outside the standard library and
    installed packages). Functions user modules already define are hooked at once; a function
    defined later is found on its first call, which runs eagerly."""
    global_hook.enable(FrameOptions(dynamic, backend, False), list(_user_modules()))


def disable():
    """Stop the global hook and give every function its original code back (what it compiled
    stays with the code objects: the next enable() uses it without recompiling)."""
    global_hook.disable()


@contextlib.contextmanager
def enabled(dynamic=None, backend=None):
    """`with ft.enabled(): ...` compiles the functions called inside the block."""
    enable(dynamic=dynamic, backend=backend)
    try:
        yield
    finally:
        disable()


global_hook.set_rules(consider, _on_install)
