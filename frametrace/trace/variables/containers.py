"""Tuples, lists, dicts, slices, ranges and iterators (loops over them are unrolled)."""
from __future__ import annotations

import functools

from ...errors import NumpyError, Unsupported
from ...sources import IterItemSource
from .base import NotConstant, VariableTracker
from .constant import ConstantVariable


class BaseSequenceVariable(VariableTracker):
    pytype: type = tuple

    def __init__(self, items, source=None):
        self.items, self.source = list(items), source

    def python_type(self):
        return self.pytype

    def as_python_constant(self):
        return self.pytype(i.as_python_constant() for i in self.items)

    def unpack(self, tx):
        return list(self.items)

    def truth(self, tx):
        return bool(self.items)

    def describe(self):
        return f"{self.pytype.__name__} of {len(self.items)}"

    def __repr__(self):
        return f"{type(self).__name__}({self.items!r})"


class TupleVariable(BaseSequenceVariable):
    pytype = tuple

    def call_method(self, tx, name, args, kwargs):
        if name == "index" and len(args) == 1:
            return ConstantVariable(self.as_python_constant().index(args[0].as_python_constant()))
        if name == "count" and len(args) == 1:
            return ConstantVariable(self.as_python_constant().count(args[0].as_python_constant()))
        raise Unsupported(f"tuple.{name}", kind="call")


def constant_key(tx, vt):
    """A dict key or list index as a Python value: a size specialises (guarded), data is refused."""
    from .constant import SymNumberVariable
    if isinstance(vt, SymNumberVariable):
        return int(vt.value) if vt.python_type() is int else vt.python_type()(vt.value)
    if type(vt) is TupleVariable:
        return tuple(constant_key(tx, item) for item in vt.items)      # `d[x.shape]`
    try:
        key = vt.as_python_constant()
    except NotConstant:
        raise Unsupported(f"{vt.describe()} as a dict key or list index", kind="subscript",
                          hints=("keys must be constants or sizes",)) from None
    try:
        hash(key)
    except TypeError:
        raise Unsupported(f"unhashable key {vt.describe()}", kind="subscript") from None
    return key


def _matches(tx, item, target) -> bool:
    if item is target:
        return True
    return tx.compare(item, target, "==").truth(tx)


class ListVariable(BaseSequenceVariable):
    """A list. Mutating a list the caller can see is a side effect, replayed after the graph."""
    pytype = list

    def mutated(self, tx):
        tx.output.side_effects.mutate(self)

    def call_method(self, tx, name, args, kwargs):
        if kwargs and name != "sort":
            raise Unsupported(f"list.{name} with keyword arguments", kind="call")
        n = len(args)
        if name == "append" and n == 1:
            self.items.append(args[0])
        elif name == "extend" and n == 1:
            self.items.extend(args[0].unpack(tx))
        elif name == "insert" and n == 2:
            self.items.insert(constant_key(tx, args[0]), args[1])
        elif name == "pop" and n <= 1:
            index = constant_key(tx, args[0]) if args else -1
            try:
                value = self.items.pop(index)
            except IndexError as exc:
                raise NumpyError(exc, context="list.pop") from None
            self.mutated(tx)
            return value
        elif name == "remove" and n == 1:
            for i, item in enumerate(self.items):
                if _matches(tx, item, args[0]):
                    del self.items[i]
                    break
            else:
                raise NumpyError(ValueError("list.remove(x): x not in list"), context="list.remove")
        elif name == "clear" and n == 0:
            self.items.clear()
        elif name == "reverse" and n == 0:
            self.items.reverse()
        elif name == "copy" and n == 0:
            return ListVariable(self.items)
        elif name == "index" and n == 1:
            for i, item in enumerate(self.items):
                if _matches(tx, item, args[0]):
                    return ConstantVariable(i)
            raise NumpyError(ValueError("list.index(x): x not in list"), context="list.index")
        elif name == "count" and n == 1:
            return ConstantVariable(sum(1 for item in self.items if _matches(tx, item, args[0])))
        elif name == "__setitem__" and n == 2:
            self.setitem(tx, args[0], args[1])
        elif name == "__delitem__" and n == 1:
            self.delitem(tx, args[0])
        else:
            raise Unsupported(f"list.{name}", kind="call")
        self.mutated(tx)
        return ConstantVariable(None)

    def setitem(self, tx, key, value):
        if isinstance(key, SliceVariable):
            k = slice(*(constant_key(tx, p) for p in key.parts))
            self.items[k] = value.unpack(tx)
        else:
            k = constant_key(tx, key)
            if type(k) is int and -len(self.items) <= k < len(self.items) and \
                    tx.output.side_effects.store_item(self, k % len(self.items), value):
                return                                  # an item a loop body carries
            try:
                self.items[k] = value
            except (IndexError, TypeError) as exc:
                raise NumpyError(exc, context="list assignment") from None
        self.mutated(tx)

    def delitem(self, tx, key):
        k = slice(*(constant_key(tx, p) for p in key.parts)) if isinstance(key, SliceVariable) \
            else constant_key(tx, key)
        try:
            del self.items[k]
        except (IndexError, TypeError) as exc:
            raise NumpyError(exc, context="del list item") from None
        self.mutated(tx)


class DictVariable(VariableTracker):
    """A dict with constant keys. Mutating a dict the caller can see is a side effect, replayed
    after the graph."""

    def __init__(self, items: dict, source=None):
        self.items, self.source = dict(items), source

    def python_type(self):
        return dict

    def as_python_constant(self):
        return {k: v.as_python_constant() for k, v in self.items.items()}

    def unpack(self, tx):
        return [ConstantVariable(k) for k in self.items]

    def truth(self, tx):
        return bool(self.items)

    def getitem(self, key):
        try:
            return self.items[key]
        except KeyError:
            raise NumpyError(KeyError(key), context="dict lookup") from None

    def mutated(self, tx):
        tx.output.side_effects.mutate(self)

    def call_method(self, tx, name, args, kwargs):
        n = len(args)
        if name == "items" and n == 0:
            return ListIteratorVariable([TupleVariable([ConstantVariable(k), v]) for k, v in self.items.items()])
        if name in ("keys", "__iter__") and n == 0:
            return ListIteratorVariable([ConstantVariable(k) for k in self.items])
        if name == "values" and n == 0:
            return ListIteratorVariable(list(self.items.values()))
        if name == "get" and 1 <= n <= 2:
            return self.items.get(constant_key(tx, args[0]), args[1] if n == 2 else ConstantVariable(None))
        if name == "__getitem__" and n == 1:
            return self.getitem(constant_key(tx, args[0]))
        if name == "__contains__" and n == 1:
            return ConstantVariable(constant_key(tx, args[0]) in self.items)
        if name == "__len__" and n == 0:
            return ConstantVariable(len(self.items))
        if name == "copy" and n == 0:
            return DictVariable(self.items)
        result = ConstantVariable(None)
        if name == "__setitem__" and n == 2:
            key = constant_key(tx, args[0])
            if key in self.items and tx.output.side_effects.store_item(self, key, args[1]):
                return result                           # an entry a loop body carries
            self.items[key] = args[1]
        elif name == "__delitem__" and n == 1:
            key = constant_key(tx, args[0])
            if key not in self.items:
                raise NumpyError(KeyError(key), context="del dict item")
            del self.items[key]
        elif name == "pop" and 1 <= n <= 2:
            key = constant_key(tx, args[0])
            if key in self.items:
                result = self.items.pop(key)
            elif n == 2:
                return args[1]
            else:
                raise NumpyError(KeyError(key), context="dict.pop")
        elif name == "setdefault" and 1 <= n <= 2:
            key = constant_key(tx, args[0])
            if key in self.items:
                return self.items[key]
            result = self.items[key] = args[1] if n == 2 else ConstantVariable(None)
        elif name == "update" and n <= 1:
            if args:
                other = args[0]
                if isinstance(other, DictVariable):
                    self.items.update(other.items)
                else:
                    for pair in other.unpack(tx):
                        k, v = pair.unpack(tx)
                        self.items[constant_key(tx, k)] = v
            self.items.update(kwargs)
        elif name == "clear" and n == 0:
            self.items.clear()
        elif name == "popitem" and n == 0:
            if not self.items:
                raise NumpyError(KeyError("popitem(): dictionary is empty"), context="dict.popitem")
            k, v = self.items.popitem()
            result = TupleVariable([ConstantVariable(k), v])
        else:
            raise Unsupported(f"dict.{name}", kind="call")
        self.mutated(tx)
        return result

    def describe(self):
        return f"dict of {len(self.items)}"


class SliceVariable(VariableTracker):
    def __init__(self, start, stop, step):
        self.parts = (start, stop, step)

    def python_type(self):
        return slice

    def as_python_constant(self):
        return slice(*(p.as_python_constant() for p in self.parts))


class ListIteratorVariable(VariableTracker):
    """An iterator over known items: what GET_ITER produces; FOR_ITER takes one at a time."""

    def __init__(self, items):
        self.items, self.index = list(items), 0

    def python_type(self):
        return type(iter([]))

    def unpack(self, tx):
        rest = self.items[self.index:]
        self.index = len(self.items)
        return rest

    def next_item(self):
        if self.index >= len(self.items):
            return None
        item = self.items[self.index]
        self.index += 1
        return item

    def reconstruct(self, rebuild):
        """At a graph break inside a loop: an iterator over the items not taken yet (only there:
        returned to the caller, a list iterator would not be the map/zip/dict view it stands for)."""
        if not getattr(rebuild, "allow_iterators", False):
            raise Unsupported("returning an iterator (map, zip, enumerate, a dict view, ...)", kind="output",
                              hints=("return a list or tuple of it instead",))
        return "iter([" + ", ".join(rebuild(i) for i in self.items[self.index:]) + "])"


def iter_item(it, k):
    """Item `k` places ahead in a list iterator, without advancing it (the entry's ITER_ITEM)."""
    state = it.__reduce__()
    return state[1][0][state[2] + k]


@functools.lru_cache(maxsize=None)
def _items_left(k: int, exact: bool):
    """A guard predicate: the iterator has exactly / at least `k` items left."""
    if exact:
        def left(it):
            return it.__length_hint__() == k
    else:
        def left(it):
            return it.__length_hint__() >= k
    left.__qualname__ = left.__name__ = f"{'exactly' if exact else 'at_least'}_{k}_left"
    return left


class InputIteratorVariable(ListIteratorVariable):
    """A list iterator the frame receives: a loop's iterator handed to a resume function at a
    graph break (`for i, (x, w) in enumerate(zip(xs, ws))` with a break in the body), or one the
    caller made with iter(list). Its items are read where the trace takes them (`list(L['it'])[0]`,
    wrapped and guarded as any input), how many are left is guarded only as far as the trace
    looked (at least k more; exactly k where the loop ended), and the entry advances the caller's
    iterator by what the trace took (a side effect, like a list append). So a loop that breaks
    in every iteration compiles its resume function for a kind of item, not for each position."""

    def __init__(self, value, source, builder):
        super().__init__([])
        self.value, self.source = value, source
        self._builder = builder           # wrap.VariableBuilder
        self._left = value.__length_hint__()

    @property
    def advanced(self) -> int:
        """How many items the trace took (the entry calls next() that many times)."""
        return self.index

    def _take(self):
        out = self._builder.output
        out.side_effects.mutate(self)
        item = self._builder(iter_item(self.value, self.index), IterItemSource(self.source, self.index))
        self.index += 1
        return item

    def next_item(self):
        guards = self._builder.output.guards
        k = self.index
        if k >= self._left:
            guards.predicate(self.source, _items_left(k, True), f"has {k} items left")
            return None
        guards.predicate(self.source, _items_left(k + 1, False), f"has at least {k + 1} items left")
        return self._take()

    def unpack(self, tx):
        # zip/enumerate/map/any/... would take every item at once where Python takes them one
        # by one (zip stops early, any() at the first true item): the caller would see its
        # iterator advanced too far
        raise Unsupported("consuming a list iterator passed in other than one item at a time", kind="iter",
                          hints=("iterate it with a for loop or next(), or pass the list itself",))

    def reconstruct(self, rebuild):
        return rebuild.source_code(self)  # the caller's own iterator, advanced by the entry

    def describe(self):
        return "list iterator"


class InputListVariable(ListVariable):
    """A list the caller passed (or an attribute or global holds), kept lazy: its items are read
    one at a time where the code reads them (`lst[k]`, `lst[-1]`: each item guarded, nothing
    else), its length is a size (`len(L['lst'])`: static first, a symbol once it varied), and
    `append`/`extend` are replayed as appends. So a list that grows every call (a history on
    `self`, a token list) costs one recompile, not one per length. Anything else (iteration,
    slicing, other methods, items at a symbolic position) makes it an ordinary list: its length
    specialised (guarded) and every item wrapped."""

    def __init__(self, value, source, builder):
        self.value, self.source = value, source
        self._builder = builder           # wrap.VariableBuilder: wraps items and the length
        self._items = None                # every item, once materialized
        self._read: dict = {}             # index (as read: k >= 0 from the start, k < 0 from the end) -> VT
        self._tail: list = []             # appended by the trace while lazy
        self._length = None               # VT of len() of the caller's list (ConstantVariable / SymNumberVariable)

    @property
    def lazy(self) -> bool:
        return self._items is None

    @property
    def items(self):
        if self._items is None:
            self._items = self._materialize()
        return self._items

    @items.setter
    def items(self, items):
        self._items = list(items)

    def _materialize(self):
        from ...shapes import guard_int
        n = len(self.value)
        if self._length is not None and not self._length.is_python_constant():
            guard_int(self._length.value)        # the length is specialised here: guarded equal to n
        items = self._builder.list_items(self.value, self.source)
        for k, vt in self._read.items():         # one object, one VT: what was read stays
            items[k if k >= 0 else n + k] = vt
        return items + self._tail

    def base_length(self):
        if self._length is None:
            self._length = self._builder.list_length(self.value, self.source)
        return self._length

    def length(self, tx):
        from .constant import wrap_number
        if not self.lazy:
            return ConstantVariable(len(self.items))
        n = self.base_length()
        if not self._tail:
            return n
        return wrap_number(_number(n) + len(self._tail))

    def truth(self, tx):
        if not self.lazy:
            return bool(self.items)
        return bool(_number(self.length(tx)) > 0)

    def lazy_getitem(self, tx, key):
        """`lst[k]` for a constant (or size-valued) int k without materializing, or None."""
        from .constant import SymNumberVariable
        if not (isinstance(key, SymNumberVariable) and key.python_type() is int) and not (
                key.is_python_constant() and type(key.as_python_constant()) in (int, bool)):
            return None
        if isinstance(key, SymNumberVariable) and tx.output.shape_env.size_hint(key.value.expr, allow_none=True) \
                is None:
            return self.item_at(tx, key)             # a loop index: no value to specialise on
        k = constant_key(tx, key)
        n = _number(self.base_length())
        tail = len(self._tail)
        if k < 0:
            if -k <= tail:
                return self._tail[k]
            k += tail                                # from the end of the caller's list
            if not bool(n + k >= 0):
                raise NumpyError(IndexError("list index out of range"), context="subscript")
        elif not bool(k < n):
            if not tail:
                raise NumpyError(IndexError("list index out of range"), context="subscript")
            return None                              # an appended item by position: materialize
        return self._item(k, n)

    def item_at(self, tx, key):
        """`lst[i]` at a position known only as an expression (a loop index): None (materialize,
        which specialises it) unless an int list reads it from its array view (IntListVariable)."""
        return None

    def _item(self, k, n):
        for other, vt in self._read.items():        # the same item read from the other end
            if (other < 0) != (k < 0):
                pos, opos = (k, n + other) if k >= 0 else (n + k, other)
                if bool(pos == opos):
                    return vt
        vt = self._read.get(k)
        if vt is None:
            vt = self._read[k] = self._builder.list_item(self.value, self.source, k)
        return vt

    def call_method(self, tx, name, args, kwargs):
        if self.lazy and not kwargs:
            if name == "append" and len(args) == 1:
                self._tail.append(args[0])
                self.mutated(tx)
                return ConstantVariable(None)
            if name == "extend" and len(args) == 1 and isinstance(args[0], (TupleVariable, ListVariable)) \
                    and not isinstance(args[0], InputListVariable):
                self._tail.extend(args[0].unpack(tx))
                self.mutated(tx)
                return ConstantVariable(None)
            if name == "__getitem__" and len(args) == 1:
                got = self.lazy_getitem(tx, args[0])
                if got is not None:
                    return got
            if name == "__len__" and not args:
                return self.length(tx)
        return super().call_method(tx, name, args, kwargs)

    def appended(self):
        """What the trace appended to the caller's list while it stayed lazy (replayed as an extend)."""
        return list(self._tail)

    def describe(self):
        return "list input" if self.lazy else super().describe()      # no length: reasons read the same


def _number(vt):
    """The Python int or SymInt a length VT stands for."""
    return vt.as_python_constant() if vt.is_python_constant() else vt.value


class IntListVariable(InputListVariable):
    """A list of ints the caller passed. Used as array data (an index, `np.array(lst)`) it is an
    int64 array input guarded only on being a list of ints, its length following the dynamic
    policy: a growing token list recompiles at most once."""

    def __init__(self, value, source, builder):
        super().__init__(value, source, builder)
        self._array = None

    def as_array(self, tx):
        """The list as an int64 graph input (only while it is lazy and nothing was appended)."""
        if self._array is None:
            self._array = self._builder.int_list_array(self.value, self.source, _number(self.base_length()))
        return self._array

    def item_at(self, tx, key):
        """`ids[i]` at a loop index: element i of the int64 array view as a Python int of the
        graph (NumPy's bounds check raises IndexError as the list would; the items fit int64)."""
        if not self.array_ready:
            return None
        import numpy as np

        from ...ir.builder import Proxy
        from ...ir.fake import FakeScalar
        from .array import ArrayVariable
        element = tx.getitem(self.as_array(tx), key)
        cast = tx.output.builder.emit("astype", element.proxy, dtype=np.dtype(np.int64))
        return ArrayVariable(Proxy(cast.node, FakeScalar(int)))

    @property
    def array_ready(self) -> bool:
        return self.lazy and not self._tail

    def describe(self):
        return "list of ints" if self.lazy else super().describe()


class RangeVariable(VariableTracker):
    """range(start, stop, step): iterated (unrolled) with its bounds specialised; used as an index
    it is `np.arange` over the same bounds, so a range over a size stays symbolic."""

    def __init__(self, start, stop, step):
        self.parts = (start, stop, step)

    def python_type(self):
        return range

    def _ints(self):
        from .constant import SymNumberVariable
        return [int(p.value) if isinstance(p, SymNumberVariable) else p.as_python_constant()
                for p in self.parts]

    def as_python_constant(self):
        try:
            return range(*(p.as_python_constant() for p in self.parts))
        except TypeError:
            raise NotConstant(repr(self)) from None

    def unpack(self, tx):
        return [ConstantVariable(i) for i in range(*self._ints())]

    def truth(self, tx):
        return len(range(*self._ints())) > 0

    def length(self, tx):
        from .constant import SymNumberVariable, wrap_number
        start, stop, step = self.parts
        if any(isinstance(p, SymNumberVariable) for p in self.parts) and step.is_python_constant() \
                and step.as_python_constant() == 1:
            from ...shapes import sym_max
            return wrap_number(sym_max(tx.unwrap(stop) - tx.unwrap(start), 0))
        return ConstantVariable(len(range(*self._ints())))

    def reconstruct(self, rebuild):
        return f"range({', '.join(rebuild(p) for p in self.parts)})"

    def as_array(self, tx):
        import numpy as np
        from ...ir.numpy_api import lookup_function
        from .array import ArrayVariable
        start, stop, step = (tx.unwrap(p) for p in self.parts)
        return ArrayVariable(lookup_function(np.arange)(tx.output.builder, start, stop, step))

    def describe(self):
        return "range"


class DataRangeVariable(RangeVariable):
    """range(start, stop, step) with a bound read from an array (`range(p[i], p[i + 1])`: an
    integer of the graph) and a constant step: a `for` over it is a loop node whose index is a
    Python int of the graph (trace/loops.py). Its length and items depend on the data:
    anything else done with it (unrolling it, `len`, `list`, truth) breaks the graph."""

    def _ints(self):
        raise self._refuse()

    def as_python_constant(self):
        raise NotConstant(repr(self))

    def unpack(self, tx):
        raise self._refuse()

    def truth(self, tx):
        raise self._refuse()

    def length(self, tx):
        raise self._refuse()

    def as_array(self, tx):
        raise self._refuse()

    @staticmethod
    def _refuse():
        from ...errors import DataDependentError
        return DataDependentError("a range bounded by array data used other than as a loop's range",
                                  context="range",
                                  hints=("iterate over it in a `for` loop whose body the loop node can trace",))

    def describe(self):
        return "range bounded by array data"
