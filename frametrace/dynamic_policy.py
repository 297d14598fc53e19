"""Which sizes and ints a compile makes dynamic: markings, dynamic_sources, dynamic=, automatic dynamic.

Automatic dynamic keeps, per code object, what each input looked like at earlier compiles
(`FrameState`: sizes per array source, values per int source; `None` = seen varying). A
size that differs from what an earlier compile saw becomes dynamic at the recompile.

Ints read from a list, tuple or dict (`L['ids'][3]`) vary together: when one item of a container
changes, every int item of it is dynamic from the next compile on (its group `L['ids'][*]` is
recorded as varying), so a window of ids that changes every call costs one recompile, not one
per position that happened to change.
"""
from __future__ import annotations

from dataclasses import dataclass

from .config import config
from .marks import marks_of


@dataclass(frozen=True)
class DimDecision:
    kind: str                   # "static" | "dynamic" | "unbacked"
    strict: bool = False        # mark_dynamic: specialising is an error
    min: int | None = None
    max: int | None = None


STATIC = DimDecision("static")
DYNAMIC = DimDecision("dynamic")

VARYING = None


def join_sizes(a, b):
    """The lattice join of two observed size (or stride) tuples: equal entries stay, different
    ones become None (`?`), a different rank makes the whole VARYING."""
    if a is VARYING or b is VARYING or len(a) != len(b):
        return VARYING
    return tuple(x if x == y else None for x, y in zip(a, b, strict=True))


class FrameState:
    """What automatic dynamic learnt about one code object's inputs. `whole_arrays`: a changed
    size makes every dimension of that array dynamic, not only the changed one (a function run
    on the blocks of a chunked array in a worker: csrc_free_runtime/pickling.py)."""

    whole_arrays = False

    def __init__(self):
        self.sizes: dict = {}      # source name -> tuple(int | None) or VARYING (ndim changed)
        self.ints: dict = {}       # source name -> int | None
        self.item_prints: dict = {}   # container `L['ids'][*]` -> hash of its int items (observe_items)
        self.strides: dict = {}    # source name -> byte strides seen (shown by PGO profiles only)
        self.changed = False

    def observe_array(self, name, shape):
        old = self.sizes.get(name, "unset")
        if old == "unset":
            new = tuple(shape)
        elif old is VARYING or len(old) != len(shape):
            new = VARYING
        else:
            new = tuple(a if a == b else None for a, b in zip(old, shape))
        if new != old:
            self.sizes[name] = new
            self.changed = True
        return new

    def observe_strides(self, name, strides) -> None:
        """Record an array's byte strides so the profile shows them (optional; sizes are what count)."""
        strides = tuple(strides)
        self.strides[name] = strides if name not in self.strides else join_sizes(self.strides[name], strides)

    def observe_int(self, name, value, group=None):
        """Record int `value` of source `name` (an item of container `group`, if given); returns
        what is known: the value, or None once it (or any item of its group) was seen varying."""
        old = self.ints.get(name, "unset")
        new = value if old == "unset" or old == value else None
        if new != old:
            self.ints[name] = new
            self.changed = True
        if group is not None:
            if new is None and self.ints.get(group, "unset") is not None:
                self.ints[group] = None
                self.changed = True
            if self.ints.get(group, "unset") is None:
                return None
        return new

    def observe_items(self, group: str, fingerprint: int) -> None:
        """Record the int items of one container at once (a hash of (index, value) pairs), so an
        item read before the one that changed is dynamic too. Only "varying" is kept (and saved
        by PGO, as `L['ids'][*]: scalar ?`); the fingerprint lives in this process."""
        old = self.item_prints.get(group)
        self.item_prints[group] = fingerprint
        if old is not None and old != fingerprint and self.ints.get(group, "unset") is not None:
            self.ints[group] = None
            self.changed = True


def item_group(source) -> str | None:
    """`L['ids'][*]` for an int item of a container (`L['ids'][3]`), else None."""
    from .sources import GetItemSource
    if isinstance(source, GetItemSource) and type(source.index) is int:
        return f"{source.base.name}[*]"
    return None


def _listed(name: str) -> bool:
    listed = config.dynamic_sources
    if not listed:
        return False
    return name in {s.strip() for s in listed.split(",") if s.strip()}


class DynamicPolicy:
    def __init__(self, dynamic):
        self.dynamic = dynamic       # None (automatic), True, False

    def array_dims(self, source, value, state: FrameState) -> list:
        name = source.name
        seen = state.observe_array(name, value.shape)
        state.observe_strides(name, value.strides)
        marks = marks_of(value)
        spread = state.whole_arrays and seen is not VARYING and any(s is None for s in seen)
        decisions = []
        for d in range(value.ndim):
            decisions.append(self._dim(source, name, d, seen, marks.get(d), spread))
        return decisions

    def _dim(self, source, name, d, seen, mark, spread=False) -> DimDecision:
        if mark is not None:
            if mark.kind == "static":
                return STATIC
            if mark.kind == "dynamic":
                return DimDecision("dynamic", True, mark.min, mark.max)
            if mark.kind == "maybe_dynamic":
                return DYNAMIC
            if mark.kind == "unbacked":
                return DimDecision("dynamic")
        if _listed(name) or _listed(f"{name}.shape[{d}]"):
            return DYNAMIC
        if self.dynamic is False:
            return STATIC
        if config.force_attribute_static_shapes and source.is_attribute_or_global:
            return STATIC
        if self.dynamic is True:
            return DYNAMIC
        if config.automatic_dynamic_shapes and (seen is VARYING or seen[d] is None or spread):
            return DYNAMIC
        return STATIC if config.assume_static_by_default else DYNAMIC

    def length_is_dynamic(self, name, n, state: FrameState) -> bool:
        """The length of a list input (`len(L['xs'])`): static first, a size once it varied.
        Unlike an array's sizes, a list's length on an attribute or global is not kept static
        (a history list on `self` grows every call)."""
        seen = state.observe_int(name, n)
        if _listed(name) or _listed(name[4:-1]):          # `len(L['xs'])` or `L['xs']`
            return True
        if self.dynamic is not None:
            return self.dynamic
        if config.automatic_dynamic_shapes and seen is None:
            return True
        return not config.assume_static_by_default

    def int_is_dynamic(self, name, value, state: FrameState, group=None) -> bool:
        seen = state.observe_int(name, value, group)
        if _listed(name) or (group is not None and _listed(group)):
            return True
        if self.dynamic is False:
            return False
        if self.dynamic is True:
            return True
        if config.automatic_dynamic_shapes and seen is None:
            return True
        return not config.assume_static_by_default
