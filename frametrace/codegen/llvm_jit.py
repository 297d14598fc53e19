"""Smallest useful LLVM JIT: host target machine, O3 optimisation, MCJIT, assembly text.

    from frametrace.codegen.llvm_jit import compile_ir
    cm = compile_ir(ir_text, ["k"])      # parse, verify, O3 (new pass manager), JIT
    fn = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_int64)(cm.address("k"))
    print(cm.asm)                         # host assembly of the optimised module

The vectorisers see the *host* CPU (name and features), so loops use the widest vectors it
has (zmm on AVX-512). Facts behind the recipe: shared/reference/LLVM_FINDINGS.md §2 and §5.
`llvm.initialize()` raises in llvmlite >= 0.45 and must not be called.
"""
from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm

from .. import compile_times

__all__ = ["CompiledModule", "compile_ir", "host_cpu", "host_target_machine", "optimize"]

# Name tag of vector wrappers that only exist for the loop vectoriser (llvm_math._slowpath).
VFABI_WRAPPER_TAG = ".vfabi"

_init_lock = threading.Lock()
_initialized = False


def _init() -> None:
    global _initialized
    with _init_lock:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            _initialized = True


@functools.lru_cache(maxsize=None)
def host_cpu() -> tuple[str, str]:
    """(CPU name, feature string) of this machine; asked once (LLVM's query costs ~0.2 ms)."""
    _init()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_target_machine(opt: int = 3) -> llvm.TargetMachine:
    """A new TargetMachine for this CPU (name + features), e.g. znver4 with AVX-512.

    Each call returns a fresh object: MCJIT takes ownership of the one it is given.
    """
    _init()
    target = llvm.Target.from_default_triple()
    cpu, features = host_cpu()
    return target.create_target_machine(cpu=cpu, features=features,
                                        opt=opt, jit=True)


def optimize(mod: llvm.ModuleRef, tm: llvm.TargetMachine, level: int = 3) -> None:
    """Run the new-pass-manager pipeline `level` (loop vectoriser on, SLP off) in place,
    then inline what the vectoriser created: the masked vector wrappers of llvm_math's
    rare-input slow paths are `alwaysinline` but only appear once loops are vectorised;
    inlined, their "any lane?" test becomes a branch around cold code instead of a call
    that makes every vector register spill."""
    pto = llvm.create_pipeline_tuning_options(speed_level=level)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(mod, pb)
    wrappers = [f for f in mod.functions if VFABI_WRAPPER_TAG in f.name and not f.is_declaration]
    if wrappers:
        for f in wrappers:
            f.linkage = "internal"            # now droppable once inlined (or never used)
        post = llvm.create_new_module_pass_manager()
        post.add_always_inliner_pass()
        post.add_global_dead_code_eliminate_pass()
        post.add_simplify_cfg_pass()
        post.add_instruction_combine_pass()
        post.run(mod, pb)


class CompiledModule:
    """A JIT-compiled module. Keep it alive while any of its function addresses is used."""

    def __init__(self, engine: llvm.ExecutionEngine, module: llvm.ModuleRef, opt: int):
        self._engine = engine
        self._opt = opt
        self._asm: str | None = None
        self.module = module       # the optimised module, owned by the engine

    @property
    def ir(self) -> str:
        """Optimised LLVM IR text."""
        return str(self.module)

    @property
    def asm(self) -> str:
        """Host assembly of the optimised module (generated on first use: codegen is ~half
        of the compile time, and only debugging and tests need the text)."""
        if self._asm is None:
            self._asm = host_target_machine(self._opt).emit_assembly(llvm.parse_assembly(self.ir))
        return self._asm

    def address(self, name: str) -> int:
        """Machine-code address of function `name` (wrap it with ctypes.CFUNCTYPE)."""
        addr = self._engine.get_function_address(name)
        if not addr:
            raise KeyError(f"no function {name!r} in the compiled module; is it defined "
                           f"with external linkage (not `internal`)?")
        return addr


def compile_ir(ir_text: str, names: list[str] | tuple[str, ...] = (), opt: int = 3) -> CompiledModule:
    """Parse, verify, optimise at `opt` and JIT `ir_text`; `names` are checked to exist."""
    with compile_times.phase("llvm"):
        return _compile_ir(ir_text, names, opt)


def _compile_ir(ir_text, names, opt) -> CompiledModule:
    tm = host_target_machine(opt)
    mod = llvm.parse_assembly(ir_text)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    if opt > 0:
        optimize(mod, tm, opt)
    engine = llvm.create_mcjit_compiler(mod, host_target_machine(opt))
    engine.finalize_object()
    cm = CompiledModule(engine, mod, opt)
    for name in names:
        cm.address(name)
    return cm
