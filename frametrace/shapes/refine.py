"""What a new guard teaches the ShapeEnv: pure functions from a relational to a range bound
for one symbol, or to a replacement `symbol -> expression` (all over integers).

    s0 <= 30          ->  s0 in [-oo, 30]
    2*s0 + 1 > 9      ->  s0 in [5, oo]
    Eq(s0, 10)        ->  s0 in [10, 10]   (the env then replaces s0 by 10)
    Eq(s1, s0 + 3)    ->  s1 -> s0 + 3     (the newest symbol is solved for)
"""
from __future__ import annotations

import sympy

from frametrace.logs import get_logger

from . import constraints as C
from .printer import pycode
from .records import ShapeGuard, Specialization
from .records import sloc_suffix as _sloc
from .value_ranges import UNKNOWN, ValueRanges

log = get_logger("dynamic")
_TRUTH = (sympy.true, sympy.false)

_INF = float("inf")


def _ceil_div(p: int, q: int) -> int:
    return -((-p) // q)


def linear_in(diff, sym):
    """(a, rest) with diff == a*sym + rest, `a` a Python int and `rest` free of sym; else None."""
    if not diff.has(sym):
        return None
    a = diff.coeff(sym)
    if not a.is_Integer or a == 0:
        return None
    rest = sympy.expand(diff - a * sym)
    if rest.has(sym):
        return None
    return int(a), rest


def _integer_relational(rel) -> bool:
    return isinstance(rel, sympy.core.relational.Relational) and bool(
        rel.lhs.is_integer) and bool(rel.rhs.is_integer)


def range_from_relational(rel):
    """For a relational over one symbol, linear in it: (symbol, ValueRanges) it implies, or
    (symbol, ("ne", value)) for an inequation; None otherwise."""
    if not _integer_relational(rel):
        return None
    diff = sympy.expand(rel.lhs - rel.rhs)
    free = diff.free_symbols
    if len(free) != 1:
        return None
    (sym,) = free
    lin = linear_in(diff, sym)
    if lin is None or not lin[1].is_Integer:
        return None
    a, c = lin[0], int(lin[1])          # rel is:  a*sym + c  REL  0
    kind = type(rel)
    if kind is sympy.Lt:                # x < 0  <=>  x + 1 <= 0 on integers
        kind, c = sympy.Le, c + 1
    elif kind is sympy.Gt:              # x > 0  <=>  x - 1 >= 0
        kind, c = sympy.Ge, c - 1
    if kind is sympy.Eq:
        if (-c) % a:
            return sym, ValueRanges(1, 0)          # no integer solution: empty
        return sym, ValueRanges.point((-c) // a)
    if kind is sympy.Ne:
        if (-c) % a:
            return None
        return sym, ("ne", (-c) // a)
    if kind is sympy.Le:                # a*sym <= -c
        if a > 0:
            return sym, ValueRanges(-_INF, (-c) // a)
        return sym, ValueRanges(_ceil_div(c, -a), _INF)
    if kind is sympy.Ge:                # a*sym >= -c
        if a > 0:
            return sym, ValueRanges(_ceil_div(-c, a), _INF)
        return sym, ValueRanges(-_INF, c // (-a))
    return None


def solve_for_replacement(eq, order_key, allowed=lambda sym, expr: True):
    """For Eq(lhs, rhs) over several symbols: (symbol, expression) to replace it with, picking
    the newest symbol (largest order_key) whose coefficient is +-1; None if there is none."""
    if not isinstance(eq, sympy.Eq) or not _integer_relational(eq):
        return None
    diff = sympy.expand(eq.lhs - eq.rhs)
    for sym in sorted(diff.free_symbols, key=order_key, reverse=True):
        lin = linear_in(diff, sym)
        if lin is None or lin[0] not in (1, -1):
            continue
        a, rest = lin
        value = -rest if a == 1 else rest      # a*sym + rest == 0
        if allowed(sym, value):
            return sym, value
    return None


class GuardLearning:
    """Mixin of ShapeEnv: recording a guard and learning ranges / replacements from it."""

    # ---- recording guards and learning from them ------------------------------------------
    def _add_guard(self, guard) -> None:
        if guard in _TRUTH:
            assert guard is sympy.true, "a guard evaluated to False on its own hints"
            return
        if guard in self._guard_set:
            log.debug("eval %s [guard already recorded]", guard)
            return
        loc = self.current_location()
        self._guard_set.add(guard)
        self.guards.append(ShapeGuard(guard, loc))
        log.info("eval %s [guard added]%s", guard, _sloc(loc))
        self._check_constraints_for(guard, loc)
        self._refine(guard, loc)
        self.version += 1            # the fact table changed

    def _check_constraints_for(self, guard, loc) -> None:
        strict = [s for s in guard.free_symbols if s in self.constraints]
        if not strict:
            return
        names = {s: src[0] for s, src in self.symbol_sources.items() if src}
        code = pycode(guard, names)
        implied = range_from_relational(guard) if isinstance(guard, sympy.Eq) else None
        for s in sorted(strict, key=str):
            self.constraint_violations.append(
                C.violation_for_guard(self.constraints[s], guard, code, loc, implied))

    def _refine(self, guard, loc) -> None:
        if isinstance(guard, sympy.And):
            for a in guard.args:
                self._refine(a, loc)
            return
        r = range_from_relational(guard)
        if r is not None:
            sym, bound = r
            vr = self.var_to_range.get(sym, UNKNOWN)
            if isinstance(bound, tuple):            # Ne: only an endpoint can be cut off
                v = bound[1]
                bound = (ValueRanges(v + 1, _INF) if v == vr.lower else
                         ValueRanges(-_INF, v - 1) if v == vr.upper else None)
                if bound is None:
                    return
            self._absorbed.add(guard)
            self._update_range(sym, bound, loc)
            return
        rep = solve_for_replacement(guard, self._order.__getitem__, self._may_replace)
        if rep is not None:
            self._set_replacement(rep[0], rep[1], "solve", loc)

    def _may_replace(self, sym, value) -> bool:
        # a backed symbol never becomes an expression of unbacked ones (it would lose its hint)
        return self.is_unbacked(sym) or not self.free_unbacked_symbols(value)

    def _update_range(self, sym, bound: ValueRanges, loc) -> None:
        old = self.var_to_range.get(sym, UNKNOWN)
        new = old & bound
        if new == old:
            return
        if new.is_empty:
            raise ValueError(f"{sym}: the facts asserted about it are contradictory "
                             f"({old} and {bound})")
        self.var_to_range[sym] = new
        self.version += 1
        where = self._range_loc.setdefault(sym, [None, None])
        if new.lower != old.lower:
            where[0] = loc
        if new.upper != old.upper:
            where[1] = loc
        log.info("_update_var_to_range %s = %s (update)", sym, new.vr_str())
        if new.is_singleton:
            self._set_replacement(sym, sympy.Integer(new.lower), "range_refined_to_singleton", loc)

    def _set_replacement(self, sym, value, reason: str, loc) -> None:
        value = self.simplify(value)
        self.replacements = {k: v.xreplace({sym: value}) for k, v in self.replacements.items()}
        self.replacements[sym] = value
        self._replacement_loc[sym] = loc
        self.version += 1
        self.replacements_version += 1
        self._simplify_cache.clear()
        if value.is_number:
            self.var_to_range[sym] = ValueRanges.point(int(value))
        log.info("set_replacement %s = %s (%s) %s", sym, value, reason,
                 self.var_to_range.get(sym, UNKNOWN).vr_str())
        if not value.is_number:
            self._transfer_range(sym, value, loc)
        if value.is_number:
            sources = tuple(self.symbol_sources.get(sym, ()))
            why = self._spec_reason or reason
            self.specializations.append(Specialization(sym, sources, int(value), why, loc))
            if self._spec_reason == "__index__":
                log.info("specialized %s (%s) = %s by __index__ (range(), indexing)%s",
                         ", ".join(sources) or sym, sym, value, _sloc(loc))

    def _transfer_range(self, sym, value, loc) -> None:
        # sym -> a*t + c keeps what sym's range said, as a range of t (s1 = s0 + 3, s1 <= 30
        # gives s0 <= 27), so later questions about t are still decided statically
        vr = self.var_to_range.get(sym, UNKNOWN)
        for bound in ((sympy.Ge(value, vr.lower) if vr.lower != -_INF else None),
                      (sympy.Le(value, vr.upper) if vr.upper != _INF else None)):
            r = range_from_relational(bound) if bound is not None else None
            if r is not None and isinstance(r[1], ValueRanges):
                self._update_range(r[0], r[1], loc)

    def clamp_equalities(self) -> dict:
        """Size expressions with a Min/Max clamp that a guard equates to one without (slice
        lengths: `x[p:p + 1]` of a size-128 axis is `Max(0, Min(1, 128 - p))`, which guards
        equate to 1 once a reshape or a broadcast needs it). A graph's shapes can use the
        simpler side (passes/sizes.py): its guards hold whenever it runs, so the kernels see
        the static 1 that broadcasts, or the `p + 1` a mask of that length has."""
        out = {}
        for g in self.guards:
            e = self.simplify(g.expr)
            if not isinstance(e, sympy.Eq):
                continue
            a, b = e.args
            for clamp, plain in ((a, b), (b, a)):
                if clamp.has(sympy.Min, sympy.Max) and not plain.has(sympy.Min, sympy.Max) \
                        and clamp not in out:
                    out[clamp] = plain
                    break
        return out
