"""Loop indices: symbols bound by a structured loop, known only to lie in its range.

Inside a loop body traced once for every iteration (trace/loops.py), the index of
`for i in range(start, stop, step)` is an unbacked symbol `i<N>` with no hint and the
bounds `lo <= i <= hi` (size expressions of the enclosing code). A comparison that mentions
it (a bounds check `i - 1 < x.shape[0]`, the sign test of a negative index) is decided for
every iteration at once: an expression linear in the index with a constant coefficient is
monotonic, so it holds on the whole range when it holds at both ends. The answer at the
ends may guard on the enclosing sizes, as any size comparison does; the index itself is
never guarded. Anything else (equalities, non-linear forms) is data-dependent: the caller
gets DataDependentError and the loop is unrolled or the graph breaks.

The bounds hold only inside the body (zero-trip loops never run it), so they are scoped:
`LoopIndices.enter` / `exit` around the body trace. Mixed into ShapeEnv.
"""
from __future__ import annotations

import itertools

import sympy

from .value_ranges import UNKNOWN

_RELATIONS = (sympy.StrictLessThan, sympy.LessThan, sympy.StrictGreaterThan, sympy.GreaterThan)


class LoopIndices:
    """Mixin of ShapeEnv: the loop indices in scope and deciding comparisons over them."""

    def _loop_state(self) -> dict:
        state = self.__dict__.get("_loop_bounds")
        if state is None:
            state = self.__dict__["_loop_bounds"] = {}
            self.__dict__["_loop_ids"] = itertools.count()
        return state

    def enter_loop_index(self, lo, hi, piece=False):
        """A new index symbol with `lo <= i <= hi` (sympy expressions) in scope. Its body runs
        only when lo <= hi: an enclosing index that bound depends on (`range(i)` inside
        `for i`) is narrowed to the values where it does, while this index is in scope. A
        piece of a loop split at an index condition (`piece`, trace/loop_split.py) narrows an
        enclosing bound to a Min/Max of the old and the new where sympy cannot order them."""
        bounds = self._loop_state()
        lo, hi = sympy.sympify(lo), sympy.sympify(hi)
        sym = sympy.Symbol(f"i{next(self.__dict__['_loop_ids'])}", integer=True)
        self._order[sym] = (1, len(self._order))          # unbacked: no hint, never guarded
        self.var_to_range[sym] = UNKNOWN
        self.__dict__.setdefault("_narrowed", {})[sym] = self._narrow(sympy.expand(hi - lo), piece)
        bounds[sym] = (lo, hi)
        self.version += 1
        return sym

    def data_loop_index(self):
        """The index of a loop over a range bounded by array data (`range(p[i], p[i + 1])`,
        trace/loops.py): a symbol with no bounds that the body reads only through its value, a
        Python int of the graph (indices by it are data indices, checked where they are read),
        never in a size or an index expression."""
        self._loop_state()
        sym = sympy.Symbol(f"i{next(self.__dict__['_loop_ids'])}", integer=True)
        self._order[sym] = (1, len(self._order))
        self.var_to_range[sym] = UNKNOWN
        self.version += 1
        return sym

    def exit_loop_index(self, sym) -> None:
        bounds = self._loop_state()
        bounds.pop(sym, None)
        for outer, old in self.__dict__.get("_narrowed", {}).pop(sym, {}).items():
            bounds[outer] = old
        self.version += 1

    def _narrow(self, span, merge=False) -> dict:
        """span = hi - lo >= 0 holds inside the body; if it is `c * j + rest` for the innermost
        enclosing index j in it (c = +-1, rest free of j and of indices inside j's loop), tighten
        j's bounds by it (`range(j + 1, i + 1)` inside `for j in range(i + 1)`: j <= i - 1 there),
        then the index j's new bounds depend on the same way (i >= 1 there). Returns the old bounds."""
        bounds = self._loop_state()
        span = _distribute(span)
        if isinstance(span, sympy.Min):                 # a piece of a split loop: every argument >= 0
            saved = {}
            for arg in span.args:
                for k, v in self._narrow(sympy.expand(arg), merge=True).items():
                    saved.setdefault(k, v)
            return saved
        outer = [s for s in span.free_symbols if s in bounds]
        if not outer or isinstance(span, sympy.Max):
            return {}
        j = max(outer, key=lambda s: self._order[s][1])
        c = sympy.diff(span, j)
        rest = sympy.expand(span - c * j)
        if c not in (1, -1) or j in rest.free_symbols:
            return {}
        lo, hi = bounds[j]
        new = (_tighter(lo, -rest, max, merge), hi) if c == 1 else (lo, _tighter(hi, rest, min, merge))
        bounds[j] = new
        saved = {j: (lo, hi)}
        if new != (lo, hi):                  # j's own range is not empty either: narrow outwards
            for k, v in self._narrow(sympy.expand(new[1] - new[0]), merge).items():
                saved.setdefault(k, v)
        return saved

    def is_loop_index(self, sym) -> bool:
        return sym in self._loop_state()

    def decide_over_loop_indices(self, expr, static: bool = False):
        """True/False if the comparison `expr` has that value for every index in range, else
        None (see the module doc). May add guards on the enclosing sizes, unless `static`:
        then only what ranges and recorded facts prove, no guard (a slice clamp: shapes/helpers.py)."""
        bounds = self._loop_state()
        if not any(s in bounds for s in expr.free_symbols):
            return None
        return self._decide(expr, static)

    def _decide(self, expr, static: bool = False):
        """An equality is two comparisons; a comparison with a Min/Max side (slice lengths:
        `x[i:i + k]` is `Max(0, Min(k, n - i))` long) is an and/or of comparisons of its
        arguments; each is decided over the whole range, and the answers combine only when
        they settle it for every index (three-valued: None when they do not)."""
        if isinstance(expr, sympy.Eq):
            return _both(self._decide(sympy.Le(expr.lhs, expr.rhs, evaluate=False), static),
                         self._decide(sympy.Ge(expr.lhs, expr.rhs, evaluate=False), static))
        if isinstance(expr, sympy.Ne):
            same = self._decide(sympy.Eq(expr.lhs, expr.rhs, evaluate=False), static)
            return None if same is None else not same
        if isinstance(expr, _RELATIONS):
            for lhs, rhs, rel in ((expr.lhs, expr.rhs, type(expr)), (expr.rhs, expr.lhs, _FLIP.get(type(expr)))):
                if isinstance(lhs, (sympy.Min, sympy.Max)):
                    small = rel in (sympy.StrictLessThan, sympy.LessThan)       # Min <= r: some arg is
                    combine = _any if small == isinstance(lhs, sympy.Min) else _all
                    # what ranges prove first: a part that settles it spares the others' guards
                    parts = [self._decide(rel(a, rhs, evaluate=False), True) for a in lhs.args]
                    answer = combine(parts)
                    if answer is not None or static:
                        return answer
                    return combine([p if p is not None else self._decide(rel(a, rhs, evaluate=False))
                                    for p, a in zip(parts, lhs.args)])
        return self._decide_linear(expr, static)

    def _decide_linear(self, expr, static: bool = False):
        bounds = self._loop_state()
        syms = [s for s in expr.free_symbols if s in bounds]
        if not isinstance(expr, _RELATIONS):
            return None
        if not syms:
            return self._static(expr) if static else bool(self.evaluate_expr(expr))
        diff = sympy.expand(expr.lhs - expr.rhs)
        if not diff.free_symbols.isdisjoint(self.replacements):
            diff = sympy.expand(self.simplify(diff))
        cases = [diff]
        answers = set()
        for sym in sorted(syms, key=lambda s: -self._order[s][1]):   # innermost first
            cases = self._split_ends(cases, type(expr), static, answers)
            if len(answers) > 1 or None in answers:
                return None
            for case in cases:
                slope = sympy.diff(case, sym)
                if slope.free_symbols or not slope.is_number:
                    return None                                        # not linear with a constant slope
            lo, hi = bounds[sym]
            cases = [sympy.expand(c.xreplace({sym: end})) for c in cases for end in (lo, hi)]
        cases = self._split_ends(cases, type(expr), static, answers)
        for case in cases:       # an enclosing index left in a bound is decided over its own range
            if static:
                answers.add(self._decide(type(expr)(case, 0), True) if any(
                    s in bounds for s in case.free_symbols) else self._static(type(expr)(case, 0)))
            else:                # what ranges prove needs no guard (a piece of a split loop)
                known = None if any(s in bounds for s in case.free_symbols) else self._static(type(expr)(case, 0))
                answers.add(known if known is not None else bool(self.evaluate_expr(type(expr)(case, 0))))
            if len(answers) > 1 or None in answers:
                return None
        if not answers:
            return None
        return answers.pop() if len(answers) == 1 else None

    def _split_ends(self, cases, rel, static, answers):
        """Cases whose value at an end is a Min/Max (a loop split at an index condition runs
        over `range(a, Min(n, p))`, trace/loop_split.py) are decided as comparisons of its
        arguments (answers added to `answers`); the linear ones are returned."""
        linear = []
        for case in cases:
            case = _distribute(case)
            if isinstance(case, (sympy.Min, sympy.Max)):
                answers.add(self._decide(rel(case, 0, evaluate=False), static))
            else:
                linear.append(case)
        return linear


    def _static(self, expr):
        """True/False when ranges and recorded facts decide `expr` (a comparison with 0 at one
        end of the range), else None; no guard. The body runs only when every range in scope is
        non-empty (span = hi - lo >= 0), so `c >= 0` holds when `c - span >= 0` does and
        `c <= 0` when `c + span <= 0` (`8 <= n` at i = 0 of range(n - 7): `8 - n + (n - 8) <= 0`)."""
        value = self.maybe_evaluate_static(expr)
        if value is not None or not isinstance(expr, _RELATIONS):
            return None if value is None else bool(value)
        c = sympy.expand(expr.lhs - expr.rhs)
        for rel, answer in ((type(expr), True), (_NEGATE[type(expr)], False)):
            sign = -1 if rel in (sympy.StrictGreaterThan, sympy.GreaterThan) else 1
            for span in self._spans():
                if self.maybe_evaluate_static(rel(sympy.expand(c + sign * span), 0)) is True:
                    return answer
        return None


    def _spans(self):
        """hi - lo of every range in scope, each >= 0 where the body runs; a span that is a
        Min (a piece of a split loop) gives each of its arguments."""
        for lo, hi in list(self._loop_state().values()):
            span = _distribute(sympy.expand(hi - lo))
            yield from (span.args if isinstance(span, sympy.Min) else (span,))


_NEGATE = {sympy.StrictLessThan: sympy.GreaterThan, sympy.LessThan: sympy.StrictGreaterThan,
           sympy.StrictGreaterThan: sympy.LessThan, sympy.GreaterThan: sympy.StrictLessThan}
_FLIP = {sympy.StrictLessThan: sympy.StrictGreaterThan, sympy.LessThan: sympy.GreaterThan,
         sympy.StrictGreaterThan: sympy.StrictLessThan, sympy.GreaterThan: sympy.LessThan}


def _distribute(e):
    """`c * Min(a, b) + r` (c a number) as `Min(c * a + r, c * b + r)` (Max where c < 0), so a
    comparison of it with 0 has a Min/Max side `_decide` splits; anything else as it is."""
    if not isinstance(e, sympy.Add):
        return e
    for term in e.args:
        coeff, rest = term.as_coeff_Mul()
        if isinstance(rest, (sympy.Min, sympy.Max)) and coeff.is_number and coeff != 0:
            others = e - term
            flip = coeff < 0
            kind = type(rest) if not flip else (sympy.Max if isinstance(rest, sympy.Min) else sympy.Min)
            return kind(*(_distribute(sympy.expand(coeff * a + others)) for a in rest.args), evaluate=False)
    return e


def _all(answers):
    """Every part holds for every index (True), some part fails for every index (False)."""
    return False if False in answers else True if all(a is True for a in answers) else None


def _any(answers):
    return True if True in answers else False if all(a is False for a in answers) else None


def _both(a, b):
    return _all([a, b])


def _tighter(old, new, pick, merge=False):
    """The tighter of two bounds when sympy can order them, else both as a Min/Max when the new
    one comes from a piece of a split loop (its own bounds hold Min/Max: `E <= NW - 2` inside
    range(Max(0, E + 1), NW), trace/loop_split.py), else the old one (still sound)."""
    diff = sympy.expand(new - old)
    if diff.is_number:
        return new if pick(0, diff) == diff and diff != 0 else old
    if merge:
        return (sympy.Min if pick is min else sympy.Max)(old, new)
    return old

