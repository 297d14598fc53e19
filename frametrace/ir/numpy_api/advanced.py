"""Advanced indexing in the API layer: lists, ranges and integer arrays as indices.

`x[[0, 2]]`, `x[range(n)]`, `x[:, [-1], :]`, `x[ids]`, `x[[0, 1], [2, 3]]` become one "index"
node (ops/advanced_index.py); `x[idx] = v` an "index_put" (NumPy's buffered semantics, so
`x[idx] += v` -- a gather, an add, a put -- matches NumPy with repeated indices), and
`x[mask] = scalar` with a full-shape mask a fused `where` written back into x.
`np.add.at(x, idx, v)` is a "ufunc_at" node (unbuffered). `np.put_along_axis` is the
`x[idx] = v` NumPy makes of it (an arange per other axis, broadcast against the indices).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import NumpyError, Unsupported
from ..ops.advanced_index import ArrayRef, ConstIndex
from ..ops.indexing import normalize_int_index, normalize_slice
from ..ops.symbolic import is_static, is_symbolic, pytype_of, same_size
from ..graph import IndexSlice
from .common import check_operand, is_array, is_proxy, normalize_axis
from .data_dependent import nonzero


@dataclass(frozen=True)
class IndexRange:
    """`range(start, stop, step)` whose bounds may be sizes, as an index (`wpe[range(n)]`): an
    arange of int64 indices, so the graph stays valid for every n (NumPy copies, as for a list)."""
    start: object
    stop: object = None
    step: object = 1

    def as_array(self, b):
        start, stop = (0, self.start) if self.stop is None else (self.start, self.stop)
        step = self.step
        if not is_static(step):
            raise Unsupported("range() with a symbolic step as an index", kind="indexing", context="getitem")
        for v in (start, stop):
            if not (is_static(v) or is_symbolic(v)) or isinstance(v, bool):
                raise NumpyError(TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer"))
        return b.emit("arange", start, stop, int(step), dtype=np.dtype(np.int64))


def _spans(e) -> int:
    """How many dimensions of the indexed array an index entry consumes."""
    if e is None or e is Ellipsis:
        return 0
    if is_array(e) and e.dtype == np.bool_:
        return e.ndim
    return 1


def _run_time_int_list(e) -> bool:
    """A flat list of ints some of which are sizes or run-time Python ints."""
    if not isinstance(e, list) or not e:
        return False
    ints = all((isinstance(v, int) and not isinstance(v, bool)) or pytype_of(v) is int
               or (is_proxy(v) and not is_array(v) and v.fake.pytype is int) for v in e)
    return ints and any(not isinstance(v, int) for v in e)


def _ranges_as_arrays(b, x, index):
    """Ranges become aranges; a boolean array among other entries becomes its nonzero()
    integer arrays (NumPy's own definition of it), one per dimension it spans, after its
    shape is checked against those dimensions (IndexError as NumPy)."""
    if isinstance(index, IndexRange):
        return index.as_array(b)
    if _run_time_int_list(index):
        return (b.emit("stack", *index, axis=0),)
    if not isinstance(index, tuple):
        return index
    out = []
    for i, e in enumerate(index):
        if isinstance(e, IndexRange):
            out.append(e.as_array(b))
        elif _run_time_int_list(e):              # x[[n - 1, i]]: the ints stacked into an array
            out.append(b.emit("stack", *e, axis=0))
        elif is_array(e) and e.dtype == np.bool_:
            if e.ndim == 0:
                raise Unsupported("a 0-d boolean index", kind="indexing", context="getitem")
            if any(f is Ellipsis for f in index[:i]):
                start = x.ndim - sum(_spans(f) for f in index[i:])
            else:
                start = sum(_spans(f) for f in index[:i])
            dims = x.shape[start:start + e.ndim]
            if start < 0 or len(dims) != e.ndim:
                raise NumpyError(IndexError("too many indices for array"))
            for d, (a, m) in enumerate(zip(dims, e.shape, strict=True)):
                if not same_size(a, m):
                    raise NumpyError(IndexError(
                        f"boolean index did not match indexed array along axis {start + d}; size of axis "
                        f"is {a} but size of corresponding boolean axis is {m}"))
            out.extend(nonzero(b, e))
        else:
            out.append(e)
    return tuple(out)


def _const_index(e):
    """A list/range/ndarray constant as an integer index (a bool list becomes its nonzero)."""
    if any(is_proxy(v) or is_symbolic(v) for v in _walk(e)):
        raise Unsupported("an index list holding run-time values", kind="indexing", context="getitem",
                          hints=("build the index with np.array(...) first",))
    arr = np.asarray(e)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.intp)
    if arr.dtype == np.bool_:
        if arr.ndim != 1:
            raise Unsupported("a multi-dimensional boolean list index", kind="indexing", context="getitem")
        return ConstIndex(tuple(int(i) for i in np.flatnonzero(arr))), 1
    if arr.dtype.kind not in "iu":
        raise NumpyError(IndexError("arrays used as indices must be of integer (or boolean) type"))
    return ConstIndex(arr.tolist() if arr.ndim == 0 else _nested(arr.tolist())), 1


def _nested(v):
    return tuple(_nested(x) for x in v) if isinstance(v, list) else int(v)


def _walk(e):
    if isinstance(e, (list, tuple)):
        for v in e:
            yield from _walk(v)
    else:
        yield e


def is_advanced(index) -> bool:
    """Does this index (an entry or a tuple of entries) use lists, ranges or arrays?"""
    entries = index if isinstance(index, tuple) else (index,)
    return any(isinstance(e, (list, range, np.ndarray, IndexRange)) or (is_array(e) and not e.scalar)
               or (is_array(e) and e.dtype.kind in "iu") for e in entries)


def canonical(x, index):
    """(entries, arrays) for `x[index]` (see ops/advanced_index.py)."""
    entries = index if isinstance(index, tuple) else (index,)
    if sum(1 for e in entries if e is Ellipsis) > 1:
        raise NumpyError(IndexError("an index can only have a single ellipsis ('...')"))
    consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    if consumed > x.ndim:
        raise NumpyError(IndexError(f"too many indices for array: array is {x.ndim}-dimensional, "
                                    f"but {consumed} were indexed"))
    out, arrays, dim = [], [], 0
    for e in entries:
        if e is None:
            out.append(None)
        elif e is Ellipsis:
            for _ in range(x.ndim - consumed):
                out.append(IndexSlice(0, x.shape[dim], 1))
                dim += 1
        elif isinstance(e, slice):
            if any(is_proxy(p) for p in (e.start, e.stop, e.step)):
                raise Unsupported("a slice bound computed from array data", kind="data_dependent",
                                  context="getitem")
            out.append(normalize_slice(e, x.shape[dim]))
            dim += 1
        elif is_array(e):
            if e.dtype.kind not in "iu":
                raise NumpyError(IndexError("arrays used as indices must be of integer (or boolean) type"))
            out.append(ArrayRef(len(arrays)))
            arrays.append(e)
            dim += 1
        elif isinstance(e, (list, range, np.ndarray, tuple)):
            entry, used = _const_index(e)
            if np.asarray(e).dtype == np.bool_ and not same_size(len(e), x.shape[dim]):
                raise NumpyError(IndexError(
                    f"boolean index did not match indexed array along axis {dim}; size of axis is "
                    f"{x.shape[dim]} but size of corresponding boolean axis is {len(e)}"))
            out.append(entry)
            dim += used
        elif isinstance(e, (bool, np.bool_)):
            raise Unsupported("boolean scalar indices (x[True]) are not supported", kind="indexing",
                              context="getitem")
        elif is_static(e) or is_symbolic(e):
            out.append(normalize_int_index(e, x.shape[dim], dim))
            dim += 1
        elif is_proxy(e):
            raise Unsupported("indexing with a run-time scalar", kind="data_dependent", context="getitem")
        else:
            raise NumpyError(IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                                        "(`None`) and integer or boolean arrays are valid indices"))
    while dim < x.ndim:
        out.append(IndexSlice(0, x.shape[dim], 1))
        dim += 1
    return tuple(out), arrays


def advanced_getitem(b, x, index):
    entries, arrays = canonical(x, _ranges_as_arrays(b, x, index))
    return b.emit("index", x, *arrays, entries=entries)


def _full_mask(x, index) -> bool:
    return (is_array(index) and index.dtype == np.bool_ and index.ndim == x.ndim
            and all(same_size(a, m) for a, m in zip(x.shape, index.shape, strict=True)))


def advanced_setitem(b, x, index, value):
    """x[index] = value for lists/arrays/masks in the index."""
    value = check_operand(value, "setitem")
    index = _ranges_as_arrays(b, x, index)
    if _full_mask(x, index) and (not is_array(value) or value.ndim == 0):
        b.emit("assign", x, b.emit("where", index, value, x))   # fused: x = where(mask, v, x)
        return
    if is_array(index) and index.dtype == np.bool_:
        if index.ndim > x.ndim or not all(
                same_size(a, m) for a, m in zip(x.shape, index.shape, strict=False)):
            raise NumpyError(IndexError("boolean index did not match indexed array"))
        entries = (ArrayRef(0),) + tuple(IndexSlice(0, d, 1) for d in x.shape[index.ndim:])
        b.emit("index_put", x, value, index, entries=entries, masked=True)
        return
    entries, arrays = canonical(x, index)
    b.emit("index_put", x, value, *arrays, entries=entries)


def ufunc_at(b, ufunc, a, indices, bvalue=None):
    """ufunc.at(a, indices, b): unbuffered in-place application at the indexed elements."""
    name = f"np.{ufunc.__name__}.at"
    if not is_array(a) or a.scalar:
        raise Unsupported(f"{name} on a non-array", kind="call", context=name)
    if ufunc.nin != 2 and ufunc.nin != 1 or (bvalue is None) != (ufunc.nin == 1):
        raise NumpyError(ValueError("second operand needed for ufunc" if ufunc.nin == 2 else
                                    "second operand provided when ufunc is unary"))
    entries, arrays = canonical(a, indices if isinstance(indices, tuple) or not isinstance(
        indices, list) else indices)
    # a unary ufunc's node names its operand as the (unused) value: one form for both
    value = a if ufunc.nin == 1 else check_operand(bvalue, name)
    b.emit("ufunc_at", a, value, *arrays, entries=entries, ufunc=ufunc)
    return None


def put_along_axis(b, arr, indices, values, axis):
    """np.put_along_axis(arr, indices, values, axis): NumPy's own definition, the assignment
    `arr[i0, ..., indices, ..., ik] = values` with `arange(n)` along every other axis."""
    name = "np.put_along_axis"
    if not is_array(arr) or arr.scalar or not is_array(indices):
        raise Unsupported(f"{name} on a non-array", kind="call", context=name)
    if axis is None:
        raise Unsupported(f"{name} with axis=None (the flat iterator)", kind="call", context=name)
    axis = normalize_axis(axis, arr.ndim, name)
    if indices.dtype.kind not in "iu":
        raise NumpyError(IndexError("`indices` must be an integer array"))
    if indices.ndim != arr.ndim:
        raise NumpyError(ValueError("`indices` and `arr` must have the same number of dimensions"))
    index = []
    for d, n in enumerate(arr.shape):
        if d == axis:
            index.append(indices)
            continue
        shape = tuple(n if k == d else 1 for k in range(arr.ndim))
        index.append(b.emit("reshape", b.emit("arange", 0, n, 1, dtype=np.dtype(np.int64)), shape=shape))
    advanced_setitem(b, arr, tuple(index), values)


FUNCTIONS = {np.put_along_axis: put_along_axis}
