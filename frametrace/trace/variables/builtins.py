"""Python builtins while tracing: len, range, min, max, abs, isinstance, int, float, enumerate, zip, ..."""
from __future__ import annotations

import builtins
import math

import numpy as np

from ...errors import NumpyError, Unsupported
from ...ir.builder import Proxy, record_fake
from ...ir.fake import FakeScalar
from .array import ArrayVariable
from .base import VariableTracker
from .constant import ConstantVariable, SymNumberVariable, wrap_number
from .containers import (DataRangeVariable, DictVariable, InputListVariable, ListIteratorVariable, ListVariable,
                         RangeVariable, TupleVariable, constant_key)
from .functions import PartialVariable, SuperVariable, class_variable
from .indexed import IndexedIterable, indexable
from .scalar_choice import ScalarChoiceVariable, scalar_choice
from .strings import convert


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
        if any(isinstance(a, ScalarChoiceVariable) for a in args):
            # float(), int(), bool() give the same Python value for either candidate
            if self.fn in (builtins.float, builtins.int, builtins.bool) and len(args) == 1 and not kwargs:
                args = [args[0].value]
            elif self.fn not in (builtins.abs, builtins.isinstance, builtins.str, builtins.repr):
                raise next(a for a in args if isinstance(a, ScalarChoiceVariable)).refuse()
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
                          hints=("the frame breaks the graph at the call: the code before and after it compiles",))

    def call_len(self, tx, obj):
        if isinstance(obj, ArrayVariable):
            shape = obj.proxy.shape
            if not shape:
                raise Unsupported("len() of a 0-d array", kind="call")
            return wrap_number(shape[0])
        if isinstance(obj, InputListVariable) and obj.lazy:
            return obj.length(tx)
        if isinstance(obj, RangeVariable):
            return obj.length(tx)
        if isinstance(obj, (TupleVariable, ListVariable, DictVariable)):
            return ConstantVariable(len(obj.items))
        return None

    def call_isinstance(self, tx, obj, classinfo):
        cls = classinfo.as_python_constant()
        return ConstantVariable(issubclass(obj.python_type(), cls))

    def call_type(self, tx, obj):
        # the type of a traced object is guarded (its exact type when it was wrapped): a user
        # class is held by the entry, so its attributes are read, guarded and stored through it
        return class_variable(tx, obj.python_type())

    def call_range(self, tx, *args):
        if not 1 <= len(args) <= 3:
            return None
        data = False
        for k, a in enumerate(args):
            if _data_int(a) and k < 2:
                data = True                     # range(p[i], p[i + 1]): a loop node over data bounds
            elif not (isinstance(a, SymNumberVariable) and a.python_type() is int) and \
                    not (a.is_python_constant() and type(a.as_python_constant()) in (int, bool)):
                return None
        parts = list(args) if len(args) > 1 else [ConstantVariable(0), args[0]]
        if len(parts) == 2:
            parts.append(ConstantVariable(1))
        if parts[2].is_python_constant() and parts[2].as_python_constant() == 0:
            raise NumpyError(ValueError("range() arg 3 must not be zero"), context="range")
        if data:
            if not parts[2].is_python_constant():
                return None                     # (a symbolic step with data bounds: not a loop node)
            return DataRangeVariable(*parts)
        return RangeVariable(*parts)

    def call_enumerate(self, tx, iterable, start=None):
        if indexable(iterable) and (start is None or type(tx.unwrap(start)) is int or
                                    (isinstance(start, SymNumberVariable) and start.python_type() is int)):
            return IndexedIterable("enumerate", [iterable], 0 if start is None else tx.unwrap(start))
        first = 0 if start is None else _int(tx, start)
        items = iterable.unpack(tx)
        return ListIteratorVariable([TupleVariable([ConstantVariable(first + i), v]) for i, v in enumerate(items)])

    def call_zip(self, tx, *iterables, **kwargs):
        if kwargs:
            return None
        if iterables and all(indexable(it) for it in iterables):
            return IndexedIterable("zip", list(iterables))    # a loop over it can be a loop node
        columns = [it.unpack(tx) for it in iterables]
        return ListIteratorVariable([TupleVariable(list(row)) for row in zip(*columns)])

    def call_reversed(self, tx, seq):
        if indexable(seq) and not isinstance(seq, IndexedIterable):
            return IndexedIterable("reversed", [seq])
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

    def call_sorted(self, tx, seq, key=None, reverse=None):
        items = seq.unpack(tx)
        keys = items if key is None or (key.is_python_constant() and key.as_python_constant() is None) \
            else [key.call_function(tx, [i], {}) for i in items]
        rev = bool(reverse.as_python_constant()) if reverse is not None else False
        order = sorted(range(len(items)), key=lambda i: constant_key(tx, keys[i]), reverse=rev)
        return ListVariable([items[i] for i in order])

    def call_map(self, tx, fn, *iterables):
        if not iterables:
            return None
        columns = [it.unpack(tx) for it in iterables]
        return ListIteratorVariable([fn.call_function(tx, list(row), {}) for row in zip(*columns)])

    def call_filter(self, tx, fn, iterable):
        keep = []
        no_fn = fn.is_python_constant() and fn.as_python_constant() is None
        for item in iterable.unpack(tx):
            test = item if no_fn else fn.call_function(tx, [item], {})
            if test.truth(tx):
                keep.append(item)
        return ListIteratorVariable(keep)

    def call_any(self, tx, iterable):
        return ConstantVariable(any(item.truth(tx) for item in iterable.unpack(tx)))

    def call_all(self, tx, iterable):
        return ConstantVariable(all(item.truth(tx) for item in iterable.unpack(tx)))

    def call_next(self, tx, it, default=None):
        if isinstance(it, ListIteratorVariable):
            item = it.next_item()
            if item is not None:
                return item
            if default is not None:
                return default
            raise NumpyError(StopIteration(), context="next")
        return None

    def call_super(self, tx, *args):
        if len(args) == 2:
            return SuperVariable(args[0].as_python_constant(), args[1])
        if args:
            return None
        box = tx.cells.get("__class__")
        if box is None or box.value is None or not tx.code.co_argcount:
            raise Unsupported("super() outside a method", kind="call")
        first = tx.code.co_varnames[0]       # what CPython reads: the frame's first local
        if first not in tx.locals and first in tx.lazy:       # an argument not wrapped yet
            tx.locals[first] = tx.wrap_value(*tx.lazy.pop(first))
        obj = tx.locals.get(first)
        if obj is None and first in tx.cells:
            obj = tx.cells[first].value
        if obj is None:
            raise Unsupported("super(): the first argument is not bound", kind="call")
        return SuperVariable(box.value.as_python_constant(), obj)

    def call_partial(self, tx, fn, *args, **kwargs):
        return PartialVariable(fn, args, kwargs)

    def _minmax(self, tx, args, pick):
        if len(args) == 1:
            args = args[0].unpack(tx)
        if any(isinstance(a, ArrayVariable) for a in args):
            return _scalar_minmax(tx, args, pick)
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
        if isinstance(x, ScalarChoiceVariable):
            return x.unary(tx, "abs")
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
            if x.is_python_scalar and x.python_type() is int and not rest:
                return x
            if rest or not (x.is_python_scalar or _is_0d(x)):
                raise _data_dependent("int")
            from ...ir.numpy_api import python_int
            return tx.wrap_result(python_int(tx.output.builder, x.proxy))
        return None

    def call_pow(self, tx, base, exp, mod=None):
        if mod is None and (isinstance(base, ArrayVariable) or isinstance(exp, ArrayVariable)):
            return tx.binary(base, exp, "**")        # pow(a, b) is a ** b
        return None

    def call_float(self, tx, x=None):
        if isinstance(x, SymNumberVariable):
            return ConstantVariable(float(x.value))
        if isinstance(x, ArrayVariable):
            if x.is_python_scalar and x.python_type() is float:
                return x
            if _is_0d(x) and x.proxy.dtype.kind in "biuf":
                return _as_python_scalar(tx, x, float)
            raise _data_dependent("float")
        return None

    def call_str(self, tx, x=None, *rest):
        return None if rest or x is None else convert("str", x)

    def call_repr(self, tx, x):
        return convert("repr", x)

    def call_bool(self, tx, x=None):
        if x is None:
            return ConstantVariable(False)
        if isinstance(x, ArrayVariable) and (x.is_python_scalar or _is_0d(x)):
            if x.python_type() is bool:
                return x
            if x.is_python_scalar or x.proxy.dtype.kind in "biufc":
                # bool(v) of a number the graph computes: v != 0 (NaN is true), a Python bool
                from ...ir.numpy_api.common import as_array
                b = tx.output.builder
                cast = b.emit("astype", as_array(b, x.proxy, "bool"), dtype=np.dtype(np.bool_))
                return ArrayVariable(Proxy(cast.node, FakeScalar(bool)))
        return ConstantVariable(x.truth(tx))

    def call_round(self, tx, x, ndigits=None):
        if isinstance(x, SymNumberVariable) and ndigits is None:
            return ConstantVariable(round(x.value))
        if isinstance(x, ArrayVariable):
            from ...ir.numpy_api import python_round
            n = None if ndigits is None else tx.unwrap(ndigits)
            return tx.wrap_result(python_round(tx.output.builder, x.proxy, n))
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


def _data_int(a) -> bool:
    """An integer the graph computes that range() takes (its __index__): a NumPy integer
    scalar or 0-d integer array, or a run-time Python int."""
    if not isinstance(a, ArrayVariable):
        return False
    if a.is_python_scalar:
        return a.python_type() is int
    return a.proxy.ndim == 0 and a.proxy.dtype.kind in "iu"


def _is_0d(x) -> bool:
    return not x.is_python_scalar and x.proxy.ndim == 0


def _as_python_scalar(tx, x, pytype):
    """float(a) of a 0-d graph value: a run-time Python float of the graph (the cast to float64
    happens in the graph; the entry turns the output into a Python float). In the graph it is a
    float64 value, which NumPy promotes like a Python float except against float16, float32 and
    complex64 operands: there `ArrayVariable.check_mixing` refuses it (a graph break)."""
    cast = tx.output.builder.emit("astype", x.proxy, dtype=np.dtype(np.float64))
    record_fake(cast.node, FakeScalar(pytype))          # the NumPy backend makes it a Python float
    out = ArrayVariable(Proxy(cast.node, FakeScalar(pytype)))
    out.derived_python_scalar = True
    return out


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
            if kwargs:
                raise Unsupported(f"math.{self.fn.__name__} with keyword arguments", kind="call")
            from ...ir.numpy_api import math_function
            return tx.wrap_result(math_function(tx.output.builder, self.fn, [tx.unwrap(a) for a in args]))
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


def _scalar_minmax(tx, args, pick):
    """min/max of NumPy or run-time Python scalars, as Python computes it: the first item,
    replaced by each later one that compares smaller (larger); NaN stays where Python leaves
    it. The items must share one type (else the result's type would depend on the data)."""
    if not args or not all(not isinstance(a, ArrayVariable) or isinstance(a.proxy.fake, FakeScalar) or
                           a.proxy.ndim == 0 for a in args):
        return None
    op = "<" if pick is builtins.min else ">"
    result = args[0]
    for item in args[1:]:
        better = tx.compare(item, result, op)
        if not isinstance(better, ArrayVariable):
            result = item if better.truth(tx) else result
            continue
        raw = [v.proxy if isinstance(v, ArrayVariable) else tx.unwrap(v) for v in (item, result)]
        try:
            result = tx.wrap_result(tx.output.builder.emit("select", better.proxy, *raw))
        except Unsupported as exc:
            choice = scalar_choice(tx, pick.__name__, better, item, result) if len(args) == 2 else None
            if choice is not None:
                return choice
            exc.explanation = (f"{pick.__name__}() of {result.describe()} and {item.describe()}: its type "
                               "(a Python or a NumPy scalar) depends on the data")
            exc.hints = (f"start from a value of the items' type, e.g. np.float64(np.inf) for {pick.__name__}()",)
            raise
    return result
