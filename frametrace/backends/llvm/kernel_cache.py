"""Every kernel is compiled once per process: one table of machine code keyed by what a kernel
is, not by its name.

A kernel (lower/loop_ir.Kernel) is emitted on its own, under the canonical name CANON, into the
LLVM IR text of a module of its own (codegen/llvm_kernels.module_ir). That text decides the
machine code, so its disk key (jit.cache_key: format version, llvmlite, host CPU and features,
optimisation levels, the text) is the kernel's identity everywhere:

  * in this process: `_table[key]`, shared by every graph, entry, recompile, resume function and
    tier-up that asks for the same kernel (same structure, dtypes, flags, tier and opt level):
    an unrolled loop of 700 kernels with 16 distinct ones compiles 16;
  * on disk: `<cache_dir>/llvm/<key>.o` (jit.py: checked header, atomic writes), and in the
    shared Redis cache behind it;
  * in machine code: the kernel's symbol is `ftk_<key[:32]>` (the canonical function renamed
    before it is optimised), so every object can live in one MCJIT engine.

One engine holds the kernels of the process (adding an object costs ~0.5 ms; an engine of its
own ~1.3 ms more). `ft.reset()` forgets the table (forget()): later compiles start a new
engine; the old one stays alive as long as a compiled graph still calls into it.

Thread safety: compiles run outside the lock (a background tier-up or compile thread passes
an LLVM context of its own: LLVM's global context is not thread-safe); a kernel being built by
one thread is waited for, never built twice; objects are added to the engine under its lock.

    mod = compiled(kernels, object_abi=True)    # GraphKernels: .functions {kernel.name: ctypes fn}
    mod.how                                     # {kernel.name: "compiled" | "disk" | "remote" | "shared"}
    stats                                       # kernels compiled / loaded / shared so far
"""
from __future__ import annotations

import ctypes
import dataclasses
import threading
import time

import llvmlite.binding as llvm

from ... import compile_times
from ...codegen.llvm_kernels import module_ir
from . import jit
from .runtime import KERNEL_TYPE

CANON = "ftk"                       # the name every kernel is emitted under
_lock = threading.Lock()
_table: dict = {}                   # key -> CompiledKernel
_building: dict = {}                # key -> threading.Event of the thread building it
_engine = None                      # the current _Engine (None: made on first use)
stats = {"compiled": 0, "loaded": 0, "shared": 0}   # LLVM builds, disk/remote loads, table hits


@dataclasses.dataclass(eq=False)
class CompiledKernel:
    """One kernel's machine code in the process (see module doc)."""
    key: str
    symbol: str
    ir: str                         # the canonical LLVM IR text it was built from
    levels: tuple                   # (IR optimisation level, codegen level) of its module (tiers.opt_level)
    origin: str                     # "compiled", "disk" or "remote": how it first reached the process
    fn: object                      # ctypes KERNEL_TYPE of its entry point
    engine: object                  # keeps the code alive
    seconds: float                  # time LLVM took (0 for a load)
    _asm: str | None = None

    @property
    def address(self) -> int:
        return ctypes.cast(self.fn, ctypes.c_void_p).value

    @property
    def asm(self) -> str:
        """Host assembly (rebuilt on demand)."""
        if self._asm is None:
            _, mod = jit._optimized(self.ir, opt=self.levels[0], renames={CANON: self.symbol})
            self._asm = jit.host_target_machine(self.levels[1]).emit_assembly(mod)
        return self._asm


class _Engine:
    """One MCJIT engine that object files are added to, in an LLVM context of its own."""

    def __init__(self):
        self.context = llvm.create_context()
        self.engine = jit.new_engine(self.context)
        self.lock = threading.Lock()

    def __del__(self):
        # the engine (its module lives in the context) goes first: the other order crashes
        self.engine = None
        self.context = None

    def add(self, obj: bytes, symbol: str) -> int:
        with self.lock:
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            self.engine.finalize_object()
            addr = self.engine.get_function_address(symbol)
        if not addr:
            raise RuntimeError(f"kernel {symbol} missing from its compiled object")
        return addr


def canonical_ir(kernel, object_abi: bool) -> str:
    """The LLVM IR text of `kernel` alone, under the name CANON: equal texts, equal kernels."""
    return module_ir([dataclasses.replace(kernel, name=CANON)], object_abi=object_abi)


def symbol_of(key: str) -> str:
    return f"{CANON}_{key[:32]}"


def compiled(kernels, object_abi: bool, levels_of=lambda k: (3, jit.CODEGEN_LEVEL), context=None,
             use_cache: bool = True):
    """The GraphKernels of `kernels`: each built, loaded or shared (module doc). `levels_of(kernel)`:
    its (IR optimisation, codegen) levels; `context`: an LLVM context of the calling thread's own when it is not
    the main thread."""
    units, how = {}, {}
    for k in kernels:
        with compile_times.phase("codegen"):
            ir = canonical_ir(k, object_abi)
        units[k.name], how[k.name] = _get(ir, levels_of(k), context, use_cache)
        compile_times.count(f"kernels_{'loaded' if how[k.name] in ('disk', 'remote') else how[k.name]}")
    return GraphKernels(units, how)


class GraphKernels:
    """The compiled kernels of one graph, by their names there (k0, k1, ...): run.module."""

    def __init__(self, units: dict, how: dict):
        self.units = units              # name -> CompiledKernel
        self.how = how                  # name -> "compiled", "disk", "remote" or "shared" (this request)
        self.functions = {name: u.fn for name, u in units.items()}

    @property
    def cache_hit(self) -> bool:
        """No kernel of this graph had to be built by LLVM."""
        return "compiled" not in self.how.values()

    @property
    def llvm_seconds(self) -> float:
        """What building this graph's kernels cost LLVM (0 for loaded and shared ones)."""
        return sum(u.seconds for n, u in self.units.items() if self.how[n] == "compiled")

    @property
    def paths(self) -> dict:
        """name -> the kernel's object file under cache_dir."""
        import os
        return {n: os.path.join(jit.cache_dir(), f"{u.key}.o") for n, u in self.units.items()}

    @property
    def ir(self) -> str:
        return listing(self.units, self.how)

    @property
    def asm(self) -> str:
        return "\n".join(f"# kernel {n}: {u.symbol}\n{u.asm}" for n, u in self.units.items())

    def address(self, name: str) -> int:
        return self.units[name].address


def listing(units: dict, how: dict) -> str:
    """The LLVM IR of each distinct kernel once, headed by its names in the graph and its symbol."""
    names: dict = {}
    for n, u in units.items():
        names.setdefault(id(u), (u, []))[1].append(n)
    return "\n".join(f"; kernel {', '.join(ns)} = @{u.symbol} (O{u.levels[0]}, codegen O{u.levels[1]}, "
                     f"{', '.join(sorted({how[n] for n in ns}))})\n{u.ir}" for u, ns in names.values())


def _get(ir: str, levels: tuple, context, use_cache: bool):
    """(CompiledKernel, how it was obtained) for one kernel's canonical IR."""
    key = jit.cache_key(ir, *levels)
    while True:
        with _lock:
            unit = _table.get(key)
            if unit is not None:
                stats["shared"] += 1
                return unit, "shared"
            waiting = _building.get(key)
            if waiting is None:
                done = _building[key] = threading.Event()
                engine = _current_engine()
                break
        waiting.wait()                  # another thread builds it: take its result (or retry)
    try:
        with compile_times.phase("llvm"):
            unit = _build(ir, levels, key, context, use_cache, engine)
        with _lock:
            if engine is _engine:       # not forgotten (ft.reset) while building
                _table[key] = unit
    finally:
        with _lock:
            _building.pop(key, None)
        done.set()
    return unit, unit.origin


def _build(ir, levels, key, context, use_cache, engine) -> CompiledKernel:
    symbol = symbol_of(key)
    t0 = time.perf_counter()
    obj, origin = jit.object_code(ir, key, use_cache, context, levels[0], {CANON: symbol}, levels[1])
    seconds = time.perf_counter() - t0 if origin == "compiled" else 0.0
    addr = engine.add(obj, symbol)
    with _lock:
        stats["compiled" if origin == "compiled" else "loaded"] += 1
    return CompiledKernel(key, symbol, ir, levels, origin, KERNEL_TYPE(addr), engine, seconds)


def _current_engine() -> _Engine:
    global _engine
    if _engine is None:
        _engine = _Engine()
    return _engine


def forget() -> None:
    """Forget every kernel (ft.reset): the next request for one loads or builds it again."""
    global _engine
    with _lock:
        _table.clear()
        _engine = None


def size() -> int:
    """How many distinct kernels the process holds."""
    with _lock:
        return len(_table)
