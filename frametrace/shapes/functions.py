"""Sympy functions with Python's semantics.

`FloorDiv(a, b)` is `a // b`, `PythonMod(a, b)` is `a % b` (the result takes the sign of the
divisor), for every integer value, negatives included. Both evaluate on integers and apply a
few exact rewrites (table in `_floordiv_rules` / `_mod_rules`); every rewrite is valid for all
integer values of the symbols involved, because every size symbol a ShapeEnv creates is an
integer.

Python float arithmetic rounds at every step, so it is not sympy's: `2.0 * (1.0 / t) / ((1.0 /
n) * (1.0 / n))` is not `2.0 * n**2 / t` in floats (npbench adi: 2.7e-5 relative after a
dozen time steps). An operation with a float result (`1.0 / n`, `n * 0.5`, `n ** -1`) is one
opaque `FloatOp` node (FloatAdd ... FloatPow) that sympy leaves alone: it evaluates only when
its operands are numbers, computed by Python itself, and prints as the Python operation, so
the run-time value is the program's, bit for bit.
"""
from __future__ import annotations

import math
import operator

import sympy


def _int_coeff_terms(expr):
    """expr as a list of (integer coefficient, rest) terms, or None if some coefficient is not
    an integer or some term is not known to be integer-valued."""
    terms = expr.args if isinstance(expr, sympy.Add) else (expr,)
    out = []
    for t in terms:
        coeff, rest = t.as_coeff_Mul()
        if not coeff.is_Integer or not (rest.is_integer or rest == 1):
            return None
        out.append((int(coeff), rest))
    return out


def _rebuild(terms):
    return sympy.Add(*(sympy.Integer(c) * r for c, r in terms))


class FloorDiv(sympy.Function):
    """a // b with Python semantics (floor of the exact quotient)."""
    nargs = (2,)
    is_integer = True
    precedence = 50   # printed parenthesised, like a Mul

    def _sympystr(self, printer):
        a, b = self.args
        return f"({printer.parenthesize(a, 50)}//{printer.parenthesize(b, 50)})"

    @classmethod
    def eval(cls, a, b):
        if b.is_zero:
            raise ZeroDivisionError("integer division by zero")
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) // int(b))
        if b == 1:
            return a
        if b == -1:
            return -a
        if a.is_zero:
            return sympy.Integer(0)
        if a == b:
            return sympy.Integer(1)
        if b.is_Integer:
            return _floordiv_by_int(a, int(b))
        # symbolic divisor: (k * b * rest) // b == k * rest when the quotient is an integer
        q = a / b
        if q.is_integer and q.is_polynomial():
            return q
        return None


def _floordiv_by_int(a, b: int):
    # (a // c) // b == a // (c * b) for positive c, b
    if isinstance(a, FloorDiv) and a.args[1].is_Integer and int(a.args[1]) > 0 and b > 0:
        return FloorDiv(a.args[0], sympy.Integer(int(a.args[1]) * b))
    terms = _int_coeff_terms(a)
    if terms is None:
        return None
    # common factor: (g*m) // (g*n) == m // n for g > 0
    g = math.gcd(b, *(c for c, _ in terms))
    if g > 1:
        return FloorDiv(_rebuild([(c // g, r) for c, r in terms]), sympy.Integer(b // g))
    # (b*k*x + rest) // b == k*x + rest // b, for integer-valued x
    whole = [(c // b, r) for c, r in terms if c % b == 0]
    if whole and len(whole) < len(terms):
        rest = [(c, r) for c, r in terms if c % b != 0]
        return _rebuild(whole) + FloorDiv(_rebuild(rest), sympy.Integer(b))
    return None


class PythonMod(sympy.Function):
    """a % b with Python semantics (result has the sign of b, or is 0)."""
    nargs = (2,)
    is_integer = True

    def _sympystr(self, printer):
        a, b = self.args
        return f"Mod({printer._print(a)}, {printer._print(b)})"

    def _eval_is_nonnegative(self):
        if self.args[1].is_positive:
            return True
        return None

    def _eval_is_nonpositive(self):
        if self.args[1].is_negative:
            return True
        return None

    @classmethod
    def eval(cls, a, b):
        if b.is_zero:
            raise ZeroDivisionError("integer modulo by zero")
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) % int(b))
        if b == 1 or b == -1 or a.is_zero or a == b or a == -b:
            return sympy.Integer(0)
        if b.is_Integer:
            bi = int(b)
            # Mod(Mod(x, b), b) == Mod(x, b)
            if isinstance(a, PythonMod) and a.args[1] == b:
                return a
            terms = _int_coeff_terms(a)
            if terms is None:
                return None
            # (c*x + rest) % b == ((c % b)*x + rest) % b, for integer-valued x
            kept = [(c % bi, r) for c, r in terms if c % bi != 0]
            if kept != terms:
                return PythonMod(_rebuild(kept), b)
            return None
        q = a / b
        if q.is_integer and q.is_polynomial():
            return sympy.Integer(0)
        return None


def python_floordiv(a, b):
    """a // b on sympy expressions (exact, Python semantics)."""
    return FloorDiv(sympy.sympify(a), sympy.sympify(b))


def python_mod(a, b):
    return PythonMod(sympy.sympify(a), sympy.sympify(b))


class ToFloat(sympy.Function):
    """float(a): a Python float computed from sizes (`1.0 / x.shape[0]`, `len(x) ** 0.5`).

    A graph argument holding a float of sizes is wrapped in it, so that every consumer knows
    from the expression alone that the value is a float (sympy cannot tell that `1.0/s0` is not
    an integer): kernels take it as a double, the wrapper passes a Python float."""
    nargs = (1,)
    is_integer = False
    is_real = True

    def _sympystr(self, printer):
        return f"float({printer._print(self.args[0])})"

    @classmethod
    def eval(cls, a):
        if isinstance(a, ToFloat):
            return a
        if a.is_number:
            if a.is_real is False:
                raise TypeError(f"float() of a complex size expression {a}")
            return sympy.Float(float(a))
        return None


class FloatOp(sympy.Function):
    """`a <op> b` as Python computes it, with a float result (module doc): integer-valued
    operands are exact Python ints, float-valued ones Python floats."""
    nargs = (2,)
    is_integer = False
    is_real = True
    symbol = "?"

    @staticmethod
    def operator(a, b):
        raise NotImplementedError

    @classmethod
    def eval(cls, a, b):
        if a.is_number and b.is_number:
            value = cls.operator(_python_number(a), _python_number(b))
            if isinstance(value, float) and math.isfinite(value):
                return sympy.Float(value)
        return None

    def _sympystr(self, printer):
        a, b = self.args
        return f"({printer._print(a)} {self.symbol} {printer._print(b)})"


def _python_number(x):
    """A sympy number as the Python value a program computing it would hold."""
    if x.is_Integer:
        return int(x)
    if x.is_Rational:
        return int(x.p) / int(x.q)
    return float(x)


class FloatAdd(FloatOp):
    symbol, operator = "+", staticmethod(operator.add)


class FloatSub(FloatOp):
    symbol, operator = "-", staticmethod(operator.sub)


class FloatMul(FloatOp):
    symbol, operator = "*", staticmethod(operator.mul)


class FloatTrueDiv(FloatOp):
    symbol, operator = "/", staticmethod(operator.truediv)


class FloatFloorDiv(FloatOp):
    symbol, operator = "//", staticmethod(operator.floordiv)


class FloatMod(FloatOp):
    symbol, operator = "%", staticmethod(operator.mod)


class FloatPow(FloatOp):
    symbol, operator = "**", staticmethod(operator.pow)
    is_real = None                       # (-8.0) ** (1 / 3) is a complex number in Python


def _dyadic(x) -> bool:
    """A rational k / 2**m with |x| < 2**20 and m <= 20."""
    return bool(x.is_Rational) and int(x.q) & (int(x.q) - 1) == 0 and int(x.q) <= 2 ** 20 and abs(x) < 2 ** 20


def exact_value(expr):
    """The value of a float expression of sizes as an exact sympy number, when the program's
    float arithmetic computes it without rounding (sizes below 2**30): integers, dyadic
    constants, sums, differences, products by a dyadic constant and divisions by a power of
    two of such values (`n / 2`, `0.5 * n + 1.0`); else None (`n / 3` is rounded)."""
    e = sympy.sympify(expr)
    if e.is_Integer or (e.is_Symbol and e.is_integer):
        return e
    if e.is_Float:
        r = sympy.Rational(*float(e).as_integer_ratio())
        return r if _dyadic(r) else None
    if isinstance(e, ToFloat):
        return exact_value(e.args[0])
    ops = {FloatAdd: sympy.Add, FloatSub: lambda a, b: a - b, FloatMul: sympy.Mul,
           FloatTrueDiv: lambda a, b: a / b}
    if not (type(e) in ops or (e.is_integer and (e.is_Add or e.is_Mul))):
        return None
    args = [exact_value(a) for a in e.args]
    if any(a is None for a in args):
        return None
    if isinstance(e, FloatTrueDiv) and not (args[1].is_Integer and args[1] != 0 and _dyadic(1 / args[1])):
        return None                           # only a division by a power of two is exact
    if isinstance(e, FloatMul) and not any(a.is_number and _dyadic(a) for a in args):
        return None                           # two sizes: the product may need rounding
    return ops.get(type(e), type(e))(*args)


# SymFloat arithmetic (symint.py): Python operator name -> its FloatOp
FLOAT_OPS = {"add": FloatAdd, "sub": FloatSub, "mul": FloatMul, "truediv": FloatTrueDiv,
             "floordiv": FloatFloorDiv, "mod": FloatMod, "pow": FloatPow}


def is_float_expr(expr) -> bool:
    """Whether a size expression is float-valued (a SymFloat's), not an integer one."""
    return expr.is_integer is False or isinstance(expr, (ToFloat, FloatOp)) or bool(expr.atoms(sympy.Float))
