"""One registry of NumPy ops: each op's meta rule (shape, dtype) and NumPy reference, side by side.

An op is registered once:

    @register("add", kind="elementwise", ufunc=np.add)
    def add_meta(a, b): ...                  # FakeArray / scalars in -> FakeArray out

    (the NumPy reference defaults to the ufunc; pass `ref=` otherwise)

Meta rules are written as ordinary Python over shapes whose entries are `int` or
`frametrace.shapes.SymInt`; comparisons of sizes go through the ShapeEnv (and become guards)
without the rule knowing. Backends use `OpDef.kind` to schedule and `OpDef.ref` as the
reference (and fallback) implementation; they never re-derive shapes.

Op catalog (args are positional Node/scalar arguments; attrs are keyword attributes):

  elementwise   unary ufuncs (x); binary ufuncs (a, b); where(cond, a, b); clip(x, lo, hi);
                astype(x; dtype)
  reduction     sum/prod/max/min/mean/var/std/any/all/argmax/argmin
                (x; axis: tuple[int] | None (normalised, non-negative), keepdims: bool,
                 dtype: np.dtype | None, ddof (var/std))
                argmax/argmin take axis: int | None
  scan          cumsum/cumprod (x; axis: int | None (None = over the flattened array), dtype)
  view          getitem(x; index: tuple of int|expr / IndexSlice / None (newaxis), no Ellipsis,
                         one entry per consumed dim), transpose(x; axes), reshape(x; shape),
                expand_dims(x; axis: tuple), squeeze(x; axis: tuple), broadcast_to(x; shape)
  copy          concatenate(*xs; axis), stack(*xs; axis), copy(x; order "K" (default) | "C" | "A")
  creation      zeros/ones/empty(; shape, dtype), full(fill; shape, dtype),
                arange(start, stop, step; dtype)
  matmul        matmul(a, b), dot(a, b)
  mutation      assign(dst, src): copy src (broadcast, unsafe cast) into the buffer of dst,
                a view of an input or of an earlier value; no result value;
                index_put / ufunc_at (x[idx] = v, np.add.at): see ops/advanced_index.py
  gather        mask_select, argwhere, take, unique, index (advanced indexing)
  opaque        a NumPy function called as is (np.linalg.*, np.sort, ...): ops/opaque.py

`may_raise(node)` says whether a node can raise at run time for some input values
(`int_array ** negative_int` is a ValueError in NumPy, `x[idx]` an IndexError): such a node
is kept by dead-code elimination even when its value is unused, so the compiled function
raises where NumPy does. Mutations are always kept.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

KINDS = ("elementwise", "reduction", "scan", "view", "copy", "creation", "matmul",
         "mutation", "gather", "opaque", "other")


@dataclass(frozen=True)
class OpDef:
    name: str
    kind: str
    meta: Callable          # (*args, **attrs) -> FakeArray | None
    ref: Callable           # (*numpy args, **attrs) -> np.ndarray | np.generic | None
    ufunc: np.ufunc | None = None
    doc: str = ""
    may_raise: Callable | None = None   # (node) -> bool: may raise at run time (see module doc)
    aliases: bool = False    # the result may share memory with an operand (NumPy returns a view,
                             # as np.real and np.diagonal do): the builder refuses writes through
                             # it (they are graph breaks) and the scheduler treats it as an input


OPS: dict[str, OpDef] = {}


def register(name: str, *, kind: str, ufunc: np.ufunc | None = None, ref: Callable | None = None,
             may_raise: Callable | None = None, aliases: bool = False):
    """Decorator registering `meta` for op `name`; the reference defaults to the ufunc.
    `may_raise(node) -> bool`: whether that node may raise at run time (None: never)."""
    assert kind in KINDS, kind

    def deco(meta):
        if name in OPS:
            raise ValueError(f"op {name!r} registered twice")
        impl = ref if ref is not None else ufunc
        if impl is None:
            raise ValueError(f"op {name!r} needs a NumPy reference")
        OPS[name] = OpDef(name, kind, meta, impl, ufunc, (meta.__doc__ or "").strip(), may_raise, aliases)
        return meta
    return deco


def may_raise(node) -> bool:
    """Whether running `node` can raise (or, for a mutation, has an effect) at run time."""
    op = get_op(node.op)
    return op.kind == "mutation" or (op.may_raise is not None and bool(op.may_raise(node)))


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}") from None
