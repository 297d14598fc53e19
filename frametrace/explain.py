"""ft.explain(fn, *args): what compiling fn on these arguments produces, printable for a person."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ExplainOutput:
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    graphs: list = field(default_factory=list)
    compile_times: list = field(default_factory=list)
    name: str = ""

    def __str__(self):
        lines = [f"Explanation of {self.name}:",
                 f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            for i, r in enumerate(self.break_reasons, 1):
                lines.append(f"  Break Reason {i}:")
                lines += [f"    {line}" for line in str(r).splitlines()]
        for i, g in enumerate(self.graphs):
            lines.append(f"Graph {i}:")
            lines += [f"  {line}" for line in str(g).splitlines()]
        if self.guards:
            lines.append("Guards:")
            lines += [f"  {g}" for g in self.guards]
        return "\n".join(lines)


def explain(fn, *args, **kwargs) -> ExplainOutput:
    """Compile a fresh copy of `fn` for these arguments and report graphs, breaks and guards."""
    import types

    from . import eval_frame
    from .errors import Unsupported
    from .trace.compile import compile_frame
    from .convert_frame import FrameOptions, frame_state
    if isinstance(fn, types.MethodType):
        args = (fn.__self__,) + args
        fn = fn.__func__
    fn = getattr(fn, "__wrapped__", fn)
    compiled = eval_frame.compile(fn)
    cache = compiled._frametrace_cache
    out = ExplainOutput(name=getattr(fn, "__qualname__", str(fn)))
    # bind the call exactly as the trampoline would, without running it
    values = _frame_values(cache, compiled, args, kwargs)
    try:
        entry = compile_frame(cache, values, FrameOptions(), frame_state(cache), "0/0")
    except Unsupported as exc:
        out.graph_break_count = 1
        out.break_reasons.append(exc)
        return out
    info = entry.info
    out.graph_count = 1 if info.graph_nodes else 0
    out.graphs.append(info.graph)
    out.guards = [g.name for g in info.guards]
    return out


def _frame_values(cache, compiled, args, kwargs):
    import inspect
    sig = inspect.signature(compiled)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    values = []
    for name in cache.argnames:
        if name in bound.arguments:
            values.append(bound.arguments[name])
        else:
            values.append(_cell_value(cache, name))
    return tuple(values)


def _cell_value(cache, name):
    idx = cache.code.co_freevars.index(name)
    return cache.fn.__closure__[idx].cell_contents
