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

from .printer import pycode
from .records import ShapeGuardCode
from .value_ranges import fmt_bound

_INF = float("inf")


def produce_guards(env, sources: dict | None = None) -> list:
    """[ShapeGuardCode] for env; `sources` (Symbol -> [source names]) overrides the sources
    recorded by create_symbol for the symbols it names."""
    srcs = {s: list(v) for s, v in env.symbol_sources.items()}
    if sources:
        srcs.update({s: list(v) for s, v in sources.items()})
    names = {s: v[0] for s, v in srcs.items() if v}
    out, seen = [], set()

    def emit(code, expr, loc, kind):
        if code not in seen:
            seen.add(code)
            out.append(ShapeGuardCode(code, expr, loc, kind))

    backed = [(s, v) for s, v in srcs.items() if v and not env.is_unbacked(s)]
    for s, src in backed:
        value = env.simplify(s)
        if value == s:
            for other in src[1:]:
                emit(f"{src[0]} == {other}", sympy.Eq(s, s, evaluate=False),
                     env._created_loc.get(s), "equality")
        else:
            rhs = pycode(value, names)
            for one in src:
                emit(f"{one} == {rhs}", sympy.Eq(s, value, evaluate=False),
                     env._replacement_loc.get(s), "specialization")
    for s, src in backed:
        _emit_range(env, s, src[0], emit)
    for g in env.guards:
        if g.expr in env._absorbed:
            continue
        e = env.simplify(g.expr)
        if e is sympy.true:
            continue
        if e is sympy.false:
            raise AssertionError(f"guard {g.expr} became False after replacements")
        emit(pycode(e, names), e, g.location, "guard")
    return out


def _emit_range(env, s, src: str, emit) -> None:
    vr = env.var_to_range.get(s)
    value = env.simplify(s)
    if vr is None or value.is_number:
        return
    if value != s and env.bound_sympy(value).issubset(vr):
        return                                  # implied by the replacement's own ranges
    where = env._range_loc.get(s, [None, None])
    lower_trivial = vr.lower == -_INF or (vr.lower <= 0 and s.is_nonnegative)
    if not lower_trivial:
        emit(f"{fmt_bound(vr.lower)} <= {src}", sympy.Ge(s, vr.lower, evaluate=False),
             where[0] or env._created_loc.get(s), "range")
    if vr.upper != _INF:
        emit(f"{src} <= {fmt_bound(vr.upper)}", sympy.Le(s, vr.upper, evaluate=False),
             where[1] or env._created_loc.get(s), "range")
