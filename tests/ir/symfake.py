"""A tiny stand-in for frametrace.shapes (SymInt/SymBool over sympy with hints and guards),
so the ops' symbolic paths are tested independently of the real ShapeEnv."""
from __future__ import annotations

import types

import sympy


class FakeShapeEnv:
    def __init__(self):
        self.hints: dict = {}
        self.shift: dict = {}      # s -> lower + t (t a nonnegative integer): range reasoning
        self.guards: list = []

    def size(self, name: str, hint: int, lower: int = 2) -> "SymInt":
        s = sympy.Symbol(name, integer=True, nonnegative=True)
        self.hints[s] = sympy.Integer(hint)
        self.shift[s] = sympy.Symbol(f"_t_{name}", integer=True, nonnegative=True) + lower
        return SymInt(s, self)

    def static(self, expr):
        r = sympy.sympify(expr).xreplace(self.shift)
        if r in (sympy.true, sympy.false):
            return bool(r)
        r = sympy.simplify(r)
        return bool(r) if r in (sympy.true, sympy.false) else None

    def evaluate(self, expr) -> bool:
        known = self.static(expr)
        if known is not None:
            return known
        value = bool(expr.xreplace(self.hints))
        self.guards.append(expr if value else sympy.Not(expr))
        return value


def _e(x):
    return x.expr if isinstance(x, SymInt) else sympy.Integer(x) if isinstance(x, int) else x


class SymBool:
    def __init__(self, expr, env):
        self.expr, self.env = expr, env

    def __bool__(self):
        return self.env.evaluate(self.expr)


class SymInt:
    def __init__(self, expr, env):
        self.expr, self.env = sympy.sympify(expr), env

    def _w(self, expr):
        return SymInt(expr, self.env)

    def __add__(self, o): return self._w(self.expr + _e(o))
    def __radd__(self, o): return self._w(_e(o) + self.expr)
    def __sub__(self, o): return self._w(self.expr - _e(o))
    def __rsub__(self, o): return self._w(_e(o) - self.expr)
    def __mul__(self, o): return self._w(self.expr * _e(o))
    def __rmul__(self, o): return self._w(_e(o) * self.expr)
    def __floordiv__(self, o): return self._w(sympy.floor(self.expr / _e(o)))
    def __rfloordiv__(self, o): return self._w(sympy.floor(_e(o) / self.expr))
    def __mod__(self, o): return self._w(sympy.Mod(self.expr, _e(o)))
    def __neg__(self): return self._w(-self.expr)
    def __lt__(self, o): return SymBool(sympy.Lt(self.expr, _e(o)), self.env)
    def __le__(self, o): return SymBool(sympy.Le(self.expr, _e(o)), self.env)
    def __gt__(self, o): return SymBool(sympy.Gt(self.expr, _e(o)), self.env)
    def __ge__(self, o): return SymBool(sympy.Ge(self.expr, _e(o)), self.env)
    def __eq__(self, o): return SymBool(sympy.Eq(self.expr, _e(o)), self.env)
    def __ne__(self, o): return SymBool(sympy.Ne(self.expr, _e(o)), self.env)

    def __hash__(self):
        raise TypeError("a SymInt must not be hashed (never put a size in a set or dict key)")

    def __index__(self):
        raise TypeError("a SymInt must not be turned into an int by the ops")

    def __bool__(self):
        raise TypeError("bool(SymInt) is not a size decision")

    def __repr__(self):
        return str(self.expr)


def helpers():
    """The frametrace.shapes helper functions, over these fakes."""
    def wrap(env, expr):
        return SymInt(expr, env)

    def env_of(*xs):
        return next(x.env for x in xs if isinstance(x, (SymInt, SymBool)))

    def sym_max(a, b):
        return wrap(env_of(a, b), sympy.Max(_e(a), _e(b)))

    def sym_min(a, b):
        return wrap(env_of(a, b), sympy.Min(_e(a), _e(b)))

    def statically_known_true(c):
        return c if isinstance(c, bool) else c.env.static(c.expr) is True

    def guard_size_oblivious(c):
        return bool(c)

    return types.SimpleNamespace(sym_max=sym_max, sym_min=sym_min,
                                 statically_known_true=statically_known_true,
                                 guard_size_oblivious=guard_size_oblivious)
