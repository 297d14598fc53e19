"""Symbol creation policy of the ShapeEnv: static, 0/1 specialisation, duck sizing, new
backed symbols s<N> with value ranges, float symbols f<N>, unbacked symbols u<N>."""
from __future__ import annotations

import sympy

from frametrace.logs import get_logger

from . import constraints as C
from .records import sloc_suffix as _sloc
from .symint import SymFloat, SymInt, wrap
from .value_ranges import UNKNOWN, ValueRanges, int_oo

log = get_logger("dynamic")
_INF = float("inf")
INT64 = ValueRanges(-2 ** 63, 2 ** 63 - 1)     # what a compiled kernel's int argument can hold


class SymbolFactory:
    """Mixin of ShapeEnv: creating symbols (state lives in ShapeEnv.__init__)."""

    # ---- symbols ---------------------------------------------------------------------------
    def create_symbol(self, hint: int, source: str, *, dynamic: str = "dynamic", min=None,
                      max=None, strict: bool = False, positive: bool = True, duck=None,
                      machine_int: bool = False, zero_one: bool = True):
        """A SymInt for the size (or int argument) `source` whose value now is `hint`.

        dynamic: "static" -> the int hint; "unbacked" -> an unbacked symbol bound to source;
        "dynamic" -> 0/1 specialisation, duck sizing, or a new symbol s<N> in [2, int_oo]
        (lower 0 without 0/1 specialisation) narrowed by min/max. strict=True (mark_dynamic)
        makes any later specialisation a constraint violation. positive=False (or a negative
        hint) gives an unbounded integer, e.g. for int arguments that may be negative.
        machine_int=True (a Python int argument): compiled code holds the value in an int64,
        so the symbol's range is also bounded by int64 (guarded: a bigger int misses), and a
        hint outside int64 is specialised (NumPy's answer for `x * 2**64` depends on it).
        zero_one=False: no 0/1 specialisation (range from 0 for a size): an int input or a
        list's length, specialised only where the trace branches on it.
        """
        hint = int(hint)
        if dynamic == "static":
            return hint
        if machine_int and hint not in INT64:
            log.debug("create_symbol %s = %s specialized (outside int64)", source, hint)
            return hint
        if dynamic == "unbacked":
            return self.create_unbacked_symint(lower=0 if positive else -_INF, source=source)
        assert dynamic == "dynamic", dynamic
        known = self._source_to_var.get(source)
        if known is not None and self.hints.get(known) == hint:
            return wrap(known, "int", self)         # the same size asked for twice
        loc = self.current_location()
        size = positive and hint >= 0
        if zero_one and self.specialize_zero_one and not self.backed_size_oblivious and hint in (0, 1):
            log.debug("create_symbol %s = %s specialized (0/1 specialization)", source, hint)
            if strict:
                self.constraint_violations.append(C.specialized_to_constant(
                    source, hint, loc, why="0/1 specialization"))
            return hint
        duck = self.duck_shape if duck is None else duck
        plain = size and not strict and min is None and max is None
        if duck and plain and hint in self._val_to_var:
            sym = self._val_to_var[hint]
            if source not in self.symbol_sources[sym]:
                self.symbol_sources[sym].append(source)
            self._source_to_var[source] = sym
            log.info("create_symbol %s duck sized %s", sym, source)
            return wrap(sym, "int", self)
        lower = (2 if zero_one and self.specialize_zero_one and not self.backed_size_oblivious else 0) \
            if size else -_INF
        vr = ValueRanges(lower, _INF)
        if machine_int:
            vr = vr & INT64
        if min is not None or max is not None:
            user = ValueRanges(-_INF if min is None else min, _INF if max is None else max)
            if hint in user:
                vr = vr & user
            elif strict:
                self.constraint_violations.append(C.Violation(source, (
                    f"You marked {source} as dynamic with range {user} but its size is {hint}. "
                    "Fix the min/max of mark_dynamic, or use maybe_mark_dynamic."), loc))
            else:
                log.warning("ignoring min/max %s for %s: its size is %s", user, source, hint)
        assumptions = {"positive": True} if vr.lower >= 1 else (
            {"nonnegative": True} if vr.lower >= 0 else {})
        sym = sympy.Symbol(f"s{next(self._backed_ids)}", integer=True, **assumptions)
        self._order[sym] = (0, len(self._order))
        self.hints[sym] = hint
        self.var_to_range[sym] = vr
        self.symbol_sources[sym] = [source]
        self._source_to_var[source] = sym
        self._created_loc[sym] = loc
        if strict:
            self.constraints[sym] = C.StrictConstraint(sym, source, vr)
        if duck and plain:
            self._val_to_var[hint] = sym
        log.info("create_symbol %s = %s for %s %s%s", sym, hint, source, vr, _sloc(loc))
        return SymInt(sym, self)

    def create_symfloat(self, hint: float, source: str):
        """A backed SymFloat f<N> for a float argument whose value Python control flow needs
        (comparisons guard on it; no ranges, no duck sizing, no specialisation by range)."""
        sym = sympy.Symbol(f"f{next(self._float_ids)}", real=True)
        loc = self.current_location()
        self._order[sym] = (0, len(self._order))
        self.hints[sym] = float(hint)
        self.symbol_sources[sym] = [source]
        self._created_loc[sym] = loc
        log.info("create_symbol %s = %s for %s%s", sym, hint, source, _sloc(loc))
        return SymFloat(sym, self)

    def create_unbacked_symint(self, lower=0, upper=int_oo, source=None, size_like=None):
        """A SymInt u<N> with no hint (a data-dependent size or value) in [lower, upper].
        size_like (default: lower >= 0) lets size-oblivious reasoning treat it as >= 2."""
        vr = ValueRanges(lower, upper)
        assumptions = {"nonnegative": True} if vr.lower >= 0 else {}
        sym = sympy.Symbol(f"u{next(self._unbacked_ids)}", integer=True, **assumptions)
        self._register_unbacked(sym, vr, source)
        if size_like if size_like is not None else vr.lower >= 0:
            self.size_like.add(sym)
        return SymInt(sym, self)

    def create_unbacked_symfloat(self, source=None):
        """A SymFloat with no hint (e.g. `.item()` of a float array)."""
        sym = sympy.Symbol(f"uf{next(self._unbacked_ids)}", real=True)
        self._register_unbacked(sym, UNKNOWN, source)
        return SymFloat(sym, self)

    def _register_unbacked(self, sym, vr, source):
        loc = self.current_location()
        self._order[sym] = (1, len(self._order))
        self.var_to_range[sym] = vr
        self.unbacked_symbols.append(sym)
        self._created_loc[sym] = loc
        if source is not None:
            self.symbol_sources[sym] = [source]
        log.info("create_unbacked_symint %s %s%s", sym, vr, _sloc(loc))

    def is_unbacked(self, sym) -> bool:
        return sym in self._order and self._order[sym][0] == 1

    def free_unbacked_symbols(self, expr) -> list:
        return sorted((s for s in expr.free_symbols if self.is_unbacked(s)), key=str)
