"""ft.enable() / ft.disable() / ft.enabled(): compile every user function without decorators.

The runtime's global hook (csrc_free_runtime.global_hook) sees each new code object once;
these are the compiler's skip rules for it: the standard library, installed packages,
frametrace itself, generated code, module and class bodies, generators and coroutines.
A function whose first trace does no array work gets its original code back.
"""
from __future__ import annotations

import contextlib
import inspect
import os
import sysconfig

from csrc_free_runtime import global_hook

from .convert_frame import FrameOptions

_SKIP_PREFIXES = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})
_HERE = os.path.dirname(os.path.abspath(__file__))
_RUNTIME = os.path.join(os.path.dirname(_HERE), "csrc_free_runtime")
_options = [FrameOptions()]


def consider(code) -> bool:
    """Is this code object a candidate for compilation?"""
    filename = code.co_filename
    if filename.startswith("<") or code.co_name.startswith("<") and code.co_name != "<lambda>":
        return False
    if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                        | inspect.CO_ITERABLE_COROUTINE):
        return False
    if filename.startswith(_SKIP_PREFIXES) or "site-packages" in filename or "dist-packages" in filename:
        return False
    if filename.startswith(_HERE) or filename.startswith(_RUNTIME):
        return False
    return True


def _on_install(fn, cache):
    cache.state.data["options"] = _options[0]


def restore(cache):
    """Give a hooked function its original code back (it is not worth compiling)."""
    fn = cache.state.data.get("global_hook_function")
    hook = global_hook.active()
    if fn is not None and hook is not None:
        hook.restore(fn)
    cache.action = __import__("csrc_free_runtime").Mode.SKIP


def restore_if_no_array_work(cache, info):
    """Called after a compile: a hooked function whose graph is empty and that takes no
    arrays gets its original code back (near zero cost from then on)."""
    fn = cache.state.data.get("global_hook_function")
    hook = global_hook.active()
    if fn is None or hook is None:
        return
    if not info.graph_nodes and not info.graph.inputs and "graph_break" not in info.extra:
        hook.restore(fn)


def _user_modules():
    import sys
    for module in list(sys.modules.values()):
        filename = getattr(module, "__file__", None)
        if filename and not filename.startswith(_SKIP_PREFIXES) and "site-packages" not in filename \
                and not filename.startswith(_HERE) and not filename.startswith(_RUNTIME):
            yield module


def enable(dynamic=None, backend=None):
    """Compile every Python function called from now on (outside the standard library and
    installed packages). Functions user modules already define are hooked at once; a function
    defined later is found on its first call, which runs eagerly."""
    _options[0] = FrameOptions(dynamic, backend, False)
    global_hook.enable(consider, _on_install, list(_user_modules()))


def disable():
    """Stop the global hook and give every function its original code back."""
    global_hook.disable()


@contextlib.contextmanager
def enabled(dynamic=None, backend=None):
    """`with ft.enabled(): ...` compiles the functions called inside the block."""
    enable(dynamic=dynamic, backend=backend)
    try:
        yield
    finally:
        disable()
