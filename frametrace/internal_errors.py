"""No internal error reaches the user: a bug of frametrace makes its frame run eagerly.

An exception raised inside frametrace while it compiles a frame (tracing, guard building,
passes, lowering, code generation, making break and resume functions) or while it evaluates
guards on the miss path (recompile reasons, an entry that rejects the values it was built from)
is a bug of ours, not the program's: the frame runs as plain Python from then on (its cache
stops compiling on a miss; entries it already has keep serving calls), the bug is logged once
with its traceback on the `graph_breaks` log (a WARNING, so it shows without any log set up)
and counted in `ft.stats().internal_errors`. The program finishes with NumPy's results.

`config.strict_backend` (FRAMETRACE_STRICT_BACKEND=1, on in every test run) raises the bug
instead, with its own traceback. Exceptions frametrace raises on purpose (ConstraintViolationError,
RecompileError, GraphBreakError, the compiler collectives' errors) are never swallowed, and
exceptions the user's code or NumPy raise while a compiled entry runs are the program's own: they
are not caught here (the two call sites only wrap frametrace's own work).
"""
from __future__ import annotations

import threading

import csrc_free_runtime as rt
from csrc_free_runtime import global_hook

from .config import config
from .errors import FrametraceError, InternalError
from .logs import get_logger
from .stats import counters

breaks_log = get_logger("graph_breaks")
_lock = threading.Lock()


def is_internal(exc: BaseException) -> bool:
    """A bug rather than an error frametrace raises for the user on purpose."""
    return isinstance(exc, Exception) and (not isinstance(exc, FrametraceError) or isinstance(exc, InternalError))


def fall_back(cache, values, exc: Exception, stage: str):
    """Raise `exc` when strict (or when it is not a bug); else make the frame of `cache` run
    eagerly from now on, log and count the bug, and run this call eagerly."""
    if config.strict_backend or not is_internal(exc):
        raise exc
    code = cache.code
    where = f"{code.co_filename}:{code.co_firstlineno} in {code.co_name}"
    key = (stage, type(exc).__name__, str(exc))
    with _lock:                           # once per frame (ft.reset() forgets it with the entries)
        logged = cache.state.data.setdefault("bugs_logged", set())
        first = key not in logged
        logged.add(key)
    if first:
        breaks_log.warning("frametrace bug while %s %s: %s: %s\nThis frame now runs as plain Python "
                           "(NumPy's results). Please report this with the function and the traceback; "
                           "FRAMETRACE_STRICT_BACKEND=1 raises it instead.",
                           stage, where, type(exc).__name__, exc, exc_info=exc)
    counters.bump("internal_errors")
    counters.bump("eager_fallbacks")
    cache.action = rt.Mode.SKIP
    if rt.is_hooked(cache) and not cache.entries:
        global_hook.unhook(cache)         # a hooked function gets its own code back
    return cache.run_original(*values)


def rejects_own_inputs(cache, entry, values) -> InternalError:
    """The bug of an entry whose guards reject the values it was just built from."""
    failing = entry.info.failing_guards(values)
    return InternalError(f"frametrace bug: the entry compiled for {cache.code.co_name} rejects its own inputs; "
                         f"failing guards: {failing}\n{entry.info.entry_source}")
