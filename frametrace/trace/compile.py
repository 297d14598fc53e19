"""Trace one frame into a graph, guards and an entry function (the body of a compile)."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import csrc_free_runtime as rt

from .. import compile_times
from ..backends import get_backend
from ..config import config
from ..dynamic_policy import DynamicPolicy
from ..guards.failures import failing_guards
from ..logs import get_logger
from ..passes.pipeline import maybe_verify, run_passes
from ..reporting import watch
from ..resume.codegen import ARRAY_SCALARS_ATTR
from ..sources import LocalSource
from .entry import build_entry
from .output import OutputGraph, Reconstructor
from ..errors import Unsupported
from .graph_break import Pieces, break_return_code, breakable_index
from .errstate import BlockRestart
from .loops import LoopRestart
from .signals import BreakPoint
from .translator import InstructionTranslator

graph_log = get_logger("graph_code")
guards_log = get_logger("guards")
output_log = get_logger("output_code")
compile_log = get_logger("compile")


@dataclass(eq=False)
class EntryInfo:
    """What the compiler knows about one cache entry (for explain, logs and recompile reasons)."""
    compile_id: str
    argnames: tuple
    guards: list
    namespace: dict
    graph: object
    graph_nodes: int
    entry_source: str
    backend_source: str = ""
    shape_env: object = None
    compile_time: float = 0.0
    extra: dict = field(default_factory=dict)
    phase_times: object = None          # compile_times.PhaseTimes of this compile

    def failing_guards(self, values) -> list:
        """The text of each guard that rejects these frame values."""
        return [g.name for g in self.failing_records(values)]

    def failing_records(self, values) -> list:
        """The guard records that reject these frame values."""
        return failing_guards(self.guards, self.namespace, self.argnames, values)


def _trace(cache, values, options, frame_state, stop_index=None, loop_plan=None):
    """As _trace_once; a loop that cannot be a loop node as first tried (trace/loops.py) is
    traced again peeled or unrolled, with the decision kept in `loop_plan` for later retraces."""
    plan = {} if loop_plan is None else loop_plan
    while True:
        try:
            return _trace_once(cache, values, options, frame_state, stop_index, plan)
        except (LoopRestart, BlockRestart) as restart:
            if plan.get(restart.key) == restart.decision:
                raise Unsupported(f"loop could not be traced: {restart.reason}", kind="loop") from None
            plan[restart.key] = restart.decision
            plan[("why", restart.key)] = restart.reason         # for the logs of the traces after


def _trace_once(cache, values, options, frame_state, stop_index, loop_plan):
    """Run the symbolic interpreter over the frame: (output, root translator, returned VT)."""
    from ..shapes import ShapeEnv
    fn, code = cache.fn, cache.code
    shape_env = ShapeEnv(specialize_zero_one=config.specialize_zero_one, duck_shape=config.duck_shape,
                         backed_size_oblivious=config.backed_size_oblivious)
    output = OutputGraph(shape_env, DynamicPolicy(options.dynamic), frame_state, fn.__globals__)
    output.array_scalar_args = getattr(fn, ARRAY_SCALARS_ATTR, frozenset())
    output.loop_plan = loop_plan
    shape_env.set_location_provider(output.location)
    nfree = len(code.co_freevars)
    arg_values = values[:len(values) - nfree]
    cells = {}
    for name, value, cell in zip(code.co_freevars, values[len(values) - nfree:], fn.__closure__ or ()):
        # the frame's own free variables: their cells are the function's (one cache per function)
        cells[name] = output.cell_box(cell, name, None, output.hold(cell, f"cell {name!r} of {code.co_name}"),
                                      contents=output.wrap(value, LocalSource(name)))
    tx = InstructionTranslator(output, code, {}, cells, fn.__globals__, None)
    tx.lazy = {name: (value, LocalSource(name)) for name, value in zip(cache.argnames, arg_values)}
    tx.stop_index = stop_index
    return output, tx, tx.run()


def compile_frame(cache, values, options, frame_state, compile_id, compile_resume):
    """Trace the frame; on an Unsupported instruction that can be split, compile the part
    before it and hand the rest to a resume function (a graph break), which compiles with
    `compile_resume(fn, options)` (the miss path's: this layer never imports it). What each
    phase cost is kept in the entry's info.phase_times and logged on the `compile` channel."""
    with compile_times.timing() as times:
        entry = _compile_frame(cache, values, options, frame_state, compile_id, compile_resume)
    entry.info.phase_times = times
    compile_times.log_compile(compile_log, compile_times.frame_name(cache.code), entry.info.graph_nodes, times)
    return entry


def _compile_frame(cache, values, options, frame_state, compile_id, compile_resume):
    loop_plan: dict = {}
    try:
        with compile_times.phase("trace"):
            output, _, result = _trace(cache, values, options, frame_state, loop_plan=loop_plan)
        brk = None
    except Unsupported as exc:
        index = breakable_index(cache, exc, options)
        try:
            with compile_times.phase("trace"):
                _trace(cache, values, options, frame_state, stop_index=index, loop_plan=loop_plan)
        except BreakPoint as bp:
            brk = bp
            output, result = bp.tx.output, None
        else:                                  # the retrace did not reach the break: give up splitting
            raise exc from None
        brk.reason = exc
    output.shape_env.check_constraints()

    fn = cache.fn
    namespace = {"___MISS": rt.MISS, "___G": fn.__globals__}
    rebuild = Reconstructor(output, namespace)
    if brk is None:
        return_code = output.side_effects.replay_code(rebuild, namespace, None, rebuild(result))
    else:
        try:
            return_code = break_return_code(Pieces(cache, options, compile_resume), brk, rebuild, namespace)
        except Unsupported:
            raise brk.reason from None
    graph = output.graph
    graph.outputs = tuple(rebuild.outputs)
    graph.runtime_asserts = [(a.expr, a.msg) for a in output.shape_env.runtime_asserts]
    graph.hints = {s: h for s in graph.symbols if (h := output.shape_env.hints.get(s)) is not None}
    graph.size_replacements = dict(output.shape_env.replacements)    # (passes/sizes.py)
    graph.size_equalities = output.shape_env.clamp_equalities()
    watch.graph_size(len(graph.nodes))
    with compile_times.phase("passes"):
        run_passes(graph)

    with compile_times.phase("entry"):
        return _finish(cache, options, compile_id, output, graph, namespace, return_code, brk)


def _finish(cache, options, compile_id, output, graph, namespace, return_code, brk):
    """Guards, the backend's compile of the graph, the entry function (and its native twin)."""
    code = cache.code
    for sg in output.shape_env.produce_guards():
        output.guards.shape_env(sg, output.size_sources)
    guards = list(output.guards.guards)
    namespace.update(output.guards.namespace)

    bindings = [(f"___sym_{s}", output.symbol_sources[s]) for s in graph.symbols]   # (local, Source)
    graph_call = None
    backend_source = ""
    backend_time = 0.0
    if graph.nodes or graph.outputs:
        import time
        t0 = time.perf_counter()
        maybe_verify(graph, "at backend entry")
        with compile_times.phase("import"):           # the first compile of a process imports it
            backend = get_backend(options.backend or config.backend)
        with compile_times.phase("lowering"):         # the backend times its later phases itself
            run = backend(graph)
        backend_time = time.perf_counter() - t0
        namespace["___graph"] = run
        graph_call = "___graph"
        backend_source = getattr(run, "source", "")
    input_codes = [src.code for _, src in output.graph_inputs]
    native = _native_entry(cache, guards, bindings, graph_call, input_codes, return_code, namespace, graph, options,
                           [src for _, src in output.graph_inputs])
    input_sources = [src for _, src in output.graph_inputs]
    check_fn = None if native is not None else _native_check(
        cache, guards, bindings, input_sources, namespace, options)

    def make_entry(native_check):
        return build_entry(cache.argnames, guards, bindings, graph_call, input_codes, return_code, namespace,
                           name=code.co_name if code.co_name.isidentifier() else "entry", native_check=native_check)
    entry, check, source = make_entry(check_fn)
    info = EntryInfo(compile_id, cache.argnames, guards, namespace, graph, len(graph.nodes), source,
                     backend_source, output.shape_env)
    info.extra["backend_time"] = backend_time
    info.extra["same_as_eager"] = (brk is None and graph_call is not None
                                   and _same_as_eager(namespace[graph_call], graph))
    info.extra["wrapper_loops"] = graph_call is not None and _wrapper_loops(namespace[graph_call])
    if brk is not None:
        info.extra["graph_break"] = brk.reason
        info.extra["restart_reasons"] = [f"{brk.reason.explanation} at {brk.reason.location}"]
    _log_compile(code, compile_id, graph, guards, source, backend_source)
    made = rt.CacheEntry(entry, check, compile_id, source, info, native=native)
    if native is not None and _walks(guards, output.graph_inputs):
        made.call = _MissPath(made, entry, lambda: make_entry(_native_check(
            cache, guards, bindings, input_sources, namespace, options, miss_path=True))[0])
    return made


class _MissPath:
    """The Python entry of a native entry that walks a model, for the calls the native entry
    misses: from its second call on, the entry asks a native check of the same walk (built
    then, once, at O0) before its Python condition, so a model's second cache entry does not
    pay the first one's whole Python check on every call. Its first call (the compiler's own,
    right after compiling) runs the plain Python entry: a model whose entry never misses never
    builds the check."""

    def __init__(self, made, plain, build):
        self.made, self.plain, self.build, self.fn = made, plain, build, None
        self.calls = 0

    def __call__(self, *values):
        fn = self.fn
        if fn is None:
            self.calls += 1
            if self.calls == 1:
                return self.plain(*values)
            fn = self.fn = self.build()
            if self.made.call is self:        # (tuning may hold the entry's call meanwhile)
                self.made.call = fn
        return fn(*values)

    @property
    def native_check(self):
        return getattr(self.fn or self.plain, "native_check", None)


def _same_as_eager(run, graph) -> bool:
    """Does the compiled graph give NumPy's results bit for bit (an LLVM graph without
    reassociated sums or approximated math)? Then the runtime may time it against the eager
    frame (config.autotune_entries)."""
    if getattr(run, "kernels", None) is None:
        return False                           # the NumPy backend: nothing to gain
    from ..backends.llvm.exact import same_as_eager
    return same_as_eager(run, graph)


def _wrapper_loops(run) -> bool:
    """Does the compiled graph run a loop per iteration through its body's wrapper? Such an
    entry is timed against the eager frame whatever config.autotune_entries says (when its
    results are exact: convert_frame.py)."""
    if getattr(run, "kernels", None) is None:
        return False
    from ..backends.llvm.exact import wrapper_loops
    return wrapper_loops(run)


def _native_entry(cache, guards, bindings, graph_call, input_codes, return_code, namespace, graph, options,
                  input_sources):
    """The entry as a native builtin (backends/llvm/native_entry.py), for LLVM-compiled graphs."""
    run = namespace.get(graph_call) if graph_call is not None else None
    if not config.native_dispatch or (options.backend or config.backend) != "llvm" or \
            (run is not None and getattr(run, "steps", None) is None):
        return None
    from ..backends.llvm.native_entry import build_native_entry
    code = cache.code
    return build_native_entry(cache.argnames, guards, bindings, graph_call, input_codes, return_code, namespace,
                              graph, run, code.co_name, input_sources,
                              where=f"{code.co_filename}:{code.co_firstlineno}")


def _walks(guards, graph_inputs) -> bool:
    from ..backends.llvm.native_entry import walks
    return walks(guards, [src for _, src in graph_inputs])


def _native_check(cache, guards, bindings, input_sources, namespace, options, miss_path=False):
    """The guards as one native builtin (backends/llvm/native_check.py), for entries that have no
    native entry: a model passed as an object, its weights reached through attributes; and
    (miss_path) beside a native entry that walks such a model, for the calls it misses: the
    Python entry then asks it first, not the Python condition of every guard (a model's
    second cache entry would otherwise pay the first's whole Python check on every call)."""
    if not config.native_dispatch or (options.backend or config.backend) != "llvm" or len(guards) < 8:
        return None
    from ..backends.llvm import native_check as nc
    return nc.build_native_check(cache.argnames, guards, bindings, input_sources, namespace, cache.code.co_name,
                                 opt=nc.MISS_PATH_OPT_LEVEL if miss_path else None)


def _log_compile(code, compile_id, graph, guards, source, backend_source):
    if graph_log.isEnabledFor(logging.INFO):
        graph_log.info("TRACED GRAPH %s %s:%d\n%s", code.co_name, code.co_filename,
                       code.co_firstlineno, graph)
    if guards_log.isEnabledFor(logging.INFO):
        guards_log.info("GUARDS:\n%s", "\n".join(f"  {g.name}" for g in guards))
    if output_log.isEnabledFor(logging.INFO):
        output_log.info("entry:\n%s\nbackend:\n%s", source, backend_source)
