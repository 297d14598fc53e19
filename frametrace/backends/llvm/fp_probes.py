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
# are names of the dtype's finfo ("max", "tiny") or floats
_ELEMENTS = {
    "add": {_OVER: ("max", "max"), _INV: (np.inf, -np.inf)},
    "subtract": {_OVER: ("max", "-max"), _INV: (np.inf, np.inf)},
    "multiply": {_OVER: ("max", 2.0), _UNDER: ("tiny", "tiny"), _INV: (0.0, np.inf)},
    "divide": {_DIV: (1.0, 0.0), _OVER: ("max", 0.5), _UNDER: ("tiny", "max"), _INV: (0.0, 0.0)},
}
_ELEMENTS["true_divide"] = _ELEMENTS["divide"]            # (np.true_divide.__name__ before NumPy 2)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def supported(ufunc, dtype) -> bool:
    return getattr(ufunc, "__name__", None) in _ELEMENTS and np.dtype(dtype) in DTYPES


def _value(v, info):
    if isinstance(v, str):
        sign = -1.0 if v.startswith("-") else 1.0
        return sign * float(getattr(info, v.lstrip("-")))
    return v


_NUMPY_BITS = {_DIV: 1, _OVER: 2, _UNDER: 4, _INV: 8}     # the status bits NumPy's `call` handler gets


def _reported(ufunc, a, b) -> int:
    """The kinds (fpflags bits) NumPy reports for ufunc(a, b)."""
    seen = []
    with np.errstate(all="call", call=lambda kind, bits: seen.append(bits)):
        ufunc(a, b)
    status = seen[0] if seen else 0
    return sum(ours for ours, theirs in _NUMPY_BITS.items() if status & theirs)


class Probes:
    """The probes of one ufunc in one dtype, for every set of the kinds a kernel may flag."""

    _cache: dict = {}

    def __init__(self, ufunc, kinds: int, probes: dict):
        self.ufunc, self.kinds, self.probes = ufunc, kinds, probes   # {flag bits: (a, b)}

    @classmethod
    def build(cls, ufunc, dtype, kinds: int) -> "Probes | None":
        """The probes of `ufunc` in `dtype` for each nonempty subset of `kinds`; None when a
        kind has no probe or NumPy does not report exactly the subset for one of them."""
        dtype = np.dtype(dtype)
        key = (ufunc, dtype, kinds)
        if key not in cls._cache:
            cls._cache[key] = cls._build(ufunc, dtype, kinds)
        return cls._cache[key]

    @classmethod
    def _build(cls, ufunc, dtype, kinds):
        if not supported(ufunc, dtype) or kinds & ~fpflags.REPORTED:
            return None
        table, info = _ELEMENTS[ufunc.__name__], np.finfo(dtype)
        bits = [b for b in fpflags.KINDS if kinds & b]
        if any(b not in table for b in bits):
            return None
        probes = {}
        for r in range(1, len(bits) + 1):
            for subset in itertools.combinations(bits, r):
                pairs = [table[b] for b in subset]
                a = np.array([_value(p[0], info) for p in pairs], dtype=dtype)
                b = np.array([_value(p[1], info) for p in pairs], dtype=dtype)
                mask = sum(subset)
                if _reported(ufunc, a, b) != mask:
                    return None
                a.flags.writeable = b.flags.writeable = False
                probes[mask] = (a, b)
        return cls(ufunc, kinds, probes)

    def report(self, flags: int) -> None:
        """NumPy reports the kinds in `flags` (masked to the kernel's kinds) as it would have
        for the ufunc call: warns, raises, calls the handler, or nothing when they are ignored."""
        flags &= self.kinds
        if flags:
            self.ufunc(*self.probes[flags])

    def take_and_report(self) -> None:
        """The word's flags (taken) reported: the Python wrapper's call after the kernel."""
        self.report(fpflags.take())


__all__ = ["DTYPES", "Probes", "supported"]
