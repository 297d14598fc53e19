"""np.take_along_axis: a gather inside our kernels (op take_along, ir/ops/take_along.py).

axis=None takes along the flattened array (1-d indices); an int axis needs indices of arr's
rank (the op's meta rule raises NumPy's errors: non-integer indices, another rank). Where the
kernels cannot gather (an unsupported dtype, an axis that may be empty) the schedule runs the
op's reference, NumPy's own take_along_axis.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from .common import as_array, bind, is_proxy, normalize_axis, unsupported
from .shaping import flat_values

_PARAMS = ("arr", "indices", "axis")


def take_along_axis_impl(b, *args, **kwargs):
    """np.take_along_axis(arr, indices, axis=-1)."""
    p = bind("np.take_along_axis", _PARAMS, args, kwargs)
    fname = "np.take_along_axis"
    arr, ind = as_array(b, p.get("arr"), fname), as_array(b, p.get("indices"), fname)
    axis = p.get("axis", -1)
    if is_proxy(axis):
        raise unsupported(fname, "an axis computed at run time")
    if axis is None:
        if ind.ndim != 1:
            raise NumpyError(ValueError("when axis=None, `indices` must have a single dimension."))
        arr, axis = flat_values(b, arr), 0
    else:
        axis = normalize_axis(axis, arr.ndim, fname)
    return b.emit("take_along", arr, ind, axis=axis)


FUNCTIONS = {np.take_along_axis: take_along_axis_impl}
