"""Compile a kernel module to machine code, with an on-disk object cache.

Key: sha256 of (format version, llvmlite version, host CPU name + features, IR text). The
IR holds nothing process-specific (array addresses, sizes and scalars arrive at run time),
so an object compiled by one process is valid in the next on the same CPU.
File: `<cache_dir>/llvm/<key>.o` = MAGIC + sha256(object) + object bytes; a file that fails
the check (truncated, corrupt, foreign) is ignored with a warning and rebuilt.
Loading: MCJIT `add_object_file` (~1-2 ms) instead of parse + O3 + codegen (~10 ms/kernel).
With FRAMETRACE_REMOTE_CACHE set, a local miss asks the shared cache (frametrace.remote_cache,
HMAC-signed entries) before compiling, and fresh objects are written to both.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import threading
import warnings

import llvmlite
import llvmlite.binding as llvm

from ...codegen.llvm_jit import host_target_machine, optimize
from .runtime import KERNEL_TYPE

FORMAT_VERSION = "frametrace-llvm-kernels-1"
MAGIC = b"FTOBJ1\n"
CODEGEN_LEVEL = 1      # machine-code optimisation (the IR is always O3): 1 ~ 3 in speed, faster to build
_lock = threading.Lock()
stats = {"hits": 0, "misses": 0, "corrupt": 0}


def cache_dir() -> str:
    try:
        from ...config import config
        base = getattr(config, "cache_dir", None)
    except Exception:
        base = None
    base = base or os.environ.get("FRAMETRACE_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "frametrace")
    return os.path.join(base, "llvm")


def cache_key(ir_text: str) -> str:
    host = f"{llvm.get_host_cpu_name()}|{llvm.get_host_cpu_features().flatten()}"
    h = hashlib.sha256()
    for part in (FORMAT_VERSION, llvmlite.__version__, host, str(CODEGEN_LEVEL), ir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _read(path: str):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        warnings.warn(f"frametrace: cannot read cached kernels {path}: {exc}; recompiling", stacklevel=2)
        return None
    head = len(MAGIC) + 32
    if len(data) < head or not data.startswith(MAGIC) or \
            hashlib.sha256(data[head:]).digest() != data[len(MAGIC):head]:
        stats["corrupt"] += 1
        warnings.warn(f"frametrace: ignoring corrupt or foreign kernel cache file {path}; recompiling", stacklevel=2)
        return None
    return data[head:]


def _write(path: str, obj: bytes):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(obj).digest() + obj)
        os.replace(tmp, path)                  # atomic: readers never see half a file
    except OSError as exc:
        warnings.warn(f"frametrace: cannot write kernel cache {path}: {exc}", stacklevel=2)


def _remote(op: str, key: str, data: bytes | None = None):
    """frametrace.remote_cache (signed entries; every failure is a miss), if configured."""
    try:
        from ... import remote_cache
        if not remote_cache.enabled():
            return None
        return remote_cache.get("kernel", key) if op == "get" else remote_cache.put("kernel", key, data)
    except Exception:
        return None


def _optimized(ir_text: str):
    tm = host_target_machine(3)
    mod = llvm.parse_assembly(ir_text)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    mod.verify()
    optimize(mod, tm, 3)
    return tm, mod


class LoadedModule:
    """Machine code of one module; keep it alive while its kernels may run."""

    def __init__(self, ir_text: str, names, use_cache: bool = True):
        self.ir = ir_text
        key = cache_key(ir_text)
        self.path = os.path.join(cache_dir(), f"{key}.o")
        obj = _read(self.path) if use_cache else None
        if obj is None and use_cache:             # a shared cache (Redis) behind the local one
            obj = _remote("get", key)
            if obj is not None:
                _write(self.path, obj)
        self.cache_hit = obj is not None
        if obj is None:
            _, mod = _optimized(ir_text)
            obj = host_target_machine(CODEGEN_LEVEL).emit_object(mod)
            if use_cache:
                _write(self.path, obj)
                _remote("put", key, obj)
        with _lock:
            stats["hits" if self.cache_hit else "misses"] += 1
        tm = host_target_machine(3)
        empty = llvm.parse_assembly("")
        empty.triple, empty.data_layout = tm.triple, str(tm.target_data)
        self._engine = llvm.create_mcjit_compiler(empty, tm)
        self._engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        self._engine.finalize_object()
        self.functions = {}
        for name in names:
            addr = self._engine.get_function_address(name)
            if not addr:
                raise RuntimeError(f"kernel {name} missing from its compiled module")
            self.functions[name] = KERNEL_TYPE(addr)
        self._asm = None

    @property
    def asm(self) -> str:
        """Host assembly of the optimised module (recompiled on demand after a cache hit)."""
        if self._asm is None:
            tm, mod = _optimized(self.ir)
            self._asm = tm.emit_assembly(mod)
        return self._asm

    def address(self, name: str) -> int:
        return ctypes.cast(self.functions[name], ctypes.c_void_p).value
