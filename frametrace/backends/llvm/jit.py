"""Compile a kernel module to machine code, with an on-disk object cache.

Key: sha256 of (format version, llvmlite version, host CPU name + features, IR text). The
IR holds nothing process-specific (array addresses, sizes and scalars arrive at run time),
so an object compiled by one process is valid in the next on the same CPU.
File: `<cache_dir>/llvm/<key>.o` = one header line, then the object bytes:

    frametrace-kernel v2 key=<key> len=<object bytes> sha256=<sha256 hex of the object>\n

A file whose header is missing (foreign), of another format version, for another key (copied or
moved), of the wrong length (truncated) or whose checksum fails (corrupt) is ignored with a
`CacheFileWarning` and rebuilt; no object code is loaded before these checks pass. The folders are
created owner-only (0o700; cache_files.private_dir), and an existing one others may write to is warned about.
Loading: MCJIT `add_object_file` (~1-2 ms) instead of parse + O3 + codegen (~10 ms/kernel).
With FRAMETRACE_REMOTE_CACHE set, a local miss asks the shared cache (frametrace.remote_cache,
HMAC-signed entries) before compiling, and fresh objects are written to both.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import tempfile
import threading
import warnings

import llvmlite
import llvmlite.binding as llvm

from ...codegen.llvm_jit import host_cpu, host_target_machine, optimize
from ...cache_files import CacheFileWarning, private_dir
from .runtime import KERNEL_TYPE

VERSION = 2
FORMAT_VERSION = f"frametrace-llvm-kernels-{VERSION}"
MAGIC = b"frametrace-kernel v"
_OLD_MAGIC = b"FTOBJ1\n"           # version 1: MAGIC + sha256 + object, no key
_MAX_HEADER = 256
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


def cache_key(ir_text: str, opt: int = 3, codegen: int = CODEGEN_LEVEL) -> str:
    """The disk key of a module's object code: everything that decides the machine code."""
    host = "|".join(host_cpu())
    h = hashlib.sha256()
    for part in (FORMAT_VERSION, llvmlite.__version__, host, str(codegen), f"O{opt}", ir_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _header(key: str, obj: bytes) -> bytes:
    return MAGIC + f"{VERSION} key={key} len={len(obj)} sha256={hashlib.sha256(obj).hexdigest()}\n".encode()


def check(data: bytes, key: str) -> bytes:
    """The object code a cache file holds; ValueError (saying why) unless it is whole and for `key`."""
    if data.startswith(_OLD_MAGIC):
        raise ValueError(f"written in kernel cache format v1, this frametrace reads v{VERSION}")
    line, sep, _ = data[:_MAX_HEADER].partition(b"\n")
    if not data.startswith(MAGIC) or not sep:
        raise ValueError("not a frametrace kernel file (foreign)")
    fields = line[len(MAGIC):].decode("ascii", "replace").split(" ")
    if fields[0] != str(VERSION):
        raise ValueError(f"written in kernel cache format v{fields[0][:10]}, this frametrace reads v{VERSION}")
    obj = data[len(line) + 1:]
    if line + b"\n" != _header(key, obj):
        named = dict(f.partition("=")[::2] for f in fields[1:])
        if named.get("key") != key:
            raise ValueError(f"holds the kernels of another key ({named.get('key', '?')[:16]}...; foreign)")
        if named.get("len") != str(len(obj)):
            raise ValueError(f"truncated or padded: {len(obj)} object bytes, the header says {named.get('len')}")
        raise ValueError("corrupt: checksum mismatch")
    return obj


def _reject(path: str, why: str):
    with _lock:
        stats["corrupt"] += 1
    warnings.warn(f"frametrace: ignoring kernel cache file {path}: {why}; recompiling (the file is rebuilt)",
                  CacheFileWarning, stacklevel=3)


def _read(path: str, key: str):
    """The verified object code at `path`, or None (missing, or rejected with a warning)."""
    try:
        private_dir(os.path.dirname(path), os.path.dirname(os.path.dirname(path)), create=False)
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        _reject(path, f"cannot read it ({exc})")
        return None
    try:
        return check(data, key)
    except ValueError as exc:
        _reject(path, str(exc))
        return None


def _write(path: str, key: str, obj: bytes):
    folder = os.path.dirname(path)
    try:
        private_dir(folder, os.path.dirname(folder))
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_header(key, obj) + obj)
            os.replace(tmp, path)                  # atomic: readers never see half a file
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        warnings.warn(f"frametrace: cannot write kernel cache {path}: {exc}", CacheFileWarning, stacklevel=3)


def _remote(op: str, key: str, data: bytes | None = None):
    """frametrace.remote_cache (signed entries; every failure is a miss), if configured."""
    try:
        from ... import remote_cache
        if not remote_cache.enabled():
            return None
        return remote_cache.get("kernel", key) if op == "get" else remote_cache.put("kernel", key, data)
    except Exception:
        return None


def _optimized(ir_text: str, context=None, opt: int = 3, renames=None):
    """Parse, verify and optimise at `opt`; `renames` {function name: new name} first (a kernel
    emitted under a canonical name gets the symbol of its key: kernel_cache.py)."""
    tm = host_target_machine(3)
    mod = llvm.parse_assembly(ir_text, context)
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    for old, new in (renames or {}).items():
        mod.get_function(old).name = new
    mod.verify()
    if opt > 0:
        optimize(mod, tm, opt)
    return tm, mod


def object_code(ir_text: str, key: str, use_cache: bool = True, context=None, opt: int = 3, renames=None,
                codegen: int = CODEGEN_LEVEL):
    """(object code, origin) of a module whose cache_key is `key`: from the disk cache ("disk"),
    the shared cache behind it ("remote"), or built by LLVM ("compiled", then written to both).
    `renames` must follow from the key (kernel_cache.py names a kernel's symbol after it)."""
    path = os.path.join(cache_dir(), f"{key}.o")
    origin = "disk"
    obj = _read(path, key) if use_cache else None
    if obj is None and use_cache:             # a shared cache (Redis) behind the local one
        obj, origin = _remote("get", key), "remote"
        if obj is not None:
            _write(path, key, obj)
    if obj is None:
        origin = "compiled"
        _, mod = _optimized(ir_text, context, opt, renames)
        obj = host_target_machine(codegen).emit_object(mod)
        if use_cache:
            _write(path, key, obj)
            _remote("put", key, obj)
    with _lock:
        stats["misses" if origin == "compiled" else "hits"] += 1
    return obj, origin


def new_engine(context=None):
    """An MCJIT engine holding no code yet: object files are added to it (add_object_file)."""
    tm = host_target_machine(3)
    empty = llvm.parse_assembly("", context)
    empty.triple, empty.data_layout = tm.triple, str(tm.target_data)
    engine = llvm.create_mcjit_compiler(empty, tm)
    engine.finalize_object()
    return engine


class LoadedModule:
    """Machine code of one module; keep it alive while its kernels may run. `context`: an
    LLVM context of its own (llvm.create_context(), kept alive by the caller) to build off the
    main thread: LLVM's global context is not thread-safe (tiers.py)."""

    def __init__(self, ir_text: str, names, use_cache: bool = True, context=None):
        self.ir = ir_text
        key = cache_key(ir_text)
        obj, origin = object_code(ir_text, key, use_cache, context)
        self.path = os.path.join(cache_dir(), f"{key}.o")
        self.cache_hit = origin != "compiled"
        self._engine = new_engine(context)
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
