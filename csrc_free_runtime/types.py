"""The runtime's contract with the compiler: cache entries and the miss callback."""
from __future__ import annotations

import enum
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol


class Mode(enum.Enum):
    DEFAULT = "default"      # look up the cache, compile on a miss
    RUN_ONLY = "run_only"    # look up the cache, run eagerly on a miss
    SKIP = "skip"            # run the original function, never look up


@dataclass(eq=False)
class CacheEntry:
    """One compiled version of a frame.

    call(*frame_values) runs the guards and, if they pass, the compiled code; it returns
    `MISS` when a guard fails. `check(*frame_values)` runs only the guards (for explaining).
    """
    call: Callable
    check: Callable
    compile_id: str
    guard_source: str = ""
    info: Any = None          # compiler-side record (guards, graph, ...), opaque to the runtime
    # native.NativeEntry or None: the same guards + compiled code as a builtin, tried first;
    # it returns native.NATIVE_MISS where it cannot decide, and then `call` runs
    native: Any = None


class MissCallback(Protocol):
    def __call__(self, cache: "FrameCache", frame_values: tuple) -> Any: ...  # noqa: F821


@dataclass(eq=False)
class FrameState:
    """Per-code-object state owned by the compiler (frame id, compile counter, what it learnt)."""
    frame_id: int | None = None
    compiles: int = 0
    data: dict = field(default_factory=dict)


def frame_value_names(code) -> tuple:
    """The frame values a trampoline hands to entries: the parameters in `co_varnames` order
    (positional, keyword-only, *args, **kwargs), then the contents of the closure cells."""
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return tuple(code.co_varnames[:n]) + tuple(code.co_freevars)
