"""Guards collected while tracing: each is one Python condition over the frame values.

`code` is what the generated check function evaluates (locals are parameters, globals go
through `___G`, objects the guard compares against are bound names like `___type_0`);
`name` is the same condition as a user reads it (`L['x'].shape[0] == 10`), used by logs
and recompile reasons.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Guard:
    code: str
    name: str
    kind: str                  # TYPE_MATCH, ID_MATCH, EQUALS_MATCH, DTYPE, NDIM, SIZE, LEN, KEYS, SHAPE_ENV
    source: str = ""
    location: object = None    # user location for shape-env guards


@dataclass
class GuardSet:
    guards: list = field(default_factory=list)
    namespace: dict = field(default_factory=dict)     # ___name -> object the guards compare with
    _seen: set = field(default_factory=set)
    _objs: dict = field(default_factory=dict)         # id(obj) -> bound name

    def bind(self, obj, prefix: str) -> str:
        """A name under which the check function sees `obj` (kept alive by the entry)."""
        key = (prefix, id(obj))
        name = self._objs.get(key)
        if name is None:
            name = f"___{prefix}_{len(self._objs)}"
            self._objs[key] = name
            self.namespace[name] = obj
        return name

    def add(self, code: str, name: str, kind: str, source: str = "", location=None):
        if code in self._seen:
            return
        self._seen.add(code)
        self.guards.append(Guard(code, name, kind, source, location))

    # -- the guard kinds the tracer installs --

    def type_match(self, source, value):
        t = self.bind(type(value), "type")
        self.add(f"type({source.code}) is {t}", f"type({source.name}) is {_qualname(type(value))}",
                 "TYPE_MATCH", source.name)

    def id_match(self, source, value):
        o = self.bind(value, "obj")
        self.add(f"{source.code} is {o}", f"{source.name} is {_describe(value)}", "ID_MATCH", source.name)

    def equals_match(self, source, value):
        self.type_match(source, value)
        if isinstance(value, float) and value != value:
            self.add(f"{source.code} != {source.code}", f"{source.name} is nan", "EQUALS_MATCH", source.name)
            return
        if type(value) in (int, bool, str, type(None), float, complex, bytes):
            text = repr(value)
            self.add(f"{source.code} == {text}", f"{source.name} == {text}", "EQUALS_MATCH", source.name)
        else:
            o = self.bind(value, "const")
            self.add(f"{source.code} == {o}", f"{source.name} == {value!r}", "EQUALS_MATCH", source.name)


def _qualname(t) -> str:
    module = getattr(t, "__module__", "")
    return f"{module}.{t.__qualname__}" if module and module != "builtins" else t.__qualname__


def _describe(value) -> str:
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return f"<{type(value).__name__} {name}>" if name else f"<{type(value).__name__} object>"
