"""`while i < n:` with a Python int counter stepped by a constant: a counted loop.

    i = 0
    while i < n:            # n: a size or an int argument (symbolic), or a large constant
        ...
        i += 1

runs exactly like `for i in range(i0, n, 1)` followed by `i = max(i0, n)`, so trace/loops.py
builds the same `for` loop node (the index is `i`, known to lie in the range: bounds checks
over it are hoisted, nothing is guarded on the trip count) instead of unrolling with one
guard per iteration. This module only recognises the pattern; loops.py traces the body and
then checks what was assumed: at the bottom test the counter must be `i + step` and the
bound the same as at the entry (`verify_bottom`), else the loop is unrolled as before.

Recognised: the test `counter OP bound` (either order) just before the conditional jump that
leaves the loop, OP one of < <= > >= matching the sign of the step, and exactly one store
to the counter in the body, `counter += c` / `counter = counter + c` (or `-`).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from ..ir.builder import to_expr
from ..shapes.helpers import sym_max, sym_min
from .variables.constant import ConstantVariable, SymNumberVariable

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_STORES = ("STORE_FAST", "DELETE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST")
_ADD = {"+": 1, "+=": 1, "-": -1, "-=": -1}


@dataclass
class Counter:
    """A recognised counted while loop: `name` steps by `step` while `name OP bound` holds."""
    name: str
    step: int
    op: str
    start: object           # int or SymInt: the counter's value where the loop node starts
    bound: object           # int or SymInt

    def stop(self):
        """The `range` stop equivalent to the test."""
        return {"<": self.bound, ">": self.bound, "<=": self.bound + 1, ">=": self.bound - 1}[self.op]

    def final(self, stop):
        """The counter's value after the loop (start when it never runs)."""
        if self.step == 1:
            return sym_max(self.start, stop)
        if self.step == -1:
            return sym_min(self.start, stop)
        c = self.step
        trips = (stop - self.start + c - 1) // c if c > 0 else (self.start - stop - c - 1) // (-c)
        return self.start + c * sym_max(trips, 0)


def recognise(tx, compare_index: int, lo: int, hi: int) -> Counter | None:
    """The counter of the loop whose test is the COMPARE_OP at `compare_index` and whose body is
    instructions[lo:hi] (None when the pattern does not match)."""
    last = getattr(tx, "last_compare", None)
    if last is None or last[0] != compare_index or last[3] not in _FLIP:
        return None
    _, a, b, op = last
    for value, other, rel in ((a, b, op), (b, a, _FLIP[op])):
        if not (_is_int(value) and _is_int(other)):
            continue
        for name in [n for n, v in tx.locals.items() if v is value]:
            step = _step(tx, name, lo, hi)
            if step is not None and (step > 0) == (rel in ("<", "<=")):
                return Counter(name, step, rel, tx.unwrap(value), tx.unwrap(other))
    return None


def verify_bottom(tx, counter: Counter, index, compare_index: int) -> bool:
    """At the test at the bottom of the traced body: the counter is `index + step` and it is
    compared with the same bound by the same operator as at the entry."""
    last = getattr(tx, "last_compare", None)
    if last is None or last[0] != compare_index:
        return False
    _, a, b, op = last
    cur, other = (a, b) if op == counter.op else (b, a) if _FLIP.get(op) == counter.op else (None, None)
    if cur is None or not (_is_int(cur) and _is_int(other)) or tx.locals.get(counter.name) is not cur:
        return False
    return _same(tx.unwrap(cur), index + counter.step) and _same(tx.unwrap(other), counter.bound)


def constant_trips(counter: Counter):
    """The trip count when start and stop are plain ints, else None."""
    start, stop = counter.start, counter.stop()
    if isinstance(start, int) and isinstance(stop, int):
        return len(range(start, stop, counter.step))
    return None


def _is_int(v) -> bool:
    if isinstance(v, ConstantVariable):
        return type(v.value) is int
    return isinstance(v, SymNumberVariable) and v.python_type() is int


def _step(tx, name, lo, hi):
    """c when the only store to `name` in instructions[lo:hi] is `name = name +- c`."""
    found = None
    ins = tx.instructions
    for k in range(lo, hi):
        op = ins[k].opname
        if op not in _STORES:
            continue
        names = ins[k].argval if op == "STORE_FAST_STORE_FAST" else \
            ins[k].argval[:1] if op == "STORE_FAST_LOAD_FAST" else (ins[k].argval,)
        if name not in names:
            continue
        if found is not None or op != "STORE_FAST" or k < lo + 3:
            return None
        add, const, load = ins[k - 1], ins[k - 2], ins[k - 3]
        if add.opname != "BINARY_OP" or add.argrepr not in _ADD or const.opname != "LOAD_CONST" or \
                type(const.argval) is not int or const.argval == 0 or \
                load.opname != "LOAD_FAST" or load.argval != name:
            return None
        found = _ADD[add.argrepr] * const.argval
    return found


def _same(x, y) -> bool:
    return sympy.expand(sympy.sympify(to_expr(x)) - sympy.sympify(to_expr(y))) == 0
