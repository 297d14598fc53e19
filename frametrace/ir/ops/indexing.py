"""Basic indexing: normalising a Python index to getitem's canonical form, and slice lengths.

Canonical getitem index (what the "getitem" node's `index` attribute holds):
  a tuple with exactly one entry per input dimension, in order, plus `None` entries where
  new axes are inserted (no Ellipsis, no omitted trailing dims). An entry for a dimension
  of size n is either
    * an integer i (int or SymInt/expr) with 0 <= i < n (negative indices already wrapped,
      bounds already checked, with guards where symbolic), which removes the dimension, or
    * `IndexSlice(start, stop, step)` in the form Python's `slice(...).indices(n)` returns:
      step a static nonzero int; for step > 0, 0 <= start, stop <= n; for step < 0,
      -1 <= start, stop <= n - 1, where stop == -1 means "run past index 0" (so it must
      not be handed to Python slicing as -1: see `py_slice`).
The result's length along a sliced dimension is `slice_length(start, stop, step)`; it is
stored in the node's shape. The result is a NumPy scalar (not a view) exactly when every
entry is an integer and there is no `None` (for a 0-d input: the empty index `x[()]`).
"""
from __future__ import annotations

import operator

import numpy as np

from ...errors import NumpyError, Unsupported
from ..graph import IndexSlice
from .symbolic import is_static, is_symbolic, pytype_of, statically_known_true, sym_max, sym_min

_INDEX_ERROR = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                "integer or boolean arrays are valid indices")


def normalize_int_index(i, n, axis: int):
    """Wrap a negative index and check bounds (IndexError as NumPy raises it)."""
    if is_symbolic(i) and pytype_of(i) is not int:      # `x[i * 1.0]`: a float is no index
        raise NumpyError(IndexError(_INDEX_ERROR))
    if is_static(i):
        i = operator.index(i)
    j = i + n if bool(i < 0) else i
    if bool(j < 0) or bool(j >= n):
        raise NumpyError(IndexError(f"index {i} is out of bounds for axis {axis} with size {n}"))
    return j


def _static_step(step):
    if step is None:
        return 1
    if isinstance(step, (bool, np.bool_)) or not (is_static(step) or is_symbolic(step)):
        raise NumpyError(TypeError("slice indices must be integers or None or have an __index__ method"))
    if not is_static(step):
        raise Unsupported("a slice step must be a constant integer, got a symbolic size",
                          kind="dynamic_slice_step", context="getitem",
                          hints=("mark the value static, or slice with a constant step",))
    step = operator.index(step)
    if step == 0:
        raise NumpyError(ValueError("slice step cannot be zero"))
    return step


def _bound(v, n, lower, upper):
    """Python's clamping of one slice bound into [lower, upper] (after wrapping negatives)."""
    if isinstance(v, (bool, np.bool_)) or not (is_static(v) or is_symbolic(v)):
        raise NumpyError(TypeError("slice indices must be integers or None or have an __index__ method"))
    if is_static(v):
        v = operator.index(v)
        if is_static(n):
            if v < 0:
                return max(v + n, lower)
            return min(v, upper)
    if bool(v < 0):                       # a guard only when v's sign is not known
        v = v + n
        return v if statically_known_true(v >= lower) else sym_max(v, lower)
    return v if statically_known_true(v <= upper) else sym_min(v, upper)


def normalize_slice(s: slice, n) -> IndexSlice:
    """`slice(...).indices(n)` for int or symbolic n and bounds; the step must be static."""
    step = _static_step(s.step)
    lower, upper = (0, n) if step > 0 else (-1, n - 1)
    start = (lower if step > 0 else upper) if s.start is None else _bound(s.start, n, lower, upper)
    stop = (upper if step > 0 else lower) if s.stop is None else _bound(s.stop, n, lower, upper)
    return IndexSlice(start, stop, step)


def slice_length(start, stop, step):
    """len(range(start, stop, step)) for normalised bounds (symbolic if they are)."""
    d, s = (stop - start, step) if step > 0 else (start - stop, -step)
    length = d if s == 1 else (d + (s - 1)) // s
    if is_static(length):
        return max(int(length), 0)
    return length if statically_known_true(d >= 0) else sym_max(length, 0)


def normalize_index(shape, index) -> tuple:
    """Canonical getitem index for `x[index]` on an array of `shape` (see module doc).

    `index` is a tuple of ints/SymInts, slices, None and at most one Ellipsis. Arrays
    (masks, integer arrays) and lists must be rejected by the caller.
    """
    ndim = len(shape)
    n_ellipsis = sum(1 for e in index if e is Ellipsis)
    if n_ellipsis > 1:
        raise NumpyError(IndexError("an index can only have a single ellipsis ('...')"))
    consumed = sum(1 for e in index if e is not None and e is not Ellipsis)
    if consumed > ndim:
        raise NumpyError(IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                                    f"but {consumed} were indexed"))
    out, dim = [], 0
    for e in index:
        if e is None:
            out.append(None)
        elif e is Ellipsis:
            for _ in range(ndim - consumed):
                out.append(IndexSlice(0, shape[dim], 1))
                dim += 1
        elif isinstance(e, slice):
            out.append(normalize_slice(e, shape[dim]))
            dim += 1
        elif isinstance(e, (bool, np.bool_)) or pytype_of(e) is bool:
            raise Unsupported("boolean scalar indices (x[True]) are not supported",
                              kind="indexing", context="getitem")
        elif is_static(e) or is_symbolic(e):
            out.append(normalize_int_index(e, shape[dim], dim))
            dim += 1
        else:
            raise NumpyError(IndexError(_INDEX_ERROR))
    while dim < ndim:
        out.append(IndexSlice(0, shape[dim], 1))
        dim += 1
    return tuple(out)


def index_result_shape(shape, index) -> tuple:
    """Output shape of a canonical index; checks it has one entry per input dim."""
    entries = [e for e in index if e is not None]
    if len(entries) != len(shape):
        raise ValueError(f"canonical getitem index {index!r} must have one entry per "
                         f"dimension of a {len(shape)}-d array")
    out = []
    for e in index:
        if e is None:
            out.append(1)
        elif isinstance(e, IndexSlice):
            out.append(slice_length(e.start, e.stop, e.step))
    return tuple(out)


def index_is_scalar(index) -> bool:
    """A canonical index with only integer entries selects one element (a NumPy scalar)."""
    return all(e is not None and not isinstance(e, IndexSlice) for e in index)


def is_identity_index(shape, index) -> bool:
    """`x[...]`-like: every dim fully sliced with step 1 and no new axes."""
    return len(index) == len(shape) and all(
        isinstance(e, IndexSlice) and e.step == 1 and _known_equal(e.start, 0)
        and _known_equal(e.stop, d) for e, d in zip(index, shape, strict=True))


def _known_equal(a, b) -> bool:
    return a is b or statically_known_true(a == b)


def py_slice(s: IndexSlice) -> slice:
    """The Python slice equal to a normalised IndexSlice with concrete int bounds."""
    start, stop, step = int(s.start), int(s.stop), int(s.step)
    if step < 0:
        if start < 0:                       # start == -1: the slice is empty
            return slice(0, 0, 1)
        return slice(start, None if stop < 0 else stop, step)
    return slice(start, stop, step)


def py_index(index) -> tuple:
    """The Python index tuple equal to a canonical index with concrete ints."""
    return tuple(py_slice(e) if isinstance(e, IndexSlice) else (None if e is None else int(e))
                 for e in index)
