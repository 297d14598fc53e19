"""Settings, each also read from the environment as FRAMETRACE_<NAME> at import.

    ft.config.cache_size_limit = 4
    with ft.config.patch(dynamic_sources="L['x']"): ...
    @ft.config.patch(pgo=False)
    def test(): ...
"""
from __future__ import annotations

import contextlib
import os

_DEFAULTS = {
    # comma list of source names that start dynamic (highest precedence, never errors)
    "dynamic_sources": "",
    # a size that changes between compiles becomes dynamic at the recompile
    "automatic_dynamic_shapes": True,
    # sizes start static unless marked, listed, or learnt (automatic dynamic / PGO)
    "assume_static_by_default": True,
    # compiled entries per code object; past it the frame runs eagerly
    "cache_size_limit": 8,
    # sizes 0 and 1 are never symbolic (a dynamic size has range [2, inf])
    "specialize_zero_one": True,
    # treat ordinary sizes like unbacked ones in 0/1 checks, avoiding 0/1 specialisation
    "backed_size_oblivious": False,
    # arrays reached through attributes or globals start static
    "force_attribute_static_shapes": True,
    # equal sizes share one symbol (guarded equal)
    "duck_shape": True,
    # where PGO profiles and compiled kernels are kept
    "cache_dir": os.path.join(os.path.expanduser("~"), ".cache", "frametrace"),
    # profile-guided dynamism across processes
    "pgo": True,
    # the backend used when ft.compile / ft.enable name none
    "backend": "llvm",
    # threads for large kernels (0 = os.cpu_count())
    "num_threads": 0,
    # how many bytecode instructions one trace may execute before giving up
    "max_trace_steps": 200_000,
    # Python loops over a symbolic range, or a data-dependent while, become one loop node whose
    # body is traced once (trace/loops.py); False unrolls every loop as TorchDynamo does
    "loop_nodes": True,
    # a `for` loop whose trip count is a constant is unrolled instead of being a loop node when
    # trips x (nodes of its body, nested bodies included) is at most this (a few taps of a stencil,
    # RGB channels); loops over lists and tuples of Python objects are always unrolled
    "loop_unroll_budget": 64,
    # outer iterations of a native loop nest computed per pass over the arrays their products read
    # (unroll-and-jam where the analysis proves it changes nothing: backends/llvm/loop_jam.py); 1: off
    "loop_jam": 4,
    # how deep user calls are inlined
    "max_inline_depth": 32,
    # MPI ranks exchange observed sizes at each compile (frametrace.distributed)
    "enable_compiler_collectives": False,
    # seconds a rank waits for the others at a compile before raising
    "collectives_timeout_s": 30.0,
    # redis://host:port/db shared by processes for PGO profiles and kernels ("" = off)
    "remote_cache": "",
    # seconds one remote-cache operation may take before it is abandoned
    "remote_cache_timeout_s": 0.3,
    # after a remote-cache failure, seconds before it is tried again
    "remote_cache_backoff_s": 30.0,
    # LLVM optimisation level of every kernel (0-3; -1: chosen per kernel, backends/llvm/tiers.py)
    "kernel_opt_level": -1,
    # cache entries of LLVM graphs also get a native entry (guards + launch in LLVM IR, ~20x less call overhead)
    "native_dispatch": True,
    # an entry whose results are the same compiled or eager is timed against the original function on
    # its first calls and keeps the faster (csrc_free_runtime/tuning.py, backends/llvm/exact.py); off by
    # default: a decision taken on a busy machine can give up a compiled speed-up for good
    "autotune_entries": False,
    # transcendental functions in kernels computed by NumPy's own ufunc loops (bit-identical to
    # NumPy; codegen/llvm_kernels/numpy_loops.py); False: our own vectorised math (a few ulp)
    "numpy_math": True,
    # float matrix products of one dtype are NumPy's call (BLAS: NumPy's bits); False: small ones
    # run in our fused loop nests (faster, summed in another order than BLAS's: last bits differ)
    "exact_float_products": True,
    # an internal error of a backend raises (tests) instead of falling back to the NumPy backend
    # with a logged warning (users: never a failure because of a backend bug)
    "strict_backend": False,
    # check every graph with the IR verifier (ir/verify.py) after tracing, after each pass and at
    # backend entry; a broken graph raises IRVerifyError
    "verify_ir": False,
}


def _parse(name, raw: str):
    default = _DEFAULTS[name]
    if isinstance(default, bool):
        return raw.strip().lower() not in ("0", "false", "no", "off", "")
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    return raw


class _Config:
    """Attribute access to the settings; `patch(**kw)` sets some for a block or a function."""

    def __init__(self):
        object.__setattr__(self, "_values", dict(_DEFAULTS))
        for name in _DEFAULTS:
            raw = os.environ.get("FRAMETRACE_" + name.upper())
            if raw is not None:
                self._values[name] = _parse(name, raw)

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"frametrace.config has no setting {name!r}") from None

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"frametrace.config has no setting {name!r}; known: {sorted(self._values)}")
        self._values[name] = value

    def as_dict(self) -> dict:
        return dict(self._values)

    def patch(self, **changes):
        """Context manager and decorator that sets settings and restores them afterwards."""
        for name in changes:
            if name not in self._values:
                raise AttributeError(f"frametrace.config has no setting {name!r}")
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, cfg, changes):
        self.cfg, self.changes, self.saved = cfg, changes, []

    def __enter__(self):
        self.saved.append({k: self.cfg._values[k] for k in self.changes})
        self.cfg._values.update(self.changes)
        return self

    def __exit__(self, *exc):
        self.cfg._values.update(self.saved.pop())
        return False


config = _Config()
