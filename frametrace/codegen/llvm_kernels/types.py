"""NumPy dtypes as LLVM types, constants and NumPy's casting rules (astype, unsafe)."""
from __future__ import annotations

import struct

import numpy as np

from . import complex_ops

# dtype name -> (register type, memory type, bits)
_TYPES = {
    "bool": ("i1", "i8", 8), "int8": ("i8", "i8", 8), "uint8": ("i8", "i8", 8),
    "int16": ("i16", "i16", 16), "uint16": ("i16", "i16", 16),
    "int32": ("i32", "i32", 32), "uint32": ("i32", "i32", 32),
    "int64": ("i64", "i64", 64), "uint64": ("i64", "i64", 64),
    "float32": ("float", "float", 32), "float64": ("double", "double", 64),
    # complex: {re, im} structs (complex_ops.py; native loop bodies only)
    "complex64": ("{float, float}", "{float, float}", 64), "complex128": ("{double, double}", "{double, double}", 128),
}


def reg(dt: str) -> str:
    """Type of a value in registers (bool is i1)."""
    return _TYPES[dt][0]


def mem(dt: str) -> str:
    """Type of a value in memory (bool is one byte)."""
    return _TYPES[dt][1]


def bits(dt: str) -> int:
    return _TYPES[dt][2]


def itemsize(dt: str) -> int:
    return np.dtype(dt).itemsize


def kind(dt: str) -> str:
    return np.dtype(dt).kind


def const(value, dt: str) -> str:
    """LLVM literal of `value` as dtype `dt` (floats as exact hex doubles)."""
    k = kind(dt)
    if k == "b":
        return "true" if value else "false"
    if k == "c":
        return complex_ops.const(value, dt)
    if k == "f":
        v = float(np.float32(value)) if dt == "float32" else float(value)
        return "0x" + struct.pack(">d", v).hex().upper()
    v = int(value)
    b = bits(dt)
    v &= (1 << b) - 1                           # two's complement in b bits, printed signed
    if v >= 1 << (b - 1):
        v -= 1 << b
    return str(v)


def cast(e, x: str, src: str, dst: str) -> str:
    """Emit NumPy's unsafe cast of value `x` from dtype src to dst; `e` is the emitter."""
    if src == dst:
        return x
    ks, kd = kind(src), kind(dst)
    if "c" in (ks, kd):
        return complex_ops.cast(e, x, src, dst, cast)
    ts, td = reg(src), reg(dst)
    if kd == "b":                               # nonzero test (NaN is True)
        if ks == "f":
            return e.emit(f"fcmp une {ts} {x}, 0.0", "i1")
        return e.emit(f"icmp ne {ts} {x}, 0", "i1")
    if ks == "b":
        return e.emit(f"uitofp i1 {x} to {td}" if kd == "f" else f"zext i1 {x} to {td}", td)
    if ks in "iu" and kd in "iu":
        if bits(src) == bits(dst):
            return x
        if bits(src) > bits(dst):
            return e.emit(f"trunc {ts} {x} to {td}", td)
        return e.emit(f"{'sext' if ks == 'i' else 'zext'} {ts} {x} to {td}", td)
    if ks in "iu" and kd == "f":
        return e.emit(f"{'sitofp' if ks == 'i' else 'uitofp'} {ts} {x} to {td}", td)
    if ks == "f" and kd == "f":
        return e.emit(f"{'fpext' if bits(src) < bits(dst) else 'fptrunc'} {ts} {x} to {td}", td)
    return _float_to_int(e, x, ts, dst, kd)


def _cvtt(e, x, ts, td):
    """x86's truncating convert (cvttsd2si) that NumPy's casts compile to: in range, the
    truncated value; NaN or out of range, the "integer indefinite" INT_MIN of `td`."""
    n = bits({"i32": "int32", "i64": "int64"}[td])
    lo, hi = const(-2.0 ** (n - 1), "float64"), const(2.0 ** (n - 1), "float64")
    xd = x if ts == "double" else e.emit(f"fpext {ts} {x} to double", "double")
    above, below = e.emit(f"fcmp oge double {xd}, {lo}", "i1"), e.emit(f"fcmp olt double {xd}, {hi}", "i1")
    ok = e.emit(f"and i1 {above}, {below}", "i1")
    v = e.emit(f"freeze {td} {e.emit(f'fptosi {ts} {x} to {td}', td)}", td)
    return e.emit(f"select i1 {ok}, {td} {v}, {td} {-(1 << (n - 1))}", td)


def _float_to_int(e, x, ts, dst, kd):
    """float -> int as NumPy on x86-64 does it (out-of-range and NaN included): through int32
    for narrow types, int64 otherwise; uint32 from int64 above 2**31 (else int32), uint64
    from `cvtt(x - 2**63) ^ 2**63` at and above 2**63 (else int64)."""
    td = reg(dst)
    if bits(dst) <= 32 and not (kd == "u" and bits(dst) == 32):
        v = _cvtt(e, x, ts, "i32")
        return v if td == "i32" else e.emit(f"trunc i32 {v} to {td}", td)
    if kd == "u" and bits(dst) == 32:
        big = e.emit(f"fcmp oge {ts} {x}, {const(2.0 ** 31, 'float64')}", "i1")
        wide = e.emit(f"trunc i64 {_cvtt(e, x, ts, 'i64')} to i32", "i32")
        return e.emit(f"select i1 {big}, i32 {wide}, i32 {_cvtt(e, x, ts, 'i32')}", "i32")
    v = _cvtt(e, x, ts, "i64")
    if kd == "u" and bits(dst) == 64:
        big = e.emit(f"fcmp oge {ts} {x}, {const(2.0 ** 63, 'float64')}", "i1")
        shifted = e.emit(f"fsub {ts} {x}, {const(2.0 ** 63, 'float64')}", ts)
        u = e.emit(f"xor i64 {_cvtt(e, shifted, ts, 'i64')}, {-(1 << 63)}", "i64")
        v = e.emit(f"select i1 {big}, i64 {u}, i64 {v}", "i64")
    return v if td == "i64" else e.emit(f"trunc i64 {v} to {td}", td)
