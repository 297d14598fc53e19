"""pycode: a sympy size expression as Python source with exact integer semantics.

    pycode(Ne(s0, 10), {s0: "L['x'].shape[0]"})  ->  "L['x'].shape[0] != 10"
    pycode(FloorDiv(s0 + 1, 2), {s0: "n"})       ->  "(n + 1) // 2"

Every compound operand is parenthesised, so the text never depends on Python's operator
precedence. Integer arithmetic prints as `+ - * // % **`, which is exact on Python ints;
`/` appears only where the expression itself is a true division (a SymFloat made by `/`), and
float arithmetic (functions.FloatOp) prints as the Python operations the program made, in order.
"""
from __future__ import annotations

import sympy
from sympy.core.relational import Relational

from .functions import FloatOp, FloorDiv, PythonMod, ToFloat

_REL_OPS = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Lt: "<", sympy.Le: "<=",
            sympy.Gt: ">", sympy.Ge: ">="}


def pycode(expr, names: dict) -> str:
    """Python source for `expr`, symbols replaced by `names[symbol]` (or `names[symbol.name]`)."""
    return _Printer(names).top(sympy.sympify(expr))


def guard_source(expr, kind: str, names: dict) -> str:
    """One produced shape guard (shapes/records.ShapeGuardCode: `expr` of `kind`) as Python over
    `names` (Symbol -> text). The same function writes the text users read (names: source
    names, `L['x'].shape[0]`) and the entry's check (names: source code, `x.shape[0]`).

    A fact about one source ("equality", "specialization", "range") prints both sides whole
    (`L['y'].shape[0] == L['x'].shape[0] + 3`, `2 <= L['x'].shape[0]`); a recorded guard prints
    as `pycode` (`(L['x'].shape[0] + 1) <= 30`)."""
    printer = _Printer(names)
    if kind != "guard" and isinstance(expr, Relational) and type(expr) in _REL_OPS:
        return f"{printer.top(expr.lhs)} {_REL_OPS[type(expr)]} {printer.top(expr.rhs)}"
    return printer.top(sympy.sympify(expr))


class _Printer:
    def __init__(self, names):
        self.names = names

    def top(self, e) -> str:
        s, compound = self.p(e)
        return s[1:-1] if compound else s

    def sub(self, e) -> str:
        return self.p(e)[0]

    def p(self, e):
        """(text, is_compound); compound texts are wrapped in parentheses."""
        if e is sympy.true or e is True:
            return "True", False
        if e is sympy.false or e is False:
            return "False", False
        if e.is_Symbol:
            return self.symbol(e), False
        if e.is_Integer:
            v = int(e)
            return (f"({v})", True) if v < 0 else (str(v), False)
        if e.is_Rational:
            return f"({e.p} / {e.q})", True
        if e.is_Float:
            return f"({float(e)!r})" if float(e) < 0 else repr(float(e)), float(e) < 0
        if e is sympy.oo or e is -sympy.oo:
            return ("float('inf')" if e is sympy.oo else "(-float('inf'))"), False
        if isinstance(e, Relational):
            op = _REL_OPS.get(type(e))
            if op is None:
                raise NotImplementedError(f"pycode: relational {type(e).__name__}")
            return f"({self.sub(e.lhs)} {op} {self.sub(e.rhs)})", True
        if isinstance(e, sympy.And):
            return "(" + " and ".join(self.sub(a) for a in _bool_args(e)) + ")", True
        if isinstance(e, sympy.Or):
            return "(" + " or ".join(self.sub(a) for a in _bool_args(e)) + ")", True
        if isinstance(e, sympy.Not):
            return f"(not {self.sub(e.args[0])})", True
        if e.is_Add:
            return self.add(e), True
        if e.is_Mul:
            return self.mul(e), True
        if e.is_Pow:
            return self.pow(e), True
        if isinstance(e, FloorDiv):
            return f"({self.sub(e.args[0])} // {self.sub(e.args[1])})", True
        if isinstance(e, PythonMod):
            return f"({self.sub(e.args[0])} % {self.sub(e.args[1])})", True
        if isinstance(e, (sympy.Max, sympy.Min)):
            fn = "max" if isinstance(e, sympy.Max) else "min"
            return f"{fn}(" + ", ".join(self.top(a) for a in _sorted(e.args)) + ")", False
        if isinstance(e, (sympy.floor, sympy.ceiling)):
            return self.rounding(e), True
        if isinstance(e, FloatOp):               # Python's float operation, as written
            return f"({self.sub(e.args[0])} {e.symbol} {self.sub(e.args[1])})", True
        if isinstance(e, ToFloat):
            return f"float({self.top(e.args[0])})", False
        if isinstance(e, sympy.Abs):
            return f"abs({self.top(e.args[0])})", False
        raise NotImplementedError(f"pycode: cannot print {type(e).__name__}: {e}")

    def symbol(self, s) -> str:
        name = self.names.get(s)
        if name is None:
            name = self.names.get(s.name)
        if name is None:
            raise KeyError(f"pycode: no source name for symbol {s}")
        return name

    def add(self, e) -> str:
        terms = e.as_ordered_terms()
        out = self.sub(terms[0])
        for t in terms[1:]:
            coeff, _ = t.as_coeff_Mul()
            if coeff.is_number and coeff.is_negative:
                out += f" - {self.sub(-t)}"
            else:
                out += f" + {self.sub(t)}"
        return f"({out})"

    def mul(self, e) -> str:
        coeff, rest = e.as_coeff_Mul()
        if coeff == -1:
            return f"(-{self.sub(rest)})"
        num, den = [], []
        if coeff.is_Rational and not coeff.is_Integer:
            if coeff.p != 1:
                num.append(str(coeff.p) if coeff.p > 0 else f"({coeff.p})")
            den.append(str(coeff.q))
        elif coeff != 1:
            num.append(self.sub(coeff))
        for f in _sorted(sympy.Mul.make_args(rest)):
            if f.is_Pow and f.exp.is_Integer and int(f.exp) < 0:
                den.append(self.sub(sympy.Pow(f.base, -f.exp)))
            else:
                num.append(self.sub(f))
        text = " * ".join(num) if num else "1"
        if len(num) > 1 and den:
            text = f"({text})"
        if den:
            d = " * ".join(den)
            text = f"{text} / " + (f"({d})" if len(den) > 1 else d)
        return f"({text})"

    def rounding(self, e) -> str:
        # floor / ceiling of a ratio of integer expressions: exact integer division
        num, den = sympy.together(e.args[0]).as_numer_denom()
        if not (num.is_integer and den.is_integer):
            raise NotImplementedError(f"pycode: {e} is not a ratio of integers")
        if isinstance(e, sympy.floor):
            return f"({self.sub(num)} // {self.sub(den)})"
        return f"(-({self.sub(-num)} // {self.sub(den)}))"

    def pow(self, e) -> str:
        base, exp = e.args
        if exp.is_Integer and int(exp) < 0:
            return f"(1 / {self.sub(sympy.Pow(base, -exp))})"
        if exp == sympy.Rational(1, 2):
            return f"({self.sub(base)} ** 0.5)"
        return f"({self.sub(base)} ** {self.sub(exp)})"


def _bool_args(e):
    return sorted(e.args, key=sympy.default_sort_key)


def _sorted(args):
    return sorted(args, key=sympy.default_sort_key)
