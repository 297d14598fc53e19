"""The long tail of NumPy functions: opaque calls with their shape rules, and a few compositions.

digitize, argpartition, trapezoid, cumulative_sum/prod, polyval/polyfit, vander, diagflat,
isposinf/isneginf/isreal/iscomplex, np.linalg.{vector_norm, matrix_norm, svdvals, cond, outer,
vecdot, matrix_transpose, diagonal, trace, cross, matmul}, np.copyto (an assign, fused).
"""
from __future__ import annotations

import numpy as np

from ...errors import Unsupported
from ..ops.broadcast import broadcast_shapes
from ..ops.opaque import register_opaque
from ..ops.promotion import probe, shape_of
from ..ops.symbolic import prod, sym_max, sym_min
from .common import as_array, check_operand, is_array, meta_of, unsupported
from .joining import outer_impl
from .linalg_calls import FUNCTIONS as LINALG
from .opaque_api import opaque_function
from .shape_rules import along_axis_shape, reduced_shape, same_shape
from .shaping import matrix_transpose

LA = np.linalg


def min_size(x):
    return sym_min(x.shape[-2], x.shape[-1])


def _trapezoid_rule(y, x=None, dx=1.0, axis=-1):
    return reduced_shape(shape_of(y), axis)


def _cumulative_rule(x, axis=None, dtype=None, out=None, include_initial=False):
    s = tuple(shape_of(x))
    if axis is None:
        if len(s) > 1:
            raise Unsupported("np.cumulative_sum without axis= on a multi-dimensional array",
                              kind="call", context="np.cumulative_sum")
        axis = 0
    ax = axis % len(s)
    return s[:ax] + (s[ax] + 1 if include_initial else s[ax],) + s[ax + 1:]


def _polyval_rule(p, x):
    return tuple(shape_of(x))


def _polyfit_rule(x, y, deg, **kw):
    if kw.get("full") or kw.get("cov"):
        raise Unsupported("np.polyfit(full=/cov=)", kind="call", context="np.polyfit")
    return (deg + 1,) + tuple(shape_of(y)[1:])


def _vander_rule(x, N=None, increasing=False):
    n = shape_of(x)[0]
    return (n, n if N is None else N)


def _diagflat_rule(v, k=0):
    n = prod(shape_of(v)) + abs(k)
    return (n, n)


def _matrix_norm_rule(x, keepdims=False, ord="fro"):
    return tuple(x.shape[:-2]) + ((1, 1) if keepdims else ())


def _vector_norm_rule(x, axis=None, keepdims=False, ord=2):
    return reduced_shape(x.shape, axis, keepdims)


def _linalg_diagonal_rule(x, offset=0):
    r, c = x.shape[-2:]
    length = sym_max(sym_min(r, c - offset) if offset >= 0 else sym_min(r + offset, c), 0)
    return tuple(x.shape[:-2]) + (length,)


def _vecdot_rule(x1, x2, axis=-1):
    s1, s2 = tuple(shape_of(x1)), tuple(shape_of(x2))
    a1, a2 = axis % len(s1), axis % len(s2)
    return broadcast_shapes(s1[:a1] + s1[a1 + 1:], s2[:a2] + s2[a2 + 1:])


register_opaque("digitize", np.digitize, lambda x, bins, right=False: tuple(shape_of(x)))
register_opaque("argpartition", np.argpartition, along_axis_shape)
register_opaque("trapezoid", np.trapezoid, _trapezoid_rule)
register_opaque("cumulative_sum", np.cumulative_sum, _cumulative_rule)
register_opaque("cumulative_prod", np.cumulative_prod, _cumulative_rule)
register_opaque("polyval", np.polyval, _polyval_rule)
register_opaque("polyfit", np.polyfit, _polyfit_rule)
register_opaque("vander", np.vander, _vander_rule)
register_opaque("diagflat", np.diagflat, _diagflat_rule)
for _n in ("isposinf", "isneginf", "isreal", "iscomplex"):
    register_opaque(_n, getattr(np, _n), same_shape)
register_opaque("linalg_vector_norm", LA.vector_norm, _vector_norm_rule)
register_opaque("linalg_matrix_norm", LA.matrix_norm, _matrix_norm_rule)
register_opaque("linalg_svdvals", LA.svdvals, lambda x: tuple(x.shape[:-2]) + (min_size(x),))
register_opaque("linalg_cond", LA.cond, lambda x, p=None: tuple(x.shape[:-2]))
register_opaque("linalg_diagonal", LA.diagonal, _linalg_diagonal_rule, aliases=True)
register_opaque("linalg_trace", LA.trace, lambda x, offset=0, dtype=None: tuple(x.shape[:-2]))
register_opaque("vecdot", lambda x1, x2, axis=-1: np.vecdot(x1, x2, axis=axis), _vecdot_rule)


def copyto_impl(b, dst, src, casting="same_kind", where=True):
    """np.copyto(dst, src, casting, where): an assign (of where(mask, src, dst) for where=)."""
    if not is_array(dst):
        raise unsupported("np.copyto", "a destination that is not an array")
    src = check_operand(src, "np.copyto")
    probe(np.copyto, dst.fake, meta_of(src), casting=casting)     # NumPy's casting check
    if where is not True:
        src = b.emit("where", check_operand(where, "np.copyto"), src, dst)
    b.emit("assign", dst, src)
    return None


def _linalg_outer(b, x1, x2):
    x, y = as_array(b, x1, "np.linalg.outer"), as_array(b, x2, "np.linalg.outer")
    if x.ndim != 1 or y.ndim != 1:
        raise unsupported("np.linalg.outer", "operands that are not 1-d")
    return outer_impl(b, x, y)


FUNCTIONS = {
    np.digitize: opaque_function("digitize", "np.digitize", ("x", "bins", "right"), ("x", "bins")),
    np.argpartition: opaque_function("argpartition", "np.argpartition", ("a", "kth", "axis", "kind", "order")),
    np.trapezoid: opaque_function("trapezoid", "np.trapezoid", ("y", "x", "dx", "axis"), ("y", "x")),
    np.cumulative_sum: opaque_function("cumulative_sum", "np.cumulative_sum",
                                       ("x", "axis", "dtype", "out", "include_initial"), ("x",)),
    np.cumulative_prod: opaque_function("cumulative_prod", "np.cumulative_prod",
                                        ("x", "axis", "dtype", "out", "include_initial"), ("x",)),
    np.polyval: opaque_function("polyval", "np.polyval", ("p", "x"), ("p", "x")),
    np.polyfit: opaque_function("polyfit", "np.polyfit", ("x", "y", "deg", "rcond", "full", "w", "cov"),
                                ("x", "y")),
    np.vander: opaque_function("vander", "np.vander", ("x", "N", "increasing"), ("x",)),
    np.diagflat: opaque_function("diagflat", "np.diagflat", ("v", "k"), ("v",)),
    **{getattr(np, n): opaque_function(n, f"np.{n}", ("x",), ("x",))
       for n in ("isposinf", "isneginf", "isreal", "iscomplex")},
    LA.vector_norm: opaque_function("linalg_vector_norm", "np.linalg.vector_norm", ("x", "axis", "keepdims", "ord"),
                                    ("x",)),
    LA.matrix_norm: opaque_function("linalg_matrix_norm", "np.linalg.matrix_norm", ("x", "keepdims", "ord"),
                                    ("x",)),
    LA.svdvals: opaque_function("linalg_svdvals", "np.linalg.svdvals", ("x",), ("x",)),
    LA.cond: opaque_function("linalg_cond", "np.linalg.cond", ("x", "p"), ("x",)),
    LA.diagonal: opaque_function("linalg_diagonal", "np.linalg.diagonal", ("x", "offset"), ("x",)),
    LA.trace: opaque_function("linalg_trace", "np.linalg.trace", ("x", "offset", "dtype"), ("x",)),
    LA.outer: _linalg_outer,
    LA.matrix_transpose: lambda b, x: matrix_transpose(b, as_array(b, x, "np.linalg.matrix_transpose")),
    np.matrix_transpose: lambda b, x: matrix_transpose(b, as_array(b, x, "np.matrix_transpose")),
    LA.cross: LINALG[np.cross],
    np.vecdot: opaque_function("vecdot", "np.vecdot", ("x1", "x2", "axis"), ("x1", "x2")),
    LA.vecdot: opaque_function("vecdot", "np.linalg.vecdot", ("x1", "x2", "axis"), ("x1", "x2")),
    np.copyto: copyto_impl,
}
