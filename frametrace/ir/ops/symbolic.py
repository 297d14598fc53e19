"""Size arithmetic that works for plain ints and for `frametrace.shapes` SymInts alike.

Meta rules compute on sizes that are `int` or `SymInt`. Plain ints take the fast path here;
anything symbolic is handed to `frametrace.shapes` (imported lazily: that package sits
beside `ir` and may be imported after the ops are registered). If it is missing, a sound
fallback is used: it decides with `bool()`, which on a SymBool records a guard.
"""
from __future__ import annotations

import functools
import importlib

import numpy as np

_HELPERS = ("sym_max", "sym_min", "statically_known_true", "guard_size_oblivious")


class _Fallback:
    """Sound but guard-happy stand-ins used until `frametrace.shapes` provides the helpers."""

    @staticmethod
    def sym_max(a, b):
        return a if bool(a >= b) else b

    @staticmethod
    def sym_min(a, b):
        return a if bool(a <= b) else b

    @staticmethod
    def statically_known_true(cond):
        return False                      # never wrong: "not known" only costs a guard later

    @staticmethod
    def guard_size_oblivious(cond):
        return bool(cond)


def _helpers():
    """The module providing the symbolic helpers (tests may monkeypatch this function)."""
    try:
        mod = importlib.import_module("frametrace.shapes")
    except ImportError:
        return _Fallback
    return mod if all(hasattr(mod, h) for h in _HELPERS) else _Fallback


def is_static(x) -> bool:
    """A plain Python/NumPy integer (or bool), as opposed to a symbolic size."""
    return isinstance(x, (int, np.integer))


def is_symbolic(x) -> bool:
    """A SymInt / SymFloat / SymBool (anything carrying a sympy `.expr`)."""
    return _sym_kind(type(x)) is not None


@functools.lru_cache(maxsize=None)
def _sym_kind(cls):
    for c in cls.__mro__:
        if c.__name__ in ("SymInt", "SymFloat", "SymBool"):
            return c.__name__
    return None


_SYM_PYTYPE = {"SymInt": int, "SymFloat": float, "SymBool": bool}


def pytype_of(x):
    """The Python type (bool, int, float, complex) of a weak scalar operand, else None.

    Python scalars, SymInt (int), SymFloat (float) and SymBool (bool) are weak for NEP 50;
    np.generic and arrays are strong and return None.
    """
    t = type(x)
    if t in (bool, int, float, complex):
        return t
    kind = _sym_kind(t)
    return _SYM_PYTYPE[kind] if kind else None


def sym_max(a, b):
    if is_static(a) and is_static(b):
        return max(int(a), int(b))
    return _helpers().sym_max(a, b)


def sym_min(a, b):
    if is_static(a) and is_static(b):
        return min(int(a), int(b))
    return _helpers().sym_min(a, b)


def statically_known_true(cond) -> bool:
    """True only if `cond` holds for every value of its symbols; never records a guard."""
    if isinstance(cond, (bool, np.bool_)):
        return bool(cond)
    return bool(_helpers().statically_known_true(cond))


def guard_size_oblivious(cond) -> bool:
    """Decide `cond` treating unbacked sizes as >= 2 (see frametrace.shapes)."""
    if isinstance(cond, (bool, np.bool_)):
        return bool(cond)
    return bool(_helpers().guard_size_oblivious(cond))


def prod(sizes):
    """Product of sizes (1 for an empty sequence), symbolic if any factor is."""
    n = 1
    for d in sizes:
        n = n * d
    return n


def same_size(a, b) -> bool:
    """Decide `a == b`, recording a guard when it is not statically known."""
    if a is b:
        return True
    return bool(a == b)


def fmt_shape(shape) -> str:
    """Shape as NumPy prints it in error messages: (3,) / (2,3)."""
    inner = ",".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"
