"""Where CPython 3.11-3.13 keeps a dict's entries, for the native keys guard (`list(d) == keys`,
backends/llvm/walk_helpers.py's ft_keys_same), which reads them in place instead of calling
PyDict_Next once per key.

A combined dict whose keys are all str (PyDictObject.ma_values NULL, its keys' dk_kind
DICT_KEYS_UNICODE) keeps its entries in insertion order as 16-byte (key, value) pairs after the
index table; with dk_nentries == ma_used no entry was deleted, so entry i is the i-th item of
iteration. Any other dict (split, non-str keys, deletions) takes PyDict_Next. Offsets are those of
instance_attrs (PyDictObject, PyDictKeysObject), verified here on real dicts at import.
"""
from __future__ import annotations

import ctypes

from . import instance_attrs as ia

DICT_USED = 16                     # PyDictObject.ma_used
DICT_KEYS_UNICODE = 1


def entries(d: dict):
    """[(key, value) addresses] as the native helper reads them, or None where it would not."""
    a = id(d)
    if ctypes.c_void_p.from_address(a + ia.DICT_VALUES).value:
        return None
    keys = ctypes.c_void_p.from_address(a + ia.DICT_KEYS).value
    n = ctypes.c_ssize_t.from_address(keys + ia.KEYS_NENTRIES).value
    if ctypes.c_uint8.from_address(keys + ia.KEYS_KIND).value != DICT_KEYS_UNICODE or \
            n != ctypes.c_ssize_t.from_address(a + DICT_USED).value:
        return None
    at = keys + ia.KEYS_INDICES + (1 << ctypes.c_uint8.from_address(keys + ia.KEYS_LOG2_INDEX_BYTES).value)
    return [(ctypes.c_void_p.from_address(at + ia.ENTRY_SIZE * i).value,
             ctypes.c_void_p.from_address(at + ia.ENTRY_SIZE * i + 8).value) for i in range(n)]


def _verify() -> bool:
    vals = [object() for _ in range(12)]
    for d in ({"b": vals[0]}, dict(zip("abcdefghijkl", vals)), {"x": vals[1], "w": vals[2]}):
        got = entries(d)
        if got != [(id(k), id(v)) for k, v in d.items()]:
            return False
    d = dict(zip("abc", vals))
    del d["b"]
    if entries(d) is not None or entries({1: 2}) is not None:
        return False
    return True


def _init() -> bool:
    if not ia.AVAILABLE:
        return False
    try:
        return _verify()
    except Exception:            # noqa: BLE001 - another layout: PyDict_Next serves
        return False


AVAILABLE = _init()

__all__ = ["AVAILABLE", "entries", "DICT_KEYS_UNICODE"]
