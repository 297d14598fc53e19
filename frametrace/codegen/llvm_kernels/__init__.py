"""Loop IR -> LLVM IR text (one module per graph; one entry function per kernel).

    from frametrace.codegen.llvm_kernels import module_ir, pack_format
    text = module_ir([kernel, ...])     # kernels from frametrace.lower
    # each kernel `k` defines  void @k(i64 lo, i64 hi, ptr args)  (see emit.py)

Math functions come from frametrace.codegen.llvm_math where it has them (math.py).
"""
from __future__ import annotations

from .abi import pack_format
from .emit import FunctionEmitter
from .module_context import ModuleContext

__all__ = ["module_ir", "pack_format"]


def module_ir(kernels, name: str = "frametrace", object_abi: bool = False) -> str:
    """The LLVM IR text of a module defining every kernel's entry point (emit.py: ABIs)."""
    mod = ModuleContext(object_abi)
    funcs = [FunctionEmitter(k, mod).function() for k in kernels]
    parts = [f"; ModuleID = '{name}'"]
    parts += sorted(mod.decls)
    parts += list(mod.defs.values())
    parts += funcs
    parts += mod.metadata
    return "\n\n".join(parts) + "\n"
