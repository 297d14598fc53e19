"""NumPy's report of an in-place ufunc's FP errors after the kernel has written: probes.

For ONE ufunc call NumPy writes the whole output and only then looks at the FP status flags
and reports them: a RuntimeWarning, a FloatingPointError (the destination already written),
the `call` handler, the `log` object, a line printed; a warnings filter "error" turns the
warning into an exception, again after the write. So a kernel that computes exactly what that
ufunc computes (`x += y`: one IEEE add per element, the operands loaded as they are) may write
first and report afterwards, with no flag check before it and no saved copy: its status flags
are the ones NumPy's loop sees (the same operation on the same values; the loop has no padded
lanes: add / subtract / multiply / divide are no vectorised-math calls, whose tails are masked,
emit.py).

The report is NumPy's own: the ufunc is called on a "probe", two operands of a few elements
chosen so that NumPy's loop raises exactly the flagged kinds (`np.add([max], [max])`:
"overflow encountered in add"), under the error state and warnings filters of the moment.
NumPy then reports in its order (divide, over, under, invalid), calls the handler with the
same status bits, raises on the first kind set to "raise". Each probe is verified against
NumPy when it is built (`Probes.build`: None when NumPy does not report exactly that set).

The same holds for NumPy's integer divisions (`i //= j`, `i %= j`, np.fmod: their loops set
"divide" for a zero divisor, `//` "over" for MIN // -1, explicitly, after computing every
element; the kernel's integer flag accumulator raises exactly those, masked tail lanes
contributing nothing) and for a float64 result NumPy casts into a float32 destination in its
buffers (`x32 += y64`: the cast's overflow and underflow are reported as the ufunc's, once, after
the last buffer is written; `_writes_then_raises` asks the running NumPy once; the kernel makes
the same float64 operation and the same rounding cast). Float16 (NumPy's software half
conversions set flags by their own rules) and complex destinations keep the check.

Where NumPy would report BEFORE writing the destination (`x[:] = a * b + c`: the multiply's
flags under "raise" leave x untouched) a pass that writes would be wrong: those graphs keep the
flag check or the saved copy (flag_checks.py, fp_errors.py).
"""
from __future__ import annotations

import itertools

import numpy as np

from ...codegen.llvm_kernels import fpflags

_INV, _DIV, _OVER, _UNDER = (fpflags.BIT[k] for k in ("invalid", "divide", "over", "under"))

# ufunc -> kind -> (a, b): NumPy's loop raises exactly that kind for a[i] op b[i]; the values
# are names of the dtype's finfo / iinfo ("max", "tiny", "min") or numbers
_ELEMENTS = {
    "add": {_OVER: ("max", "max"), _INV: (np.inf, -np.inf), _UNDER: (1e-40, 0.0)},      # (under: narrowed only)
    "subtract": {_OVER: ("max", "-max"), _INV: (np.inf, np.inf), _UNDER: (1e-40, 0.0)},
    "multiply": {_OVER: ("max", 2.0), _UNDER: ("tiny", "tiny"), _INV: (0.0, np.inf)},
    "divide": {_DIV: (1.0, 0.0), _OVER: ("max", 0.5), _UNDER: ("tiny", "max"), _INV: (0.0, 0.0)},
}
_ELEMENTS["true_divide"] = _ELEMENTS["divide"]            # (np.true_divide.__name__ before NumPy 2)
# integer ufuncs: NumPy's loops set "divide" for a zero divisor and "over" for MIN // -1
# explicitly (the kernels' integer flag accumulator raises exactly these: ops.py _i_divmod)
_INT_ELEMENTS = {
    "floor_divide": {_DIV: (1, 0), _OVER: ("min", -1)},
    "remainder": {_DIV: (1, 0)},
    "fmod": {_DIV: (1, 0)},
}
# kinds a kernel's analysis may list (fpflags.op_kinds: every integer division "divide | over")
# that neither NumPy nor the kernel ever raises for that ufunc in that dtype: masked out
_NEVER = {("remainder", "i"): _OVER, ("remainder", "u"): _OVER, ("fmod", "i"): _OVER, ("fmod", "u"): _OVER,
          ("floor_divide", "u"): _OVER}
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# a float64 result NumPy casts into a float32 destination in its buffers: a narrowing cast whose
# overflow / underflow NumPy reports as the ufunc's own, after writing (verified by the probes)
NARROWING = {(np.dtype(np.float64), np.dtype(np.float32))}


def supported(ufunc, dtype, out=None) -> bool:
    """Can the probes answer for `ufunc` computed in `dtype` into a destination of dtype `out`
    (None: `dtype`)?"""
    name, dtype = getattr(ufunc, "__name__", None), np.dtype(dtype)
    out = dtype if out is None else np.dtype(out)
    if out != dtype and (dtype, out) not in NARROWING:
        return False
    if dtype in DTYPES:
        return name in _ELEMENTS
    return dtype.kind in "iu" and name in _INT_ELEMENTS and out == dtype


def _value(v, info):
    if isinstance(v, str):
        sign = -1 if v.startswith("-") else 1
        return sign * getattr(info, v.lstrip("-"))
    return v


_NUMPY_BITS = {_DIV: 1, _OVER: 2, _UNDER: 4, _INV: 8}     # the status bits NumPy's `call` handler gets


def _reported(ufunc, a, b, out=None) -> int:
    """The kinds (fpflags bits) NumPy reports for ufunc(a, b[, out=out])."""
    seen = []
    with np.errstate(all="call", call=lambda kind, bits: seen.append(bits)):
        ufunc(a, b) if out is None else ufunc(a, b, out)
    status = seen[0] if seen else 0
    return sum(ours for ours, theirs in _NUMPY_BITS.items() if status & theirs)


def _writes_then_raises(ufunc, dtype, out) -> bool:
    """Does NumPy cast a result into a narrower `out` in its buffers for the whole array and
    only then report the cast's overflow (under "raise": the last buffer written before
    FloatingPointError), as for its own loop's flags? Asked once per ufunc and dtypes."""
    n = 2 * np.getbufsize() + 3
    a, o = np.ones(n, dtype), np.zeros(n, out)
    b = (np.zeros if ufunc.__name__ in ("add", "subtract") else np.ones)(n, dtype)    # x op b == x
    a[0] = float(np.finfo(out).max) * 4
    try:
        with np.errstate(all="raise"):
            ufunc(a, b, o)
    except FloatingPointError:
        return bool(o[-1] == 1 and np.isinf(o[0]))
    return False


class Probes:
    """The probes of one ufunc in one dtype, for every set of the kinds a kernel may flag."""

    _cache: dict = {}

    def __init__(self, ufunc, kinds: int, probes: dict, out=None):
        self.ufunc, self.kinds, self.probes = ufunc, kinds, probes   # {flag bits: (a, b)}
        self.out = out          # {flag bits: a scratch destination} of a narrowing cast, or None

    @classmethod
    def build(cls, ufunc, dtype, kinds: int, out=None) -> "Probes | None":
        """The probes of `ufunc` in `dtype` (its result cast into `out`, a narrower float dtype,
        or None) for each nonempty subset of `kinds`; None when a kind has no probe or NumPy
        does not report exactly the subset for one of them."""
        dtype = np.dtype(dtype)
        out = None if out is None or np.dtype(out) == dtype else np.dtype(out)
        key = (ufunc, dtype, kinds, out)
        if key not in cls._cache:
            cls._cache[key] = cls._build(ufunc, dtype, kinds, out)
        return cls._cache[key]

    @classmethod
    def _build(cls, ufunc, dtype, kinds, out):
        if not supported(ufunc, dtype, out) or kinds & ~fpflags.REPORTED:
            return None
        name = ufunc.__name__
        kinds &= ~_NEVER.get((name, dtype.kind), 0)
        if dtype.kind == "f":
            table, info = _ELEMENTS[name], np.finfo(dtype if out is None else out)
        else:
            table, info = _INT_ELEMENTS[name], np.iinfo(dtype)
        bits = [b for b in fpflags.KINDS if kinds & b]
        if any(b not in table for b in bits) or out is not None and not _writes_then_raises(ufunc, dtype, out):
            return None
        probes, outs = {}, {}
        for r in range(1, len(bits) + 1):
            for subset in itertools.combinations(bits, r):
                pairs = [table[b] for b in subset]
                a = np.array([_value(p[0], info) for p in pairs], dtype=dtype)
                b = np.array([_value(p[1], info) for p in pairs], dtype=dtype)
                o = None if out is None else np.empty(len(pairs), out)
                mask = sum(subset)
                if _reported(ufunc, a, b, o) != mask:
                    return None
                a.flags.writeable = b.flags.writeable = False
                probes[mask] = (a, b)
                if o is not None:
                    outs[mask] = o
        return cls(ufunc, kinds, probes, outs if out is not None else None)

    def report(self, flags: int) -> None:
        """NumPy reports the kinds in `flags` (masked to the kernel's kinds) as it would have
        for the ufunc call: warns, raises, calls the handler, or nothing when they are ignored."""
        flags &= self.kinds
        if flags:
            self.ufunc(*self.operands(flags))

    def operands(self, flags: int) -> tuple:
        """The arguments of the probe call for exactly the kinds `flags`: (a, b) or, for a
        narrowing cast, (a, b, out) (`np.add(a, b, out)`: NumPy casts into out in its buffers
        and reports the cast's flags as the ufunc's)."""
        return self.probes[flags] if self.out is None else (*self.probes[flags], self.out[flags])

    def take_and_report(self) -> None:
        """The word's flags (taken) reported: the Python wrapper's call after the kernel."""
        self.report(fpflags.take())


__all__ = ["DTYPES", "NARROWING", "Probes", "supported"]
