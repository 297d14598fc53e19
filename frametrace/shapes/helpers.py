"""Size helpers that work on plain Python values and on Sym values alike, so meta rules are
written once:

    sym_max(a, b)                 max without a guard (sympy Max when symbolic)
    statically_known_true(c)      True only if provable; never adds a guard
    guard_or_false(c)             decide; unbacked and undecidable -> False, no guard
    guard_size_oblivious(c)       decide treating size-like symbols as >= 2 (broadcasting)
"""
from __future__ import annotations

import sympy

from .minmax import make_max, make_min
from .symint import SymBool, SymFloat, SymInt, SymNodeBase, _operand, wrap


def is_symbolic(x) -> bool:
    """True for a Sym value whose expression is not (yet) a constant."""
    return isinstance(x, SymNodeBase) and x.maybe_as_constant() is None


def _env_of(*xs):
    for x in xs:
        if isinstance(x, SymNodeBase):
            return x.env
    return None


def _minmax(a, b, fn, pick):
    env = _env_of(a, b)
    if env is None:
        return pick(a, b)
    oa, ob = _operand(a), _operand(b)
    if oa is None or ob is None:
        raise TypeError(f"sym_max/sym_min of {type(a).__name__} and {type(b).__name__}")
    kind = "float" if "float" in (oa[1], ob[1]) else "int"
    if kind == "int":       # flat, and no guard: when ranges order them, one operand (minmax.py)
        make = make_max if pick is max else make_min
        ea, eb = env.simplify(oa[0]), env.simplify(ob[0])
        e = make([ea, eb], env.bound_sympy)
        if e not in (ea, eb):
            e = _over_loop_range(env, ea, eb, pick) or e
        return a if e == ea else b if e == eb else wrap(e, kind, env)
    first = env.maybe_evaluate_static(sympy.Ge(oa[0], ob[0]) if pick is max
                                      else sympy.Le(oa[0], ob[0]))
    if first is not None:
        return a if first else b
    return wrap(fn(oa[0], ob[0]), kind, env)


def sym_max(a, b):
    """max(a, b) without a guard: sympy Max when neither is known to be larger."""
    return _minmax(a, b, sympy.Max, max)


def sym_min(a, b):
    """min(a, b) without a guard."""
    return _minmax(a, b, sympy.Min, min)


def sym_not(x):
    """Logical not of a bool or SymBool."""
    if isinstance(x, SymBool):
        return ~x
    return not x


def sym_and(*xs):
    out = True
    for x in xs:
        out = out & x if isinstance(out, SymBool) or isinstance(x, SymBool) else (out and x)
    return out


def sym_or(*xs):
    out = False
    for x in xs:
        out = out | x if isinstance(out, SymBool) or isinstance(x, SymBool) else (out or x)
    return out


def _over_loop_range(env, ea, eb, pick):
    """Inside a loop body, the operand that is the larger (max) / smaller (min) for every
    index in range, else None: `x[i:i + k]` clamps its stop to `Min(n, i + k)`, which is
    `i + k` when the range proves `i + k <= n` (loop_index.py). No guard: like the rest of
    sym_min / sym_max, a clamp it cannot prove stays a Min / Max."""
    if not env.__dict__.get("_loop_bounds") or not any(env.is_loop_index(s) for s in
                                                          (ea - eb).free_symbols):
        return None
    rel = sympy.Ge if pick is max else sympy.Le
    for x, y in ((ea, eb), (eb, ea)):                  # x wins (or ties) at every index
        if env.decide_over_loop_indices(rel(x, y), static=True) is True:
            return x
    return None


def sym_eq(a, b):
    """a == b for numbers, Sym values, or equal-length sequences of them (a SymBool or bool)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if len(a) != len(b):
            return False
        return sym_and(*(sym_eq(x, y) for x, y in zip(a, b, strict=True)))
    return a == b


def guard_int(x) -> int:
    """x as an int, specialising a SymInt (guard Eq(expr, hint))."""
    if isinstance(x, SymInt):
        return int(x)
    return int(x)


def guard_float(x) -> float:
    return float(x)


def guard_bool(x) -> bool:
    return bool(x)


def _cond(c):
    """(env, expr) of a condition, or (None, python bool)."""
    if isinstance(c, SymBool):
        return c.env, c.expr
    if isinstance(c, (SymInt, SymFloat)):
        return c.env, sympy.Ne(c.expr, 0)
    return None, bool(c)


def statically_known_true(cond) -> bool:
    """True only if cond is provable from ranges, replacements and recorded facts; never
    adds a guard."""
    env, e = _cond(cond)
    if env is None:
        return e
    return env.maybe_evaluate_static(e) is True


def guard_or_false(cond) -> bool:
    """Decide cond: statically, else with a guard from the hints; if it depends on unbacked
    symbols and cannot be decided, False without a guard."""
    env, e = _cond(cond)
    if env is None:
        return e
    return bool(env.evaluate_expr(e, fallback_value=False))


def guard_or_true(cond) -> bool:
    """Like guard_or_false, defaulting to True for undecidable data-dependent conditions."""
    env, e = _cond(cond)
    if env is None:
        return e
    return bool(env.evaluate_expr(e, fallback_value=True))


def guard_size_oblivious(cond) -> bool:
    """Decide cond treating size-like symbols (unbacked sizes; backed ones too with
    backed_size_oblivious) as >= 2, so e.g. `u0 == 1` is False with no guard. Undecidable
    conditions on backed symbols are guarded as usual; on unbacked, DataDependentError."""
    env, e = _cond(cond)
    if env is None:
        return e
    return bool(env.evaluate_expr(e, size_oblivious=True))


def expect_true(cond, msg: str = "") -> bool:
    """Assume cond (ft.check): see ShapeEnv.defer_runtime_assert."""
    env, e = _cond(cond)
    if env is None:
        if not e:
            raise AssertionError(msg or "check failed")
        return True
    return env.defer_runtime_assert(e, msg)
