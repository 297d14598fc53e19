"""Sorting short rows inside kernels.

  sort_rows(x; axis, kind)      np.sort(x, axis=axis, kind=kind) where axis is x's last axis
      and its length is a static size of at most Sort.max_row (the API layer decides: ir/
      numpy_api/sorting.py; other sorts are the opaque op "sort"). Kernels sort each row with
      a sorting network. Floats are compared as integer keys ordering -0.0 before 0.0 and
      np.nan after +inf; where NumPy's order could differ from the network's (zeros of both
      signs, or a NaN other than np.nan's bits, anywhere in the array) the kernel sets both
      zero-sign flags and NumPy sorts again (backends/llvm/fp_errors.py), as it does for a
      max reduction that saw both zeros.
"""
from __future__ import annotations

import numpy as np

from ..fake import FakeArray
from ..registry import Sort, register


def _sort_rows_ref(x, *, axis, kind=None):
    return np.sort(x, axis=axis, kind=kind)


@register("sort_rows", kind="scan", ref=_sort_rows_ref, lowering=Sort(fallback="sort"),
          fp_errors="none")
def sort_rows_meta(x, *, axis, kind=None):
    """np.sort(x, axis=x.ndim - 1, kind) of rows of a static length <= Sort.max_row."""
    if not isinstance(x, FakeArray) or x.ndim == 0 or axis != x.ndim - 1:
        raise ValueError(f"sort_rows sorts along the last axis, got axis={axis!r} of {x!r}")
    return FakeArray(tuple(x.shape), x.dtype)
