"""State a loop body writes besides its own locals, carried through a loop node.

A loop body traced once (trace/loops.py) may write state that outlives the iteration:

    nonlocal k; k += 1                      a closure cell (of this frame, or through an inlined closure)
    self.lr *= decay                        an attribute of an object the caller passed
    state["h"] = np.tanh(...)               an entry of a dict (or an item of a list) the caller passed,
                                            or one the function made before the loop

Such a value is carried like a local: an input of the body (its value at the top of the
iteration), an output (its value at the bottom), and after the loop node its final value is
written back with an ordinary store (a side effect replayed after the graph, in program
order; or, in an enclosing loop body, carried by that loop too). A write that leaves the
value as it was (`self.w -= g` on an array attribute: the array is updated in place, the
attribute still names it) needs nothing.

Which state a loop carries is found by tracing: the first write to state the innermost loop
body does not carry raises `CarryRequest`, and the trace restarts with that loop carrying
it (`plan[("carry", key)]`, a set of `Slot`s that name the state so the next trace finds it
again). State made inside the body (a cell of a function called in it) needs no carrying.
A dict or list the function made itself is named by the local that holds it when the loop
starts (kind "local"); one made inside the body, or held by no local of the loop's frame, is not
carried. What cannot be carried (a new key, such a container) keeps today's rule: the loop is
unrolled.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Unsupported
from .variables.base import CellBox, new_serial
from .variables.containers import DictVariable, ListVariable


@dataclass(frozen=True)
class Slot:
    """One carried piece of state, named so that a later trace of the frame finds it again."""
    kind: str                 # "cell" | "attr" | "item" | "local" | "index"
    owner: object             # cell: the code object whose frame made it; attr/item: source name;
                              # local: (code object, name of the local holding the container)
    name: object              # cell or attribute name, dict key / list index
    ref: tuple = field(default=(), compare=False)   # attr/item: (Source, the Python object)

    def label(self) -> str:
        if self.kind == "cell":
            return f"cell {self.name}"
        if self.kind == "attr":
            return f"{self.owner}.{self.name}"
        if self.kind == "item":
            return f"{self.owner}[{self.name!r}]"
        if self.kind == "local":
            return f"{self.owner[1]}[{self.name!r}]"
        return "the loop index"


class CarryRequest(Unsupported):
    """A loop body wrote `slot`, which the innermost loop being traced does not carry."""

    def __init__(self, slot: Slot):
        super().__init__(f"the loop body writes {slot.label()}", kind="loop_carry")
        self.slot = slot


# ----------------------------------------------------------------------------- targets

class _Target:
    """A resolved Slot in this trace: read, install a body value, restore, write back."""
    slot: Slot

    def runtime_key(self):
        raise NotImplementedError

    def get(self):
        raise NotImplementedError

    def put(self, value) -> None:
        raise NotImplementedError

    def write_back(self, tx, value) -> None:
        raise NotImplementedError


class _Cell(_Target):
    def __init__(self, slot, box):
        self.slot, self.box = slot, box

    def runtime_key(self):
        return ("cell", id(self.box))

    def get(self):
        return self.box.value

    def put(self, value):
        self.box.value = value

    def write_back(self, tx, value):
        store_cell(tx, self.box, value)


class _Attr(_Target):
    def __init__(self, slot, obj, name, side_effects, initial):
        self.slot, self.obj, self.name, self.side_effects = slot, obj, name, side_effects
        self.initial = initial              # its value before the loop when no store in this trace set it

    def runtime_key(self):
        return ("attr", id(self.obj), self.name)

    def get(self):
        value = self.side_effects.load_attr(self.obj, self.name)
        return self.initial if value is None else value

    def put(self, value):
        self.side_effects.shadow[(id(self.obj), self.name)] = value

    def write_back(self, tx, value):
        self.obj.store_attr(tx, self.name, value)


class _Item(_Target):
    def __init__(self, slot, container, key):
        self.slot, self.container, self.key = slot, container, key

    def runtime_key(self):
        return ("item", id(self.container), self.key)

    def get(self):
        return self.container.items[self.key]

    def put(self, value):
        self.container.items[self.key] = value

    def write_back(self, tx, value):
        from .variables.constant import ConstantVariable
        self.container.call_method(tx, "__setitem__", [ConstantVariable(self.key), value], {})


class LoopState:
    """The state one loop node carries (its resolved targets), installed while its body is traced."""

    def __init__(self, targets, tx=None):
        self.targets = list(targets)
        # containers the loop's frame holds in locals when the loop starts: id -> local name
        self.tx = tx
        self.locals = {} if tx is None else {id(v): n for n, v in tx.locals.items()
                                             if isinstance(v, (DictVariable, ListVariable))}
        self.keys = {t.runtime_key() for t in self.targets}
        self._saved: list = []
        self._shadow_saved: list = []
        self.mark = new_serial()           # cells made after this were made inside the body

    def enter(self, placeholders) -> None:
        self._saved = [t.get() for t in self.targets]
        for t, p in zip(self.targets, placeholders):
            if isinstance(t, _Attr):
                self._shadow_saved.append((t.side_effects, (id(t.obj), t.name),
                                           t.side_effects.shadow.get((id(t.obj), t.name))))
            t.put(p)

    def values(self) -> list:
        return [t.get() for t in self.targets]

    def exit(self) -> None:
        for t, old in zip(self.targets, self._saved):
            if not isinstance(t, _Attr):
                t.put(old)
        for side_effects, key, old in self._shadow_saved:
            if old is None:
                side_effects.shadow.pop(key, None)
            else:
                side_effects.shadow[key] = old

    def carries(self, key) -> bool:
        return key in self.keys


def resolve(tx, slots) -> list:
    """The targets of `slots` in this trace, at the top of the loop (their initial values read
    now); raises Unsupported when one cannot be found or carried."""
    targets = []
    for slot in sorted(slots, key=lambda s: (s.kind, str(s.owner), repr(s.name))):
        if slot.kind == "index":
            continue
        if slot.kind == "cell":
            box = _find_cell(tx, slot)
            if box is None or box.value is None:
                raise Unsupported(f"{slot.label()} written in a loop has no value before it", kind="loop")
            targets.append(_Cell(slot, box))
            continue
        if slot.kind == "local":
            obj = _local_container(tx, slot)
            if obj is None or not _has_key(obj.items, slot.name):
                raise Unsupported(f"{slot.label()} written in a loop is not there before it", kind="loop")
            targets.append(_Item(slot, obj, slot.name))
            continue
        source, value = slot.ref
        obj = tx.output.wrap(value, source)
        if slot.kind == "attr":
            se = tx.output.side_effects
            initial = se.load_attr(obj, slot.name)
            if initial is None:
                initial = obj.var_getattr(tx, slot.name)
            targets.append(_Attr(slot, obj, slot.name, se, initial))
        else:
            items = getattr(obj, "items", None)
            if items is None or not _has_key(items, slot.name):
                raise Unsupported(f"{slot.label()} written in a loop is not there before it", kind="loop")
            targets.append(_Item(slot, obj, slot.name))
    return targets


def _has_key(items, key) -> bool:
    if isinstance(items, dict):
        return key in items
    return isinstance(key, int) and -len(items) <= key < len(items)


def _local_container(tx, slot):
    """The dict or list VT the local `slot.owner[1]` of the frame running `slot.owner[0]` holds."""
    code, name = slot.owner
    t = tx
    while t is not None and t.code is not code:
        t = t.parent
    obj = None if t is None else t.locals.get(name)
    return obj if isinstance(obj, (DictVariable, ListVariable)) else None


def _find_cell(tx, slot):
    t = tx
    while t is not None:
        for box in t.cells.values():
            if box.owner is slot.owner and box.name == slot.name:
                return box
        t = t.parent
    return None


# ----------------------------------------------------------------------------- stores in a body

def innermost(tx):
    """The loop context whose body is being traced (not a peeled iteration or an entry test)."""
    for ctx in reversed(tx.output.loop_stack):
        if getattr(ctx, "state", None) is not None:
            return ctx
    return None


def store_cell(tx, box: CellBox, value) -> None:
    """`box.value = value` (STORE_DEREF, or the write-back after a loop node)."""
    ctx = innermost(tx)
    if ctx is None or box.serial > ctx.state.mark or ctx.state.carries(("cell", id(box))) or value is box.value:
        box.value = value
        return
    if box.owner is None:
        raise Unsupported("assigning to a variable of an enclosing function (nonlocal)", kind="side_effect")
    raise CarryRequest(Slot("cell", box.owner, box.name))


def frozen_store(tx, kind, target, key, value) -> bool:
    """A store to an attribute (kind "attr") or an entry (kind "item") while a loop body or a
    branch of an `if` on data is traced. True: done (the innermost loop carries it, or it
    leaves the value as it was); False: not a loop body's state (the caller refuses it)."""
    ctx = innermost(tx)
    if ctx is None:
        return False
    se = tx.output.side_effects
    if kind == "attr":
        if ctx.state.carries(("attr", id(target), key)):
            se.shadow[(id(target), key)] = value
            return True
        if _current_attr(tx, target, key) is value:
            return True
    else:
        if ctx.state.carries(("item", id(target), key)):
            target.items[key] = value
            return True
        try:
            if target.items[key] is value:
                return True
        except (KeyError, IndexError, TypeError):
            return False
    source = getattr(target, "source", None)
    if source is None and kind == "item":
        name = ctx.state.locals.get(id(target))       # made by this function before the loop
        if name is None or ctx.state.tx.locals.get(name) is not target:
            return False
        raise CarryRequest(Slot("local", (ctx.state.tx.code, name), key))
    obj = python_object(tx, target)
    if source is None or obj is None:
        return False
    raise CarryRequest(Slot(kind, source.name, key, (source, obj)))


def _current_attr(tx, obj, name):
    """The value `obj.name` has in this trace, when it was read or stored (else None: no read
    is made here, so no input or guard is added)."""
    stored = tx.output.side_effects.load_attr(obj, name)
    if stored is not None or getattr(obj, "source", None) is None:
        return stored
    from ..sources import AttrSource
    return tx.output.input_vars.get(AttrSource(obj.source, name).name)


def python_object(tx, vt):
    """The Python object an input VariableTracker stands for (an object, a dict, a list)."""
    for attr in ("value", "cls"):
        obj = getattr(vt, attr, None)
        if obj is not None and not isinstance(obj, (int, float, complex, bool, str)):
            return obj
    for value, var in tx.output.mutable_input_values():
        if var is vt:
            return value
    return None


def yields_in_body(tx) -> bool:
    """A `yield` of this (inlined generator) frame would be inside a loop body traced once."""
    return any(getattr(ctx, "state", None) is not None and ctx.tx is tx for ctx in tx.output.loop_stack)
