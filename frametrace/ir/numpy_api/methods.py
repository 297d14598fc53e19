"""ndarray methods and attributes on traced arrays (also NumPy scalars, which share them)."""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
from .common import is_array
from .reductions import PARAMS, reduction_impl
from . import shaping as S
from .extra_elementwise import imag_part, real_part
from .joining import repeat_impl, take_impl
from .library_calls import FUNCTIONS as LIBRARY
from .python_scalars import item_method, tolist_method
from .rounding import round_impl
from .sorting import sort_impl


def _fill(b, self, value):
    """x.fill(value): assign into the whole array; returns None."""
    b.emit("assign", self, S.check_operand(value, "ndarray.fill"))


def _dot(b, self, other, out=None):
    return S.dot_impl(b, self, other, out)


def _round(b, self, decimals=0, out=None):
    return round_impl(b, self, decimals, out)


def _sort_in_place(b, self, axis=-1, kind=None, order=None):
    """x.sort(): np.sort written back into x (sorting.py, then an assign)."""
    if self.scalar:
        raise Unsupported("sort of a NumPy scalar", kind="call", context="ndarray.sort")
    b.emit("assign", self, sort_impl(b, self, axis, kind, order), writer="sort")


METHODS = {name: reduction_impl(name, f"ndarray.{name}") for name in PARAMS if hasattr(np.ndarray, name)}
METHODS.update({
    "reshape": S.reshape_method, "transpose": S.transpose_method,
    "swapaxes": S.swapaxes_impl, "astype": S.astype_method, "copy": S.copy_method,
    "clip": S.clip_method, "squeeze": S.squeeze_impl, "ravel": S.ravel_impl,
    "flatten": S.flatten_method, "dot": _dot, "fill": _fill, "round": _round,
})
METHODS["item"], METHODS["tolist"] = item_method, tolist_method
METHODS.update({
    "diagonal": LIBRARY[np.diagonal], "trace": LIBRARY[np.trace], "argsort": LIBRARY[np.argsort],
    "repeat": repeat_impl, "take": take_impl, "sort": _sort_in_place,
    "conj": lambda b, self: b.emit("conjugate", self), "conjugate": lambda b, self: b.emit("conjugate", self),
})
# tobytes(), ... leave NumPy: not listed.


def _register_data_dependent():
    from .data_dependent import METHODS as DD
    METHODS.update(DD)


_register_data_dependent()


def lookup_method(name: str):
    """impl(b, self, *args, **kwargs) for ndarray method `name`, or None if not traceable."""
    return METHODS.get(name)


def array_attribute(b, proxy, name: str):
    """x.T, x.mT, x.shape (tuple of int | SymInt), x.ndim, x.dtype, x.size, x.itemsize,
    x.nbytes. Anything else is Unsupported."""
    if not is_array(proxy):
        raise Unsupported(f"attribute {name!r} of a run-time Python scalar", kind="attribute",
                          context=f".{name}")
    if name == "T":
        return S.transpose(b, proxy, None, "ndarray.T")
    if name == "mT":
        return S.matrix_transpose(b, proxy)
    if name == "shape":
        return tuple(proxy.shape)
    if name == "ndim":
        return proxy.ndim
    if name == "dtype":
        return proxy.dtype
    if name == "size":
        return proxy.fake.size
    if name == "itemsize":
        return proxy.dtype.itemsize
    if name == "real":
        return real_part(b, proxy)
    if name == "imag":
        return imag_part(b, proxy)
    if name == "nbytes":
        return proxy.fake.size * proxy.dtype.itemsize
    raise Unsupported(f"ndarray attribute {name!r} is not supported", kind="attribute",
                      context=f".{name}")
