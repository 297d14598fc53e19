"""`x[index]` and `x[index] = value` with basic indexing.

Ints (negative and SymInt included), slices (bounds may be SymInt, steps static, negative
steps included), None / np.newaxis, Ellipsis and tuples of these become one "getitem" node
with a canonical index (ops/indexing.py). A boolean mask or an integer array alone goes to
data_dependent.array_index; lists, ranges and integer arrays among other entries to
advanced.py (one "index" node), as do assignments through them.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError, Unsupported
from ...shapes import is_symbolic
from ..fake import FakeScalar
from ..graph import IndexSlice
from ..ops.indexing import index_is_scalar, is_identity_index, normalize_index
from .advanced import advanced_getitem, advanced_setitem, is_advanced
from .common import check_operand, is_array, is_proxy
from .data_dependent import array_index, data_slice, note_read


def _entries(index) -> tuple:
    entries = index if isinstance(index, tuple) else (index,)
    for e in entries:
        if is_proxy(e):
            raise Unsupported("indexing with an array (boolean mask or integer array) is not "
                              "supported yet", kind="data_dependent", context="getitem",
                              hints=("the result size depends on array data",))
        if isinstance(e, (list, np.ndarray)):
            raise Unsupported("indexing with a list or array constant (advanced indexing) is "
                              "not supported yet", kind="indexing", context="getitem")
        if isinstance(e, slice):
            for part in (e.start, e.stop, e.step):
                if is_proxy(part):
                    raise Unsupported("a slice bound computed from array data",
                                      kind="data_dependent", context="getitem")
    return entries


def _target(x, what: str):
    if is_array(x):
        return x
    if is_proxy(x):
        raise NumpyError(TypeError(f"'{x.fake.pytype.__name__}' object is not {what}"))
    raise Unsupported(f"indexing a {type(x).__name__}", kind="indexing", context="getitem")


def _one_element_view(b, x, canon):
    """A writable 0-d view of the element a full integer index selects (not a scalar copy)."""
    i = canon[-1]
    view = b.emit("getitem", x, index=canon[:-1] + (IndexSlice(i, i + 1, 1),))
    return view


def _run_time_ints(b, x, index):
    """A full integer index with run-time Python ints (a counter carried by a `while` loop
    node, `x[k]`, `x[i, k]`): each such int as an int64 NumPy scalar, an integer array index
    selecting the same element with the same IndexError (x[k] of a 2-d x is a view: not this)."""
    entries = index if isinstance(index, tuple) else (index,)
    if not any(is_proxy(e) and isinstance(e.fake, FakeScalar) and e.fake.pytype is int for e in entries) or \
            len(entries) != x.ndim or not all(_is_int_entry(e) for e in entries):
        return index
    out = tuple(b.emit("astype", e, dtype=np.dtype(np.int64)) if is_proxy(e) and not is_array(e) else e
                for e in entries)
    return out if isinstance(index, tuple) else out[0]


def _is_int_entry(e) -> bool:
    if is_proxy(e):
        return isinstance(e.fake, FakeScalar) and e.fake.pytype is int or (is_array(e) and e.scalar and
                                                                             e.dtype.kind in "iu")
    return isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_)) or is_symbolic(e)


def getitem(b, x, index):
    """x[index] for basic indices: a view (or a NumPy scalar for a full integer index);
    a boolean mask or an integer index array goes to data_dependent.array_index."""
    x = _target(x, "subscriptable")
    index = _run_time_ints(b, x, index)
    if is_proxy(index):
        return array_index(b, x, index)
    if is_advanced(index):
        return advanced_getitem(b, x, index)
    split = _data_slice_entry(index)
    if split is not None:                       # x[..., ptr[i]:ptr[i + 1], ...]
        k, entries = split
        rest = getitem(b, x, entries[:k] + (slice(None),) + entries[k + 1:])
        axis = sum(1 for e in entries[:k] if e is None or isinstance(e, slice))
        return data_slice(b, rest, axis, entries[k])
    entries = _entries(index)
    canon = normalize_index(x.shape, entries)
    if index_is_scalar(canon) and any(e is Ellipsis for e in entries):
        # x[0, ...] is a 0-d array view, not the scalar x[0] is
        if x.ndim == 0:
            return b.emit("expand_dims", x, axis=())
        return b.emit("squeeze", _one_element_view(b, x, canon), axis=(0,))
    out = b.emit("getitem", x, index=canon)
    if index_is_scalar(canon) and out.fake.scalar:
        note_read(b, out, x, canon)
    return out


def _data_slice_entry(index):
    """(position, entries) of the one slice whose bounds are values computed from array data,
    or None. Entries before it must not hold an Ellipsis (its position would be unknown)."""
    entries = index if isinstance(index, tuple) else (index,)
    found = [k for k, e in enumerate(entries)
             if isinstance(e, slice) and any(is_proxy(p) for p in (e.start, e.stop, e.step))]
    if not found:
        return None
    k = found[0]
    if len(found) > 1 or any(e is Ellipsis for e in entries[:k]):
        raise Unsupported("several slices (or an Ellipsis before a slice) with bounds computed from array data",
                          kind="data_dependent", context="getitem")
    return k, entries


def setitem(b, x, index, value):
    """x[index] = value: a getitem view of x, then assign(view, value)."""
    if is_array(x) and x.scalar or (is_proxy(x) and not is_array(x)):
        name = x.dtype.type.__name__ if is_array(x) else x.fake.pytype.__name__
        raise NumpyError(TypeError(f"'{name}' object does not support item assignment"))
    x = _target(x, "subscriptable")
    index = _run_time_ints(b, x, index)
    if is_proxy(index) or is_advanced(index):
        return advanced_setitem(b, x, index, value)
    value = check_operand(value, "setitem")
    canon = normalize_index(x.shape, _entries(index))
    if index_is_scalar(canon):
        if is_array(value) and value.ndim > 0:
            raise NumpyError(ValueError("setting an array element with a sequence."))
        dst = x if x.ndim == 0 else _one_element_view(b, x, canon)
    elif is_identity_index(x.shape, canon):
        dst = x
    else:
        dst = b.emit("getitem", x, index=canon)
    b.emit("assign", dst, value)
