"""Guard record -> the text users read in logs, explain() and recompile reasons
(`L['x'].shape[0] == 10`, `type(L['s']) is numpy.float64`)."""
from __future__ import annotations

import builtins

from ..shapes.printer import guard_source
from .kinds import GuardKind as K


def guard_text(g) -> str:
    k, src = g.kind, g.source
    if k is K.SHAPE_ENV:
        sg = g.payload
        return guard_source(sg.expr, sg.kind, {s: src.name for s, src in g.sources.items()})
    n = src.name
    if k is K.TYPE_MATCH:
        return f"type({n}) is {qualname(g.payload)}"
    if k is K.ID_MATCH:
        return f"{n} is {describe(g.payload)}"
    if k is K.EQUALS_MATCH:
        value = g.payload
        if type(value) is float and value != value:
            return f"{n} is nan"
        return f"{n} == {value!r}"
    if k is K.DTYPE:
        return f"{n}.dtype == {g.payload.name}"
    if k is K.NDIM:
        return f"{n}.ndim == {g.payload}"
    if k is K.SIZE:
        return f"{n} == {g.payload}"
    if k is K.STRIDES:
        return f"{n}.strides == {g.payload!r}"
    if k is K.STRIDE_FORMULA:
        terms = ("*".join([str(c)] + [f"shape[{j}]" for j in dims]) for c, dims in g.payload)
        return f"{n}.strides == ({', '.join(terms)}{',' if len(g.payload) == 1 else ''})"
    if k is K.LAYOUT:
        return f"{n} is {g.payload}-contiguous"
    if k is K.LEN:
        return f"len({n}) == {g.payload}"
    if k is K.KEYS:
        return f"list({n}) == {g.payload!r}"
    if k is K.CODE_MATCH:
        code = g.payload
        return f"{n}.__code__ is <code {code.co_qualname if hasattr(code, 'co_qualname') else code.co_name}>"
    if k is K.BUILTIN:
        return f"{g.payload!r} not in {n}"
    if k is K.ALIAS:
        other, same = g.payload
        return f"({n} is {other.name}) == {same}"
    if k is K.PREDICATE:
        return f"{n} {g.payload[1]}"
    raise AssertionError(f"guard kind {k}")


def qualname(t) -> str:
    module = getattr(t, "__module__", "")
    return f"{module}.{t.__qualname__}" if module and module != "builtins" else t.__qualname__


def describe(value) -> str:
    if value is None:
        return "None"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return f"<{type(value).__name__} {name}>" if name else f"<{type(value).__name__} object>"


_PLAIN = (int, float, bool, complex, str, bytes, type(None))


def value_text(value, limit: int = 40) -> str:
    """A value as break and recompile reasons name it: literals by value (shortened), everything
    else by type and name (`str.zfill`, `float.is_integer`, `class collections.OrderedDict`,
    `Foo object`), never by address, so that equal causes read the same."""
    if type(value) in _PLAIN or (type(value) in (tuple, list) and all(type(v) in _PLAIN for v in value)):
        text = repr(value)
        return text if len(text) <= limit else text[:limit - 3] + "..."
    if isinstance(value, type):
        return f"class {qualname(value)}"
    owner = getattr(value, "__self__", None)
    name = getattr(value, "__name__", None)
    if name is not None and owner is not None and not isinstance(owner, type(builtins)):
        cls = owner if isinstance(owner, type) else type(owner)
        return f"{cls.__qualname__}.{name}"             # a bound method: float.is_integer
    if name is not None and callable(value):
        module = getattr(value, "__module__", None) or getattr(owner, "__name__", None)
        qual = getattr(value, "__qualname__", name)
        return f"{module}.{qual}" if module and module != "builtins" else qual
    return f"{type(value).__qualname__} object"
