"""Shape functions and methods: reshape, transpose, swapaxes, moveaxis, expand_dims, squeeze,
broadcast_to, ravel, flatten, concatenate, stack, copy; also where, clip, astype, dot,
the scalar-type calls (np.float32(x)).

Each `*_impl(b, ...)` takes NumPy's own positional/keyword parameters and emits the ops'
canonical forms (resolved reshape shapes, full transpose permutations, sorted
non-negative axis tuples).
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ...errors import NumpyError
from ..fake import FakeArray
from ..ops.views import resolve_reshape
from ..graph import Node
from ..ops.symbolic import same_size
from ..registry import get_op
from .common import (as_array, as_dtype, bind, check_operand, is_array, is_proxy,
                     meta_of, normalize_axes, normalize_axis, reject, shape_arg, size_arg,
                     unsupported, unwrap_out, write_ufunc_out)
from .layout import is_c_contiguous, reshape_is_view
from .literals import array_from_sequence, array_like


def _shape_varargs(shape: tuple, fname):
    if len(shape) == 1 and (isinstance(shape[0], (tuple, list)) or shape[0] is None):
        shape = shape[0]
    if shape is None:
        raise NumpyError(TypeError(f"{fname}: a shape is required"))
    if isinstance(shape, (tuple, list)):
        return tuple(size_arg(d, fname) for d in shape)
    return (size_arg(shape, fname),)


def reshape(b, x, shape, fname="np.reshape"):
    """A view where NumPy makes one, else a view of a C-ordered copy. Of an input (or a view
    of one) the `reshape` op's reference decides at run time, exactly as NumPy, with no
    layout guard; of a value the graph computes, NumPy's layout of it decides at trace time
    (a backend may lay that value out differently)."""
    x = as_array(b, x, fname)
    shape = resolve_reshape(x.size, shape)
    if not _views_an_input(x) and reshape_is_view(b, x, shape) is False:
        x = b.emit("copy", x, order="C")
    return b.emit("reshape", x, shape=shape)


@functools.cache
def setting_shape_warns() -> bool:
    """Whether this NumPy warns on `x.shape = ...` (deprecated in NumPy 2.5): the trace then leaves it
    to NumPy, which gives the warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = np.zeros(2)
        a.shape = (2, 1)
    return bool(caught)


def set_shape(b, x, shape):
    """`x.shape = shape` of an array the graph made: NumPy's in-place reshape, which never
    copies: a view of the same data, or NumPy's AttributeError."""
    shape = resolve_reshape(x.size, _shape_varargs((shape,), "ndarray.shape"))
    view = reshape_is_view(b, x, shape)
    if view is None:
        raise unsupported("ndarray.shape", "setting the shape of an array whose layout is not known at trace time",
                          "write x = x.reshape(...) instead")
    if not view:
        raise NumpyError(AttributeError("Incompatible shape for in-place modification. "
                                        "Use `.reshape()` to make a copy with the desired shape."))
    return b.emit("reshape", x, shape=shape)


def _views_an_input(x) -> bool:
    node = x.node
    while node.op != "input" and get_op(node.op).kind == "view" and isinstance(node.args[0], Node):
        node = node.args[0]
    return node.op == "input"


def reshape_impl(b, a, *args, **kwargs):
    """np.reshape(a, shape, order='C', *, newshape=None, copy=None)."""
    p = bind("np.reshape", ("shape", "order", "newshape", "copy"), args, kwargs)
    reject("np.reshape", p, order="C", copy=None)
    shape = p.get("shape", p.get("newshape"))
    return reshape(b, a, _shape_varargs((shape,), "np.reshape"))


def reshape_method(b, self, *shape, order="C", copy=None):
    """x.reshape(*shape) / x.reshape(shape)."""
    reject("ndarray.reshape", {"order": order, "copy": copy}, order="C", copy=None)
    return reshape(b, self, _shape_varargs(shape, "ndarray.reshape"), "ndarray.reshape")


def ravel_impl(b, a, order="C"):
    """A view of a C-contiguous array (NumPy's flag, decided at trace time: an input's
    layout is guarded), else a C-ordered copy, even where `reshape(-1)` would be a view."""
    reject("np.ravel", {"order": order}, order="C")
    x = as_array(b, a, "np.ravel")
    contiguous = is_c_contiguous(b, x)
    if contiguous is None:
        raise unsupported("np.ravel", "ravel of an array whose memory layout is not known at trace time",
                          "use x.reshape(-1) (a view where possible) or x.flatten() (always a copy)")
    if not contiguous:
        x = b.emit("copy", x, order="C")
    return b.emit("reshape", x, shape=(x.size,))


def flat_values(b, x):
    """x's values in C order as a 1-d array, for an op whose result is a new array (no view of x
    escapes): `ravel` where x's layout is known, else a C-ordered copy (a carried array in a loop
    body, whose layout the trace does not know)."""
    if x.ndim == 1:
        return x
    if is_c_contiguous(b, x) is None:
        x = b.emit("copy", x, order="C")
    return ravel_impl(b, x)


def flatten_method(b, self, order="C"):
    reject("ndarray.flatten", {"order": order}, order="C")
    x = as_array(b, self, "ndarray.flatten")
    return b.emit("reshape", b.emit("copy", x, order="C"), shape=(x.size,))


def transpose(b, x, axes, fname="np.transpose"):
    x = as_array(b, x, fname)
    if axes is None:
        perm = tuple(range(x.ndim))[::-1]
    else:
        if len(axes) != x.ndim:
            raise NumpyError(ValueError("axes don't match array"))
        perm = normalize_axes(tuple(axes), x.ndim, fname, duplicate_msg="repeated axis in transpose")
    return b.emit("transpose", x, axes=perm)


def transpose_impl(b, a, axes=None):
    return transpose(b, a, None if axes is None else tuple(axes))


def transpose_method(b, self, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return transpose(b, self, tuple(axes) if axes else None, "ndarray.transpose")


def swapaxes_impl(b, a, axis1, axis2):
    x = as_array(b, a, "np.swapaxes")
    i, j = (normalize_axis(v, x.ndim, "np.swapaxes") for v in (axis1, axis2))
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return b.emit("transpose", x, axes=tuple(perm))


def moveaxis_impl(b, a, source, destination):
    x = as_array(b, a, "np.moveaxis")
    src = normalize_axes(source, x.ndim, "np.moveaxis", duplicate_msg="repeated axis in `source` argument")
    dst = normalize_axes(destination, x.ndim, "np.moveaxis",
                         duplicate_msg="repeated axis in `destination` argument")
    if len(src) != len(dst):
        raise NumpyError(ValueError("`source` and `destination` arguments must have the same "
                                    "number of elements"))
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return b.emit("transpose", x, axes=tuple(order))


def matrix_transpose(b, x):
    if x.ndim < 2:
        raise NumpyError(ValueError("matrix transpose with ndim < 2 is undefined"))
    return swapaxes_impl(b, x, -1, -2)


def expand_dims_impl(b, a, axis):
    x = as_array(b, a, "np.expand_dims")
    n = len(axis) if isinstance(axis, (tuple, list)) else 1
    axes = normalize_axes(axis, x.ndim + n, "np.expand_dims", duplicate_msg="repeated axis")
    return b.emit("expand_dims", x, axis=tuple(sorted(axes)))


def squeeze_impl(b, a, axis=None):
    x = as_array(b, a, "np.squeeze")
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if same_size(d, 1))
    else:
        axes = tuple(sorted(normalize_axes(axis, x.ndim, "np.squeeze")))
    return b.emit("squeeze", x, axis=axes)


def broadcast_to_impl(b, array, shape, subok=False):
    reject("np.broadcast_to", {"subok": subok}, subok=False)
    return b.emit("broadcast_to", as_array(b, array, "np.broadcast_to"),
                  shape=shape_arg(shape, "np.broadcast_to"))


def _sequence(arrays, fname):
    if is_proxy(arrays) or not isinstance(arrays, (tuple, list)):
        raise unsupported(fname, "a sequence that is not a Python list or tuple",
                          "pass a list of arrays")
    return list(arrays)


def concatenate_impl(b, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    fname = "np.concatenate"
    reject(fname, {"out": out, "dtype": dtype, "casting": casting}, out=None, dtype=None,
           casting="same_kind")
    xs = [array_like(b, x, fname) for x in _sequence(arrays, fname)]
    if not xs:
        raise NumpyError(ValueError("need at least one array to concatenate"))
    if axis is None:                   # concatenate copies: view or copy of each does not matter
        xs = [as_array(b, x, fname) for x in xs]
        xs = [b.emit("reshape", x, shape=(x.size,)) for x in xs]
        axis = 0
    elif not all(is_array(x) and x.ndim > 0 for x in xs):
        raise NumpyError(ValueError("zero-dimensional arrays cannot be concatenated"))
    return b.emit("concatenate", *xs, axis=normalize_axis(axis, xs[0].ndim, fname))


def stack_impl(b, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    fname = "np.stack"
    reject(fname, {"out": out, "dtype": dtype, "casting": casting}, out=None, dtype=None,
           casting="same_kind")
    xs = [array_like(b, x, fname) for x in _sequence(arrays, fname)]
    if not xs:
        raise NumpyError(ValueError("need at least one array to stack"))
    ndim = meta_of(xs[0]).ndim if is_array(xs[0]) else 0
    axis = normalize_axis(axis, ndim + 1, fname)
    if not all(is_array(x) for x in xs):       # a Python scalar among them: NumPy's call
        return b.emit("stack", *xs, axis=axis)
    return _stack_as_concatenate(b, xs, axis)


def _stack_as_concatenate(b, xs, axis):
    """np.stack as NumPy computes it: every operand with a new axis at `axis`, concatenated
    along it (so dtype promotion, layout and errors are concatenate's), after NumPy's own
    check of equal shapes. The pieces are views, so the result is one kernel that reads the
    operands (or computes them: `np.stack([a * c - b * s, a * s + b * c], axis=-1)` fuses)."""
    first = tuple(xs[0].shape)
    for x in xs[1:]:
        s = tuple(x.shape)
        if len(s) != len(first) or not all(same_size(p, q) for p, q in zip(s, first, strict=True)):
            raise NumpyError(ValueError("all input arrays must have the same shape"))
    return b.emit("concatenate", *[b.emit("expand_dims", x, axis=(axis,)) for x in xs], axis=axis)


def _copy(b, x, order):
    return b.emit("copy", x) if order == "K" else b.emit("copy", x, order=order)


def copy_impl(b, a, order="K", subok=False):
    reject("np.copy", {"order": order, "subok": subok}, order=("K", "C", "A"), subok=False)
    return _copy(b, as_array(b, a, "np.copy"), order)


def copy_method(b, self, order="C"):
    reject("ndarray.copy", {"order": order}, order=("C", "K", "A"))
    return self if self.scalar else _copy(b, self, order)     # NumPy scalars are immutable


def where_impl(b, condition, *args, **kwargs):
    if len(args) + len(kwargs) == 0:
        from .data_dependent import nonzero
        return nonzero(b, condition)
    p = bind("np.where", ("x", "y"), args, kwargs)
    if len(p) != 2:
        raise NumpyError(ValueError("either both or neither of x and y should be given"))
    ops = [array_like(b, v, "np.where") for v in (condition, p["x"], p["y"])]
    return b.emit("where", *ops)


def clip(b, fname, a, lo, hi, out=None):
    x = array_like(b, a, fname)
    lo = None if lo is None or lo is np._NoValue else array_like(b, lo, fname)
    hi = None if hi is None or hi is np._NoValue else array_like(b, hi, fname)
    result = b.emit("clip", x, lo, hi)
    out = unwrap_out(out, fname)
    return result if out is None else write_ufunc_out(b, fname, np.clip, (x, lo, hi), result, out)


def clip_impl(b, a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
              max=np._NoValue, **kwargs):
    if kwargs:
        raise unsupported("np.clip", f"arguments {sorted(kwargs)}")
    lo = min if a_min is np._NoValue else a_min
    hi = max if a_max is np._NoValue else a_max
    return clip(b, "np.clip", a, lo, hi, out)


def clip_method(b, self, min=None, max=None, out=None, **kwargs):
    if kwargs:
        raise unsupported("ndarray.clip", f"arguments {sorted(kwargs)}")
    return clip(b, "ndarray.clip", self, min, max, out)


def astype(b, x, dtype, *, copy=True, casting="unsafe", fname="np.astype"):
    dt = as_dtype(dtype, fname)
    if dt is None:
        raise NumpyError(TypeError(f"{fname}: a dtype is required"))
    x = as_array(b, x, fname)
    if casting != "unsafe" and not np.can_cast(x.dtype, dt, casting):
        raise NumpyError(TypeError(f"Cannot cast array data from {x.dtype!r} to {dt!r} "
                                   f"according to the rule {casting!r}"))
    if not copy and dt == x.dtype:
        return x
    return b.emit("astype", x, dtype=dt)


def astype_impl(b, x, dtype, /, *, copy=True, device=None):
    reject("np.astype", {"device": device}, device=None)
    return astype(b, x, dtype, copy=copy)


def astype_method(b, self, dtype, order="K", casting="unsafe", subok=True, copy=True):
    reject("ndarray.astype", {"order": order, "subok": subok}, order="K", subok=True)
    return astype(b, self, dtype, copy=copy, casting=casting, fname="ndarray.astype")


def dot_impl(b, a, b_, out=None):
    reject("np.dot", {"out": out}, out=None)
    return b.emit("dot", array_like(b, a, "np.dot"), array_like(b, b_, "np.dot"))


def scalar_type_impl(scalar_type):
    """np.float32(x) on a traced value: an array stays an array, a 0-d array or scalar
    gives a NumPy scalar; the cast is unsafe (as astype)."""
    dt = np.dtype(scalar_type)

    def impl(b, x=0, /):
        x = check_operand(x, f"np.{dt.name}")
        r = b.emit("astype", x, dtype=dt)
        if isinstance(r.fake, FakeArray) and r.ndim == 0 and not r.scalar:
            r = b.emit("getitem", r, index=())
        return r
    impl.__name__ = f"{dt.name}_impl"
    return impl


def asarray_impl(b, a, dtype=None, order=None, *, device=None, copy=None, like=None):
    reject("np.asarray", {"order": order, "device": device, "copy": copy, "like": like},
           order=(None, "K", "A"), device=None, copy=(None, False), like=None)
    return _to_array(b, a, as_dtype(dtype, "np.asarray"), copy=False, fname="np.asarray")


def array_impl(b, a, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    reject("np.array", {"order": order, "subok": subok, "ndmin": ndmin, "like": like},
           order=("K", "A", "C"), subok=False, ndmin=0, like=None)
    return _to_array(b, a, as_dtype(dtype, "np.array"), copy=bool(copy), fname="np.array")


def _to_array(b, a, dt, *, copy: bool, fname: str):
    """np.array / np.asarray: an ndarray (never a NumPy scalar); the same object if no copy
    or cast is needed."""
    if isinstance(a, (list, tuple)):
        return array_from_sequence(b, a, dt, fname)     # always a new array
    fresh = not is_array(a)            # as_array makes a new 0-d array of a weak value
    x = as_array(b, a, fname)
    if dt is not None and dt != x.dtype:
        x, fresh = b.emit("astype", x, dtype=dt), True
    if x.scalar or (copy and not fresh):
        x = b.emit("copy", x)
    return x
