"""Python builtins while tracing: len, range, min, max, abs, isinstance, int, float, enumerate, zip, ..."""
from __future__ import annotations

import builtins
import math

from ...errors import Unsupported
from .array import ArrayVariable
from .base import VariableTracker
from .constant import ConstantVariable, SymNumberVariable, wrap_number
from .containers import DictVariable, ListIteratorVariable, ListVariable, TupleVariable


class BuiltinVariable(VariableTracker):
    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def describe(self):
        return f"builtin {self.fn.__name__}"

    def call_function(self, tx, args, kwargs):
        handler = getattr(self, f"call_{self.fn.__name__}", None)
        if handler is not None:
            result = handler(tx, *args, **kwargs)
            if result is not None:
                return result
        if all(a.is_python_constant() for a in args) and all(v.is_python_constant() for v in kwargs.values()) \
                and self.fn in _PURE:
            return tx.constant_fold(self.fn, args, kwargs)
        raise Unsupported(f"builtin {self.fn.__name__} with these arguments", kind="call",
                          context=f"{self.fn.__name__}({', '.join(a.describe() for a in args)})")

    # -- one handler per builtin; returning None falls back to constant folding --

    def call_print(self, tx, *args, **kwargs):
        raise Unsupported("call to builtin print (a side effect)", kind="call", context="print",
                          hints=("graph breaks arrive in a later version; this frame runs eagerly",))

    def call_len(self, tx, obj):
        if isinstance(obj, ArrayVariable):
            shape = obj.proxy.shape
            if not shape:
                raise Unsupported("len() of a 0-d array", kind="call")
            return wrap_number(shape[0])
        if isinstance(obj, (TupleVariable, ListVariable, DictVariable)):
            return ConstantVariable(len(obj.items))
        return None

    def call_isinstance(self, tx, obj, classinfo):
        cls = classinfo.as_python_constant()
        return ConstantVariable(issubclass(obj.python_type(), cls))

    def call_type(self, tx, obj):
        return ConstantVariable(obj.python_type())

    def call_range(self, tx, *args):
        if any(isinstance(a, SymNumberVariable) for a in args):
            return RangeVariable(tx, args)
        it = ListIteratorVariable([ConstantVariable(i) for i in range(*[_int(tx, a) for a in args])])
        it.from_range = True          # NumPy sees a range as a sequence (x[range(n)] indexes)
        return it

    def call_enumerate(self, tx, iterable, start=None):
        first = 0 if start is None else _int(tx, start)
        items = iterable.unpack(tx)
        return ListIteratorVariable([TupleVariable([ConstantVariable(first + i), v]) for i, v in enumerate(items)])

    def call_zip(self, tx, *iterables, **kwargs):
        if kwargs:
            return None
        columns = [it.unpack(tx) for it in iterables]
        return ListIteratorVariable([TupleVariable(list(row)) for row in zip(*columns)])

    def call_reversed(self, tx, seq):
        return ListIteratorVariable(list(reversed(seq.unpack(tx))))

    def call_iter(self, tx, seq):
        return ListIteratorVariable(seq.unpack(tx))

    def call_tuple(self, tx, seq=None):
        return TupleVariable([] if seq is None else seq.unpack(tx))

    def call_list(self, tx, seq=None):
        return ListVariable([] if seq is None else seq.unpack(tx))

    def call_dict(self, tx, *args, **kwargs):
        items = {}
        if args:
            if isinstance(args[0], DictVariable):
                items.update(args[0].items)
            else:
                for pair in args[0].unpack(tx):
                    k, v = pair.unpack(tx)
                    items[k.as_python_constant()] = v
        items.update(kwargs)
        return DictVariable(items)

    def call_sorted(self, tx, seq, **kwargs):
        if kwargs:
            return None
        items = seq.unpack(tx)
        if all(i.is_python_constant() for i in items):
            return ListVariable([ConstantVariable(v) for v in sorted(i.as_python_constant() for i in items)])
        return None

    def _minmax(self, tx, args, pick):
        if len(args) == 1:
            args = args[0].unpack(tx)
        if any(isinstance(a, ArrayVariable) for a in args):
            return None
        values = [tx.unwrap(a) for a in args]
        if any(isinstance(a, SymNumberVariable) for a in args):
            from ...shapes import sym_max, sym_min
            fn = sym_max if pick is builtins.max else sym_min
            result = values[0]
            for v in values[1:]:
                result = fn(result, v)
            return wrap_number(result)
        return ConstantVariable(pick(values))

    def call_min(self, tx, *args, **kwargs):
        return None if kwargs else self._minmax(tx, args, builtins.min)

    def call_max(self, tx, *args, **kwargs):
        return None if kwargs else self._minmax(tx, args, builtins.max)

    def call_abs(self, tx, x):
        if isinstance(x, ArrayVariable):
            from ...ir.numpy_api import unary_op
            return tx.wrap_result(unary_op(tx.output.builder, "abs", x.proxy))
        if isinstance(x, SymNumberVariable):
            return wrap_number(abs(x.value))
        return None

    def call_sum(self, tx, seq, start=None):
        items = seq.unpack(tx)
        total = start if start is not None else ConstantVariable(0)
        for item in items:
            total = tx.binary(total, item, "+")
        return total

    def call_int(self, tx, x=None, *rest):
        if isinstance(x, SymNumberVariable) and not rest:
            return ConstantVariable(int(x.value))      # specialises, with a guard
        if isinstance(x, ArrayVariable):
            raise _data_dependent("int")
        return None

    def call_float(self, tx, x=None):
        if isinstance(x, SymNumberVariable):
            return ConstantVariable(float(x.value))
        if isinstance(x, ArrayVariable):
            if x.is_python_scalar and x.python_type() is float:
                return x
            raise _data_dependent("float")
        return None

    def call_bool(self, tx, x=None):
        if x is None:
            return ConstantVariable(False)
        return ConstantVariable(x.truth(tx))

    def call_round(self, tx, x, ndigits=None):
        if isinstance(x, SymNumberVariable) and ndigits is None:
            return ConstantVariable(round(x.value))
        return None

    def call_divmod(self, tx, a, b):
        return TupleVariable([tx.binary(a, b, "//"), tx.binary(a, b, "%")])

    def call_getattr(self, tx, obj, name, default=None):
        try:
            return obj.var_getattr(tx, name.as_python_constant())
        except Unsupported:
            if default is not None:
                return default
            raise

    def call_hasattr(self, tx, obj, name):
        try:
            obj.var_getattr(tx, name.as_python_constant())
            return ConstantVariable(True)
        except Unsupported:
            return None


class RangeVariable(ListIteratorVariable):
    """range() over sizes: iterating it specialises the sizes (guards), but as a NumPy index
    (`wpe[range(n)]`) it stays symbolic (`range_args`: the unspecialised bounds)."""

    def __init__(self, tx, args):
        self.tx, self.range_args, self.index, self._items = tx, list(args), 0, None
        self.from_range = True

    @property
    def items(self):
        if self._items is None:
            self._items = [ConstantVariable(i) for i in range(*[_int(self.tx, a) for a in self.range_args])]
        return self._items


def _int(tx, v):
    if isinstance(v, SymNumberVariable):
        return int(v.value)                   # range() over a size specialises it
    return v.as_python_constant()


def _data_dependent(what):
    from ...errors import DataDependentError
    return DataDependentError(f"{what}() of an array value needs its data", context=what)


_PURE = {builtins.abs, builtins.len, builtins.min, builtins.max, builtins.int, builtins.float, builtins.bool,
         builtins.str, builtins.round, builtins.divmod, builtins.pow, builtins.isinstance, builtins.issubclass,
         builtins.tuple, builtins.sorted, builtins.sum, builtins.any, builtins.all, builtins.hash,
         builtins.repr, builtins.format, builtins.complex, builtins.ord, builtins.chr}


class MathFunctionVariable(VariableTracker):
    """A `math` function: folded on constants; on sizes computed symbolically where exact."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call_function(self, tx, args, kwargs):
        if all(a.is_python_constant() for a in args) and not kwargs:
            return tx.constant_fold(self.fn, args, kwargs)
        if any(isinstance(a, ArrayVariable) for a in args):
            raise Unsupported(f"math.{self.fn.__name__} of an array value", kind="call")
        values = [tx.unwrap(a) for a in args]
        name = self.fn.__name__
        if name == "prod":
            total = kwargs.get("start", ConstantVariable(1))
            for item in args[0].unpack(tx):
                total = tx.binary(total, item, "*")
            return total
        if name in ("ceil", "floor", "trunc") and isinstance(args[0], SymNumberVariable):
            from ...shapes import SymFloat
            v = values[0]
            if not isinstance(v, SymFloat):
                return args[0]
        # Otherwise specialise: the result depends on the exact value (guarded).
        concrete = [float(v) if isinstance(a, SymNumberVariable) and a.python_type() is float
                    else (int(v) if isinstance(a, SymNumberVariable) else v) for a, v in zip(args, values)]
        return ConstantVariable(self.fn(*concrete))

    def describe(self):
        return f"math.{self.fn.__name__}"


MATH_FUNCTIONS = {getattr(math, n) for n in dir(math) if callable(getattr(math, n))}
