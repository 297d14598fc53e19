"""Joining, splitting, triangles, repetition and rearrangement, as compositions of graph ops.

Every function here emits existing native ops (views, elementwise ops, aranges, concatenate,
broadcast_to + reshape), so the results fuse with their neighbours and sizes stay symbolic:
  split family     views (getitem slices); np.split checks an equal division with a guard
  *stack, append   atleast_Nd views + concatenate
  tri/tril/triu    a mask from two aranges compared (k may be symbolic), then `where`
  eye/identity     the same with ==
  outer, repeat,   broadcast views (+ reshape, which copies as NumPy's does); np.tile by a few
  tile, meshgrid   copies per axis is a concatenate of them (fused)
  flip, rot90,     negative-step views, transposes; roll is a concatenate of two slices per axis
  roll, diff, ptp  diff/ptp are elementwise over slices / max - min
np.repeat with per-element repeats is NumPy's own call inside the graph (its length an
unbacked size).
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError, Unsupported
from ...shapes import int_oo
from ..fake import FakeArray
from ..ops.broadcast import broadcast_shapes
from ..ops.opaque import register_opaque
from ..ops.symbolic import is_static, same_size, sym_min
from .advanced import advanced_getitem
from .common import as_array, as_dtype, check_operand, is_array, normalize_axis, size_arg
from .indexing import getitem
from .reductions import reduction_impl
from .shaping import ravel_impl, transpose


def _constant_rule(*, value, dtype=None):
    return tuple(np.shape(value))


register_opaque("array_constant", lambda *, value, dtype=None: np.array(value, dtype=dtype), _constant_rule,
                doc="np.array(value): an array from a constant list of the user's code")


def as_operand_array(b, x, fname):
    """as_array, also for a constant (nested) list of numbers."""
    if isinstance(x, (list, tuple)) and not any(is_array(v) for v in _flat(x)):
        return b.emit("array_constant", value=_tup(x))
    if isinstance(x, (list, tuple)):
        raise Unsupported(f"{fname}: a list mixing arrays and constants", kind="call", context=fname)
    return as_array(b, x, fname)


def _flat(x):
    for v in x:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _tup(x):
    return tuple(_tup(v) for v in x) if isinstance(x, (list, tuple)) else x


def _seq(arrays, fname):
    if not isinstance(arrays, (list, tuple)):
        raise Unsupported(f"{fname} of a non-sequence", kind="call", context=fname)
    return list(arrays)


def _slice_along(b, x, axis, start, stop):
    return getitem(b, x, (slice(None),) * axis + (slice(start, stop),))


# ---- splitting -----------------------------------------------------------------------------

def _split(b, ary, indices_or_sections, axis, fname, equal):
    x = as_array(b, ary, fname)
    axis = normalize_axis(axis, x.ndim, fname)
    n = x.shape[axis]
    if isinstance(indices_or_sections, (list, tuple)):
        cuts = [size_arg(i, fname) for i in indices_or_sections]
        bounds = [0] + cuts + [n]
        return [_slice_along(b, x, axis, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]
    sections = size_arg(indices_or_sections, fname)
    if not is_static(sections):
        raise Unsupported(f"{fname} into a symbolic number of sections", kind="call", context=fname)
    if sections <= 0:
        raise NumpyError(ValueError("number sections must be larger than 0."))
    if equal and bool(n % sections != 0):
        raise NumpyError(ValueError("array split does not result in an equal division"))
    each, extras = n // sections, n % sections
    bounds = [i * each + (sym_min(i, extras) if not is_static(extras) else min(i, extras))
              for i in range(sections + 1)]
    return [_slice_along(b, x, axis, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]


def split_impl(b, ary, indices_or_sections, axis=0):
    return _split(b, ary, indices_or_sections, axis, "np.split", True)


def array_split_impl(b, ary, indices_or_sections, axis=0):
    return _split(b, ary, indices_or_sections, axis, "np.array_split", False)


def _split_on(axis_of, fname):
    def impl(b, ary, indices_or_sections):
        x = as_array(b, ary, fname)
        axis, need = axis_of(x.ndim)
        if x.ndim < need:
            raise NumpyError(ValueError(f"{fname[3:]} only works on arrays of {need} or more dimensions"))
        return _split(b, x, indices_or_sections, axis, fname, True)
    return impl


# ---- stacking ------------------------------------------------------------------------------

def _atleast(b, x, n, fname):
    x = as_operand_array(b, x, fname)
    if x.ndim >= n:
        return x
    if n == 1:
        return b.emit("reshape", x, shape=(1,))
    if n == 2:
        return b.emit("reshape", x, shape=(1,) * (2 - x.ndim) + tuple(x.shape))
    shape = {0: (1, 1, 1), 1: (1,) + tuple(x.shape) + (1,), 2: tuple(x.shape) + (1,)}[x.ndim]
    return b.emit("reshape", x, shape=shape)


def _atleast_impl(n):
    def impl(b, *arys):
        res = [_atleast(b, a, n, f"np.atleast_{n}d") for a in arys]
        return res[0] if len(res) == 1 else tuple(res)
    return impl


def _concat(b, xs, axis, fname):
    if not xs:
        raise NumpyError(ValueError("need at least one array to concatenate"))
    return b.emit("concatenate", *xs, axis=normalize_axis(axis, xs[0].ndim, fname))


def _no_dtype(fname, dtype, casting):
    if dtype is not None or casting != "same_kind":
        raise Unsupported(f"{fname} with dtype= or casting=", kind="call", context=fname)


def hstack_impl(b, tup, *, dtype=None, casting="same_kind"):
    _no_dtype("np.hstack", dtype, casting)
    xs = [_atleast(b, x, 1, "np.hstack") for x in _seq(tup, "np.hstack")]
    return _concat(b, xs, 0 if xs and xs[0].ndim == 1 else 1, "np.hstack")


def vstack_impl(b, tup, *, dtype=None, casting="same_kind"):
    _no_dtype("np.vstack", dtype, casting)
    return _concat(b, [_atleast(b, x, 2, "np.vstack") for x in _seq(tup, "np.vstack")], 0, "np.vstack")


def dstack_impl(b, tup):
    return _concat(b, [_atleast(b, x, 3, "np.dstack") for x in _seq(tup, "np.dstack")], 2, "np.dstack")


def column_stack_impl(b, tup):
    xs = []
    for v in _seq(tup, "np.column_stack"):
        x = as_operand_array(b, v, "np.column_stack")
        xs.append(b.emit("reshape", x, shape=(x.shape[0], 1)) if x.ndim < 2 and x.ndim == 1
                  else _atleast(b, x, 2, "np.column_stack"))
    return _concat(b, xs, 1, "np.column_stack")


def append_impl(b, arr, values, axis=None):
    x, v = as_operand_array(b, arr, "np.append"), as_operand_array(b, values, "np.append")
    if axis is None:
        x = x if x.ndim == 1 else ravel_impl(b, x)
        v = v if v.ndim == 1 else ravel_impl(b, v)
        axis = 0
    return _concat(b, [x, v], axis, "np.append")


def broadcast_arrays_impl(b, *args, subok=False):
    xs = [as_array(b, a, "np.broadcast_arrays") for a in args]
    shape = broadcast_shapes(*(tuple(x.shape) for x in xs))
    return tuple(b.emit("broadcast_to", x, shape=shape) for x in xs)


# ---- triangles and diagonals ---------------------------------------------------------------

def _tri_mask(b, n, m, k, op="greater_equal"):
    """mask[i, j] = op(i + k, j) for i < n, j < m (bool, fused from two aranges)."""
    rows = b.emit("arange", 0, n, 1, dtype=np.dtype(np.int64))
    cols = b.emit("arange", 0, m, 1, dtype=np.dtype(np.int64))
    rows = b.emit("reshape", rows, shape=(n, 1))
    if not (is_static(k) and k == 0):
        rows = b.emit("add", rows, k)
    return b.emit(op, rows, cols)


def tri_impl(b, N, M=None, k=0, dtype=float, *, like=None):
    n = size_arg(N, "np.tri")
    m = n if M is None else size_arg(M, "np.tri")
    mask = _tri_mask(b, n, m, size_arg(k, "np.tri"))
    return b.emit("astype", mask, dtype=as_dtype(dtype, "np.tri"))


def _tril_triu(b, m, k, lower, fname):
    x = as_array(b, m, fname)
    if x.ndim == 0:
        raise NumpyError(ValueError("input array must be at least 1-d"))
    n, mm = (x.shape[0], x.shape[0]) if x.ndim == 1 else x.shape[-2:]
    k = size_arg(k, fname)
    zero = x.dtype.type(0)
    if lower:
        return b.emit("where", _tri_mask(b, n, mm, k), x, zero)
    return b.emit("where", _tri_mask(b, n, mm, k - 1), zero, x)


def tril_impl(b, m, k=0):
    return _tril_triu(b, m, k, True, "np.tril")


def triu_impl(b, m, k=0):
    return _tril_triu(b, m, k, False, "np.triu")


def eye_impl(b, N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    if order != "C":
        raise Unsupported("np.eye(order='F')", kind="call", context="np.eye")
    n = size_arg(N, "np.eye")
    m = n if M is None else size_arg(M, "np.eye")
    mask = _tri_mask(b, n, m, size_arg(k, "np.eye"), "equal")
    return b.emit("astype", mask, dtype=as_dtype(dtype, "np.eye"))


def identity_impl(b, n, dtype=None, *, like=None):
    return eye_impl(b, n, dtype=float if dtype is None else dtype)


# ---- products and repetition ---------------------------------------------------------------

def outer_impl(b, a, b_, out=None):
    if out is not None:
        raise Unsupported("np.outer(out=)", kind="call", context="np.outer")
    x, y = ravel_impl(b, as_array(b, a, "np.outer")), ravel_impl(b, as_array(b, b_, "np.outer"))
    return b.emit("multiply", b.emit("reshape", x, shape=(x.shape[0], 1)), y)


def _repeat_each_rule(a, repeats, axis=None, size=None):
    s = (size,) if axis is None else tuple(a.shape[:axis]) + (size,) + tuple(a.shape[axis + 1:])
    return FakeArray(s, a.dtype)


register_opaque("repeat_each", np.repeat, _repeat_each_rule, kind="gather",
                doc="np.repeat(a, repeats, axis) with per-element repeats: NumPy's, the result's "
                    "length an unbacked size (bound from the result)")


def _repeat_each(b, x, repeats, axis):
    """np.repeat with an array (or list) of repeats: NumPy's call inside the graph."""
    if axis is not None:
        axis = normalize_axis(axis, x.ndim, "np.repeat")
    env = getattr(b, "shape_env", None)
    if env is None:
        raise Unsupported("np.repeat with per-element repeats needs a ShapeEnv", kind="data_dependent")
    counts = as_operand_array(b, repeats, "np.repeat")
    size = env.create_unbacked_symint(0, int_oo, source="np.repeat")
    return b.emit("repeat_each", x, counts, axis=axis, size=size)


def repeat_impl(b, a, repeats, axis=None):
    if isinstance(repeats, (list, tuple)) or is_array(repeats):
        return _repeat_each(b, as_array(b, a, "np.repeat"), repeats, axis)
    r = size_arg(repeats, "np.repeat")
    if is_static(r) and r < 0:
        raise NumpyError(ValueError("negative dimensions are not allowed"))
    x = as_array(b, a, "np.repeat")
    if axis is None:
        x, axis = ravel_impl(b, x), 0
    axis = normalize_axis(axis, x.ndim, "np.repeat")
    s = tuple(x.shape)
    wide = b.emit("reshape", x, shape=s[:axis + 1] + (1,) + s[axis + 1:])
    wide = b.emit("broadcast_to", wide, shape=s[:axis + 1] + (r,) + s[axis + 1:])
    return b.emit("reshape", wide, shape=s[:axis] + (s[axis] * r,) + s[axis + 1:])


_TILE_PIECES = 4      # np.tile by at most this many copies per axis fuses (lower/segments.py)


def tile_impl(b, A, reps):
    reps = tuple(size_arg(r, "np.tile") for r in (reps if isinstance(reps, (list, tuple)) else (reps,)))
    x = as_array(b, A, "np.tile")
    d = max(len(reps), x.ndim)
    reps = (1,) * (d - len(reps)) + reps
    s = (1,) * (d - x.ndim) + tuple(x.shape)
    if all(is_static(r) and 1 <= r <= _TILE_PIECES for r in reps) and d:
        # copies side by side: a concatenate per axis, read through segments inside kernels
        y = b.emit("reshape", x, shape=s) if d != x.ndim else x
        for axis, r in enumerate(reps):
            if r > 1:
                y = b.emit("concatenate", *[y] * r, axis=axis)
        return b.emit("copy", y, order="C")     # NumPy's tile is C-ordered
    inter = sum(((1, n) for n in s), ())
    full = sum(((r, n) for r, n in zip(reps, s, strict=True)), ())
    wide = b.emit("broadcast_to", b.emit("reshape", x, shape=inter), shape=full)
    out = b.emit("reshape", wide, shape=tuple(r * n for r, n in zip(reps, s, strict=True)))
    return out if out.node is not x.node else b.emit("copy", x)


def meshgrid_impl(b, *xi, copy=True, sparse=False, indexing="xy"):
    if sparse or indexing not in ("xy", "ij"):
        raise Unsupported("np.meshgrid(sparse=True)", kind="call", context="np.meshgrid")
    xs = [ravel_impl(b, as_array(b, x, "np.meshgrid")) for x in xi]
    sizes = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        pos = (1 - i if i < 2 else i) if indexing == "xy" and len(xs) > 1 else i
        shape = tuple(x.shape[0] if j == pos else 1 for j in range(len(xs)))
        v = b.emit("broadcast_to", b.emit("reshape", x, shape=shape), shape=tuple(sizes))
        out.append(b.emit("copy", v) if copy else v)
    return out


def indices_impl(b, dimensions, dtype=int, sparse=False):
    if sparse:
        raise Unsupported("np.indices(sparse=True)", kind="call", context="np.indices")
    dims = tuple(size_arg(d, "np.indices") for d in dimensions)
    dt = as_dtype(dtype, "np.indices")
    grids = []
    for i, n in enumerate(dims):
        r = b.emit("arange", 0, n, 1, dtype=dt)
        r = b.emit("reshape", r, shape=tuple(n if j == i else 1 for j in range(len(dims))))
        grids.append(b.emit("broadcast_to", r, shape=dims))
    return b.emit("stack", *grids, axis=0)


# ---- rearrangement -------------------------------------------------------------------------

def _flip(b, x, axes):
    return getitem(b, x, tuple(slice(None, None, -1) if i in axes else slice(None) for i in range(x.ndim)))


def flip_impl(b, m, axis=None):
    x = as_array(b, m, "np.flip")
    if axis is None:
        return _flip(b, x, range(x.ndim))
    axes = axis if isinstance(axis, (list, tuple)) else (axis,)
    return _flip(b, x, {normalize_axis(a, x.ndim, "np.flip") for a in axes})


def fliplr_impl(b, m):
    x = as_array(b, m, "np.fliplr")
    if x.ndim < 2:
        raise NumpyError(ValueError("Input must be >= 2-d."))
    return _flip(b, x, {1})


def flipud_impl(b, m):
    x = as_array(b, m, "np.flipud")
    if x.ndim < 1:
        raise NumpyError(ValueError("Input must be >= 1-d."))
    return _flip(b, x, {0})


def rot90_impl(b, m, k=1, axes=(0, 1)):
    x = as_array(b, m, "np.rot90")
    a0, a1 = (normalize_axis(a, x.ndim, "np.rot90") for a in axes)
    if a0 == a1:
        raise NumpyError(ValueError("Axes must be different."))
    k = int(size_arg(k, "np.rot90")) % 4
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 0:
        return getitem(b, x, (slice(None),))
    if k == 2:
        return _flip(b, x, {a0, a1})
    if k == 1:
        return transpose(b, _flip(b, x, {a1}), tuple(perm))
    return _flip(b, transpose(b, x, tuple(perm)), {a1})


def roll_impl(b, a, shift, axis=None):
    x = as_array(b, a, "np.roll")
    if axis is None:
        flat = roll_impl(b, ravel_impl(b, x), shift, 0)
        return b.emit("reshape", flat, shape=tuple(x.shape))
    if isinstance(shift, (list, tuple)) or isinstance(axis, (list, tuple)):
        # NumPy broadcasts shifts against axes; rolls along one axis add up: one roll per pair
        try:
            pairs = np.broadcast(np.asarray(shift, dtype=object), np.asarray(axis, dtype=object))
        except ValueError:
            raise NumpyError(ValueError("'shift' and 'axis' should be scalars or 1D sequences")) from None
        if pairs.nd > 1:
            raise NumpyError(ValueError("'shift' and 'axis' should be scalars or 1D sequences"))
        for sh, ax in pairs:
            x = roll_impl(b, x, sh, ax)
        return x
    axis = normalize_axis(axis, x.ndim, "np.roll")
    n = x.shape[axis]
    if same_size(n, 0):
        return b.emit("copy", x)
    if not is_static(shift):
        return _roll_gather(b, x, shift, axis, n)
    s = shift % n
    cut = n - s
    return b.emit("concatenate", _slice_along(b, x, axis, cut, None), _slice_along(b, x, axis, 0, cut),
                  axis=axis)


def _roll_gather(b, x, shift, axis, n):
    """np.roll by a shift known at run time only (a size, an int read from an array): a gather
    of x at (arange(n) - shift) % n along axis, NumPy's Python-style modulo."""
    if is_array(shift) and not (shift.ndim == 0 and shift.dtype.kind in "biu"):
        raise Unsupported("np.roll by a shift that is not an integer scalar", kind="call", context="np.roll")
    if is_array(shift) and shift.dtype != np.int64:
        shift = b.emit("astype", shift, dtype=np.dtype(np.int64))
    src = b.emit("subtract", b.emit("arange", 0, n, 1, dtype=np.dtype(np.int64)), shift)
    src = b.emit("remainder", src, n)
    return advanced_getitem(b, x, (slice(None),) * axis + (src,))


def diff_impl(b, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if prepend is not np._NoValue or append is not np._NoValue:
        raise Unsupported("np.diff(prepend=/append=)", kind="call", context="np.diff")
    x = as_array(b, a, "np.diff")
    if x.ndim == 0:
        raise NumpyError(ValueError("diff requires input that is at least one dimensional"))
    axis = normalize_axis(axis, x.ndim, "np.diff")
    n = int(size_arg(n, "np.diff"))
    if n < 0:
        raise NumpyError(ValueError(f"order must be non-negative but got {n}"))
    op = "not_equal" if x.dtype == np.bool_ else "subtract"
    for _ in range(n):
        x = b.emit(op, _slice_along(b, x, axis, 1, None), _slice_along(b, x, axis, None, -1))
    return x


def ediff1d_impl(b, ary, to_end=None, to_begin=None):
    if to_end is not None or to_begin is not None:
        raise Unsupported("np.ediff1d(to_end=/to_begin=)", kind="call", context="np.ediff1d")
    x = ravel_impl(b, as_array(b, ary, "np.ediff1d"))
    return b.emit("subtract", _slice_along(b, x, 0, 1, None), _slice_along(b, x, 0, None, -1))


def ptp_impl(b, a, axis=None, out=None, keepdims=np._NoValue):
    kw = {"axis": axis} if keepdims is np._NoValue else {"axis": axis, "keepdims": keepdims}
    if out is not None:
        raise Unsupported("np.ptp(out=)", kind="call", context="np.ptp")
    return b.emit("subtract", reduction_impl("max", "np.ptp")(b, a, **kw), reduction_impl("min", "np.ptp")(b, a, **kw))


# ---- selection -----------------------------------------------------------------------------

def take_impl(b, a, indices, axis=None, out=None, mode="raise"):
    if out is not None or mode != "raise":
        raise Unsupported("np.take with out= or mode=", kind="call", context="np.take")
    x = as_array(b, a, "np.take")
    if axis is None:
        x, axis = ravel_impl(b, x), 0
    axis = normalize_axis(axis, x.ndim, "np.take")
    if axis == 0 and is_array(indices):
        return getitem(b, x, indices)
    return advanced_getitem(b, x, (slice(None),) * axis + (indices,))


def compress_impl(b, condition, a, axis=None, out=None):
    if out is not None or axis is not None or not is_array(condition):
        raise Unsupported("np.compress with axis=/out= or a constant condition", kind="call",
                          context="np.compress")
    x = ravel_impl(b, as_array(b, a, "np.compress"))
    cond = condition if condition.dtype == np.bool_ else b.emit("astype", condition, dtype=np.dtype(bool))
    if cond.ndim != 1 or not same_size(cond.shape[0], x.shape[0]):
        raise Unsupported("np.compress with a condition shorter than the array", kind="call",
                          context="np.compress")
    return getitem(b, x, cond)


def extract_impl(b, condition, arr):
    cond = ravel_impl(b, as_array(b, condition, "np.extract"))
    if cond.dtype != np.bool_:
        cond = b.emit("not_equal", cond, 0)
    return getitem(b, ravel_impl(b, as_array(b, arr, "np.extract")), cond)


def select_impl(b, condlist, choicelist, default=0):
    conds, choices = _seq(condlist, "np.select"), _seq(choicelist, "np.select")
    if len(conds) != len(choices):
        raise NumpyError(ValueError("list of cases must be same length as list of conditions"))
    if not conds:
        raise NumpyError(ValueError("select with an empty condition list is not possible"))
    result = check_operand(default, "np.select")
    for c, v in zip(reversed(conds), reversed(choices), strict=True):
        c = as_array(b, c, "np.select")
        if c.dtype != np.bool_:
            raise NumpyError(TypeError("invalid entry 0 in condlist: should be boolean ndarray"))
        result = b.emit("where", c, check_operand(v, "np.select"), result)
    return result if is_array(result) else as_array(b, result, "np.select")


FUNCTIONS = {
    np.split: split_impl, np.array_split: array_split_impl,
    np.hsplit: _split_on(lambda nd: (1 if nd > 1 else 0, 1), "np.hsplit"),
    np.vsplit: _split_on(lambda nd: (0, 2), "np.vsplit"),
    np.dsplit: _split_on(lambda nd: (2, 3), "np.dsplit"),
    np.hstack: hstack_impl, np.vstack: vstack_impl, np.dstack: dstack_impl,
    np.column_stack: column_stack_impl, np.append: append_impl,
    np.atleast_1d: _atleast_impl(1), np.atleast_2d: _atleast_impl(2), np.atleast_3d: _atleast_impl(3),
    np.broadcast_arrays: broadcast_arrays_impl,
    np.tri: tri_impl, np.tril: tril_impl, np.triu: triu_impl, np.eye: eye_impl, np.identity: identity_impl,
    np.outer: outer_impl, np.repeat: repeat_impl, np.tile: tile_impl, np.meshgrid: meshgrid_impl,
    np.indices: indices_impl,
    np.flip: flip_impl, np.fliplr: fliplr_impl, np.flipud: flipud_impl, np.rot90: rot90_impl,
    np.roll: roll_impl, np.diff: diff_impl, np.ediff1d: ediff1d_impl, np.ptp: ptp_impl,
    np.take: take_impl, np.compress: compress_impl, np.extract: extract_impl, np.select: select_impl,
}
