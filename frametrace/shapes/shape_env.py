"""ShapeEnv: the symbols of one compilation, their hints and value ranges, the replacements
learned from guards, and the guards themselves with the user code that caused each.

    env = ShapeEnv()
    n = env.create_symbol(10, "L['x'].shape[0]")     # SymInt s0, hint 10, range [2, int_oo]
    if n == 10: ...                                  # guard Eq(s0, 10); s0 is replaced by 10
    env.produce_guards()                             # [ShapeGuardCode("L['x'].shape[0] == 10")]

`evaluate_expr` is the one place a Python decision about sizes is made (see its docstring).
Guard production lives in `produce.py`, the learning rules in `refine.py`.
"""
from __future__ import annotations

import itertools

import sympy
from sympy.core.relational import Relational
from sympy.logic.boolalg import BooleanAtom, BooleanFunction

from frametrace.errors import DataDependentError
from frametrace.logs import get_logger

from . import constraints as C
from .printer import pycode
from .records import RuntimeAssert
from .records import sloc_suffix as _sloc
from .loop_index import LoopIndices
from .refine import GuardLearning
from .symbols import SymbolFactory
from .value_ranges import UNKNOWN, ValueRanges, bound_expr, decide

log = get_logger("dynamic")
_INF = float("inf")
_TRUTH = (sympy.true, sympy.false)


def _py(expr):
    """A constant sympy expression as a Python bool / int / float."""
    if expr in _TRUTH:
        return bool(expr)
    if expr.is_Integer:
        return int(expr)
    return float(expr)


def is_boolean(expr) -> bool:
    """True for sympy relationals, logic functions and true/false (Symbol is a sympy Boolean
    too, so isinstance(expr, Boolean) is not the test)."""
    return isinstance(expr, (Relational, BooleanFunction, BooleanAtom))


def _exactly_integer(expr) -> bool:
    """True if substituting integer hints into expr is exact Python integer arithmetic."""
    if not all(s.is_integer for s in expr.free_symbols) or expr.atoms(sympy.Float):
        return False
    if any(not r.is_integer for r in expr.atoms(sympy.Rational)):
        return False
    return not any(p.exp.is_negative for p in expr.atoms(sympy.Pow))


class ShapeEnv(SymbolFactory, GuardLearning, LoopIndices):
    """Symbols, hints, value ranges, replacements and guards of one compilation."""

    def __init__(self, specialize_zero_one: bool = True, duck_shape: bool = True,
                 backed_size_oblivious: bool = False):
        self.specialize_zero_one = specialize_zero_one
        self.duck_shape = duck_shape
        self.backed_size_oblivious = backed_size_oblivious
        self.hints: dict = {}              # backed Symbol -> int (float for f<N> symbols)
        self.var_to_range: dict = {}       # Symbol -> ValueRanges
        self.symbol_sources: dict = {}     # Symbol -> [source names]; first one binds it
        self.replacements: dict = {}       # Symbol -> expression (canonical: no replaced symbols)
        self.guards: list = []             # ShapeGuard, in the order they were added
        self.specializations: list = []    # Specialization records
        self.runtime_asserts: list = []    # RuntimeAssert (facts about unbacked sizes)
        self.unbacked_symbols: list = []
        self.size_like: set = set()        # unbacked symbols known to be sizes (>= 0)
        self.constraints: dict = {}        # strict Symbol -> StrictConstraint
        self.constraint_violations: list = []
        self.version = 0                   # bumped whenever replacements, ranges or facts change
        self.replacements_version = 0      # bumped whenever replacements change
        self._val_to_var: dict = {}        # hint -> symbol, for duck sizing
        self._source_to_var: dict = {}     # source -> symbol it was created as
        self._order: dict = {}             # Symbol -> sort key (newer is larger)
        self._backed_ids = itertools.count()
        self._unbacked_ids = itertools.count()
        self._float_ids = itertools.count()
        self._guard_set: set = set()
        self._absorbed: set = set()        # guards fully expressed by a symbol's range
        self._facts: dict = {}
        self._facts_version = -1
        self._simplify_cache: dict = {}
        self._static_cache: dict = {}
        self._created_loc: dict = {}
        self._replacement_loc: dict = {}
        self._range_loc: dict = {}         # Symbol -> [location of lower, of upper bound]
        self._location_provider = None
        self._spec_reason = None

    # ---- locations ------------------------------------------------------------------------
    def set_location_provider(self, fn) -> None:
        """fn() -> Location(filename, lineno, funcname, source_line) or None, called whenever a
        symbol or guard is recorded to remember the user code that caused it."""
        self._location_provider = fn

    def current_location(self):
        if self._location_provider is None:
            return None
        try:
            return self._location_provider()
        except Exception:                       # a broken provider must not break tracing
            return None

    # ---- simplification and hints ----------------------------------------------------------
    def simplify(self, expr):
        """expr with replacements applied (cached; no sympy simplify())."""
        expr = sympy.sympify(expr)
        if not self.replacements or expr.is_number or expr in _TRUTH:
            return expr
        hit = self._simplify_cache.get(expr)
        if hit is not None and hit[0] == self.replacements_version:
            return hit[1]
        out = expr.xreplace(self.replacements) if (
            expr.free_symbols & self.replacements.keys()) else expr
        self._simplify_cache[expr] = (self.replacements_version, out)
        return out

    def size_hint(self, expr, allow_none: bool = False):
        """The value of expr with every symbol at its hint (no guard). Unbacked: None if
        allow_none, else DataDependentError."""
        expr = self.simplify(expr)
        if expr.is_number or expr in _TRUTH:
            return _py(expr)
        if any(s not in self.hints for s in expr.free_symbols):
            if allow_none:
                return None
            raise self._data_dependent_error(expr, expr)
        return self._eval_hint(expr)

    def _eval_hint(self, expr):
        if _exactly_integer(expr):
            return _py(expr.xreplace({s: sympy.Integer(self.hints[s]) for s in expr.free_symbols}))
        # floats / true division: evaluate the printed Python, as the user's code would
        names = {s: f"_h{i}" for i, s in enumerate(expr.free_symbols)}
        env = {n: self.hints[s] for s, n in names.items()}
        return eval(pycode(expr, names), {"__builtins__": {"max": max, "min": min, "abs": abs,
                                                           "float": float}}, env)

    def range_of(self, sym, size_oblivious: bool = False) -> ValueRanges:
        vr = self.var_to_range.get(sym, UNKNOWN)
        if size_oblivious and (sym in self.size_like or (
                self.backed_size_oblivious and sym in self.hints)) and vr.upper >= 2:
            vr = ValueRanges(max(2, vr.lower), vr.upper)
        return vr

    def bound_sympy(self, expr, size_oblivious: bool = False) -> ValueRanges:
        """A sound interval for an integer expression from the symbols' ranges."""
        return bound_expr(self.simplify(expr), lambda s: self.range_of(s, size_oblivious))

    # ---- static reasoning --------------------------------------------------------------------
    def _fact_table(self) -> dict:
        if self._facts_version != self.version:
            facts = {}
            for e in [g.expr for g in self.guards] + [a.expr for a in self.runtime_asserts]:
                e = self.simplify(e)
                if e not in _TRUTH:
                    facts[e] = True
                    facts[self.simplify(sympy.Not(e))] = False
            self._facts, self._facts_version = facts, self.version
        return self._facts

    def maybe_evaluate_static(self, expr, size_oblivious: bool = False):
        """The value of expr if replacements, ranges and recorded facts decide it; else None.
        Never adds a guard."""
        expr = self.simplify(expr)
        if expr.is_number or expr in _TRUTH:
            return _py(expr)
        key = (expr, size_oblivious)
        hit = self._static_cache.get(key)
        if hit is not None and hit[0] == self.version:
            return hit[1]
        facts = self._fact_table()
        ranges = lambda s: self.range_of(s, size_oblivious)  # noqa: E731
        if is_boolean(expr):
            out = facts.get(expr)
            if out is None:
                out = decide(expr, ranges, facts)
        else:
            vr = bound_expr(expr, ranges) if expr.is_integer else UNKNOWN
            out = vr.lower if vr.is_singleton else None
        self._static_cache[key] = (self.version, out)
        return out

    # ---- the heart: evaluate_expr ----------------------------------------------------------
    def evaluate_expr(self, expr, *, size_oblivious: bool = False, fallback_value=None):
        """Decide expr (a sympy boolean, int or float expression) as a Python value.

        1. replacements make it a constant -> it (`[trivial]`);
        2. value ranges / recorded facts decide it -> it, no guard (`[statically known]`);
        3. it has unbacked symbols -> fallback_value if given, else DataDependentError;
        4. the hints decide it, and the fact that made the choice is recorded as a guard
           (expr, its negation, or Eq(expr, value)), which refines ranges / replacements.
        size_oblivious treats size-like symbols as >= 2 in step 2.
        """
        orig = sympy.sympify(expr)
        expr = self.simplify(orig)
        if expr.is_number or expr in _TRUTH:
            log.debug("eval %s [trivial]", expr)
            return _py(expr)
        static = self.maybe_evaluate_static(expr, size_oblivious)
        if static is not None and size_oblivious and self.backed_size_oblivious and not (
                self.free_unbacked_symbols(expr)) and self.maybe_evaluate_static(expr) is None \
                and self._eval_hint(expr) != static:
            static = None    # a size-oblivious answer that is wrong for this call: guard it
        if static is not None:
            log.debug("eval %s == %s [statically known]", expr, static)
            return static
        if self.free_unbacked_symbols(expr) and self.__dict__.get("_loop_bounds"):
            decided = self.decide_over_loop_indices(expr)     # a loop body (loop_index.py)
            if decided is not None:
                log.debug("eval %s == %s [for every loop index in range]", expr, decided)
                return decided
        if self.free_unbacked_symbols(expr):
            if fallback_value is not None:
                log.debug("eval %s == %s [data-dependent, assumed without a guard]",
                          expr, fallback_value)
                return fallback_value
            raise self._data_dependent_error(orig, expr)
        value = self._eval_hint(expr)
        if is_boolean(expr):
            guard = expr if value else self.simplify(sympy.Not(expr))
        else:
            guard = sympy.Eq(expr, sympy.Integer(value) if isinstance(value, int)
                             else sympy.Float(value))
        self._add_guard(guard)
        return value

    def guard_int(self, expr, reason: str = "int()") -> int:
        """Specialise an integer expression to its hint (guard Eq(expr, hint))."""
        self._spec_reason = reason
        try:
            return int(self.evaluate_expr(expr))
        finally:
            self._spec_reason = None

    def guard_float(self, expr) -> float:
        return float(self.evaluate_expr(expr))

    def defer_runtime_assert(self, expr, msg: str = "") -> bool:
        """ft.check(cond): assume `expr` holds. Facts about backed sizes are evaluated with a
        guard (False raises AssertionError); facts about unbacked sizes are recorded in
        `runtime_asserts` for the compiled code to check, and refine ranges/replacements."""
        expr = self.simplify(sympy.sympify(expr))
        static = self.maybe_evaluate_static(expr)
        if static is not None:
            if not static:
                raise AssertionError(msg or f"check failed: {expr} is always False")
            return True
        if not self.free_unbacked_symbols(expr):
            if not self.evaluate_expr(expr):
                raise AssertionError(msg or f"check failed: {expr}")
            return True
        loc = self.current_location()
        self.runtime_asserts.append(RuntimeAssert(expr, msg, loc))
        log.info("runtime_assert %s [guard added]%s", expr, _sloc(loc))
        self._refine(expr, loc)
        self.version += 1
        return True

    def _data_dependent_error(self, orig, expr):
        loc = self.current_location()
        like = [str(s) for s in self.free_unbacked_symbols(expr) if s in self.size_like]
        return DataDependentError(
            f"Could not guard on data-dependent expression {orig} (unhinted: {expr}).  "
            f"(Size-like symbols: {', '.join(like) or 'none'})",
            location=loc.short() if loc is not None and hasattr(loc, "short") else (
                f"{loc.filename}:{loc.lineno} in {loc.funcname}" if loc is not None else ""),
            source_line=(getattr(loc, "source_line", "") or "").strip() if loc else "")

    # ---- guards and constraints out ----------------------------------------------------------
    def produce_guards(self, sources: dict | None = None) -> list:
        """Guards as Python source over size sources (see produce.py)."""
        from .produce import produce_guards
        return produce_guards(self, sources)

    def check_constraints(self) -> None:
        """Raise ConstraintViolationError if a strict (mark_dynamic) symbol was specialised."""
        C.raise_violations(self.constraint_violations)
