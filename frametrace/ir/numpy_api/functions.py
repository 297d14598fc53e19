"""The table from NumPy callables to their traced implementations.

`lookup_function(np.sum)` returns `impl(b, *args, **kwargs)`; None means "not traceable"
(the tracer graph-breaks or, with constant arguments, may call NumPy itself).
"""
from __future__ import annotations

import numpy as np

from . import creation as C
from .advanced import FUNCTIONS as ADVANCED
from . import shaping as S
from .operators import UFUNC_OPS, ufunc_impl
from .contiguous import FUNCTIONS as CONTIGUOUS
from .einsum import FUNCTIONS as EINSUM
from .fft_calls import FUNCTIONS as FFT
from .extra_elementwise import FUNCTIONS as EXTRA
from .gradient import FUNCTIONS as GRADIENT
from .joining import FUNCTIONS as JOINING
from .library_calls import FUNCTIONS as LIBRARY
from .linalg_calls import FUNCTIONS as LINALG
from .more_calls import FUNCTIONS as MORE
from .nan_reductions import FUNCTIONS as NAN_REDUCTIONS
from .sorting import FUNCTIONS as SORTING
from .take_along import FUNCTIONS as TAKE_ALONG
from .norms import FUNCTIONS as NORMS
from .padding import FUNCTIONS as PADDING
from .rounding import round_impl
from .reductions import PARAMS, nan_reduction_impl, reduction_impl
from .ufunc_methods import FUNCTIONS as UFUNC_METHODS


def _shape(b, a):
    from .methods import array_attribute
    return array_attribute(b, S.as_array(b, a, "np.shape"), "shape")


def _ndim(b, a):
    return S.as_array(b, a, "np.ndim").ndim


def _size(b, a, axis=None):
    x = S.as_array(b, a, "np.size")
    return x.fake.size if axis is None else x.shape[S.normalize_axis(axis, x.ndim, "np.size")]


FUNCTIONS: dict = {ufunc: ufunc_impl(ufunc, name) for ufunc, name in UFUNC_OPS.items()}
FUNCTIONS.update({getattr(np, name): reduction_impl(name) for name in PARAMS})
FUNCTIONS.update({
    np.amax: reduction_impl("max", "np.amax"), np.amin: reduction_impl("min", "np.amin"),
    np.nansum: nan_reduction_impl("sum", 0), np.nanprod: nan_reduction_impl("prod", 1),
    np.nancumsum: nan_reduction_impl("cumsum", 0), np.nancumprod: nan_reduction_impl("cumprod", 1),
    np.reshape: S.reshape_impl, np.transpose: S.transpose_impl, np.swapaxes: S.swapaxes_impl,
    np.moveaxis: S.moveaxis_impl, np.expand_dims: S.expand_dims_impl,
    np.squeeze: S.squeeze_impl, np.broadcast_to: S.broadcast_to_impl, np.ravel: S.ravel_impl,
    np.concatenate: S.concatenate_impl, np.stack: S.stack_impl, np.copy: S.copy_impl,
    np.where: S.where_impl, np.clip: S.clip_impl, np.dot: S.dot_impl,
    np.astype: S.astype_impl, np.round: round_impl, np.around: round_impl,
    np.asarray: S.asarray_impl, np.array: S.array_impl,
    np.shape: _shape, np.ndim: _ndim, np.size: _size,
    np.zeros: C.zeros_impl, np.ones: C.ones_impl, np.empty: C.empty_impl, np.full: C.full_impl,
    np.zeros_like: C.zeros_like_impl, np.ones_like: C.ones_like_impl,
    np.empty_like: C.empty_like_impl, np.full_like: C.full_like_impl, np.arange: C.arange_impl,
    np.ndarray: C.ndarray_impl,
})
FUNCTIONS[np.linalg.matmul] = FUNCTIONS[np.matmul]
for _alias, _target in (("concat", np.concatenate), ("permute_dims", np.transpose)):
    if hasattr(np, _alias):
        FUNCTIONS[getattr(np, _alias)] = FUNCTIONS[_target]
for _t in (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
           np.uint64, np.uint32, np.uint16, np.uint8, np.bool_, np.complex128, np.complex64):
    FUNCTIONS[_t] = S.scalar_type_impl(_t)


def lookup_function(fn):
    """impl(b, *args, **kwargs) for NumPy callable `fn`, or None if it is not traceable."""
    try:
        return FUNCTIONS.get(fn)
    except TypeError:              # unhashable callables are never in the table
        return None


def is_traceable_function(fn) -> bool:
    return lookup_function(fn) is not None


def _register_tables():
    from .data_dependent import FUNCTIONS as DD
    FUNCTIONS.update(DD)
    for table in (UFUNC_METHODS, LINALG, EINSUM, LIBRARY, JOINING, EXTRA, MORE, PADDING, NORMS, NAN_REDUCTIONS,
                  SORTING, TAKE_ALONG, ADVANCED, GRADIENT, CONTIGUOUS, FFT):
        FUNCTIONS.update(table)


_register_tables()
