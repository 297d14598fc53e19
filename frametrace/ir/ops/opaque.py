"""Opaque NumPy calls: graph nodes that run NumPy's own function (LAPACK, sorting, hashing).

An opaque op is registered once with `register_opaque(name, fn, shape_rule)`. Its meta rule
states the result's shape (symbolic sizes, or an unbacked size for data-dependent results)
and takes the dtype and scalar-ness from a probe of `fn` on one-element stand-ins (see
`promotion.probe`); its execution calls `fn` itself, from the generated wrapper of either
backend, like a BLAS matmul. No graph break: values before and after it fuse as usual.

Canonical form:
  <name>(*arrays; **attrs)   arrays: array nodes (or weak scalars); attrs: constants (ints,
                             floats, strings, tuples, None); `fn(*arrays, **attrs)` is the
                             result, or `fn(...)[item]` for a function returning a tuple.
The shape rule is `rule(*metas, **attrs) -> shape tuple` (the dtype from the probe) or a
`FakeArray` (shape and dtype both stated, when a one-element probe is not meaningful). Every
opaque op may raise at run time (LinAlgError, ValueError on data): nodes are never dropped.
"""
from __future__ import annotations

from typing import Callable

from ..fake import FakeArray, FakeScalar
from ..registry import NumpyCall, register
from .promotion import fake_like, probe

OPAQUE: dict[str, Callable] = {}      # op name -> the NumPy function it calls


def _always(node) -> bool:
    return True


def register_opaque(name: str, fn: Callable, shape_rule: Callable, *, item: int | None = None,
                    pytype: type | None = None, kind: str = "opaque", doc: str = "",
                    aliases: bool = False, probe_result: bool = True):
    """Register op `name` calling `fn` (its result's `[item]` for tuple results).

    `pytype`: fn returns a Python scalar of this type (np.allclose -> bool). `kind="gather"`
    for a result with an unbacked size: its `size` attribute names the symbol, bound from the
    result's shape at run time (backends do not pass it). `aliases`: see registry.OpDef.
    Trailing array arguments named in the `kw_arrays` attribute are passed to fn by keyword
    (np.average(a, weights=w)). `probe_result=False` (with `pytype`): fn is not run on
    one-element stand-ins at trace time (math.atanh(1) would raise); `shape_rule` checks the
    operands."""

    def ref(*args, kw_arrays=(), size=None, **attrs):
        n = len(args) - len(kw_arrays)
        value = fn(*args[:n], **dict(zip(kw_arrays, args[n:])), **attrs)
        return value if item is None else value[item]

    def meta(*args, kw_arrays=(), **attrs):
        n = len(args) - len(kw_arrays)
        pos, kw = args[:n], {**dict(zip(kw_arrays, args[n:])), **attrs}
        stated = shape_rule(*pos, **kw)
        kw.pop("size", None)
        if pytype is not None:
            if probe_result:
                probe(fn, *pos, **kw)
            return FakeScalar(pytype)
        if isinstance(stated, FakeArray):
            return stated
        return fake_like(probe(ref, *pos, **kw), stated)

    ref.__name__ = meta.__name__ = name.replace(".", "_")
    ref.__qualname__ = f"opaque_{ref.__name__}"
    meta.__doc__ = doc or f"np.{getattr(fn, '__name__', name)} (an opaque NumPy call)"
    register(name, kind=kind, ref=ref, may_raise=_always, aliases=aliases,
             lowering=NumpyCall(meta.__doc__, opaque=True))(meta)
    OPAQUE[name] = fn
    return ref
