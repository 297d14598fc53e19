"""NumPy's own inner loops of transcendental ufuncs, for kernels to call on chunks.

A fused kernel that computes `np.exp(a * b) + c` calls, per chunk of CHUNK elements, the very
loop NumPy runs for `np.exp` on a float64 array (its AVX-512/SVML variant, chosen by NumPy's
CPU dispatch at import) instead of our own vectorised exp (codegen/llvm_math): the kernel
computes `a * b` into a stack buffer, calls the loop once for the chunk, and goes on from its
output (chunked.py). The results are NumPy's bits, and the FP status flags the loop raises are
the ones NumPy's own call raises (the kernel's entry reads them: fpflags.py).

Where the loop comes from: NumPy's experimental low-level ufunc API (NumPy >= 1.24),
`ufunc._resolve_dtypes_and_context(dtypes)` then `ufunc._get_strided_loop(call_info,
fixed_strides=...)`, which fills the `numpy_1.24_ufunc_call_info` capsule with the strided loop
NumPy's own ufunc call uses for those dtypes (the ArrayMethod's loop: for a legacy ufunc the
wrapper that calls the dispatched `functions[i]` with its `data[i]`), its context and auxdata.
This is NumPy's resolution itself: no reading of the PyUFuncObject struct by guessed offsets.
The loop's signature, `int loop(PyArrayMethod_Context *, char *const *data, npy_intp const
*dims, npy_intp const *strides, NpyAuxData *)`, is the one NumPy guarantees stable; the capsule
layout is documented in `_get_strided_loop`'s docstring and checked here as far as it can be
(name, non-null pointers, `requires_pyapi` false, resolved dtypes as asked).

Refused (our own math stays) unless NumPy's loop proves to be the one NumPy runs: `verify`
calls it through ctypes on specials (NaN, inf, -0.0, subnormals, huge values, the domain
edges), random bit patterns and typical ranges, in chunks of odd lengths at odd offsets, and
compares the bits with NumPy's plain call, with NumPy's call on a scalar operand (stride 0)
and on a reversed 1-d view (a negative stride: NumPy's loops then take their scalar path,
which rounds differently), and compares the FP flags the loop raises with those NumPy's call
reports, element by element on the specials. Anything that disagrees or fails: logged
(`frametrace.codegen` at debug), and the function keeps our math for the process.

Thread safety: the loops are pure functions of their arguments (NumPy runs them with the GIL
released, from any thread); context and auxdata are read only and live as long as the process
(the capsules are kept in _LOOPS).

Which functions (ROUTED): measured on this machine (AVX-512, NumPy 2.4; benchmarks/README.md
"NumPy's loops in kernels"): NumPy's loop is faster than ours or within a few percent for every
function and dtype except float64 sin and cos (NumPy 2.4 has no SVML loop for them: ~16-18
ns/element against our ~1.4) and sqrt (ours is the IEEE instruction: identical bits).
"""
from __future__ import annotations

import ctypes
import logging
import threading

import llvmlite.binding as llvm
import numpy as np

from ...config import config

log = logging.getLogger("frametrace.codegen")

ENABLED = True          # False: every function keeps our own math (as config.numpy_math = False)
CHUNK = 512             # elements per loop call: the buffers stay in L1, the call is amortised
CAPSULE = b"numpy_1.24_ufunc_call_info"

_UNARY = ("exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh "
          "arcsinh arccosh arctanh cbrt").split()
_BINARY = "power arctan2 hypot logaddexp logaddexp2".split()
# (ufunc, dtype) pairs where our math is much faster than NumPy's loop (module doc)
_OURS_FASTER = {("sin", "float64"), ("cos", "float64")}
ROUTED = frozenset((n, dt) for n in _UNARY + _BINARY for dt in ("float32", "float64")) - _OURS_FASTER


class _CallInfo(ctypes.Structure):
    _fields_ = [("strided_loop", ctypes.c_void_p), ("context", ctypes.c_void_p), ("auxdata", ctypes.c_void_p),
                ("requires_pyapi", ctypes.c_ubyte), ("no_floatingpoint_errors", ctypes.c_ubyte)]


_LOOP_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_void_p)
_api = ctypes.pythonapi
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]


class NumpyLoop:
    """One verified loop: `symbol` names an external global [3 x ptr] (loop, context, auxdata)."""

    def __init__(self, name: str, dtype: str, nin: int, capsule, info: _CallInfo):
        self.name, self.dtype, self.nin = name, dtype, nin
        self.capsule, self.info = capsule, info           # keep NumPy's capsule (auxdata) alive
        self.symbol = f"frametrace_nploop_{name}_{'f64' if dtype == 'float64' else 'f32'}"
        self.fn = _LOOP_TYPE(info.strided_loop)

    @property
    def decl(self) -> str:
        return f"@{self.symbol} = external global [3 x ptr]"

    def register(self):
        """Point the symbol's block at this (verified) loop. One block per symbol for the whole
        process, and every registered loop kept alive: kernels linked earlier hold the block's
        address, which must never be freed (a loop acquired again, as tests do, reuses it)."""
        block = _BLOCKS.get(self.symbol)
        if block is None:
            block = _BLOCKS[self.symbol] = (ctypes.c_void_p * 3)()
            llvm.add_symbol(self.symbol, ctypes.addressof(block))
        _KEPT.append(self)                                 # its capsule owns the auxdata
        block[0], block[1], block[2] = self.info.strided_loop, self.info.context, self.info.auxdata

    def __call__(self, ins, out, strides=None):
        """Run the loop on 1-d arrays (tests, verify): `ins` may be 0-d (stride 0)."""
        n = out.shape[0]
        st = strides or [a.strides[0] if a.ndim else 0 for a in ins] + [out.strides[0]]
        ptrs = (ctypes.c_void_p * (len(ins) + 1))(*[a.ctypes.data for a in ins], out.ctypes.data)
        dims = (ctypes.c_ssize_t * 1)(n)
        sts = (ctypes.c_ssize_t * (len(ins) + 1))(*st)
        if self.fn(self.info.context, ptrs, dims, sts, self.info.auxdata) != 0:
            raise RuntimeError(f"NumPy's {self.name} loop failed")


def enabled() -> bool:
    return ENABLED and bool(config.numpy_math)


_LOOPS: dict = {}
_BLOCKS: dict = {}          # symbol -> its [3 x ptr] block (process lifetime)
_KEPT: list = []            # every loop a block has pointed at (process lifetime)
_lock = threading.Lock()


def loop_for(name: str, dtype: str):
    """The verified NumpyLoop of ufunc `name` on `dtype` ("float32"/"float64"), or None (our
    own math): not ROUTED, switched off, or refused by verify (once per process)."""
    if not enabled() or (name, dtype) not in ROUTED:
        return None
    key = (name, dtype)
    with _lock:
        if key not in _LOOPS:
            try:
                _LOOPS[key] = _acquire(name, dtype)
            except Exception as e:                  # noqa: BLE001 - any failure: keep our math
                log.debug("NumPy's %s loop for %s refused: %s", name, dtype, e)
                _LOOPS[key] = None
        return _LOOPS[key]


def _acquire(name: str, dtype: str) -> NumpyLoop:
    uf = getattr(np, name)
    if not isinstance(uf, np.ufunc) or uf.nout != 1 or uf.nin not in (1, 2) or uf.__name__ != name:
        raise ValueError(f"np.{name} is not a unary/binary ufunc")
    dt = np.dtype(dtype)
    want = (dt,) * (uf.nin + 1)
    got, capsule = uf._resolve_dtypes_and_context(want)
    if tuple(got) != want:
        raise ValueError(f"resolves {want} to {got}")
    uf._get_strided_loop(capsule, fixed_strides=(dt.itemsize,) * (uf.nin + 1))
    cname = _api.PyCapsule_GetName(capsule)
    if cname != CAPSULE:
        raise ValueError(f"capsule {cname!r}, expected {CAPSULE!r}")
    info = _CallInfo.from_address(_api.PyCapsule_GetPointer(capsule, cname))
    if not info.strided_loop or not info.context:
        raise ValueError("no loop in the capsule")
    if info.requires_pyapi not in (0, 1) or info.no_floatingpoint_errors not in (0, 1):
        raise ValueError("capsule fields do not read back as flags (layout changed?)")
    if info.requires_pyapi:
        raise ValueError("the loop needs the GIL")
    loop = NumpyLoop(name, dtype, uf.nin, capsule, info)
    verify(loop, uf)
    loop.register()
    return loop


# -- verification ----------------------------------------------------------------------------
_libm = ctypes.CDLL("libm.so.6")
_FE = {0x01: "invalid", 0x04: "divide", 0x08: "over", 0x10: "under"}     # x86-64 <fenv.h>
_FE_ALL = sum(_FE)


def specials(dtype) -> np.ndarray:
    """Values where math functions take their special paths (a float array of `dtype`)."""
    f = np.finfo(dtype)
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 1e-8, -1e-8,
            float(f.tiny), -float(f.tiny), float(f.smallest_subnormal), -float(f.smallest_subnormal),
            float(f.tiny) / 3, float(f.max), -float(f.max), float(f.max) / 2, float(f.eps), 1 - float(f.eps),
            1 + float(f.eps), np.pi, -np.pi, np.pi / 2, np.pi / 4, 88.7, 89.0, -87.3, -104.0, -150.0, 128.0,
            709.7, 710.0, -708.4, -745.2, -746.0, 1024.0, -1075.0, 1e10, -1e10, 1e22, 2.0 ** 30, 2.0 ** 60,
            1e300, -1e300, 1e-300, 0.9999999, -0.9999999, 1.0000001]
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=np.float64).astype(dtype)


def _battery(dtype, nin: int, rng) -> list:
    """Inputs: specials (and every pair of them for binary functions), random bit patterns,
    wide and typical ranges."""
    it = np.dtype(dtype)
    sp = specials(dtype)
    n = 2500
    bits = rng.integers(0, 2 ** (8 * it.itemsize) - 1, n, dtype=np.uint64, endpoint=True)
    raw = bits.astype(np.uint32).view(np.float32) if it == np.float32 else bits.view(np.float64)
    with np.errstate(all="ignore"):
        wide = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 7, n)).astype(dtype)
        small = rng.uniform(-4, 4, n).astype(dtype)
    cols = [np.concatenate([sp, raw, wide, small])]
    if nin == 2:
        a, b = np.meshgrid(sp, sp)
        other = rng.permutation(cols[0])
        cols = [np.concatenate([a.ravel(), cols[0], np.abs(cols[0])]),
                np.concatenate([b.ravel(), other, other])]
    return cols


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def verify(loop: NumpyLoop, uf):
    """Raise ValueError unless `loop` gives NumPy's bits and flags (module doc)."""
    rng = np.random.default_rng(20261127)
    xs = _battery(loop.dtype, loop.nin, rng)
    with np.errstate(all="ignore"):
        ref = uf(*xs)
        out = np.full_like(ref, np.nan)
        lo = 0
        for size in [1, 3, 17, 64, 255, 511, CHUNK] * 1000:      # odd chunk lengths at odd offsets
            if lo >= ref.size:
                break
            hi = min(lo + size, ref.size)
            loop([x[lo:hi] for x in xs], out[lo:hi])
            lo = hi
        if not _same_bits(out, ref):
            raise ValueError(f"{int((out.view(np.uint8) != ref.view(np.uint8)).sum())} bytes differ from NumPy")
        # negative strides: NumPy's 1-d call passes them to the loop (its scalar path)
        rev = [x[::-1] for x in xs]
        out = np.empty_like(ref)
        loop(rev, out[::-1])
        if not _same_bits(out, uf(*rev)[::-1]):
            raise ValueError("differs from NumPy on a reversed view")
        if loop.nin == 2:                         # a scalar operand: NumPy passes stride 0
            for s in specials(loop.dtype)[::9]:
                for args in ((xs[0][-3000:], np.array(s)), (np.array(s), xs[1][-3000:])):
                    out = np.empty(3000, loop.dtype)
                    loop([np.asarray(a, loop.dtype) for a in args], out)
                    if not _same_bits(out, uf(*args)):
                        raise ValueError("differs from NumPy with a scalar operand")
    _verify_flags(loop, uf, xs)


def _numpy_flags(uf, args) -> int:
    seen = []
    old = np.seterrcall(lambda kind, flag: seen.append(flag))
    try:
        with np.errstate(all="call"):
            uf(*args)
    finally:
        np.seterrcall(old)
    bits = {1: 0x04, 2: 0x08, 4: 0x10, 8: 0x01}     # NumPy's callback flag bits -> <fenv.h> bits
    return sum(b for f, b in bits.items() if any(s & f for s in seen))


def _loop_flags(loop, args) -> int:
    out = np.empty(1, loop.dtype)
    _libm.feclearexcept(_FE_ALL)
    loop(args, out)
    return _libm.fetestexcept(_FE_ALL) & _FE_ALL


def _verify_flags(loop, uf, xs):
    sp = specials(loop.dtype)
    pairs = [(x,) for x in sp] if loop.nin == 1 else [(a, b) for a in sp[::4] for b in sp[::4]]
    pairs += [tuple(x[i] for x in xs) for i in range(len(sp) ** loop.nin, len(xs[0]), 401)]
    for p in pairs:
        args = [np.array([v], loop.dtype) for v in p]
        ours, theirs = _loop_flags(loop, args), _numpy_flags(uf, args)
        if ours != theirs:
            raise ValueError(f"flags {ours:#x} where NumPy reports {theirs:#x} for {p}")


__all__ = ["CHUNK", "ENABLED", "NumpyLoop", "ROUTED", "loop_for", "specials", "verify"]
