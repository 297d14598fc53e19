"""enumerate / zip / reversed over arrays and ranges, kept as functions of an index.

`IndexedIterable`'s k-th item is computed from k (`enumerate(x)`: `(k, x[k])`; `zip(x, r)`:
`(x[k], r[k])`; `reversed(x)`: `x[len(x) - 1 - k]`), so a `for` loop over it is a loop node
over range(length) (trace/loop_iter.py); consumed any other way (`list(...)`, unpacking, a
generator) its items are made one by one, the length specialised, as for a list.
"""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
from ...ir.fake import FakeScalar
from ...shapes.helpers import sym_max, sym_min
from .array import ArrayVariable
from .base import VariableTracker
from .constant import ConstantVariable, wrap_number
from .containers import RangeVariable, TupleVariable

_PYTYPES = {"enumerate": enumerate, "zip": zip, "reversed": reversed}


def indexable(v) -> bool:
    """`v` can be a member of an IndexedIterable (its k-th item is a function of k)."""
    if isinstance(v, (RangeVariable, IndexedIterable)):
        return True
    return isinstance(v, ArrayVariable) and not isinstance(v.proxy.fake, FakeScalar) and v.proxy.ndim >= 1


class IndexedIterable(VariableTracker):
    """enumerate / zip / reversed over arrays, ranges and other IndexedIterables (see the module doc)."""

    def __init__(self, kind: str, members: list, start=0):
        self.kind, self.members, self.start = kind, list(members), start

    def python_type(self):
        return _PYTYPES[self.kind]

    def describe(self):
        return f"{self.kind}({', '.join(m.describe() for m in self.members)})"

    def length(self, tx):
        lengths = [length(tx, m) for m in self.members]
        n = lengths[0]
        for other in lengths[1:]:
            n = sym_min(n, other)
        return n

    def item(self, tx, k):
        """The k-th item (k: a VariableTracker of an int, a size, a loop index or a graph int)."""
        if self.kind == "enumerate":
            return TupleVariable([_add(tx, k, self.start), item(tx, self.members[0], k)])
        if self.kind == "zip":
            return TupleVariable([item(tx, m, k) for m in self.members])
        last = wrap_number(length(tx, self.members[0]) - 1)
        return item(tx, self.members[0], tx.binary(last, k, "-"))

    def unpack(self, tx):
        from ...shapes import guard_int
        return [self.item(tx, ConstantVariable(k)) for k in range(guard_int(self.length(tx)))]


def length(tx, v):
    """len(v) of an indexable value: an int or a size."""
    if isinstance(v, IndexedIterable):
        return v.length(tx)
    if isinstance(v, RangeVariable):
        start, stop, step = (tx.unwrap(p) for p in v.parts)
        if all(type(p) is int for p in (start, stop, step)):
            return len(range(start, stop, step))
        if not isinstance(step, int):
            raise Unsupported("a range with a symbolic step as a loop", kind="loop")
        span = stop - start if step > 0 else start - stop
        return sym_max((span + abs(step) - 1) // abs(step), 0)
    return v.proxy.shape[0]


def item(tx, v, k):
    """The k-th item of an indexable value (k: a VariableTracker)."""
    if isinstance(v, IndexedIterable):
        return v.item(tx, k)
    if isinstance(v, RangeVariable):
        start, _, step = v.parts
        return _add(tx, k if step.is_python_constant() and step.as_python_constant() == 1
                    else tx.binary(k, step, "*"), start)
    if isinstance(k, ArrayVariable) and isinstance(k.proxy.fake, FakeScalar):
        # a Python int the graph computes (where a loop broke): index with it as an int64 scalar
        k = ArrayVariable(tx.output.builder.emit("astype", k.proxy, dtype=np.dtype(np.int64)))
    return tx.getitem(v, k)


def _add(tx, k, start):
    if isinstance(start, VariableTracker):
        if start.is_python_constant() and start.as_python_constant() == 0:
            return k
        return tx.binary(k, start, "+")
    return k if start == 0 else tx.binary(k, wrap_number(start), "+")
