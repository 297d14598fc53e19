"""Sympy size expressions -> LLVM IR with Python's exact integer semantics (a mixin of
native_guards.Translator): shape-env guard records, size variables and runtime asserts are
translated from their expression tree, never from printed text.

Every result Python would compute past 64 bits (an overflow) and every division by zero takes
the miss path: the Python check then decides, so a native check never passes where Python's
fails. `and`/`or` evaluate both sides (no short circuit): a side that would raise makes a miss.
"""
from __future__ import annotations

import sympy
from sympy.core.relational import Relational

from ...shapes.functions import FloorDiv, PythonMod
from .native_ir import INT_MAX, INT_MIN, NotNative, V

_SYM_CMP = {sympy.Eq: "eq", sympy.Ne: "ne", sympy.Lt: "slt", sympy.Le: "sle", sympy.Gt: "sgt", sympy.Ge: "sge"}


class SizeExprs:
    """Needs `self.ir` (native_ir.IR), `self.env` (bound names -> V) and `self.as_int(V)`."""

    def sym_bool(self, expr, value_of) -> str:
        """i1 of a sympy boolean over sizes; `value_of(symbol)` gives each symbol's V."""
        v = self.sym(expr, value_of)
        if v.kind == "bool":
            return v.ref
        raise NotNative(f"truth value of {expr}")

    def sym_int(self, expr, value_of) -> str:
        """i64 of a sympy integer expression over sizes (an overflow is a miss)."""
        return self.as_int(self.sym(expr, value_of))

    def sym(self, e, value_of) -> V:
        """Python's exact integer semantics on i64: every result Python would compute past 64
        bits (an overflow), and every division by zero, takes the miss path instead."""
        ir = self.ir
        if e is sympy.true or e is sympy.false:
            return V("bool", "true" if e is sympy.true else "false")
        if e.is_Symbol:
            return value_of(e)
        if e.is_Integer:
            if not INT_MIN <= int(e) <= INT_MAX:
                raise NotNative(f"integer constant {e}")
            return V("int", str(int(e)))
        if isinstance(e, Relational) and type(e) in _SYM_CMP:
            a, b = self.sym_int(e.lhs, value_of), self.sym_int(e.rhs, value_of)
            return V("bool", ir.op(f"icmp {_SYM_CMP[type(e)]} i64 {a}, {b}"))
        if isinstance(e, (sympy.And, sympy.Or)):
            vals = [self.sym_bool(a, value_of) for a in e.args]     # both sides: no short circuit
            acc = vals[0]
            for v in vals[1:]:
                acc = ir.op(f"{'and' if isinstance(e, sympy.And) else 'or'} i1 {acc}, {v}")
            return V("bool", acc)
        if isinstance(e, sympy.Not):
            return V("bool", ir.op(f"xor i1 {self.sym_bool(e.args[0], value_of)}, true"))
        if e.is_integer is not True:
            raise NotNative(f"non-integer size expression {e}")    # floats, true division
        if e.is_Add or e.is_Mul:
            op = "sadd" if e.is_Add else "smul"
            vals = [self.sym_int(a, value_of) for a in e.args]
            acc = vals[0]
            for v in vals[1:]:
                acc = self.arith(op, acc, v)
            return V("int", acc)
        if e.is_Pow:
            base, exp = e.args
            if not (exp.is_Integer and 0 <= int(exp) <= 64):
                raise NotNative(f"power {e}")
            b, acc = self.sym_int(base, value_of), "1"
            for _ in range(int(exp)):
                acc = self.arith("smul", acc, b)
            return V("int", acc)
        if isinstance(e, (FloorDiv, PythonMod)):
            a, b = (self.sym_int(x, value_of) for x in e.args)
            return V("int", self.floordiv_mod(a, b, isinstance(e, PythonMod)))
        if isinstance(e, (sympy.floor, sympy.ceiling)):
            num, den = sympy.together(e.args[0]).as_numer_denom()
            if not (num.is_integer and den.is_integer):
                raise NotNative(f"rounding of {e}")
            if isinstance(e, sympy.floor):
                return V("int", self.floordiv_mod(self.sym_int(num, value_of), self.sym_int(den, value_of), False))
            q = self.floordiv_mod(self.sym_int(-num, value_of), self.sym_int(den, value_of), False)
            return V("int", self.arith("ssub", "0", q))            # ceil(n/d) == -((-n) // d)
        if isinstance(e, (sympy.Min, sympy.Max)):
            vals = [self.sym_int(a, value_of) for a in e.args]
            acc = vals[0]
            for v in vals[1:]:
                c = ir.op(f"icmp {'sgt' if isinstance(e, sympy.Max) else 'slt'} i64 {v}, {acc}")
                acc = ir.op(f"select i1 {c}, i64 {v}, i64 {acc}")
            return V("int", acc)
        if isinstance(e, sympy.Abs):
            v = self.sym_int(e.args[0], value_of)
            neg = self.arith("ssub", "0", v)
            return V("int", ir.op(f"select i1 {ir.op(f'icmp slt i64 {v}, 0')}, i64 {neg}, i64 {v}"))
        raise NotNative(f"size expression {type(e).__name__}: {e}")

    def named(self, name) -> V:
        """The value a compiler-bound name (a symbol, a size variable) holds."""
        if name not in self.env:
            raise NotNative(f"unbound size name {name}")
        return self.env[name]

    def floordiv_mod(self, a: str, b: str, mod: bool) -> str:
        """Python's a // b (or a % b) on i64: rounds toward -inf, the remainder takes b's sign;
        a zero divisor and INT_MIN // -1 are misses."""
        ir = self.ir
        ir.require(ir.op(f"icmp ne i64 {b}, 0"))                 # ZeroDivisionError: a miss
        minus = ir.op(f"and i1 {ir.op(f'icmp eq i64 {a}, {INT_MIN}')}, {ir.op(f'icmp eq i64 {b}, -1')}")
        ir.require(ir.op(f"xor i1 {minus}, true"))               # INT_MIN // -1 overflows
        q, r = ir.op(f"sdiv i64 {a}, {b}"), ir.op(f"srem i64 {a}, {b}")
        # Python rounds toward -inf: adjust when the remainder's sign differs from b's
        signs = ir.op(f"icmp slt i64 {ir.op(f'xor i64 {r}, {b}')}, 0")
        adj = ir.op(f"and i1 {ir.op(f'icmp ne i64 {r}, 0')}, {signs}")
        if not mod:
            return ir.op(f"sub i64 {q}, {ir.op(f'zext i1 {adj} to i64')}")
        return ir.op(f"select i1 {adj}, i64 {ir.op(f'add i64 {r}, {b}')}, i64 {r}")

    def arith(self, op: str, a: str, b: str) -> str:
        """a (+|-|*) b on i64; an overflow (Python would go on exactly) is a miss."""
        ir = self.ir
        r = ir.op(f"call {{i64, i1}} @llvm.{op}.with.overflow.i64(i64 {a}, i64 {b})")
        ir.require(ir.op(f"xor i1 {ir.op(f'extractvalue {{i64, i1}} {r}, 1')}, true"))
        return ir.op(f"extractvalue {{i64, i1}} {r}, 0")
