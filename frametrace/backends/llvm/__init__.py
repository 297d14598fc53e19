"""The LLVM backend: a Graph -> fused kernels with run-time sizes + a generated wrapper.

    from frametrace.backends.llvm import compile_graph
    run = compile_graph(graph)
    outs = run(inputs, symbol_values)     # inputs in graph.inputs order, ints in graph.symbols order
    run.source      # the generated Python wrapper
    run.llvm_ir     # LLVM IR of its kernels
    run.loop_ir     # the kernels in loop IR (readable)
    run.module      # the loaded machine code (.asm, .cache_hit); None without kernels

The pipeline, in order (each a pure function of the previous result):
"""
from __future__ import annotations

from ...codegen.llvm_kernels import module_ir
from ...ir.graph import Graph
from ...logs import get_logger
from ...lower.fusion import KernelStep, group
from ...lower.loop_ir import format_kernel
from ...lower.schedule import Plan
from . import jit, wrapper

PIPELINE = (
    ("plan", lambda g: Plan(g)),                                  # categories, materialisation
    ("steps", lambda plan: group(plan)),                          # fusion into kernels, run order
    ("llvm_ir", lambda kernels: module_ir(kernels)),              # loop IR -> LLVM IR text
    ("module", lambda ir, names: jit.LoadedModule(ir, names)),    # O3 + MCJIT, disk cache
    ("wrapper", lambda plan, steps, module: wrapper.generate(plan, steps, module)),
)

_log = get_logger("output_code")


def compile_graph(graph: Graph):
    """Compile `graph` into `run(inputs, symbol_values) -> outputs` (see module doc)."""
    stages = dict(PIPELINE)
    plan = stages["plan"](graph)
    steps = stages["steps"](plan)
    kernels = [s.kernel for s in steps if isinstance(s, KernelStep)]
    ir = stages["llvm_ir"](kernels) if kernels else ""
    module = stages["module"](ir, [k.name for k in kernels]) if kernels else None
    source, namespace = stages["wrapper"](plan, steps, module)
    exec(compile(source, "<frametrace llvm wrapper>", "exec"), namespace)
    run = namespace["run"]
    run.source = source
    run.llvm_ir = ir
    run.loop_ir = "\n\n".join(format_kernel(k) for k in kernels)
    run.module = module
    run.kernels = kernels
    if _log.isEnabledFor(10):
        _log.debug("%s\n%s", source, run.loop_ir)
    return run


__all__ = ["compile_graph", "PIPELINE"]
