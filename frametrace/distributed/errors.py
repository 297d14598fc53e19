"""Errors of compiler collectives: ranks that stopped compiling the same frames in step."""
from __future__ import annotations

from ..errors import FrametraceError

_FIX = ("every rank must compile the same frames in the same order. If a rank legitimately takes longer "
        "to reach this compile, raise ft.config.collectives_timeout_s (FRAMETRACE_COLLECTIVES_TIMEOUT_S); "
        "if the ranks take different code paths (a graph break or a branch on one rank only), turn "
        "compiler collectives off for this program (FRAMETRACE_ENABLE_COMPILER_COLLECTIVES=0). The ranks "
        "are now out of step, so later compiles on this rank raise this error again: end the job "
        "(comm.Abort())")


class CollectiveError(FrametraceError):
    """The ranks of an MPI job did not exchange their observed sizes for a compile.

    frame: `file.py:12 f` of the frame this rank was compiling; ranks: the ranks at fault.
    """

    def __init__(self, message: str, *, frame: str = "", ranks: tuple = ()):
        self.frame, self.ranks = frame, tuple(ranks)
        super().__init__(f"{message}\n  fix: {_FIX}")


class CollectiveTimeoutError(CollectiveError):
    """Some ranks did not reach the same compile within `collectives_timeout_s`."""


class CollectiveMismatchError(CollectiveError):
    """Ranks reached their n-th compile with different frames (their code paths diverged)."""
