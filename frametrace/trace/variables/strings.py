"""Strings formatted from values the graph computes: `f"loss={loss:.4f}"`, `"%.3f" % err`,
`str(v)`, `repr(v)`, and their concatenation.

The string is not made while tracing (the value is not known); a `LazyStringVariable` records
how to make it, and the wrapper makes it from the graph's outputs where the string leaves the
graph (returned, stored, or on the stack at a graph break: `print(f"...")` breaks at print, not
at the f-string, so the code before it compiles instead of the whole frame running eagerly).
Python's own `format`/`%`/`str`/`repr` run on the very objects the program would have formatted
(NumPy scalars stay NumPy scalars, Python floats Python floats), so the text is the program's.

Only immutable values are formatted lazily: NumPy and Python scalars, `max()`/`min()` choices and
other lazy strings. An array (which a later in-place update could change before the string is
made) and any use of the string other than concatenation stay graph breaks naming the line.
"""
from __future__ import annotations

from ...errors import Unsupported
from .array import ArrayVariable
from .base import VariableTracker
from .constant import ConstantVariable, SymNumberVariable
from .scalar_choice import ScalarChoiceVariable

_CONVERSIONS = {0: None, 1: "str", 2: "repr", 3: "ascii"}


def formattable(vt) -> bool:
    """A value whose text the wrapper can make later: it cannot change before then."""
    if isinstance(vt, (ScalarChoiceVariable, SymNumberVariable, LazyStringVariable)):
        return True
    if isinstance(vt, ArrayVariable):
        return vt.is_python_scalar or vt.proxy.fake.scalar
    return False


class LazyStringVariable(VariableTracker):
    """A str the wrapper builds: pieces are str constants, ("format", vt, conversion, spec) and
    ("percent", format string, [vts])."""

    def __init__(self, pieces):
        self.pieces, self.source = list(pieces), None

    def python_type(self):
        return str

    def describe(self):
        return "a string formatted from values the graph computes"

    def refuse(self, what: str) -> Unsupported:
        return Unsupported(f"{what} a string formatted from values the graph computes", kind="call",
                           hints=("the text is made when it leaves the graph; format it outside the "
                                  "compiled function, or keep the numbers and format them later",))

    def truth(self, tx):
        raise self.refuse("branching on")

    def unpack(self, tx):
        raise self.refuse("iterating over")

    def var_getattr(self, tx, name):
        raise self.refuse(f"str.{name} of")

    def reconstruct(self, rebuild):
        codes = []
        for p in self.pieces:
            if isinstance(p, str):
                codes.append(repr(p))
            elif p[0] == "format":
                _, vt, conv, spec = p
                inner = rebuild(vt)
                codes.append(f"format({conv}({inner}), {spec!r})" if conv else f"format({inner}, {spec!r})")
            else:
                _, fmt, vts = p
                codes.append(f"({fmt!r} % ({''.join(rebuild(v) + ', ' for v in vts)}))")
        return f"''.join(({''.join(c + ', ' for c in codes)}))"


def _pieces(vt) -> list:
    if isinstance(vt, LazyStringVariable):
        return vt.pieces
    if isinstance(vt, ConstantVariable) and isinstance(vt.value, str):
        return [vt.value]
    raise Unsupported(f"joining {vt.describe()} into a string", kind="call")


def format_value(value, conversion: int, spec) -> LazyStringVariable | None:
    """FORMAT_VALUE / CONVERT_VALUE + FORMAT_*: a lazy string, or None for a constant value."""
    if value.is_python_constant() or not formattable(value):
        return None
    if not isinstance(spec, str):
        raise Unsupported("a format spec computed from graph values", kind="call")
    if isinstance(value, LazyStringVariable) and not conversion and not spec:
        return value
    return LazyStringVariable([("format", value, _CONVERSIONS[conversion], spec)])


def build_string(parts) -> VariableTracker:
    """BUILD_STRING: a constant when every part is one, else a lazy string."""
    if all(p.is_python_constant() for p in parts):
        return ConstantVariable("".join(p.as_python_constant() for p in parts))
    pieces = []
    for p in parts:
        pieces += _pieces(p)
    return LazyStringVariable(pieces)


def string_binary(a, b, op: str) -> VariableTracker | None:
    """`s + t` with a lazy string, `"%.3f" % v` of graph values; None when neither applies."""
    if isinstance(a, LazyStringVariable) or isinstance(b, LazyStringVariable):
        if op in ("+", "+="):
            return LazyStringVariable(_pieces(a) + _pieces(b))
        raise (a if isinstance(a, LazyStringVariable) else b).refuse(f"operator {op} on")
    if op in ("%", "%=") and isinstance(a, ConstantVariable) and isinstance(a.value, str):
        items = getattr(b, "items", None) if type(b).__name__ == "TupleVariable" else [b]
        if items is None or all(i.is_python_constant() for i in items):
            return None
        if all(i.is_python_constant() or formattable(i) for i in items):
            return LazyStringVariable([("percent", a.value, items)])
    return None


def convert(fn_name: str, value) -> LazyStringVariable | None:
    """str(v) / repr(v) / ascii(v) of a graph scalar: a lazy string."""
    if value.is_python_constant() or not formattable(value):
        return None
    return LazyStringVariable([("format", value, fn_name, "")])


def join(tx, fn, args, kwargs) -> VariableTracker | None:
    """`sep.join(items)`: a lazy string when an item is one, the str when all are constants;
    None for other calls."""
    if kwargs or len(args) != 1:
        return None
    obj, name = getattr(fn, "obj", None), getattr(fn, "name", None)     # a method load: s.join
    if isinstance(obj, ConstantVariable) and name == "join":
        sep = obj.value
    elif isinstance(fn, ConstantVariable):
        sep = getattr(fn.value, "__self__", None) if getattr(fn.value, "__name__", "") == "join" else None
    else:
        return None
    if type(sep) is not str:
        return None
    try:
        items = args[0].unpack(tx)
    except Unsupported:
        return None
    if all(isinstance(i, ConstantVariable) and type(i.value) is str for i in items):
        return ConstantVariable(sep.join(i.value for i in items))
    if not any(isinstance(i, LazyStringVariable) for i in items):
        return None
    pieces = []
    for k, item in enumerate(items):
        if k:
            pieces.append(sep)
        if isinstance(item, ConstantVariable) and not isinstance(item.value, str):
            raise Unsupported(f"str.join of {item.describe()}", kind="call")   # Python's TypeError, eagerly
        pieces += _pieces(item)
    return LazyStringVariable(pieces)


def not_formattable(value) -> Unsupported:
    """The graph break for formatting a value that is neither a constant nor a scalar."""
    return Unsupported(f"formatting {value.describe()} into a string", kind="call",
                       hints=("scalars are formatted without a break (x.sum(), x[i], float(v)); an array is "
                              "formatted where the line runs: return it and format it outside the compiled "
                              "function",))
