"""Guard record -> the Python condition a compiled entry evaluates (trace/entry.py joins them).

Frame locals are parameters of the check function, globals go through `___G`, and objects a
guard compares with are bound names (`Guard.ref`, in the entry's namespace)."""
from __future__ import annotations

from csrc_free_runtime import original_function

from ..shapes.printer import guard_source
from .exact import needs_bits
from .kinds import GuardKind as K

SAME_BITS = "___same_bits"          # exact.same_bits, bound by the builder when a guard needs it
CODE_OF = "___code_of"              # code_of, bound with every CODE_MATCH guard


def code_of(fn):
    """The user's code of `fn`, also while the global hook has swapped in its trampoline."""
    return original_function(fn).__code__


def guard_code(g) -> str:
    k, src = g.kind, g.source
    if k is K.SHAPE_ENV:
        return shape_env_code(g)
    c = src.code
    if k is K.TYPE_MATCH:
        return f"type({c}) is {g.ref}"
    if k is K.ID_MATCH:
        return f"{c} is {g.ref}"
    if k is K.EQUALS_MATCH:
        return _equals_code(c, g.payload, g.ref)
    if k is K.DTYPE:
        return f"{c}.dtype == {g.ref}"
    if k is K.NDIM:
        return f"{c}.ndim == {g.payload}"
    if k is K.SIZE:
        return f"{c} == {g.payload}"
    if k is K.STRIDES:
        return f"{c}.strides == {g.payload!r}"
    if k is K.STRIDE_FORMULA:
        return f"{c}.strides == ({''.join(_stride_term(c, t) + ', ' for t in g.payload)})"
    if k is K.LAYOUT:
        return f"{c}.flags.{'c' if g.payload == 'C' else 'f'}_contiguous"
    if k is K.LEN:
        return f"len({c}) == {g.payload}"
    if k is K.KEYS:
        return f"list({c}) == {g.ref}"
    if k is K.CODE_MATCH:
        return f"({c}.__code__ is {g.ref} or {CODE_OF}({c}) is {g.ref})"     # (hooked: a trampoline)
    if k is K.BUILTIN:
        return f"{g.payload!r} not in {c}"
    if k is K.ALIAS:
        other, same = g.payload
        return f"({c} is {other.code}) == {same}"
    if k is K.PREDICATE:
        return f"{g.ref}({c})"
    raise AssertionError(f"guard kind {k}")


def shape_env_code(g) -> str:
    """A SHAPE_ENV record's condition: its sympy expression printed over its Sources' code
    (exact integer semantics: `//`, `%`, `min`/`max`, comparisons; shapes/printer.py)."""
    sg = g.payload
    return guard_source(sg.expr, sg.kind, {s: src.code for s, src in g.sources.items()})


def _equals_code(c: str, value, ref) -> str:
    t = type(value)
    if t is float and value != value:
        return f"{c} != {c}"
    if needs_bits(value):
        return f"{SAME_BITS}({c}, {ref})"
    if t in (int, bool, str, type(None), float, complex, bytes):
        return f"{c} == {value!r}"
    return f"{c} == {ref}"


def _stride_term(c: str, term) -> str:
    coef, dims = term
    return "*".join([str(coef)] + [f"{c}.shape[{j}]" for j in dims])
