"""ft.explain(fn, *args): what compiling fn on these arguments produces, printable for a person."""
from __future__ import annotations

from dataclasses import dataclass, field

from .compile_times import CompileTime, frame_name


@dataclass
class ExplainOutput:
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    graphs: list = field(default_factory=list)
    compile_times: list = field(default_factory=list)  # compile_times.CompileTime per compiled graph
    recompiles: list = field(default_factory=list)     # (compile id, guard failures, advice) seen so far
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
        if self.compile_times:
            lines.append("Compile times:")
            lines += [f"  {c}" for c in self.compile_times]
        if self.recompiles:
            lines.append("Recompiles of the compiled function so far:")
            for cid, reasons, advice in self.recompiles:
                lines.append(f"  [{cid}] triggered by: " + "; ".join(reasons))
                if advice:
                    lines.append(f"  {advice.strip()}")
        return "\n".join(lines)


def explain(fn, *args, **kwargs) -> ExplainOutput:
    """Compile a fresh copy of `fn`, run it on these arguments, and report what was compiled:
    graphs, graph breaks with their reasons and user lines, and the guards of each entry."""
    import types

    from . import eval_frame
    from .stats import counters
    if isinstance(fn, types.MethodType):
        args = (fn.__self__,) + args
        fn = fn.__func__
    history = []
    for cache in _caches_reached(fn._frametrace_cache) if hasattr(fn, "_frametrace_cache") else ():
        history += cache.state.data.get("recompile_history", [])
    fn = getattr(fn, "__wrapped__", fn)
    saved = dict(counters.values)
    compiled = eval_frame.compile(fn)
    out = ExplainOutput(name=getattr(fn, "__qualname__", str(fn)))
    try:
        compiled(*args, **kwargs)
    finally:
        counters.values.update(saved)
    for cache in _caches_reached(compiled._frametrace_cache):
        for entry in reversed(cache.entries):
            info = entry.info
            if info is None:
                continue
            if info.graph_nodes:
                out.graphs.append(info.graph)
            brk = info.extra.get("graph_break")
            if brk is not None:
                out.break_reasons.append(brk)
            out.guards += [g.name for g in info.guards]
            if info.phase_times is not None:
                out.compile_times.append(CompileTime(info.compile_id, frame_name(cache.code), info.graph_nodes,
                                                     info.phase_times))
        failure = cache.state.data.get("failure")
        if failure is not None:
            out.break_reasons.append(failure)
    out.recompiles = history
    out.graph_count = len(out.graphs)
    out.graph_break_count = len(out.break_reasons)
    return out


def _caches_reached(cache):
    seen, todo = [], [cache]
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.append(c)
        for item in c.state.data.get("resume", {}).values():
            inner = getattr(item, "_frametrace_cache", None)
            if inner is not None:
                todo.append(inner)
    return seen


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
