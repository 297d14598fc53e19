"""Side effects a trace records and the compiled entry replays after the graph (as TorchDynamo's
SideEffects does).

While tracing, a store to an attribute of a user object the caller can see (`self.m = ...`)
or a mutation of a list or dict the caller can see (`d["y"] = x`, `params[k] -= ...`,
`lst.append(v)`, `COUNTS["calls"] += 1` on a global dict) changes only the traced value:
later reads in the same trace see the new value. The entry then evaluates every value the
caller will see (the return value or the break function's arguments, and each mutated
object's new contents) *before* applying any mutation, applies the mutations in the order
they were first made, and returns (or calls the break function). Containers and objects
created inside the trace need no replay: the caller only sees them through the values
that are rebuilt.
"""
from __future__ import annotations

from ..errors import Unsupported


class SideEffects:
    def __init__(self, on_first_mutation=None, frozen_store=None):
        self._on_first_mutation = on_first_mutation or (lambda vt: None)
        # while frozen: (kind, target, key, value) -> True when a loop body carries that state
        # (trace/loop_state.py), False when it is a side effect the body may not make
        self._frozen_store = frozen_store or (lambda kind, target, key, value: False)
        self.shadow: dict = {}         # (id(obj VT), name) -> value VT: attributes a loop body carries
        self._attrs: dict = {}         # (id(obj VT), name) -> (obj VT, name, value VT)
        self._containers: dict = {}    # id(container VT) -> container VT
        self._globals: dict = {}       # (globals dict code, name) -> value VT
        self._order: list = []         # ("attr", key) / ("container", key), first mutation first
        self.frozen = 0                # > 0 while a loop body is traced once (trace/loops.py)

    def __bool__(self):
        return bool(self._order)

    def _check_frozen(self, what):
        if self.frozen:
            raise Unsupported(f"{what} inside a loop body (a Python side effect per iteration)", kind="loop")

    def store_attr(self, obj, name: str, value):
        """`obj.name = value` on an object that came from an input or a global."""
        if self.frozen and self._frozen_store("attr", obj, name, value):
            return
        self._check_frozen(f"setting attribute {name!r}")
        if obj.source is None:
            raise Unsupported(f"setting attribute {name!r} of an object created while tracing",
                              kind="side_effect")
        key = (id(obj), name)
        if key not in self._attrs:
            self._order.append(("attr", key))
            self._on_first_mutation(obj)
        self._attrs[key] = (obj, name, value)

    def store_class_attr(self, cls_var, name: str, value):
        """`cls.name = value` on a user class, through any VT of it (`type(self)`, a global, a
        held class): keyed by the class itself, so a later read through an instance or another VT
        of the class sees it (class_attribute)."""
        self._check_frozen(f"setting class attribute {name!r}")
        if cls_var.source is None:
            raise Unsupported(f"setting attribute {name!r} of a class with no source", kind="side_effect")
        key = ("class", id(cls_var.cls), name)
        if key not in self._attrs:
            self._order.append(("attr", key))
        self._attrs[key] = (cls_var, name, value)

    def store_cell(self, box):
        """`nonlocal v; v = ...` in an inlined function whose cell the trace did not make: the
        entry sets the real cell (box.cell_source) to the box's value at the end of the trace."""
        key = ("cell", id(box))
        if key not in self._attrs:
            self._order.append(("attr", key))
            self._attrs[key] = (box, "cell_contents", None)

    def load_class_attr(self, cls, name: str):
        """The value a store in this trace gave the class attribute `cls.name`, or None."""
        entry = self._attrs.get(("class", id(cls), name))
        return None if entry is None else entry[2]

    def store_global(self, globals_dict: dict, globals_code: str, name: str, value):
        """`global name; name = value`: a store into a module's globals dict, which the entry
        reaches as `globals_code`."""
        self._check_frozen(f"storing global {name!r}")
        key = (id(globals_dict), name)
        if key not in self._globals:
            self._order.append(("global", key))
        self._globals[key] = (globals_code, value)

    def load_global(self, globals_dict: dict, name: str):
        entry = self._globals.get((id(globals_dict), name))
        return None if entry is None else entry[1]

    def load_attr(self, obj, name: str):
        """The value a store in this trace gave `obj.name`, or None."""
        shadowed = self.shadow.get((id(obj), name))
        if shadowed is not None:
            return shadowed
        entry = self._attrs.get((id(obj), name))
        return None if entry is None else entry[2]

    def store_item(self, container, key, value) -> bool:
        """`container[key] = value`: True when a loop body carries that entry (the store is done),
        False when the caller stores it (and calls mutate())."""
        return bool(self.frozen) and self._frozen_store("item", container, key, value)

    def mutate(self, container):
        """A list or dict VT changed in place; replayed if the caller can see it."""
        self._check_frozen(f"changing a {container.describe()}")
        if container.source is None:
            return
        key = id(container)
        if key not in self._containers:
            self._containers[key] = container
            self._order.append(("container", key))
            self._on_first_mutation(container)

    def replay_code(self, rebuild, namespace: dict, call: str | None, value_code: str) -> str:
        """One Python expression that evaluates `value_code` (a return value, or the argument
        tuple of `call`) and every mutated object's new contents, then applies the mutations
        in order and returns the value (or the result of `call(*value)`)."""
        if not self._order:
            return value_code if call is None else f"{call}(*{value_code})"
        ops, codes = [], []
        for kind, key in self._order:
            if kind == "attr":
                obj, name, value = self._attrs[key]
                ops.append(("attr", name))
                if key[0] == "cell":           # a closure cell: its value when the trace ends
                    codes += [obj.cell_source.code, rebuild(obj.value)]
                else:
                    codes += [rebuild.source_code(obj), rebuild(value)]
            elif kind == "global":
                globals_code, value = self._globals[key]
                ops.append(("item", key[1]))
                codes += [globals_code, rebuild(value)]
            else:
                vt = self._containers[key]
                advanced = getattr(vt, "advanced", None)
                if advanced is not None:              # an input iterator the trace took items from
                    ops.append(("advance", None))
                    codes += [rebuild.source_code(vt), str(advanced)]
                    continue
                if getattr(vt, "lazy", False):       # a list input only appended to: its items unread
                    ops.append(("extend", None))
                    codes += [rebuild.source_code(vt), "[" + ", ".join(rebuild(v) for v in vt.appended()) + "]"]
                    continue
                ops.append(("dict" if vt.python_type() is dict else "list", None))
                codes += [rebuild.source_code(vt), rebuild.fresh(vt)]
        name = f"___replay_{len(namespace)}"
        namespace[name] = make_replay(tuple(ops))
        return f"{name}({call or 'None'}, {value_code}, {', '.join(codes)})"


def make_replay(ops: tuple):
    """The run-time half: apply `ops` to (target, new value) pairs, then return or call."""
    def replay(fn, value, *pairs):
        for i, (kind, name) in enumerate(ops):
            target, new = pairs[2 * i], pairs[2 * i + 1]
            if kind == "attr":
                setattr(target, name, new)
            elif kind == "item":
                target[name] = new
            elif kind == "list":
                target[:] = new
            elif kind == "extend":
                target.extend(new)
            elif kind == "advance":
                for _ in range(new):
                    next(target)
            else:
                target.clear()
                target.update(new)
        return value if fn is None else fn(*value)
    replay.ops = ops
    return replay
