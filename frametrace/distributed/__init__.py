"""Compiler collectives: the ranks of an MPI job agree on which sizes are dynamic.

With `ft.config.enable_compiler_collectives = True` (or FRAMETRACE_ENABLE_COMPILER_COLLECTIVES=1),
every compile of a frame first exchanges, over MPI, the sizes each rank observed for each source
(this call's inputs plus what automatic dynamic learnt before). A size that differs across ranks
becomes dynamic on every rank at once, so the ranks compile the same graphs, dynamic from the
first compile, instead of each compiling static and then recompiling on its own.

    from mpi4py import MPI
    import frametrace as ft, frametrace.distributed as ftd
    ft.config.enable_compiler_collectives = True
    ftd.set_communicator(MPI.COMM_WORLD)      # the default; any intra-communicator works

Every rank must compile the same frames in the same order (the usual SPMD program). A rank
that compiles a frame the others do not (a graph break on one rank only) does not hang: after
`collectives_timeout_s` it raises `CollectiveTimeoutError`, naming the frame and the ranks that
did not answer (`CollectiveMismatchError` when ranks are compiling different frames).

mpi4py is optional (`pip install frametrace[mpi]`); it is imported at the first exchange only.
Without it, or in a job of one rank, an exchange does nothing.
"""
from __future__ import annotations

import os
import threading
import time
import warnings

from ..config import config
from ..logs import get_logger
from . import protocol
from .errors import CollectiveError, CollectiveMismatchError, CollectiveTimeoutError

__all__ = ["exchange", "enabled", "set_communicator", "get_communicator", "reset", "stats",
           "CollectiveError", "CollectiveTimeoutError", "CollectiveMismatchError"]

_log = get_logger("dynamic")
_lock = threading.Lock()
_comm = None            # what set_communicator chose (None: MPI.COMM_WORLD)
_channel = None
_warned = False
_stats = {"exchanges": 0, "made_dynamic": 0, "seconds": 0.0}


def _setting(name: str, default):
    """A setting from ft.config, else FRAMETRACE_<NAME>, else `default`."""
    try:
        return getattr(config, name)
    except AttributeError:
        raw = os.environ.get("FRAMETRACE_" + name.upper())
        if raw is None:
            return default
        if isinstance(default, bool):
            return raw.strip().lower() not in ("0", "false", "no", "off", "")
        return type(default)(raw)


def enabled() -> bool:
    """Whether compiles exchange sizes with the other ranks (`enable_compiler_collectives`)."""
    return bool(_setting("enable_compiler_collectives", False))


def set_communicator(comm) -> None:
    """Use `comm` (an mpi4py intra-communicator; None = MPI.COMM_WORLD) for later exchanges.
    Call it on every rank at the same point of the program."""
    global _comm, _channel
    with _lock:
        _comm, _channel = comm, None


def get_communicator():
    """The communicator exchanges use (MPI.COMM_WORLD unless set), or None without mpi4py."""
    channel = _get_channel()
    return None if channel is None else channel.parent


def reset() -> None:
    """Forget the communicator state and the counters (a new channel at the next exchange)."""
    global _channel
    with _lock:
        _channel = None
        _stats.update(exchanges=0, made_dynamic=0, seconds=0.0)


def stats() -> dict:
    """{"exchanges": compiles that exchanged, "made_dynamic": sources raised by other ranks,
    "seconds": time spent exchanging}."""
    return dict(_stats)


def _get_channel():
    global _channel, _warned
    with _lock:
        if _channel is not None:
            return _channel
        comm = _comm
        if comm is None:
            try:
                from mpi4py import MPI
            except ImportError:
                if not _warned:
                    _warned = True
                    warnings.warn("frametrace: enable_compiler_collectives is set but mpi4py is not installed "
                                  "(pip install 'frametrace[mpi]'); compiling without collectives",
                                  RuntimeWarning, stacklevel=4)
                return None
            comm = MPI.COMM_WORLD
        from .channel import Channel
        _channel = Channel(comm)
        return _channel


def exchange(code, frame_state, values_by_source: dict) -> None:
    """Share what this rank saw with the other ranks before compiling `code`.

    Observes `values_by_source` (`{"L['x']": array, "L['n']": 3}`: this call's inputs) into
    `frame_state`, exchanges the state with every rank of the communicator, and raises
    `frame_state` in place to the join (equal stays, different -> varying, i.e. dynamic).
    A no-op unless enabled, with one rank, or without mpi4py. Raises CollectiveError when the
    ranks do not all reach this compile within `collectives_timeout_s`.
    """
    if not enabled():
        return
    channel = _get_channel()
    if channel is None:
        return
    protocol.observe(frame_state, values_by_source)
    if channel.size == 1:
        return
    start = time.perf_counter()
    timeout = float(_setting("collectives_timeout_s", 30.0))
    merged = channel.exchange(code, frame_state, timeout)
    before = {n: frame_state.sizes.get(n) for n in merged.sizes}
    changed = protocol.apply(frame_state, merged)
    _stats["exchanges"] += 1
    _stats["made_dynamic"] += len(changed)
    _stats["seconds"] += time.perf_counter() - start
    for name in changed:
        if name in merged.sizes:
            _log.info("compiler collectives: %s was %s on rank %d and differs on other ranks -> %s (%s)",
                      name, list(before[name]) if before.get(name) else before.get(name),
                      channel.rank, _shape(merged.sizes[name]), protocol.frame_where(code))
        else:
            _log.info("compiler collectives: %s differs across ranks -> dynamic (%s)",
                      name, protocol.frame_where(code))


def _shape(size) -> str:
    return "size=?" if size is None else "size=[" + ", ".join("?" if d is None else str(d) for d in size) + "]"
