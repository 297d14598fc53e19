"""frametrace: a JIT that makes ordinary NumPy code fast, with symbolic (dynamic) shapes.

    import frametrace as ft

    @ft.compile
    def f(x):
        return np.sin(x) * x.shape[0]

See README.md and ../shared/DESIGN.md for the whole contract.

`import frametrace` loads NumPy and the per-call path only (benchmarks/bench_import_time.py);
the compiler (the tracer, sympy, bytecode, llvmlite) loads on the first compile
(convert_frame) and bytecode on the first function the global hook swaps (global_hook).
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
    """Forget every compiled entry, what automatic dynamic learnt, which functions were not worth
    compiling, and the counters; existing ft.compile wrappers keep their options."""
    import csrc_free_runtime as rt

    from .stats import counters
    for cache in rt.all_caches():
        options = cache.state.data.get("options")      # ft.compile(dynamic=, fullgraph=, backend=)
        cache.clear()
        if options is not None:
            cache.state.data["options"] = options
    rt.global_hook.forget_given_up()      # functions given their code back are candidates again
    rt.cache.reset_hits()
    counters.reset()
    kernels = sys.modules.get("frametrace.backends.llvm.kernel_cache")     # loaded only once used
    if kernels is not None:
        kernels.forget()
    from .reporting.summary import forget
    forget()


def report():
    """The compile report since the last ft.reset() (`print(ft.report())`, `.as_dict()`): time
    compiling vs running compiled code vs eager Python (under a recording), the frames compiled
    with graphs, breaks and recompiles, the top graph-break and recompile reasons with the user
    line and a hint, the largest graphs and the slowest compiles."""
    from .reporting.summary import report as _report
    return _report()


def recording():
    """`with ft.recording(): ...` samples where the time goes inside the block, for ft.report()."""
    from .reporting.summary import recording as _recording
    return _recording()


def set_logs(**channels):
    """Turn log channels on: ft.set_logs(dynamic=True, recompiles=True, graph_code=True, ...)."""
    from .log_setup import set_logs as _set
    _set(**channels)


def load_ipython_extension(ipython):
    """`%load_ext frametrace`: the `%%frametrace` cell magic (frametrace/reporting/ipython.py)."""
    from .reporting.ipython import load_ipython_extension as _load
    _load(ipython)


def _install():
    from . import convert_frame, log_setup
    convert_frame.install()
    log_setup.configure_from_env()


_install()

__all__ = ["compile", "enable", "disable", "enabled", "config", "errors", "explain", "ExplainOutput",
           "mark_dynamic", "mark_static",
           "mark_unbacked", "maybe_mark_dynamic", "set_stance", "stats", "Stats", "reset", "check", "set_logs",
           "report", "recording"]
