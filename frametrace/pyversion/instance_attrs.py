"""Where CPython 3.11-3.13 keeps an instance's attributes, for native guards that read `obj.name`
without PyObject_GetAttr (backends/llvm/walk_helpers.py), as CPython's own specialising
interpreter does (LOAD_ATTR_INSTANCE_VALUE, LOAD_ATTR_WITH_HINT).

    slot = attr_slot(cls, name)     # an AttrSlot, or None: that read keeps PyObject_GetAttr

A read of `obj.name` may skip the generic lookup when, at run time,
  * type(obj) is `cls` and cls's version tag is the one seen at compile time: cls and every class of
    its MRO are unchanged since (CPython gives a modified class a new tag), so `name` is still
    absent from the MRO and attribute lookup is still object.__getattribute__;
  * the value is in the instance's values array (managed dict, not materialised) or in its managed
    dict while that dict is split, at the index of `name` in the keys, and the keys' entry at that
    index is `name` itself (checked each time: the index is a hint, as in LOAD_ATTR_WITH_HINT);
  * the value is not NULL (an attribute deleted or never set).
Anything else takes PyObject_GetAttr, whose answer is the definition.

Layouts (64-bit, default GIL builds; every offset below is verified on real objects at import,
AVAILABLE is False when one does not hold):
  3.11  values pointer at obj - 32 (NULL once the dict is materialised), managed dict at obj - 24
  3.12  one word at obj - 24: values - 1 (low bit set) or the managed dict (low bit clear)
  3.13  values inline at obj + tp_basicsize (header: capacity, size, embedded, valid; items at
        +8), managed dict at obj - 24
  PyTypeObject: tp_flags 168, tp_getattro 144, tp_version_tag 384; PyHeapTypeObject.ht_cached_keys
  found next to ht_name / ht_qualname; PyDictObject: ma_keys 32, ma_values 40; PyDictKeysObject:
  dk_log2_index_bytes 9, dk_kind 10, dk_nentries 24, indices at 32, then 16-byte entries (key, value).
"""
from __future__ import annotations

import ctypes
import sys
import sysconfig
from dataclasses import dataclass

PY = sys.version_info[:2]

TP_GETATTRO, TP_FLAGS, TP_VERSION_TAG, TP_BASICSIZE = 144, 168, 384, 32
MANAGED_DICT = -24                       # the managed dict pointer (3.12: the dict-or-values word)
VALUES_POINTER = -32                     # 3.11: the values array's pointer
DICT_KEYS, DICT_VALUES = 32, 40          # PyDictObject.ma_keys, ma_values
KEYS_LOG2_INDEX_BYTES, KEYS_KIND, KEYS_NENTRIES, KEYS_INDICES = 9, 10, 24, 32
ENTRY_SIZE = 16                          # PyDictUnicodeEntry: me_key, me_value
DICT_KEYS_SPLIT = 2
Py_TPFLAGS_MANAGED_DICT = 1 << 4
Py_TPFLAGS_INLINE_VALUES = 1 << 2        # 3.13
Py_TPFLAGS_HEAPTYPE = 1 << 9

# how the values array is reached: "pointer" (3.11), "tagged" (3.12), "inline" (3.13)
VALUES_KIND = {(3, 11): "pointer", (3, 12): "tagged", (3, 13): "inline"}.get(PY)
VALUES_HEADER = 8 if PY >= (3, 13) else 0   # bytes before values[0] in a PyDictValues


@dataclass(frozen=True)
class AttrSlot:
    """How to read `name` of an exact instance of `cls` (see the module doc)."""
    cls: type
    name: str                # interned: the keys' entry must be this very object
    tag: int                 # cls's version tag at compile time
    index: int               # the index of `name` in cls's shared keys (a hint, checked)
    values: str              # VALUES_KIND
    basicsize: int           # 3.13: the inline values' offset


def _word(addr: int) -> int:
    return ctypes.c_void_p.from_address(addr).value or 0


def _u32(addr: int) -> int:
    return ctypes.c_uint32.from_address(addr).value


def _u8(addr: int) -> int:
    return ctypes.c_uint8.from_address(addr).value


def _cached_keys_offset() -> int | None:
    """Offset of PyHeapTypeObject.ht_cached_keys: the word after ht_name, ht_slots, ht_qualname."""
    class _Probe:
        pass
    _Probe.__qualname__ = "probe.qualname"           # distinct objects for ht_name and ht_qualname
    t, name, qual = id(_Probe), id(_Probe.__name__), id(_Probe.__qualname__)
    for off in range(400, type.__basicsize__ - 24, 8):
        if _word(t + off) == name and _word(t + off + 16) == qual:
            return off + 24
    return None


_GENERIC_GETATTR = ctypes.cast(ctypes.pythonapi.PyObject_GenericGetAttr, ctypes.c_void_p).value
CACHED_KEYS = None


def _keys_index(keys: int, name: str) -> int | None:
    """Index of the entry whose key is the object `name` in split keys at `keys`."""
    if not keys or _u8(keys + KEYS_KIND) != DICT_KEYS_SPLIT:
        return None
    log2_index_bytes, n = _u8(keys + KEYS_LOG2_INDEX_BYTES), ctypes.c_ssize_t.from_address(keys + KEYS_NENTRIES).value
    if not (0 <= log2_index_bytes <= 40 and 0 <= n <= 1 << 16):
        return None
    entries = keys + KEYS_INDICES + (1 << log2_index_bytes)
    for i in range(n):
        if _word(entries + ENTRY_SIZE * i) == id(name):
            return i
    return None


def attr_slot(cls, name: str) -> AttrSlot | None:
    """An AttrSlot for `obj.name` of exact instances of `cls`, or None (the generic lookup)."""
    if not AVAILABLE or not isinstance(cls, type) or type(name) is not str:
        return None
    flags = cls.__flags__
    if not flags & Py_TPFLAGS_HEAPTYPE or not flags & Py_TPFLAGS_MANAGED_DICT:
        return None
    if VALUES_KIND == "inline" and not flags & Py_TPFLAGS_INLINE_VALUES:
        return None
    if _word(id(cls) + TP_GETATTRO) != _GENERIC_GETATTR:
        return None                      # __getattribute__ / __getattr__ of the class
    name = sys.intern(name)
    if any(name in vars(k) for k in cls.__mro__):
        return None                      # a class attribute or descriptor (a property, a slot)
    getattr(cls, "__ft_no_such_attribute__", None)   # _PyType_Lookup gives cls a version tag
    tag = _u32(id(cls) + TP_VERSION_TAG)
    index = _keys_index(_word(id(cls) + CACHED_KEYS), name) if tag else None
    if index is None:
        return None
    return AttrSlot(cls, name, tag, index, VALUES_KIND, cls.__basicsize__)


def read(obj, slot: AttrSlot):
    """The object the native read would take for `obj.<slot.name>`, or None where it would take
    the generic lookup (a Python model of the generated code: used to verify the layout)."""
    a, cls = id(obj), slot.cls
    if type(obj) is not cls or _u32(id(cls) + TP_VERSION_TAG) != slot.tag:
        return None
    values, keys = 0, 0
    if slot.values == "pointer":
        values = _word(a + VALUES_POINTER)
    elif slot.values == "tagged":
        w = _word(a + MANAGED_DICT)
        values = w + 1 if w & 1 else 0
    elif _u8(a + slot.basicsize + 3):                   # 3.13: inline values, `valid`
        values = a + slot.basicsize
    if values:
        keys = _word(id(cls) + CACHED_KEYS)
    else:
        d = _word(a + MANAGED_DICT) if slot.values != "tagged" or not _word(a + MANAGED_DICT) & 1 else 0
        if not d or not _word(d + DICT_VALUES):
            return None
        keys, values = _word(d + DICT_KEYS), _word(d + DICT_VALUES)
    if _keys_index(keys, slot.name) != slot.index:
        return None
    if VALUES_HEADER and slot.index >= _u8(values):     # 3.13: capacity
        return None
    got = _word(values + VALUES_HEADER + 8 * slot.index)
    return ctypes.cast(got, ctypes.py_object).value if got else None


def _verify() -> bool:
    class _Obj:
        def __init__(self, k):
            self.a, self.b, self.c = [k], (k,), {k: k}

    objs = [_Obj(i) for i in range(4)]
    slots = [attr_slot(_Obj, n) for n in "abc"]
    if any(s is None for s in slots):
        return False
    fresh = all(read(o, s) is getattr(o, s.name) for o in objs for s in slots)
    for o in objs[:2]:
        object.__getattribute__(o, "__dict__")         # materialised, as tracing does
    objs[3].__dict__["d"] = 1
    dicts = all(read(o, s) is getattr(o, s.name) for o in objs for s in slots)
    del objs[1].b
    gone = read(objs[1], slots[1]) is None and read(objs[1], slots[0]) is objs[1].a
    _Obj.extra = 1                                      # a modified class: a new tag
    stale = all(read(o, s) is None for o in objs for s in slots)
    return fresh and dicts and gone and stale


def _init() -> bool:
    global CACHED_KEYS
    if VALUES_KIND is None or ctypes.sizeof(ctypes.c_void_p) != 8 or sysconfig.get_config_var("Py_GIL_DISABLED") \
            or sys.implementation.name != "cpython":
        return False
    try:
        if _word(id(int) + TP_FLAGS) != int.__flags__ or _word(id(int) + TP_BASICSIZE) != int.__basicsize__:
            return False
        CACHED_KEYS = _cached_keys_offset()
        return CACHED_KEYS is not None and _verify()
    except Exception:            # noqa: BLE001 - another layout: the generic lookup serves
        return False


AVAILABLE = True
AVAILABLE = _init()

__all__ = ["AVAILABLE", "AttrSlot", "attr_slot", "read"]
