"""Which sizes and ints a compile makes dynamic: markings, dynamic_sources, dynamic=, automatic dynamic.

Automatic dynamic keeps, per code object, what each input looked like at earlier compiles
(`FrameState`: sizes per array source, values per int source; `None` = seen varying). A
size that differs from what an earlier compile saw becomes dynamic at the recompile.
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


class FrameState:
    """What automatic dynamic learnt about one code object's inputs."""

    def __init__(self):
        self.sizes: dict = {}      # source name -> tuple(int | None) or VARYING (ndim changed)
        self.ints: dict = {}       # source name -> int | None
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

    def observe_int(self, name, value):
        old = self.ints.get(name, "unset")
        new = value if old == "unset" or old == value else None
        if new != old:
            self.ints[name] = new
            self.changed = True
        return new


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
        from .pgo import observe_strides
        observe_strides(state, name, value.strides)
        marks = marks_of(value)
        decisions = []
        for d in range(value.ndim):
            decisions.append(self._dim(source, name, d, seen, marks.get(d)))
        return decisions

    def _dim(self, source, name, d, seen, mark) -> DimDecision:
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
        if config.automatic_dynamic_shapes and (seen is VARYING or seen[d] is None):
            return DYNAMIC
        return STATIC if config.assume_static_by_default else DYNAMIC

    def int_is_dynamic(self, name, value, state: FrameState) -> bool:
        seen = state.observe_int(name, value)
        if _listed(name):
            return True
        if self.dynamic is False:
            return False
        if self.dynamic is True:
            return True
        if config.automatic_dynamic_shapes and seen is None:
            return True
        return not config.assume_static_by_default
