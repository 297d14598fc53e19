"""What a `for` loop node iterates over, and how its target is bound.

A loop node runs an index over a range (trace/loops.py). What the user's `for` iterates over
is a function of that index:

    for i in range(a, b, c)         the index is `i` itself
    for j in range(p[i], p[i + 1])  `j` is a Python int of the graph (bounds read from arrays)
    for b in data                   data[k] for k in range(len(data)) (a row, or an element)
    for k, row in enumerate(A)      (k, A[k])
    for a, b in zip(x, range(n))    (x[k], k) for k in range(min(len(x), n))
    for v in reversed(x)            x[len(x) - 1 - k]

`IndexedIterable` (variables/indexed.py) is what enumerate / zip / reversed of arrays and ranges
make: its k-th item is computed from k, so a loop over it is a loop node. A loop over a list, a
tuple, or a mix with them (heterogeneous Python objects: a list of layers) is unrolled.

The target (`i`, `b`, `k, row`, `(a, b)`) is bound by the body's first instructions; after the
loop node Python leaves it at its last item (or the item the loop broke at): `bind_target`
binds it again from that item, outside the body.
"""
from __future__ import annotations

from ..errors import Unsupported
from .variables.base import VariableTracker
from .variables.constant import SymNumberVariable, wrap_number
from .variables.containers import DataRangeVariable, RangeVariable
from .variables.indexed import indexable, item, length

class LoopIterator(VariableTracker):
    """GET_ITER of something FOR_ITER turns into a loop node: the index runs over
    range(*head); `item(tx, index)` is what the user's target receives."""

    def __init__(self, head: tuple, iterable, key, data=False):
        self.head, self.iterable, self.key, self.peeled = tuple(head), iterable, key, 0
        self.data = data            # a range bounded by array data: its index is a graph int

    def python_type(self):
        return type(iter(range(0)))

    def describe(self):
        return f"iterator over {self.iterable.describe()}"

    @property
    def over_range(self) -> bool:
        return isinstance(self.iterable, RangeVariable)

    def item(self, tx, index):
        """The item of the iteration whose index is `index` (a VariableTracker: an int, a size,
        the loop index or a graph int)."""
        return index if self.over_range else item(tx, self.iterable, index)


def loop_iterator(tx, v, key) -> LoopIterator | None:
    """The LoopIterator over `v`, or None when `v` is not something a loop node iterates."""
    if isinstance(v, DataRangeVariable):             # bounds read from arrays: Proxies in the head
        return LoopIterator([tx.unwrap(p) for p in v.parts], v, key, data=True)
    if isinstance(v, RangeVariable):
        parts = [tx.unwrap(p) for p in v.parts]
        if not all(type(p) is int or (isinstance(q, SymNumberVariable) and q.python_type() is int)
                   for p, q in zip(parts, v.parts)):
            return None
        return LoopIterator(parts, v, key)
    if not indexable(v):
        return None
    try:
        n = length(tx, v)
    except Unsupported:
        return None
    return LoopIterator((0, n, 1), v, key)


# ----------------------------------------------------------------------------- the target

_TARGET_OPS = ("UNPACK_SEQUENCE", "STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST")


def target_ops(tx, body_start: int):
    """The instructions at the top of a `for` body that bind its target (plain local names,
    tuples of them), or None for any other target (`for self.i in ...`, `for x[0] in ...`)."""
    depth, ops = 1, []
    for ins in tx.instructions[body_start:]:
        if ins.opname not in _TARGET_OPS:
            return None
        ops.append(ins)
        if ins.opname == "UNPACK_SEQUENCE":
            depth += ins.arg - 1
        elif ins.opname == "STORE_FAST_STORE_FAST":
            depth -= 2
        else:
            depth -= 1
        if depth == 0 or ins.opname == "STORE_FAST_LOAD_FAST":
            return ops if depth == 0 else None
    return None


def target_names(ops) -> set:
    names = set()
    for ins in ops:
        if ins.opname == "STORE_FAST":
            names.add(ins.argval)
        elif ins.opname == "STORE_FAST_STORE_FAST":
            names.update(ins.argval)
        elif ins.opname == "STORE_FAST_LOAD_FAST":
            names.add(ins.argval[0])
    return names


def bind_target(tx, ops, value) -> None:
    """Bind the target of `ops` (target_ops) to `value`, as the body's first instructions do."""
    stack = [value]
    for ins in ops:
        if ins.opname == "UNPACK_SEQUENCE":
            items = stack.pop().unpack(tx)
            if len(items) != ins.arg:
                raise Unsupported(f"unpacking {len(items)} values into {ins.arg}", kind="exception")
            stack.extend(reversed(items))
        elif ins.opname == "STORE_FAST_STORE_FAST":
            first, second = ins.argval
            tx.locals[first] = stack.pop()
            tx.locals[second] = stack.pop()
        else:
            name = ins.argval[0] if ins.opname == "STORE_FAST_LOAD_FAST" else ins.argval
            tx.locals[name] = stack.pop()


def bind_after(tx, iterator, ops, loop_vars, head, position, saved_locals) -> None:
    """Python leaves a `for` target at the item of the last iteration, or of the iteration that
    broke out (`position`: the index it broke at, carried); an empty loop leaves it as it was.
    When whether the loop ran depends on data (or on a symbolic step), using the target after
    the loop is unsupported (PoisonVariable)."""
    from ..errors import DataDependentError
    from .loop_values import PoisonVariable
    try:
        last = last_index(*head)
    except DataDependentError:
        last = UNKNOWN
    if last is UNKNOWN:
        for name in loop_vars:
            tx.locals[name] = PoisonVariable(name)
        return
    if last is None:                                    # the loop did not run: the bindings before it
        for name in loop_vars:
            if name in saved_locals:
                tx.locals[name] = saved_locals[name]
            else:
                tx.locals.pop(name, None)
        return
    value = position if position is not None else wrap_number(last)
    item = iterator.item(tx, value)
    saved = {n: tx.locals[n] for n in target_names(ops) - loop_vars if n in tx.locals}
    bind_target(tx, ops, item)
    tx.locals.update(saved)                             # a target name the body rebinds keeps its carried value


UNKNOWN = object()


def last_index(start, stop, step):
    """The index of the last iteration of range(start, stop, step), or None when the range is
    empty (decided on the hints: a guard on the sizes, as any size comparison, also on the
    sign of a symbolic step, which the loop node already decided)."""
    if isinstance(step, int) and step == 0:
        return UNKNOWN
    trips = (stop - start + step - 1) // step if bool(step > 0) else (start - stop - step - 1) // (-step)
    if not bool(trips >= 1):
        return None
    return start + step * (trips - 1)
