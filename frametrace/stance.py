"""ft.set_stance: how compiled functions behave (a call, or a context manager that restores)."""
from __future__ import annotations

import threading

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile")

_state = threading.local()
_global = ["default"]


def current() -> str:
    return getattr(_state, "stance", None) or _global[0]


class set_stance:
    """ft.set_stance("force_eager") sets the stance; `with ft.set_stance(...):` restores it afterwards.

    default             compile on a miss
    force_eager         never compile, run everything eagerly
    eager_on_recompile  compile a frame once; later misses run eagerly
    fail_on_recompile   a recompile raises RecompileError naming the guard failures
    eager_then_compile  the first call runs eagerly (recording sizes); compile from the second,
                        with whatever varied already dynamic
    """

    def __init__(self, stance: str = "default"):
        if stance not in STANCES:
            raise ValueError(f"unknown stance {stance!r}; choose one of {', '.join(STANCES)}")
        self.previous = _global[0]
        _global[0] = stance
        from csrc_free_runtime import Mode, set_mode
        set_mode(Mode.SKIP if stance == "force_eager" else Mode.DEFAULT)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        set_stance(self.previous)
        return False
