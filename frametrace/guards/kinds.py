"""The kinds of guard record (records.py)."""
from __future__ import annotations

import enum


class GuardKind(str, enum.Enum):
    """The kinds of guard (a `str` so that `g.kind == "TYPE_MATCH"` keeps working)."""
    TYPE_MATCH = "TYPE_MATCH"      # type(v) is T                         payload: T
    ID_MATCH = "ID_MATCH"          # v is obj                             payload: obj
    EQUALS_MATCH = "EQUALS_MATCH"  # v == value, floats/complex by bits   payload: value
    DTYPE = "DTYPE"                # v.dtype == D                         payload: np.dtype
    NDIM = "NDIM"                  # v.ndim == n                          payload: n
    SIZE = "SIZE"                  # v.shape[d] == n (source: ShapeSource) payload: n
    STRIDES = "STRIDES"            # v.strides == (...)                   payload: tuple
    STRIDE_FORMULA = "STRIDE_FORMULA"   # v.strides[d] == coef_d * prod(v.shape[j] for j in dims_d)
                                   #   payload: ((coef_d, dims_d), ...) (ir/numpy_api/layout.py)
    LAYOUT = "LAYOUT"              # v.flags.{c,f}_contiguous             payload: "C" or "F"
    LEN = "LEN"                    # len(v) == n                          payload: n
    KEYS = "KEYS"                  # list(v) == keys (in order)           payload: list of keys
    SHAPE_ENV = "SHAPE_ENV"        # a ShapeEnv fact over size sources    payload: ShapeGuardCode (sympy
                                   #   expr), Guard.sources: Symbol -> Source
    CODE_MATCH = "CODE_MATCH"      # v.__code__ is code                   payload: code object
    BUILTIN = "BUILTIN"            # name not in the globals (source)     payload: name
    ALIAS = "ALIAS"                # (v is other) == same                 payload: (other Source, same)
    PREDICATE = "PREDICATE"        # fn(v) is true                        payload: (fn, what it says)
