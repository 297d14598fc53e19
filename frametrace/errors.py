"""Errors users see, and the structured `Unsupported` that the tracer turns into a fallback."""
from __future__ import annotations


class FrametraceError(Exception):
    """Base class of every frametrace error."""


class Unsupported(FrametraceError):
    """The tracer met something it cannot put in a graph.

    kind: a short category ("opcode", "call", "data_dependent", ...); context: what was being
    traced (instruction, callable); explanation: why; hints: what the user can do;
    location: "file.py:12 in f" of the user code, filled in by the tracer.
    """

    def __init__(self, explanation: str, *, kind: str = "unsupported", context: str = "",
                 hints: tuple = (), location: str = "", source_line: str = ""):
        self.kind, self.context, self.explanation = kind, context, explanation
        self.hints, self.location, self.source_line = tuple(hints), location, source_line
        super().__init__(explanation)

    def __str__(self):
        parts = [self.explanation]
        if self.context:
            parts[0] = f"{self.context}: {self.explanation}"
        if self.location:
            parts.append(f"  at {self.location}" + (f": {self.source_line}" if self.source_line else ""))
        parts += [f"  hint: {h}" for h in self.hints]
        return "\n".join(parts)


class DataDependentError(Unsupported):
    """A Python decision needs the value of a size that depends on array data (unbacked)."""

    def __init__(self, explanation: str, **kw):
        kw.setdefault("kind", "data_dependent")
        kw.setdefault("hints", ("use ft.check(cond) to assert a fact about the size",))
        super().__init__(explanation, **kw)


class NumpyError(Unsupported):
    """NumPy itself would raise here (bad broadcast, bad axis): the frame runs eagerly so the
    user gets NumPy's own exception at the same point."""

    def __init__(self, error: BaseException, **kw):
        self.error = error
        kw.setdefault("kind", "numpy_error")
        super().__init__(f"NumPy raises {type(error).__name__}: {error}", **kw)


class ConstraintViolationError(FrametraceError):
    """A size marked with mark_dynamic was specialised or narrowed by the code."""


class RecompileError(FrametraceError):
    """A recompile was needed under the "fail_on_recompile" stance."""


class GraphBreakError(FrametraceError):
    """fullgraph=True and the function cannot be traced as one graph."""


class InternalError(FrametraceError):
    """A bug in frametrace; please report it with the function that triggered it."""
