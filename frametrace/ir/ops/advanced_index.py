"""Advanced indexing: integer arrays, lists and ranges as indices, alone or mixed with basic ones.

Canonical forms (`entries` has one entry per consumed dimension plus `None` for new axes,
Ellipsis already expanded, trailing dims filled with full slices):
  index(x, *arrays; entries)            x[...]: a new array (NumPy copies)
  index_put(x, value, *arrays; entries) x[...] = value: NumPy's buffered assignment (with
                                        repeated indices the last write wins); no result
  ufunc_at(x, value, *arrays; entries, ufunc)
                                        ufunc.at(x, idx, value): unbuffered (repeated indices
                                        accumulate); no result; for a unary ufunc value is x
                                        (unused): ufunc.at(x, idx)
An entry is an `IndexSlice` (normalised as for getitem), an int (normalised, in bounds),
`None`, `ArrayRef(k)` (the k-th array argument: an integer array, bounds checked at run
time as NumPy does) or `ConstIndex(values)` (a constant integer list of the user's code).

Result shape (NumPy's rule): the advanced entries (arrays, constant lists, and ints once
any array is present) broadcast to one shape B; if they are adjacent, B replaces them in
place, otherwise B comes first, followed by the dims of the basic entries.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..graph import IndexSlice
from ..registry import NumpyCall, register
from .broadcast import broadcast_shapes, check_broadcast_to
from .indexing import py_slice, slice_length
from .promotion import probe, shape_of


@dataclass(frozen=True)
class ArrayRef:
    """Entry naming the k-th array argument of an index node."""
    k: int

    def __repr__(self):
        return f"@{self.k}"


@dataclass(frozen=True)
class ConstIndex:
    """A constant integer index list (nested tuples), e.g. `x[[0, 2, 1]]`."""
    values: tuple

    @property
    def shape(self) -> tuple:
        return np.shape(np.asarray(self.values, dtype=np.int64))

    def __repr__(self):
        return f"list{list(self.values)!r}".replace(" ", "")


def _advanced(e) -> bool:
    return isinstance(e, (ArrayRef, ConstIndex))


def py_entries(entries, arrays) -> tuple:
    """The Python index equal to canonical `entries` with concrete sizes."""
    out = []
    for e in entries:
        if isinstance(e, ArrayRef):
            out.append(arrays[e.k])
        elif isinstance(e, ConstIndex):
            out.append(np.asarray(e.values, dtype=np.intp))
        elif isinstance(e, IndexSlice):
            out.append(py_slice(e))
        else:
            out.append(None if e is None else int(e))
    return tuple(out)


def index_shape(x_shape, arrays, entries) -> tuple:
    """The result shape of `x[entries]` (module doc); checks one entry per dim."""
    if sum(1 for e in entries if e is not None) != len(x_shape):
        raise ValueError(f"index entries {entries!r} do not cover a {len(x_shape)}-d array")
    has_array = any(_advanced(e) for e in entries)
    adv_pos, adv_shapes, basic = [], [], []
    for i, e in enumerate(entries):
        if isinstance(e, ArrayRef):
            adv_pos.append(i)
            adv_shapes.append(tuple(shape_of(arrays[e.k])))
        elif isinstance(e, ConstIndex):
            adv_pos.append(i)
            adv_shapes.append(e.shape)
        elif isinstance(e, IndexSlice):
            basic.append((i, slice_length(e.start, e.stop, e.step)))
        elif e is None:
            basic.append((i, 1))
        elif has_array:
            adv_pos.append(i)
            adv_shapes.append(())
    if not adv_pos:
        return tuple(d for _, d in basic)
    try:
        bshape = broadcast_shapes(*adv_shapes)
    except NumpyError:
        shapes = " ".join(str(s).replace(" ", "") for s in adv_shapes)
        raise NumpyError(IndexError(f"shape mismatch: indexing arrays could not be broadcast "
                                    f"together with shapes {shapes}")) from None
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1))
    if not adjacent:
        return tuple(bshape) + tuple(d for _, d in basic)
    before = tuple(d for i, d in basic if i < adv_pos[0])
    after = tuple(d for i, d in basic if i > adv_pos[-1])
    return before + tuple(bshape) + after


def _check_arrays(arrays):
    for a in arrays:
        if not isinstance(a, FakeArray) or a.dtype.kind not in "iu":
            raise NumpyError(IndexError("arrays used as indices must be of integer (or boolean) type"))


def index_ref(x, *arrays, entries):
    return x[py_entries(entries, arrays)]


@register("index", kind="gather", ref=index_ref, may_raise=lambda n: True,
          lowering=NumpyCall("advanced indexing: NumPy's gather"))
def index_meta(x, *arrays, entries):
    """x[entries] with integer arrays / lists among the entries (advanced indexing)."""
    _check_arrays(arrays)
    shape = index_shape(x.shape, arrays, entries)
    scalar = shape == () and None not in entries
    return FakeArray(shape, x.dtype, scalar)


def _check_value(x, value, arrays, entries, what):
    probe(_probe_put, x, value)
    check_broadcast_to(shape_of(value), index_shape(x.shape, arrays, entries),
                       strip_leading_ones=True, what=what)


def _probe_put(x, value):
    x[...] = value
    return x


def index_put_ref(x, value, *arrays, entries, masked=False):
    x[py_entries(entries, arrays)] = value


@register("index_put", kind="mutation", ref=index_put_ref,
          lowering=NumpyCall("x[idx] = v: NumPy's buffered scatter"))
def index_put_meta(x, value, *arrays, entries, masked=False):
    """x[entries] = value (buffered: with repeated indices the last write wins).
    `masked`: arrays[0] is a boolean mask over x's leading dims (the value's size is
    checked by NumPy at run time against the mask's count)."""
    if not isinstance(x, FakeArray) or x.scalar:
        raise NumpyError(TypeError("assignment destination must be an array"))
    if masked:
        probe(_probe_put, x, value)
        return None
    _check_arrays(arrays)
    _check_value(x, value, arrays, entries, "x[idx] = value")
    return None


def ufunc_at_ref(x, value, *arrays, entries, ufunc):
    if ufunc.nin == 1:                     # value is x itself (numpy_api/advanced.py), unused
        ufunc.at(x, py_entries(entries, arrays))
    else:
        ufunc.at(x, py_entries(entries, arrays), value)


@register("ufunc_at", kind="mutation", ref=ufunc_at_ref,
          lowering=NumpyCall("ufunc.at: NumPy's unbuffered scatter"))
def ufunc_at_meta(x, value, *arrays, entries, ufunc):
    """ufunc.at(x, entries, value): unbuffered, repeated indices accumulate."""
    if not isinstance(x, FakeArray) or x.scalar:
        raise NumpyError(TypeError("ufunc.at: the first operand must be an array"))
    _check_arrays(arrays)
    if ufunc.nin == 1:
        probe(lambda a: ufunc(a, out=a, casting="unsafe"), x)
        return None
    probe(lambda a, v: ufunc(a, v, out=a, casting="unsafe"), x, value)
    check_broadcast_to(shape_of(value), index_shape(x.shape, arrays, entries),
                       what=f"{ufunc.__name__}.at")
    return None
