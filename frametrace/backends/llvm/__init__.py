"""The LLVM backend: a Graph -> fused kernels with run-time sizes + a generated wrapper.

    from frametrace.backends.llvm import compile_graph
    run = compile_graph(graph)
    outs = run(inputs, symbol_values)     # inputs in graph.inputs order, ints in graph.symbols order
    run.source      # the generated Python wrapper
    run.llvm_ir     # LLVM IR of its kernels (each its own module, under its canonical name)
    run.loop_ir     # the kernels in loop IR (readable)
    run.module      # their machine code (kernel_cache.GraphKernels: .functions, .how, .asm,
                    #   .cache_hit); None without kernels
    run.kernels     # the loop_ir.Kernel objects
    run.tiers       # tier-up of kernels compiled quick for small sizes (tiers.py), or None

The pipeline is the visible list PIPELINE below: plan (what each node becomes, which values
are materialised: lower/classify.py, lower/schedule.py) -> steps (fusion into kernels and the
run order: lower/fusion.py, lower/kernels.py) -> per kernel, LLVM IR text (codegen/llvm_kernels)
-> machine code, shared by every graph of the process that has the same kernel (kernel_cache.py;
jit.py: optimised on the host CPU at the level tiers.opt_level chooses, MCJIT, on-disk object
cache) -> the Python wrapper
(wrapper.py) that computes sizes, allocates outputs, builds NumPy views, calls the kernels
(runtime.py: pointers, threads) and runs every op it could not lower with its NumPy
reference. Tolerance: float sums/products/means/var are reassociated (vectorised); they
differ from NumPy's pairwise summation by rounding (see lower/reductions.py).
"""
from __future__ import annotations

import dataclasses
import functools
import logging

from ... import compile_times
from ...config import config
from ...ir.graph import Graph
from ...ir.registry import get_op
from ...logs import get_logger
from ...stats import counters
from ...lower.fusion import KernelStep, group
from ...lower.lift_offsets import lift_offsets
from ...lower.loop_ir import Loop, Op, format_kernel
from ...lower.schedule import Plan
from ..numpy_backend import compile_graph as reference_graph
from . import flag_checks, kernel_cache, runtime, tiers, wrapper
from .array_loops import array_loop
from .loops import NotNative, native_loop

PIPELINE = (
    ("plan", lambda g: Plan(g)),                                  # categories, materialisation
    ("steps", lambda plan: group(plan)),                          # fusion into kernels, run order
    ("module", lambda kernels, context=None: kernel_cache.compiled(   # LLVM IR -> machine code,
        kernels, runtime.ARRAY_LAYOUT_OK, tiers.opt_level, context)),   # one per kernel per process
    ("wrapper", lambda plan, steps, module: wrapper.generate(plan, steps, module)),
)

_log = get_logger("output_code")
_loop_log = get_logger("loops")


# An internal error while compiling a graph falls back to the NumPy backend for that graph
# (with a warning in the log), so users never see a backend bug as a failure, unless
# `config.strict_backend` (FRAMETRACE_STRICT_BACKEND=1, on in every test run) or STRICT is set:
# then the bug surfaces.
STRICT = False
_warn = logging.getLogger("frametrace.backends.llvm")


def strict() -> bool:
    return STRICT or config.strict_backend


def compile_graph(graph: Graph):
    """Compile `graph` into `run(inputs, symbol_values) -> outputs` (see module doc)."""
    if strict():
        return _compile(graph)
    try:
        return _compile(graph)
    except Exception as exc:                  # a backend bug: stay correct, say so
        _warn.warning("LLVM backend failed on a graph (%s: %s); running it with NumPy instead",
                      type(exc).__name__, exc, exc_info=True)
        counters.bump("internal_errors")
        from ..numpy_backend import compile_graph as numpy_compile
        run = numpy_compile(graph)
        run.loop_ir, run.module, run.kernels = "", None, []
        return run


def _compile(graph: Graph):
    stages = dict(PIPELINE)
    plan = stages["plan"](graph)
    plan.loop_natives, plan.loop_runners, plan.array_loops = _loops(graph)
    steps = stages["steps"](plan)
    for s in steps:                           # kernels equal but for their offsets: one kernel
        if isinstance(s, KernelStep):
            s.kernel = lift_offsets(s.kernel)
    kernels = [s.kernel for s in steps if isinstance(s, KernelStep)]
    quick = tiers.assign(plan, kernels, getattr(graph, "hints", None))    # small symbolic kernels
    kernels += flag_checks.choose(plan, steps)    # an in-place kernel's flag check (after tiers: its tier)
    kernels += [nl.kernel for nl in plan.loop_natives.values()]
    module = stages["module"](kernels) if kernels else None
    for nl in plan.loop_natives.values():
        nl.fn = module.functions[nl.kernel.name]
    with compile_times.phase("wrapper"):
        source, namespace = stages["wrapper"](plan, steps, module)
        refs = namespace.pop("_kernel_refs", {})
        run_tiers = namespace["_tier_up"] = tiers.TierUp(namespace, refs, kernels, stages["module"]) if quick else None
        exec(compile(source, "<frametrace llvm wrapper>", "exec"), namespace)
    run = namespace["run"]
    run.source = source
    run.llvm_ir = module.ir if module is not None else ""
    run.loop_ir = "\n\n".join(_format(k) for k in kernels)
    run.module = module
    run.kernels = kernels
    run.tiers = run_tiers                     # quick-tier kernels: their tier-up (tiers.py); else None
    run.plan, run.steps = plan, steps          # for the native entry (native_entry.py)
    run.layouts = namespace.get("_layouts")    # the wrapper's layouts.Layouts (native_layouts.py asks it too)
    if _log.isEnabledFor(10):
        _log.debug("%s\n%s", source, run.loop_ir)
    return run


def _loops(graph: Graph):
    """Each structured loop node (ir/ops/loops.py) as a native kernel when its body works on
    elements (loops.py), else its body compiled as a graph of its own: run by the native
    driver when its steps allow (array_loops.py), else by the wrapper once per iteration."""
    natives, runners, arrays = {}, {}, {}
    for n in graph.nodes:
        if n.op != "loop":
            continue
        try:
            if _carries_arrays(n.attr("body")):
                raise NotNative("a carried array")
            natives[n] = native_loop(n, f"loop{len(natives)}", runtime.ARRAY_LAYOUT_OK)
            natives[n].generic = functools.partial(_generic_loop, n)
            jammed = natives[n].jammed
            _loop_log.info("loop at %s: native loop nest (one kernel, %d inner loops%s)", n.attr("body").location,
                           _inner_loops([s for s in natives[n].kernel.body if isinstance(s, Loop)][-1:]),
                           f"; {jammed} iterations per pass, unroll-and-jam" if jammed else "")
        except NotNative as not_element:
            runner = compile_graph(n.attr("body").graph)
            try:
                arrays[n] = array_loop(n, runner)
                _loop_log.info("loop at %s: native array loop (%d kernels; not an element loop: %s)",
                               n.attr("body").location, len(arrays[n].kernels), not_element)
            except NotNative as why:
                _loop_log.info("loop at %s: the wrapper runs it, its body a graph of its own (not an element "
                               "loop: %s; not a native array loop: %s)", n.attr("body").location, not_element, why)
                runners[n] = runner
    return natives, runners, arrays


def _inner_loops(stmts) -> int:
    """Loops nested inside the loops of a kernel's statements (the loop itself not counted)."""
    return sum(_all_loops(s.body) for s in stmts if isinstance(s, Loop))


def _all_loops(stmts) -> int:
    return sum(1 + _all_loops(s.body) for s in stmts if isinstance(s, Loop))


def _carries_arrays(body) -> bool:
    """Does the body carry an array (of any shape, even one element) from one iteration to the
    next? Then it is no element loop: loops.py keeps carried values in scalar registers."""
    return any(inp.ndim for inp in body.graph.inputs[:body.ncarried])


def _generic_loop(n):
    """A native element loop's generic path (loop_call.py: arrays sharing memory or read-only,
    the rest of a loop after a checked op left the kernel), its body run by the NumPy backend:
    Python ints there stay Python's past int64 (the body compiled for LLVM may give a Python int
    `b if c else d` an int64 kernel), and every error is NumPy's or Python's own."""
    body = n.attr("body")
    return functools.partial(get_op("loop").ref, body=body, runner=reference_graph(body.graph))


# the loop-IR listing prints each expression as a tree: a fused chain that shares
# subexpressions (`x = x[1:] - x[:-1]` twenty times) would print millions of nodes
MAX_LISTED_NODES = 200_000


def _tree_size(e, memo: dict) -> int:
    if not isinstance(e, Op):
        return 1
    n = memo.get(id(e))
    if n is None:
        n = memo[id(e)] = 1 + sum(_tree_size(a, memo) for a in e.args)
    return n


def _listed_nodes(body, memo) -> int:
    total = 0
    for s in body:
        for f in dataclasses.fields(s):
            v = getattr(s, f.name)
            total += _listed_nodes(v, memo) if f.name in ("body", "orelse") else _tree_size(v, memo)
    return total


def _format(k) -> str:
    n = _listed_nodes(k.body, {})
    if n > MAX_LISTED_NODES:
        return f"kernel {k.name}: not listed ({n} expression nodes when printed as trees)"
    return format_kernel(k)


__all__ = ["compile_graph", "PIPELINE"]
