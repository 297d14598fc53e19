"""produce_guards: everything a ShapeEnv assumed, as Python source over size sources.

Order (a guard function should evaluate them in order and stop at the first False):
  1. "equality"       every further source of a symbol equals its first source (duck sizing);
     "specialization" every source of a replaced symbol equals its replacement
                      (`L['x'].shape[0] == 10`, `L['y'].shape[0] == L['x'].shape[0] + 3`);
  2. "range"          value-range bounds of each backed symbol (`2 <= L['x'].shape[0]`,
                      `L['x'].shape[0] <= 64`), so that later guards never divide by zero;
  3. "guard"          every recorded guard not already expressed above, replacements applied.
Unbacked symbols get no guards (their facts are `ShapeEnv.runtime_asserts`).
"""
from __future__ import annotations

import sympy

from .printer import guard_source
from .records import ShapeGuardCode

_INF = float("inf")


def produce_guards(env, sources: dict | None = None) -> list:
    """[ShapeGuardCode] for env; `sources` (Symbol -> [source names]) overrides the sources
    recorded by create_symbol for the symbols it names.

    Each record is a sympy expression plus `names`: Symbol -> the one source name it reads. A
    fact about a further source of a symbol (duck sizing) reads that source through an alias
    symbol (`s0@1`), so the expression alone says which source each side reads."""
    srcs = {s: list(v) for s, v in env.symbol_sources.items()}
    if sources:
        srcs.update({s: list(v) for s, v in sources.items()})
    first = {s: v[0] for s, v in srcs.items() if v}
    out, seen = [], set()

    def emit(expr, loc, kind, names=None):
        names = {s: (names or first)[s] for s in expr.free_symbols if s in (names or first)}
        code = guard_source(expr, kind, names)
        if code not in seen:
            seen.add(code)
            out.append(ShapeGuardCode(code, expr, loc, kind, names))

    backed = [(s, v) for s, v in srcs.items() if v and not env.is_unbacked(s)]
    for s, src in backed:
        value = env.simplify(s)
        if value == s:
            for i, other in enumerate(src[1:], 1):
                alias = _alias(s, i)
                emit(sympy.Eq(s, alias, evaluate=False), env._created_loc.get(s), "equality",
                     {**first, alias: other})
        else:
            for i, one in enumerate(src):
                lhs = s if i == 0 else _alias(s, i)
                emit(sympy.Eq(lhs, value, evaluate=False), env._replacement_loc.get(s), "specialization",
                     {**first, lhs: one})
    for s, _ in backed:
        _emit_range(env, s, emit)
    for g in env.guards:
        if g.expr in env._absorbed:
            continue
        e = env.simplify(g.expr)
        if e is sympy.true:
            continue
        if e is sympy.false:
            raise AssertionError(f"guard {g.expr} became False after replacements")
        emit(e, g.location, "guard")
    return out


def _alias(s, i: int):
    """A symbol standing for source `i` (> 0) of symbol `s` in the facts relating its sources."""
    return sympy.Symbol(f"{s.name}@{i}", integer=True)


def _emit_range(env, s, emit) -> None:
    vr = env.var_to_range.get(s)
    value = env.simplify(s)
    if vr is None or value.is_number:
        return
    if value != s and env.bound_sympy(value).issubset(vr):
        return                                  # implied by the replacement's own ranges
    where = env._range_loc.get(s, [None, None])
    lower_trivial = vr.lower == -_INF or (vr.lower <= 0 and s.is_nonnegative)
    if not lower_trivial:
        emit(sympy.Le(_bound(vr.lower), s, evaluate=False), where[0] or env._created_loc.get(s), "range")
    if vr.upper != _INF:
        emit(sympy.Le(s, _bound(vr.upper), evaluate=False), where[1] or env._created_loc.get(s), "range")


def _bound(b):
    """A finite value-range bound as a sympy number (ints stay exact)."""
    return sympy.Integer(b) if isinstance(b, int) else sympy.sympify(b)
