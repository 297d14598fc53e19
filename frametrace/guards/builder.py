"""GuardBuilder: the one place guard records are made, one method per kind.

Objects a guard compares with (types, identities, dtypes, code objects, exact constants) are
bound to names in `namespace` (kept alive by the entry); records are deduplicated, and each
keeps the user location tracing was at when it was first made (`location_provider`)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from csrc_free_runtime import original_function

from ..errors import Unsupported
from ..sources import Source
from .exact import needs_bits, same_bits
from .kinds import GuardKind as K
from .python_check import CODE_OF, SAME_BITS, code_of
from .records import Guard

_LITERAL_TYPES = (int, bool, str, type(None), bytes)


@dataclass(frozen=True)
class RootGlobals(Source):
    """The compiled frame's own globals dict (`G`, spelled `___G` in checks)."""

    @property
    def name(self):
        return "G"

    @property
    def code(self):
        return "___G"


class GuardBuilder:
    def __init__(self, location_provider=None):
        self.location_provider = location_provider   # () -> the user Location tracing is at, or None
        self.guards: list = []
        self.namespace: dict = {}        # ___name -> object the guards compare with
        self._seen: set = set()
        self._objs: dict = {}            # (prefix, id(obj)) -> bound name

    def bind(self, obj, prefix: str) -> str:
        """A name under which the check function sees `obj` (kept alive by the entry)."""
        key = (prefix, id(obj))
        name = self._objs.get(key)
        if name is None:
            name = f"___{prefix}_{len(self._objs)}"
            self._objs[key] = name
            self.namespace[name] = obj
        return name

    def _add(self, guard: Guard) -> Guard:
        key = guard.code
        if key not in self._seen:
            self._seen.add(key)
            if guard.location is None and self.location_provider is not None:
                # the user line that made it a guard (the recompile advice names it)
                guard = dataclasses.replace(guard, location=self.location_provider())
            self.guards.append(guard)
        return guard

    # -- one method per kind ------------------------------------------------------------------
    def type(self, source, value):
        t = type(value)
        return self._add(Guard(K.TYPE_MATCH, source, t, self.bind(t, "type")))

    def identity(self, source, obj):
        return self._add(Guard(K.ID_MATCH, source, obj, self.bind(obj, "obj")))

    def equals(self, source, value):
        """Type and exact value (floats and complex values by bits: NaN == NaN, -0.0 != 0.0)."""
        self.type(source, value)
        ref = None
        if needs_bits(value):
            self.namespace[SAME_BITS] = same_bits
            ref = self.bind(value, "const")
        elif type(value) not in _LITERAL_TYPES + (float, complex):
            ref = self.bind(value, "const")
        return self._add(Guard(K.EQUALS_MATCH, source, value, ref))

    def dtype(self, source, dtype: np.dtype):
        return self._add(Guard(K.DTYPE, source, dtype, self.bind(dtype, "dtype")))

    def ndim(self, source, ndim: int):
        return self._add(Guard(K.NDIM, source, int(ndim)))

    def size(self, size_source, size: int):
        """One static size: `size_source` is a ShapeSource."""
        return self._add(Guard(K.SIZE, size_source, int(size)))

    def strides(self, source, strides):
        return self._add(Guard(K.STRIDES, source, tuple(int(s) for s in strides)))

    def stride_formula(self, source, formula):
        """The strides of `source` as functions of its own sizes (layout.stride_formula):
        a reversed or stepped view keeps its guard when its sizes change."""
        return self._add(Guard(K.STRIDE_FORMULA, source, tuple((int(c), tuple(dims)) for c, dims in formula)))

    def layout(self, source, order: str):
        assert order in ("C", "F")
        return self._add(Guard(K.LAYOUT, source, order))

    def length(self, source, n: int):
        return self._add(Guard(K.LEN, source, int(n)))

    def dict_keys(self, source, keys):
        keys = list(keys)
        return self._add(Guard(K.KEYS, source, keys, self.bind(keys, "keys")))

    def shape_env(self, shape_guard, source_of_name: dict):
        """A ShapeEnv fact (shapes/records.ShapeGuardCode: a sympy expression whose symbols each
        read one source, named in `shape_guard.names`) over the Sources `source_of_name` gives
        for those names. The record keeps the expression and Symbol -> Source; every check and
        text is printed from them."""
        missing = [str(n) for n in shape_guard.names.values() if n not in source_of_name]
        if missing:          # e.g. a fact over a data-dependent size: no input to read it from
            raise Unsupported(f"the size fact {shape_guard.code} reads {', '.join(missing)}, which no "
                              "input of the frame provides", kind="guard",
                              hints=("the code runs eagerly; avoid branching on data-dependent sizes",))
        sources = {s: source_of_name[n] for s, n in shape_guard.names.items()}
        return self._add(Guard(K.SHAPE_ENV, None, shape_guard, location=shape_guard.location, sources=sources))

    def code(self, fn_source, fn):
        """A function is guarded by its code object, not its identity: the user's code behind
        a hook trampoline (the global hook swaps `__code__` when it hooks a function, and gives
        it back when it gives up on it: neither changes what a caller inlined)."""
        code = original_function(fn).__code__
        self.namespace[CODE_OF] = code_of
        return self._add(Guard(K.CODE_MATCH, fn_source, code, self.bind(code, "code")))

    def builtin_not_shadowed(self, globals_source, name: str):
        """`name` resolves to the builtin: it stays absent from the globals dict."""
        src = globals_source if globals_source is not None else RootGlobals()
        return self._add(Guard(K.BUILTIN, src, name))

    def alias(self, a, b, same: bool):
        """Whether two inputs are the same object (`a`, `b`: Sources)."""
        return self._add(Guard(K.ALIAS, a, (b, bool(same))))

    def predicate(self, source, fn, says: str):
        """`fn(value)` holds: a property of a value that no other kind states (`says` completes
        the sentence "L['x'] ...", e.g. "is a list of ints that fit int64")."""
        return self._add(Guard(K.PREDICATE, source, (fn, says), self.bind(fn, "fn")))
