"""The miss path: decide whether and how to compile a frame, trace it, and hand the runtime an entry."""
from __future__ import annotations

import itertools
import logging
import os
import threading
import time
import warnings

import csrc_free_runtime as rt

from . import internal_errors
from . import stance as stance_mod
from .candidates import worth_compiling
from .config import config
from .dynamic_policy import FrameState
from .enable import restore, restore_if_no_array_work
from .errors import ConstraintViolationError, GraphBreakError, NumpyError, RecompileError, Unsupported
from .eval_frame import compile as compile_function
from .frame_options import FrameOptions
from .log_setup import compile_context
from .logs import get_logger
from .reporting import watch
from .stats import counters

log = logging.getLogger("frametrace")
recompiles_log = get_logger("recompiles")
breaks_log = get_logger("graph_breaks")

_frame_ids = itertools.count()
_frame_id_lock = threading.Lock()


def frame_state(cache) -> FrameState:
    fs = cache.state.data.get("auto")
    if fs is None:
        from . import compile_events
        fs = cache.state.data["auto"] = compile_events.load_profile(cache.code) or FrameState()
        fs.whole_arrays = bool(cache.state.data.get("whole_arrays"))
    return fs


def _frame_id(cache) -> int:
    with _frame_id_lock:
        if cache.state.frame_id is None:
            cache.state.frame_id = next(_frame_ids)
        return cache.state.frame_id


def where(cache) -> str:
    code = cache.code
    return f"{code.co_filename}:{code.co_firstlineno}"


def guard_failures(cache, values, verbose=False) -> list:
    """`0/1: L['x'].shape[0] == 10` for each entry (newest first) and its first failing guard."""
    from .guards.failures import Reason         # the compiler loads on the first compile (fast import)
    reasons = []
    for entry in cache.entries:
        info = entry.info
        if info is None:
            continue
        failing = info.failing_records(values)
        if failing:
            shown = failing if verbose else failing[:1]
            reasons += [Reason.of(entry.compile_id, g) for g in shown]
    return reasons


def _observe_inputs(cache, values):
    """eager_then_compile: record sizes of the first call's inputs without compiling."""
    import numpy as np
    fs = frame_state(cache)
    for name, value in zip(cache.argnames, values):
        src = f"L[{name!r}]"
        if type(value) is np.ndarray:
            fs.observe_array(src, value.shape)
        elif type(value) is int:
            fs.observe_int(src, value)


def on_miss(cache, values):
    """The runtime's callback: no entry's guards passed for these frame values."""
    hooked = rt.is_hooked(cache)
    # a hooked function compiles with the options of what made it active (ft.enable() or the
    # ft.compile'd function it runs under); an ft.compile'd one with its own
    options: FrameOptions = (rt.active_options() if hooked else None) or cache.options or FrameOptions()
    stance = stance_mod.current()
    if stance == "force_eager":
        return cache.run_original(*values)
    if hooked and not cache.entries and not worth_compiling(cache, values):
        # hooked functions compile only when they do array work (candidates.py): give this one its code back
        restore(cache)
        return cache.run_original(*values)
    with cache.lock:
        # another thread may have compiled a matching entry while we waited
        for entry in cache.entries:
            result = entry.call(*values)
            if result is not rt.MISS:
                return result
        if cache.action is not rt.Mode.DEFAULT:
            return cache.run_original(*values)
        if cache.entries:
            try:
                reasons = guard_failures(cache, values)
            except Exception as exc:         # a bug of ours: the frame runs eagerly (internal_errors.py)
                return internal_errors.fall_back(cache, values, exc, "evaluating the guards of")
            if stance == "eager_on_recompile":
                return cache.run_original(*values)
            if stance == "fail_on_recompile":
                raise RecompileError(
                    f"Recompiling function {cache.code.co_name} in {where(cache)} is not allowed under the "
                    "'fail_on_recompile' stance; triggered by the following guard failure(s):\n"
                    + "\n".join(f"    - {r}" for r in reasons))
            if len(cache.entries) >= config.cache_size_limit:
                return _cache_limit_hit(cache, values, reasons)
            try:
                advice = recompile_advice(reasons, cache.state.data.setdefault("reason_counts", {}))
                with compile_context(f"{_frame_id(cache)}/{cache.state.compiles}"):
                    _log_recompile(cache, values, reasons, advice)
                cache.state.data["reasons"] = reasons
                cache.state.data.setdefault("recompile_history", []).append(
                    (f"{_frame_id(cache)}/{cache.state.compiles}", reasons, advice))
            except Exception as exc:         # a bug of ours (internal_errors.py)
                return internal_errors.fall_back(cache, values, exc, "evaluating the guards of")
        elif stance == "eager_then_compile" and not cache.state.data.get("seen"):
            cache.state.data["seen"] = True
            _observe_inputs(cache, values)
            return cache.run_original(*values)
        return _compile_and_run(cache, values, options)


def _log_recompile(cache, values, reasons, advice):
    if recompiles_log.isEnabledFor(logging.INFO):
        body = "\n".join(f"    - {r}" for r in (guard_failures(cache, values, verbose=True) or reasons))
        recompiles_log.info("Recompiling function %s in %s\n    triggered by the following guard failure(s):\n%s%s",
                            cache.code.co_name, where(cache), body, f"\n{advice}" if advice else "")


def recompile_advice(reasons, counts=None) -> str:
    """What would have avoided this recompile (guards/failures.py; empty if nothing applies).

    Only the newest entry's failure counts: a static size (`L['x'].shape[0] == 10`) or int that
    changed; a failed branch guard (`!= 33`) is a specialisation no annotation avoids. With the
    frame's `counts`, a cause seen at three recompiles names its line and the fix. Read from the
    failing guard records the reasons carry (guard_failures), never from their text."""
    from .guards.failures import recompile_advice as failure_advice    # loaded by the first compile
    return failure_advice([r.guard for r in reasons[:1] if getattr(r, "guard", None) is not None], counts)


def _cache_limit_hit(cache, values, reasons):
    cache.action = rt.Mode.RUN_ONLY
    last = reasons[0] if reasons else "unknown"
    warnings.warn(
        f"frametrace hit config.cache_size_limit ({config.cache_size_limit})\n"
        f"   function: {cache.code.co_name!r} ({where(cache)})\n"
        f"   last reason: {last}\n"
        "From now on this function runs eagerly when no compiled entry matches.\n"
        "To log all recompilation reasons, use FRAMETRACE_LOGS=\"recompiles\". If a size keeps changing, "
        "mark it dynamic (ft.mark_dynamic / ft.maybe_mark_dynamic, or FRAMETRACE_DYNAMIC_SOURCES), "
        "or raise ft.config.cache_size_limit.", RuntimeWarning, stacklevel=4)
    counters.bump("eager_fallbacks")
    return cache.run_original(*values)


def _compile_and_run(cache, values, options):
    from . import compile_events, distributed
    from .trace.compile import compile_frame     # the tracer (and sympy) load on the first compile
    frame_id = _frame_id(cache)
    compile_id = f"{frame_id}/{cache.state.compiles}"
    start = time.perf_counter()
    reasons = cache.state.data.pop("reasons", None)
    try:
        compile_events.start(cache.code, compile_id, reasons)
        with compile_context(compile_id), watch.compiling(cache.code, compile_id):
            # compiler collectives: every rank of an MPI job marks the same sizes dynamic (no-op when off)
            distributed.exchange(cache.code, frame_state(cache),
                                 {f"L[{name!r}]": v for name, v in zip(cache.argnames, values)})
            with rt.suspend_discovery():
                entry = compile_frame(cache, values, options, frame_state(cache), compile_id, _compile_resume)
        _add_entry(cache, entry, compile_id, start)
    except NumpyError:
        # NumPy itself raises here: run eagerly so the user sees NumPy's own exception
        counters.bump("eager_fallbacks")
        return cache.run_original(*values)
    except ConstraintViolationError:
        raise
    except Unsupported as exc:
        compile_events.failure(cache.code, compile_id, exc, start, len(cache.entries))
        counters.bump("graph_breaks")
        if options.fullgraph:
            raise GraphBreakError(
                f"fullgraph=True but {cache.code.co_name} ({where(cache)}) cannot be traced as one graph: "
                f"{exc}") from exc
        breaks_log.info("Graph break in user code at %s\nReason: %s", exc.location or where(cache), exc)
        log.debug("frame %s runs eagerly: %s", cache.code.co_name, exc)
        cache.action = rt.Mode.SKIP
        cache.state.data["failure"] = exc
        if rt.is_hooked(cache):
            restore(cache)              # not compilable: its own code back (unless entries remain)
        counters.bump("eager_fallbacks")
        return cache.run_original(*values)
    except Exception as exc:         # a bug of ours: the frame runs eagerly (internal_errors.py)
        return internal_errors.fall_back(cache, values, exc, "compiling")
    result = entry.call(*values)
    if result is rt.MISS:      # the guards must accept the values they were built from
        bug = internal_errors.rejects_own_inputs(cache, entry, values)
        return internal_errors.fall_back(cache, values, bug, "checking the new entry of")
    # compiled or eager, timed (csrc_free_runtime/tuning.py) when the results are exact either
    # way: every such entry under config.autotune_entries, and always one whose graph runs a loop
    # per iteration through its body's wrapper (that Python loop of graph calls is often slower
    # than the user's own loop: issue 23's "never slower")
    extra = entry.info.extra
    if extra.get("same_as_eager") and (config.autotune_entries or extra.get("wrapper_loops")):
        from csrc_free_runtime.tuning import tune
        entry.info.extra["tuning"] = tune(cache, entry)   # compiled or eager: the faster, from now on
    return result


def _add_entry(cache, entry, compile_id, start):
    """Count, log and add a new entry (and save what automatic dynamic learnt)."""
    from . import compile_events
    cache.state.compiles += 1
    counters.bump("frames_compiled")
    brk = entry.info.extra.get("graph_break")
    if brk is not None:
        counters.bump("graph_breaks")
        with compile_context(compile_id):
            breaks_log.info("Graph break in user code at %s\nReason: %s\nUser code traceback:\n  %s%s",
                            brk.location, brk.explanation, brk.source_line,
                            "".join(f"\nHint: {h}" for h in getattr(brk, "hints", ())))
    if entry.info.graph_nodes:
        counters.bump("unique_graphs")
    if cache.entries:
        counters.bump("recompiles")
    cache.add(entry)
    entry.info.compile_time = time.perf_counter() - start
    compile_events.success(cache.code, compile_id, entry.info, start, len(cache.entries))
    with compile_context(compile_id):
        compile_events.save_profile(cache.code, frame_state(cache), compile_id)
    if rt.is_hooked(cache):
        restore_if_no_array_work(cache, entry.info)


def _compile_resume(fn, options: FrameOptions):
    """How a graph break's resume function compiles: as ft.compile would, with its frame's options
    (handed down to trace/graph_break.py, which makes the resume functions)."""
    return compile_function(fn, dynamic=options.dynamic, backend=options.backend)


def install():
    rt.set_callback(on_miss)


_ = os
