"""Ints that remember how they were computed: a size rule evaluated once per size class.

NumPy's layout rule (ir/numpy_api/layout.py) is a small program over sizes and strides:
exact integer arithmetic, and comparisons that pick branches. Run on `TracedInt`s, every value
carries its concrete int and the Python source of the expression that computed it from the
call's leaves (symbol values, input strides), and every comparison returns its concrete answer
and records (source, answer) in a `Trace`:

    t = Trace(["v0", "v1"])                 # leaf names, in key order
    s0, st = t.leaf(7, 0), t.leaf(8, 1)
    (s0 * st == 8, abs(st) <= 8)            # -> (False, True); both recorded
    check, result = t.compile("(v0 * v1,)")  # plain Python functions of the leaves

The recorded answers are the *size class*: for any leaf values on which every recorded
comparison answers the same, the rule takes the same branches and its result is the same
expressions of the leaves. So `check(*leaves)` (a conjunction of integer comparisons) decides
whether a new call is in the class, and `result(*leaves)` evaluates the rule's answer for it:
no sympy and no graph walk per new size, only once per class.

Only what is exact on Python ints is traced (+, -, *, unary -, abs, comparisons, bool, int);
anything else (`/`, `//`, hashing) raises TypeError. The rule's callers treat that as "layout
not known", and the error depends on the program, never on the values, so it holds for the
whole class too.
"""
from __future__ import annotations

import operator

import numpy as np

_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


class Trace:
    """The comparisons one evaluation of a rule answered (its size class), in order."""

    def __init__(self, names):
        self.names = list(names)
        self.facts: dict = {}                    # source of a condition -> its answer

    def leaf(self, value: int, j: int) -> "TracedInt":
        return TracedInt(int(value), self.names[j], self)

    def record(self, src: str, answer: bool) -> bool:
        self.facts[src] = answer
        return answer

    def condition(self) -> str:
        """Python source true exactly for the leaf values of this class."""
        parts = [src if ok else f"not {src}" for src, ok in self.facts.items()]
        return " and ".join(parts) if parts else "True"

    def compile(self, result_src: str):
        """(check, result): Python functions of the leaves (positional, in `names` order)."""
        args = ", ".join(self.names)
        text = (f"def check({args}):\n    return {self.condition()}\n"
                f"def result({args}):\n    return {result_src}\n")
        ns: dict = {}
        exec(compile(text, "<frametrace size class>", "exec"), ns)
        ns["check"].source = ns["result"].source = text
        return ns["check"], ns["result"]


def source(x) -> str:
    """The source of an int or TracedInt (what `result` sources are made of)."""
    if isinstance(x, TracedInt):
        return x.src
    if isinstance(x, (int, np.integer)):
        return repr(int(x)) if x >= 0 else f"({int(x)})"
    raise TypeError(f"not an integer: {x!r}")


def _operand(x, trace):
    """(value, source) of an int operand, or None (the operation is not traced)."""
    if isinstance(x, TracedInt):
        if x.trace is not trace:
            raise ValueError("TracedInts of two traces")
        return x.value, x.src
    if isinstance(x, (int, np.integer)):
        return int(x), source(x)
    return None


class TracedInt:
    """A concrete int plus the source of its expression over the leaves of a Trace."""
    __slots__ = ("value", "src", "trace")
    __array_ufunc__ = None                       # NumPy ints defer to our reflected operators

    def __init__(self, value: int, src: str, trace: Trace):
        self.value, self.src, self.trace = value, src, trace

    def __repr__(self):
        return f"TracedInt({self.value}, {self.src!r})"

    # ---- arithmetic: exact on ints --------------------------------------------------------
    def _arith(self, other, op, reflected=False):
        o = _operand(other, self.trace)
        if o is None:
            return NotImplemented
        ov, osrc = o
        if not isinstance(other, TracedInt) and ov == (1 if op == "*" else 0) and not (reflected and op == "-"):
            return self                          # x * 1, x + 0, x - 0, 0 + x, 1 * x
        a, b = (ov, self.value) if reflected else (self.value, ov)
        sa, sb = (osrc, self.src) if reflected else (self.src, osrc)
        value = a + b if op == "+" else a - b if op == "-" else a * b
        return TracedInt(value, f"({sa} {op} {sb})", self.trace)

    def __add__(self, o): return self._arith(o, "+")
    def __radd__(self, o): return self._arith(o, "+", True)
    def __sub__(self, o): return self._arith(o, "-")
    def __rsub__(self, o): return self._arith(o, "-", True)
    def __mul__(self, o): return self._arith(o, "*")
    def __rmul__(self, o): return self._arith(o, "*", True)

    def __neg__(self):
        return TracedInt(-self.value, f"(-{self.src})", self.trace)

    def __pos__(self):
        return self

    def __abs__(self):
        return TracedInt(abs(self.value), f"abs({self.src})", self.trace)

    # ---- decisions: answered concretely, recorded ------------------------------------------
    def _cmp(self, other, op):
        o = _operand(other, self.trace)
        if o is None:
            return NotImplemented
        ov, osrc = o
        answer = _CMP[op](self.value, ov)
        if osrc == self.src:
            return answer                        # x == x: the same for every value
        return self.trace.record(f"({self.src} {op} {osrc})", answer)

    def __eq__(self, o): return self._cmp(o, "==")
    def __ne__(self, o): return self._cmp(o, "!=")
    def __lt__(self, o): return self._cmp(o, "<")
    def __le__(self, o): return self._cmp(o, "<=")
    def __gt__(self, o): return self._cmp(o, ">")
    def __ge__(self, o): return self._cmp(o, ">=")

    def __bool__(self):
        return self.trace.record(f"({self.src} != 0)", self.value != 0)

    def __int__(self):
        """Specialise: the class holds only this value."""
        self.trace.record(f"({self.src} == {source(self.value)})", True)
        return self.value

    __index__ = __int__

    def __hash__(self):
        raise TypeError("unhashable type: 'TracedInt' (a hash would specialise silently)")
