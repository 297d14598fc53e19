"""Sources: where a traced value comes from, as a Python expression over L (locals) and G (globals).

The same name is used by guards, recompile reasons, logs, `dynamic_sources` and PGO:
`L['x']`, `L['x'].shape[0]`, `G['W']`, `L['self'].w`, `L['xs'][1]`. `code` is the same
expression as the generated guard and entry functions spell it: locals are parameters
(`x`), globals go through `___G`.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def code(self) -> str:
        raise NotImplementedError

    @property
    def is_attribute_or_global(self) -> bool:
        """Reached through an object attribute or a global (static by default)."""
        return False

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class LocalSource(Source):
    local: str

    @property
    def name(self):
        return f"L[{self.local!r}]"

    @property
    def code(self):
        return self.local


@dataclass(frozen=True)
class GlobalSource(Source):
    global_name: str

    @property
    def name(self):
        return f"G[{self.global_name!r}]"

    @property
    def code(self):
        return f"___G[{self.global_name!r}]"

    @property
    def is_attribute_or_global(self):
        return True


@dataclass(frozen=True)
class ChainedSource(Source):
    base: Source

    @property
    def is_attribute_or_global(self):
        return self.base.is_attribute_or_global


@dataclass(frozen=True)
class AttrSource(ChainedSource):
    member: str

    @property
    def name(self):
        return f"{self.base.name}.{self.member}"

    @property
    def code(self):
        return f"{self.base.code}.{self.member}"

    @property
    def is_attribute_or_global(self):
        return True


@dataclass(frozen=True)
class GetItemSource(ChainedSource):
    index: object        # int or str (a constant key)

    @property
    def name(self):
        return f"{self.base.name}[{self.index!r}]"

    @property
    def code(self):
        return f"{self.base.code}[{self.index!r}]"


@dataclass(frozen=True)
class ShapeSource(ChainedSource):
    """One size of an array: `L['x'].shape[0]`."""
    dim: int

    @property
    def name(self):
        return f"{self.base.name}.shape[{self.dim}]"

    @property
    def code(self):
        return f"{self.base.code}.shape[{self.dim}]"


@dataclass(frozen=True)
class LenSource(ChainedSource):
    """The length of a list input: `len(L['tokens'])` (a size when the length varies)."""

    @property
    def name(self):
        return f"len({self.base.name})"

    @property
    def code(self):
        return f"len({self.base.code})"


@dataclass(frozen=True)
class GlobalsOfSource(ChainedSource):
    """The globals dict of a function other than the compiled frame's: `G['helper'].__globals__`."""

    @property
    def name(self):
        return f"{self.base.name}.__globals__"

    @property
    def code(self):
        return f"{self.base.code}.__globals__"


@dataclass(frozen=True)
class GlobalIn(Source):
    """A name looked up in some globals dict (`G['np']` or `G['f'].__globals__['np']`)."""
    globals_source: Source | None          # None = the compiled frame's own globals
    global_name: str

    @property
    def name(self):
        if self.globals_source is None:
            return f"G[{self.global_name!r}]"
        return f"{self.globals_source.name}[{self.global_name!r}]"

    @property
    def code(self):
        if self.globals_source is None:
            return f"___G[{self.global_name!r}]"
        return f"{self.globals_source.code}[{self.global_name!r}]"

    @property
    def is_attribute_or_global(self):
        return True


@dataclass(frozen=True)
class HeldSource(Source):
    """An object the entry holds itself, bound as `ref` in its namespace (OutputGraph.hold): the
    globals of another module whose function the frame inlines with no path to the function
    from the frame's values (a method read off a guarded class), or a user class reached through
    a guarded type (`type(self)`, `super()`). Sound because what the trace reached it through is
    guarded to stay that object (a function's `__globals__` cannot be rebound); reads through it
    are guarded like any other. `label` names it in guards and logs (`fa_losses.__dict__`)."""
    ref: str
    label: str

    @property
    def name(self):
        return self.label

    @property
    def code(self):
        return self.ref

    @property
    def is_attribute_or_global(self):
        return True


@dataclass(frozen=True)
class ClosureSource(ChainedSource):
    """The contents of closure cell `index` of a function: `G['f'].__closure__[0].cell_contents`."""
    index: int

    @property
    def name(self):
        return f"{self.base.name}.__closure__[{self.index}].cell_contents"

    @property
    def code(self):
        return f"{self.base.code}.__closure__[{self.index}].cell_contents"


@dataclass(frozen=True)
class CellSource(ChainedSource):
    """Closure cell `index` of a function itself (what a `nonlocal` write replays into):
    `G['f'].__closure__[0]`."""
    index: int

    @property
    def name(self):
        return f"{self.base.name}.__closure__[{self.index}]"

    @property
    def code(self):
        return f"{self.base.code}.__closure__[{self.index}]"


@dataclass(frozen=True)
class DefaultsSource(ChainedSource):
    """A default argument of a function: `G['f'].__defaults__[1]`."""
    index: int
    kw: str | None = None

    @property
    def name(self):
        if self.kw is not None:
            return f"{self.base.name}.__kwdefaults__[{self.kw!r}]"
        return f"{self.base.name}.__defaults__[{self.index}]"

    @property
    def code(self):
        if self.kw is not None:
            return f"{self.base.code}.__kwdefaults__[{self.kw!r}]"
        return f"{self.base.code}.__defaults__[{self.index}]"


# the entry's name for the function that turns a list of ints into an int64 array
INT_LIST_CONVERT = "___int64_array"


@dataclass(frozen=True)
class IntListArraySource(ChainedSource):
    """A list of ints passed to the graph as an int64 array: `np.asarray(L['ids'])`."""

    @property
    def name(self):
        return f"np.asarray({self.base.name})"

    @property
    def code(self):
        return f"{INT_LIST_CONVERT}({self.base.code})"


# the entry's name for the function that reads an item of a list iterator without advancing it
ITER_ITEM = "___iter_item"


@dataclass(frozen=True)
class IterItemSource(ChainedSource):
    """An item a list iterator has not yielded yet, `index` places ahead (0: what next() returns):
    read without advancing it (the entry advances it after the graph)."""
    index: int

    @property
    def name(self):
        return f"list({self.base.name})[{self.index}]"

    @property
    def code(self):
        return f"{ITER_ITEM}({self.base.code}, {self.index})"
