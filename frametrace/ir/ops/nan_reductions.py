"""NaN-ignoring reductions and the run-time reports of NumPy's nan-functions.

  nanmax/nanmin(x; axis, keepdims)      np.fmax.reduce / np.fmin.reduce, which is what
      np.nanmax / np.nanmin compute for an ndarray: NaNs are skipped, an all-NaN slice gives
      NaN. axis: None or a tuple of distinct non-negative ints (as for max/min). Kernels fold
      with `red_fmax` / `red_fmin` from a NaN accumulator (fmax(NaN, x) is x), report the
      zero signs they see as max/min do (NumPy's SIMD order picks the zero), and keep the
      inner dim with the elementwise fmax / fmin.
  divide_quiet(a, b)                    a / b with every floating-point error ignored
      (np.nanmean's `_divide_by_count`, which runs under np.errstate(all="ignore")).
  report_if(flag; message, error)       NumPy's checks on computed values: where the bool
      `flag` (a 0-d value a kernel computed) is true, warn RuntimeWarning(message) (error
      False: "All-NaN slice encountered", "Mean of empty slice") or raise
      ValueError(message) (error True: nanargmax of an all-NaN slice). No value; never
      removed as dead code. Run by the wrapper with the flag the kernels computed.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import warnings

import numpy as np

from ..fake import FakeArray
from ..registry import Loop, NumpyCall, Reduction, register
from .broadcast import broadcast_shapes
from .promotion import fake_like, probe, shape_of
from .raising import no_identity_reduction_may_raise
from .reductions import check_nonempty, reduced_shape

_PARAMS = ("axis", "out", "keepdims", "initial", "where")
_UFUNCS = {"nanmax": np.fmax, "nanmin": np.fmin}
LOWERING = {
    "nanmax": Reduction("red_fmax", "nan_lowest", "fmax", nonempty=True, params=_PARAMS),
    "nanmin": Reduction("red_fmin", "nan_highest", "fmin", nonempty=True, params=_PARAMS),
}


def _reduce_ref(ufunc):
    def ref(x, *, axis=None, keepdims=False):
        return ufunc.reduce(x, axis=axis, keepdims=keepdims)
    return ref


def _meta(name):
    ufunc = _UFUNCS[name]

    def meta(x, *, axis=None, keepdims=False):
        if not isinstance(x, FakeArray):
            raise TypeError(f"{name} expects an array or NumPy scalar operand, got {x!r}")
        axes = tuple(range(x.ndim)) if axis is None else tuple(axis)
        if len(set(axes)) != len(axes) or any(not (0 <= a < x.ndim) for a in axes):
            raise ValueError(f"{name}: axis {axis!r} is not canonical for a {x.ndim}-d array")
        value = probe(_reduce_ref(ufunc), x, axis=axis, keepdims=keepdims)
        check_nonempty(x.shape, axes, f"zero-size array to reduction operation {ufunc.__name__} "
                                      f"which has no identity")
        return fake_like(value, reduced_shape(x.shape, axes, keepdims))
    meta.__name__ = f"{name}_meta"
    meta.__doc__ = f"np.{ufunc.__name__}.reduce(x, axis, keepdims): np.{name} of an ndarray"
    return meta


for _name in _UFUNCS:
    register(_name, kind="reduction", ref=_reduce_ref(_UFUNCS[_name]), lowering=LOWERING[_name],
             layout="keep", may_raise=no_identity_reduction_may_raise)(_meta(_name))


def _divide_quiet_ref(a, b):
    with np.errstate(all="ignore"):
        return np.true_divide(a, b)


@register("divide_quiet", kind="elementwise", ref=_divide_quiet_ref, fp_errors="none",
          lowering=Loop("f", body="true_divide"))
def divide_quiet_meta(a, b):
    """a / b (np.true_divide) reporting no floating-point error: 0 / 0 is NaN silently."""
    return fake_like(probe(np.true_divide, a, b), broadcast_shapes(shape_of(a), shape_of(b)))


def _report_if_ref(flag, *, message, error=False):
    if bool(flag):
        if error:
            raise ValueError(message)
        warnings.warn(message, RuntimeWarning, stacklevel=user_stacklevel())


_OWN_DIRS = tuple(os.path.dirname(importlib.util.find_spec(m).origin) + os.sep
                  for m in ("frametrace", "csrc_free_runtime"))
_GENERATED = ("<frametrace", "<native loop", "<array loop")


def user_stacklevel() -> int:
    """The `stacklevel` for a warnings.warn made by the caller of this function that names
    the first frame outside frametrace (its package, its generated code): the user's code
    that called the compiled function, as eager NumPy names the user's line. Warning filters
    by module and the once-per-location registry then see the user's code."""
    f, level = sys._getframe(1), 1
    while f is not None and (f.f_code.co_filename.startswith(_OWN_DIRS)
                             or f.f_code.co_filename.startswith(_GENERATED)):
        f, level = f.f_back, level + 1
    return level


@register("report_if", kind="other", ref=_report_if_ref, may_raise=lambda n: True,
          lowering=NumpyCall("a Python warning or exception from a flag the kernels computed"))
def report_if_meta(flag, *, message, error=False):
    """Warn RuntimeWarning(message), or raise ValueError(message) if `error`, where the 0-d
    bool `flag` is true (NumPy's nan-functions check their results this way)."""
    if not isinstance(flag, FakeArray) or flag.ndim != 0 or flag.dtype != np.bool_:
        raise TypeError(f"report_if expects a 0-d bool flag, got {flag!r}")
    return None
