"""SymInt / SymFloat / SymBool: values that behave like int / float / bool in user code and
meta rules, while recording a sympy expression over the ShapeEnv's symbols.

Arithmetic builds expressions (and folds to a plain Python number when the expression is a
constant); anything that needs a concrete answer -- `bool()`, `int()`, `range(n)`, indexing --
asks the ShapeEnv, which answers from value ranges or from the hints and records a guard.
Sym values are unhashable (like torch's): a hash would silently specialise.
"""
from __future__ import annotations

import math
import numbers

import sympy

from .functions import FLOAT_OPS, FloatTrueDiv, FloorDiv, PythonMod, exact_value
from .minmax import distribute

_REL = {"eq": sympy.Eq, "ne": sympy.Ne, "lt": sympy.Lt, "le": sympy.Le, "gt": sympy.Gt,
        "ge": sympy.Ge}


def _operand(x):
    """(sympy expr, kind, env) for a number or Sym value; None if x is not numeric."""
    if isinstance(x, SymNodeBase):
        return x.expr, x.kind, x.env
    if isinstance(x, bool):
        return sympy.Integer(int(x)), "int", None
    if isinstance(x, numbers.Integral):
        return sympy.Integer(int(x)), "int", None
    if isinstance(x, numbers.Real):
        return sympy.Float(float(x)), "float", None
    return None


def wrap(expr, kind: str, env):
    """A Python number if `expr` is constant, else the Sym value of that kind."""
    if expr is sympy.true or expr is sympy.false:
        return bool(expr)
    if kind == "bool":
        return SymBool(expr, env)
    if expr.is_number:
        if kind == "int":
            return int(expr)
        return float(expr)
    return SymInt(expr, env) if kind == "int" else SymFloat(expr, env)


class SymNodeBase:
    """Shared machinery: the expression (replacements applied on read) and the env."""
    __slots__ = ("_expr", "env", "_cache")
    kind = "?"
    __array_ufunc__ = None      # numpy scalars defer to our reflected operators

    def __init__(self, expr, env):
        self._expr = sympy.sympify(expr)
        self.env = env
        self._cache = None

    @property
    def expr(self):
        """The sympy expression with the env's current replacements applied."""
        v = self.env.replacements_version
        if self._cache is None or self._cache[0] != v:
            self._cache = (v, self.env.simplify(self._expr))
        return self._cache[1]

    @property
    def hint(self):
        """Concrete value under the hints (no guard); None if it depends on unbacked symbols."""
        return self.env.size_hint(self.expr, allow_none=True)

    def maybe_as_constant(self):
        """The Python value if the expression has become a constant (no guard), else None."""
        e = self.expr
        return wrap(e, self.kind, self.env) if (e.is_number or e in (sympy.true, sympy.false)) else None

    def __copy__(self):
        return self                 # immutable; a deepcopy must not copy the ShapeEnv

    def __deepcopy__(self, memo):
        return self

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __repr__(self):
        return str(self.expr)

    __str__ = __repr__

    def __format__(self, spec):
        if not spec:
            return str(self)
        return format(self._concrete(), spec)

    # ---- arithmetic ---------------------------------------------------------------------
    def _binop(self, other, op, reflected=False):
        o = _operand(other)
        if o is None:
            return NotImplemented
        if o[2] is not None and o[2] is not self.env:
            raise ValueError("cannot combine sizes from two different ShapeEnvs")
        a, b = (o[0], self.expr) if reflected else (self.expr, o[0])
        ka, kb = (o[1], self.kind) if reflected else (self.kind, o[1])
        kind = "float" if "float" in (ka, kb) else "int"
        if b.is_zero and (op == "truediv" or (kind == "float" and op in ("floordiv", "mod"))):
            raise ZeroDivisionError("division by zero" if op == "truediv" else
                                    f"float {'floor division' if op == 'floordiv' else 'modulo'} by zero")
        if op == "pow" and kind == "int":
            kind = self._pow_kind(b)
        if kind == "float" or op == "truediv":
            # Python rounds each float operation: one opaque node each, never sympy algebra
            return wrap(FLOAT_OPS[op](a, b), "float", self.env)
        if op == "add":
            e = a + b
        elif op == "sub":
            e = a - b
        elif op == "mul":
            e = a * b
        elif op == "floordiv":
            e = FloorDiv(a, b)
        elif op == "mod":
            e = PythonMod(a, b)
        elif op == "pow":
            e = a ** b
        else:
            raise AssertionError(op)
        if op in ("add", "sub", "mul") and kind == "int":
            e = self._flat(e)
        return wrap(e, kind, self.env)

    def _flat(self, e):
        """Sums and multiples of one Min/Max pushed inside it (minmax.py): chained slices stay
        linear instead of nesting a level per slice."""
        if isinstance(e, (sympy.Add, sympy.Mul)) and e.has(sympy.Max, sympy.Min):
            return distribute(e, self.env.bound_sympy)
        return e

    def _pow_kind(self, b) -> str:
        """int ** b: an int for b >= 0, a float for a negative b (as in Python)."""
        if b.is_Integer and int(b) < 0:
            return "float"
        if not b.is_number and not self.env.evaluate_expr(sympy.Ge(b, 0)):
            return "float"
        return "int"

    def __add__(self, o): return self._binop(o, "add")
    def __radd__(self, o): return self._binop(o, "add", True)
    def __sub__(self, o): return self._binop(o, "sub")
    def __rsub__(self, o): return self._binop(o, "sub", True)
    def __mul__(self, o): return self._binop(o, "mul")
    def __rmul__(self, o): return self._binop(o, "mul", True)
    def __truediv__(self, o): return self._binop(o, "truediv")
    def __rtruediv__(self, o): return self._binop(o, "truediv", True)
    def __floordiv__(self, o): return self._binop(o, "floordiv")
    def __rfloordiv__(self, o): return self._binop(o, "floordiv", True)
    def __mod__(self, o): return self._binop(o, "mod")
    def __rmod__(self, o): return self._binop(o, "mod", True)
    def __pow__(self, o): return self._binop(o, "pow")
    def __rpow__(self, o): return self._binop(o, "pow", True)

    def __divmod__(self, o):
        return self // o, self % o

    def __rdivmod__(self, o):
        return o // self, o % self

    def __neg__(self):
        e = -self.expr
        return wrap(self._flat(e) if self.kind == "int" else e, self.kind, self.env)

    def __pos__(self):
        return self

    def __invert__(self):
        """~n == -n - 1 for a Python int (a float has no ~: TypeError, as in Python)."""
        if self.kind != "int":
            raise TypeError(f"bad operand type for unary ~: '{self.kind}'")
        return -self - 1

    def __abs__(self):
        return wrap(sympy.Abs(self.expr), self.kind, self.env)

    # ---- comparisons -> SymBool -----------------------------------------------------------
    def _cmp(self, other, rel):
        o = _operand(other)
        if o is None:
            return NotImplemented
        return wrap(_REL[rel](self.expr, o[0]), "bool", self.env)

    def __eq__(self, o): return self._cmp(o, "eq")
    def __ne__(self, o): return self._cmp(o, "ne")
    def __lt__(self, o): return self._cmp(o, "lt")
    def __le__(self, o): return self._cmp(o, "le")
    def __gt__(self, o): return self._cmp(o, "gt")
    def __ge__(self, o): return self._cmp(o, "ge")

    def __bool__(self):
        return bool(self != 0)


class SymInt(SymNodeBase):
    """A symbolic Python int (a size, or an int argument marked dynamic)."""
    __slots__ = ()
    kind = "int"

    def _concrete(self):
        return int(self)

    def __int__(self):
        """Specialise: guard Eq(expr, hint) and return the hint."""
        return self.env.guard_int(self.expr, reason="int()")

    def __index__(self):
        """Like int() (so range(n), list[n], slicing work), recorded as a specialisation."""
        return self.env.guard_int(self.expr, reason="__index__")

    def __float__(self):
        return float(int(self))

    def __trunc__(self):
        return self

    def __floor__(self):
        return self

    def __ceil__(self):
        return self

    def __round__(self, ndigits=None):
        return self

    def __lshift__(self, o):
        if isinstance(o, numbers.Integral) and o >= 0:
            return self * (2 ** int(o))
        return NotImplemented

    def __rshift__(self, o):
        if isinstance(o, numbers.Integral) and o >= 0:
            return self // (2 ** int(o))
        return NotImplemented

    def is_integer(self):
        return True


class SymFloat(SymNodeBase):
    """A symbolic Python float (true division of sizes, float arguments made symbolic)."""
    __slots__ = ()
    kind = "float"

    def _concrete(self):
        return float(self)

    def __float__(self):
        """Specialise: guard Eq(expr, hint) and return the hint."""
        return self.env.guard_float(self.expr)

    def __int__(self):
        return int(float(self))

    def __trunc__(self):
        return int(float(self))

    def _rounded(self, up: bool):
        e = self.expr
        if isinstance(e, FloatTrueDiv) and e.args[0].is_integer and e.args[1].is_integer:
            num, den = e.args                 # a ratio of ints (Python's quotient agrees below 2**53)
        else:                                 # a float Python computes exactly (n * 0.5 + 1)
            num, den = (sympy.together(v).as_numer_denom() if (v := exact_value(e)) is not None
                        else (None, None))
        if num is not None and num.is_integer and den.is_integer:    # exact floor/ceil
            e = FloorDiv(-num, den) if up else FloorDiv(num, den)
            return wrap(-e if up else e, "int", self.env)
        v = float(self)
        return math.ceil(v) if up else math.floor(v)

    def __floor__(self):
        return self._rounded(False)

    def __ceil__(self):
        return self._rounded(True)

    def __round__(self, ndigits=None):
        return round(float(self), ndigits)


class SymBool(SymNodeBase):
    """A symbolic bool (a comparison of sizes). `bool()` evaluates it through the env."""
    __slots__ = ()
    kind = "bool"

    def _concrete(self):
        return bool(self)

    def __bool__(self):
        return bool(self.env.evaluate_expr(self.expr))

    def __int__(self):
        return int(bool(self))

    def _logic(self, other, fn):
        if isinstance(other, SymBool):
            o = other.expr
        elif isinstance(other, (bool, sympy.logic.boolalg.BooleanAtom)):
            o = sympy.true if other else sympy.false
        else:
            return NotImplemented
        return wrap(fn(self.expr, o), "bool", self.env)

    def __and__(self, o): return self._logic(o, sympy.And)
    __rand__ = __and__
    def __or__(self, o): return self._logic(o, sympy.Or)
    __ror__ = __or__

    def __invert__(self):
        """Logical not (Python's ~True is -2; ~ on a SymBool means `not`)."""
        return wrap(sympy.Not(self.expr), "bool", self.env)

    def __eq__(self, o):
        return self._logic(o, sympy.Equivalent)

    def __ne__(self, o):
        return self._logic(o, sympy.Xor)

    # arithmetic and ordering on bools are rare in size code: go through int
    def _binop(self, other, op, reflected=False):
        return NotImplemented

    def _cmp(self, other, rel):
        return NotImplemented
