"""Tuples, lists, dicts, slices, ranges and iterators (loops over them are unrolled)."""
from __future__ import annotations

from ...errors import Unsupported
from .base import VariableTracker
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


class ListVariable(BaseSequenceVariable):
    """A list. Lists made while tracing are mutable; a list passed in is read-only for now."""
    pytype = list

    def _check_mutable(self, what):
        if self.source is not None:
            raise Unsupported(f"{what} mutates a list the caller passed (a side effect)", kind="side_effect",
                              hints=("build a new list instead",))

    def call_method(self, tx, name, args, kwargs):
        if name == "append" and len(args) == 1 and not kwargs:
            self._check_mutable("list.append")
            self.items.append(args[0])
            return ConstantVariable(None)
        if name == "extend" and len(args) == 1:
            self._check_mutable("list.extend")
            self.items.extend(args[0].unpack(tx))
            return ConstantVariable(None)
        if name == "pop" and len(args) <= 1:
            self._check_mutable("list.pop")
            index = args[0].as_python_constant() if args else -1
            return self.items.pop(index)
        if name == "insert" and len(args) == 2:
            self._check_mutable("list.insert")
            self.items.insert(args[0].as_python_constant(), args[1])
            return ConstantVariable(None)
        if name == "reverse" and not args:
            self._check_mutable("list.reverse")
            self.items.reverse()
            return ConstantVariable(None)
        if name == "copy" and not args:
            return ListVariable(self.items)
        if name in ("index", "count") and len(args) == 1:
            return ConstantVariable(getattr(self.as_python_constant(), name)(args[0].as_python_constant()))
        raise Unsupported(f"list.{name}", kind="call")


class DictVariable(VariableTracker):
    """A dict with constant keys."""

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
            raise Unsupported(f"KeyError {key!r} while tracing", kind="exception") from None

    def call_method(self, tx, name, args, kwargs):
        consts = [a.as_python_constant() for a in args]
        if name == "items" and not args:
            return ListIteratorVariable([TupleVariable([ConstantVariable(k), v]) for k, v in self.items.items()])
        if name == "keys" and not args:
            return ListIteratorVariable([ConstantVariable(k) for k in self.items])
        if name == "values" and not args:
            return ListIteratorVariable(list(self.items.values()))
        if name == "get" and 1 <= len(args) <= 2:
            return self.items.get(consts[0], args[1] if len(args) == 2 else ConstantVariable(None))
        if name == "copy" and not args:
            return DictVariable(self.items)
        if name in ("__setitem__", "update", "pop", "setdefault", "clear") and self.source is not None:
            raise Unsupported(f"dict.{name} mutates a dict the caller passed (a side effect)",
                              kind="side_effect")
        if name == "__setitem__":
            self.items[consts[0]] = args[1]
            return ConstantVariable(None)
        if name == "pop" and 1 <= len(args) <= 2:
            if consts[0] in self.items:
                return self.items.pop(consts[0])
            if len(args) == 2:
                return args[1]
        if name == "update" and len(args) == 1 and isinstance(args[0], DictVariable):
            self.items.update(args[0].items)
            return ConstantVariable(None)
        raise Unsupported(f"dict.{name}", kind="call")

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
