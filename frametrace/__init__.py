"""frametrace: a JIT that makes ordinary NumPy code fast, with symbolic (dynamic) shapes.

    import frametrace as ft

    @ft.compile
    def f(x):
        return np.sin(x) * x.shape[0]

See README.md and ../shared/DESIGN.md for the whole contract.
"""
from __future__ import annotations

import sys

from . import errors
from .config import config
from .enable import disable, enable, enabled
from .eval_frame import compile
from .explain import ExplainOutput, explain
from .marks import mark_dynamic, mark_static, mark_unbacked, maybe_mark_dynamic
from .stance import set_stance
from .stats import Stats

__version__ = "0.1.0"


def check(cond, msg=None):
    """Assert a fact about sizes. Eagerly: raises if false. While tracing: recorded as a guard."""
    if not cond:
        raise AssertionError(msg or "ft.check failed")


def stats() -> Stats:
    """Counters since the last reset: frames_compiled, unique_graphs, recompiles, graph_breaks, cache_hits."""
    import csrc_free_runtime as rt

    from .stats import counters
    return counters.snapshot(cache_hits=rt.cache.total_hits())


def reset():
    """Forget every compiled entry, what automatic dynamic learnt, and the counters; existing
    ft.compile wrappers keep their options."""
    import csrc_free_runtime as rt

    from .stats import counters
    for cache in rt.all_caches():
        options = cache.state.data.get("options")      # ft.compile(dynamic=, fullgraph=, backend=)
        cache.clear()
        if options is not None:
            cache.state.data["options"] = options
    rt.cache.reset_hits()
    counters.reset()
    kernels = sys.modules.get("frametrace.backends.llvm.kernel_cache")     # loaded only once used
    if kernels is not None:
        kernels.forget()


def set_logs(**channels):
    """Turn log channels on: ft.set_logs(dynamic=True, recompiles=True, graph_code=True, ...)."""
    from .log_setup import set_logs as _set
    _set(**channels)


def _install():
    from . import convert_frame, log_setup
    convert_frame.install()
    log_setup.configure_from_env()


_install()

__all__ = ["compile", "enable", "disable", "enabled", "config", "errors", "explain", "ExplainOutput",
           "mark_dynamic", "mark_static",
           "mark_unbacked", "maybe_mark_dynamic", "set_stance", "stats", "Stats", "reset", "check", "set_logs"]
