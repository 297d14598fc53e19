"""np.sort (and x.sort()): short last-axis rows sorted in our kernels, the rest by NumPy.

A row of a static length of at most Sort.max_row (ir/registry.py) along the last axis is the
op `sort_rows` (ir/ops/sorting.py: a sorting network fused with its producers, equal to
NumPy's result bit for bit); every other sort (longer or symbolic rows, another axis, the
flattened sort of an n-d array, order=, an unknown kind) is NumPy's own sort inside the
graph (the opaque op "sort").
"""
from __future__ import annotations

import numpy as np

from ..ops.symbolic import is_static
from ..registry import get_op
from .common import bind, is_array, is_proxy, normalize_axis
from .opaque_api import opaque_function

_PARAMS = ("a", "axis", "kind", "order")
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")
_opaque_sort = opaque_function("sort", "np.sort", _PARAMS)


def sort_impl(b, *args, **kwargs):
    """np.sort(a, axis=-1, kind=None, order=None)."""
    p = bind("np.sort", _PARAMS, args, kwargs)
    x, axis, kind = p["a"], p.get("axis", -1), p.get("kind")
    native = is_array(x) and not x.scalar and x.ndim >= 1 and p.get("order") is None \
        and not is_proxy(axis) and (axis is None or isinstance(axis, int)) and kind in _KINDS
    if native:
        if axis is None:
            native = x.ndim == 1                   # the flattened sort of an n-d array: NumPy
            axis = 0
        else:
            axis = normalize_axis(axis, x.ndim, "np.sort")
    if native and axis == x.ndim - 1:
        n = x.shape[-1]
        if is_static(n) and int(n) <= get_op("sort_rows").lowering.max_row:
            return b.emit("sort_rows", x, axis=axis, kind=kind)
    return _opaque_sort(b, *args, **kwargs)


FUNCTIONS = {np.sort: sort_impl}
