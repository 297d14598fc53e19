"""np.linalg and the tensor products, as opaque NumPy calls (LAPACK / BLAS inside the graph).

Each op is registered with its shape rule next to the API binding; the dtype comes from a
probe of NumPy on one-element stand-ins (ops/opaque.py). Errors NumPy raises on data
(LinAlgError for a singular matrix) are raised by the compiled function at the same call.
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError, Unsupported
from ..fake import FakeArray
from ..ops.broadcast import broadcast_shapes
from ..ops.opaque import register_opaque
from ..ops.promotion import shape_of
from ..ops.symbolic import same_size, sym_min
from .common import as_array
from .data_dependent import unbacked_size
from .opaque_api import opaque_function

LA = np.linalg


def _square(a, fname):
    s = shape_of(a)
    if len(s) < 2:
        raise NumpyError(LA.LinAlgError(f"{len(s)}-dimensional array given. Array must be at least "
                                        f"two-dimensional"))
    return s


def _solve_shape(a, b):
    _square(a, "solve")
    return broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:] if b.ndim > 1 else a.shape[:-1]


def _min_mn(a):
    return sym_min(a.shape[-2], a.shape[-1])


def _qr_shape(a, mode="reduced", item=0):
    return a.shape[:-2] + ((a.shape[-2], _min_mn(a)) if item == 0 else (_min_mn(a), a.shape[-1]))


def _lstsq_shape(a, b, rcond=None):
    return a.shape[-1:] + b.shape[1:]


def _multi_dot_shape(*xs, out=None):
    first, last = xs[0].shape, xs[-1].shape
    return first[:-1] + last[1:] if len(last) == 2 else first[:-1]


_SQUARE = lambda a, *args, **kw: _square(a, "linalg")      # noqa: E731

register_opaque("linalg_solve", LA.solve, _solve_shape)
register_opaque("linalg_inv", LA.inv, _SQUARE)
register_opaque("linalg_det", LA.det, lambda a: _square(a, "det")[:-2])
register_opaque("linalg_slogdet_sign", LA.slogdet, lambda a: _square(a, "slogdet")[:-2], item=0)
register_opaque("linalg_slogdet_logabsdet", LA.slogdet, lambda a: _square(a, "slogdet")[:-2], item=1)
register_opaque("linalg_cholesky", LA.cholesky, _SQUARE)
register_opaque("linalg_qr_q", LA.qr, lambda a, mode="reduced": _qr_shape(a, mode, 0), item=0)
register_opaque("linalg_qr_r", LA.qr, lambda a, mode="reduced": _qr_shape(a, mode, 1), item=1)
register_opaque("linalg_eigh_values", LA.eigh, lambda a, UPLO="L": _square(a, "eigh")[:-1], item=0)
register_opaque("linalg_eigh_vectors", LA.eigh, lambda a, UPLO="L": _square(a, "eigh"), item=1)
register_opaque("linalg_eigvalsh", LA.eigvalsh, lambda a, UPLO="L": _square(a, "eigvalsh")[:-1])
register_opaque("linalg_svd_values", LA.svd,
                lambda a, compute_uv=False, **kw: a.shape[:-2] + (_min_mn(a),))
register_opaque("linalg_lstsq_x", LA.lstsq, _lstsq_shape, item=0)
register_opaque("linalg_lstsq_residuals", LA.lstsq, lambda a, b, rcond=None, size=None: (size,) + b.shape[1:],
                item=1, kind="gather")
register_opaque("linalg_lstsq_rank", LA.lstsq, lambda a, b, rcond=None: (), item=2)
register_opaque("linalg_lstsq_s", LA.lstsq, lambda a, b, rcond=None: (_min_mn(a),), item=3)
register_opaque("linalg_pinv", LA.pinv, lambda a, **kw: a.shape[:-2] + (a.shape[-1], a.shape[-2]))
register_opaque("linalg_matrix_power", LA.matrix_power, lambda a, n: _square(a, "matrix_power"))
register_opaque("linalg_matrix_rank", LA.matrix_rank, lambda A, **kw: A.shape[:-2])
register_opaque("linalg_multi_dot", lambda *xs, **kw: LA.multi_dot(xs, **kw), _multi_dot_shape)


def _qr_impl(b, a, mode="reduced"):
    if mode != "reduced":
        raise Unsupported(f"np.linalg.qr(mode={mode!r})", kind="call", context="np.linalg.qr")
    q = opaque_function("linalg_qr_q", "np.linalg.qr", ("a",))(b, a)
    r = opaque_function("linalg_qr_r", "np.linalg.qr", ("a",))(b, a)
    return (q, r)


def _eigh_impl(b, a, UPLO="L"):
    return (opaque_function("linalg_eigh_values", "np.linalg.eigh", ("a", "UPLO"))(b, a, UPLO),
            opaque_function("linalg_eigh_vectors", "np.linalg.eigh", ("a", "UPLO"))(b, a, UPLO))


def _slogdet_impl(b, a):
    return (opaque_function("linalg_slogdet_sign", "np.linalg.slogdet", ("a",))(b, a),
            opaque_function("linalg_slogdet_logabsdet", "np.linalg.slogdet", ("a",))(b, a))


def _svd_impl(b, a, full_matrices=True, compute_uv=True, hermitian=False):
    if compute_uv is not False or hermitian is not False:
        raise Unsupported("np.linalg.svd with compute_uv=True", kind="call", context="np.linalg.svd",
                          hints=("pass compute_uv=False for the singular values",))
    return opaque_function("linalg_svd_values", "np.linalg.svd", ("a", "compute_uv"))(b, a, compute_uv=False)


def _lstsq_impl(b, a, b_, rcond=None):
    """(x, residuals, rank, s): residuals has a data-dependent length (0 unless full rank)."""
    names, arrays = ("a", "b", "rcond"), ("a", "b")
    x = opaque_function("linalg_lstsq_x", "np.linalg.lstsq", names, arrays)(b, a, b_, rcond)
    size = unbacked_size(b, (1,), "np.linalg.lstsq residuals")
    res = opaque_function("linalg_lstsq_residuals", "np.linalg.lstsq", names + ("size",), arrays)(
        b, a, b_, rcond, size)
    rank = opaque_function("linalg_lstsq_rank", "np.linalg.lstsq", names, arrays)(b, a, b_, rcond)
    sv = opaque_function("linalg_lstsq_s", "np.linalg.lstsq", names, arrays)(b, a, b_, rcond)
    return (x, res, rank, sv)


def _multi_dot_impl(b, arrays, *, out=None):
    if out is not None or not isinstance(arrays, (list, tuple)) or len(arrays) < 2:
        raise Unsupported("np.linalg.multi_dot of this argument", kind="call", context="np.linalg.multi_dot")
    xs = [as_array(b, x, "np.linalg.multi_dot") for x in arrays]
    return b.emit("linalg_multi_dot", *xs)


# ---- products -----------------------------------------------------------------------------

def _kron_shape(a, b):
    sa, sb = shape_of(a), shape_of(b)
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    return tuple(x * y for x, y in zip(sa, sb, strict=True))


def _tensordot_shape(a, b, axes=2):
    if isinstance(axes, int):
        ka, kb = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        ka, kb = ([axes[0]] if isinstance(axes[0], int) else list(axes[0]),
                  [axes[1]] if isinstance(axes[1], int) else list(axes[1]))
    ka, kb = [k % a.ndim for k in ka], [k % b.ndim for k in kb]
    return (tuple(d for i, d in enumerate(a.shape) if i not in ka)
            + tuple(d for i, d in enumerate(b.shape) if i not in kb))


def _inner_shape(a, b):
    return tuple(shape_of(a)[:-1]) + tuple(shape_of(b)[:-1])


def _cross_shape(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    da, db = (next((c for c in (2, 3) if same_size(d, c)), None) for d in (a.shape[-1], b.shape[-1]))
    if da is None or db is None:
        raise Unsupported("np.cross with a symbolic or non-2/3 last axis", kind="call", context="np.cross")
    batch = broadcast_shapes(a.shape[:-1], b.shape[:-1])
    shape = batch if da == db == 2 else batch + (3,)
    return FakeArray(shape, np.result_type(a.dtype, b.dtype))


register_opaque("kron", np.kron, _kron_shape)
register_opaque("tensordot", np.tensordot, _tensordot_shape)
register_opaque("inner", np.inner, _inner_shape)
register_opaque("vdot", np.vdot, lambda a, b: ())
register_opaque("cross", np.cross, _cross_shape)


FUNCTIONS = {
    LA.solve: opaque_function("linalg_solve", "np.linalg.solve", ("a", "b"), ("a", "b")),
    LA.inv: opaque_function("linalg_inv", "np.linalg.inv", ("a",)),
    LA.det: opaque_function("linalg_det", "np.linalg.det", ("a",)),
    LA.slogdet: _slogdet_impl,
    LA.lstsq: _lstsq_impl,
    LA.cholesky: opaque_function("linalg_cholesky", "np.linalg.cholesky", ("a",)),
    LA.qr: _qr_impl,
    LA.eigh: _eigh_impl,
    LA.eigvalsh: opaque_function("linalg_eigvalsh", "np.linalg.eigvalsh", ("a", "UPLO")),
    LA.svd: _svd_impl,
    LA.pinv: opaque_function("linalg_pinv", "np.linalg.pinv", ("a", "rcond", "hermitian")),
    LA.matrix_power: opaque_function("linalg_matrix_power", "np.linalg.matrix_power", ("a", "n")),
    LA.matrix_rank: opaque_function("linalg_matrix_rank", "np.linalg.matrix_rank", ("A", "tol", "hermitian"),
                                    ("A",)),
    LA.multi_dot: _multi_dot_impl,
    np.kron: opaque_function("kron", "np.kron", ("a", "b"), ("a", "b")),
    np.tensordot: opaque_function("tensordot", "np.tensordot", ("a", "b", "axes"), ("a", "b")),
    np.inner: opaque_function("inner", "np.inner", ("a", "b"), ("a", "b")),
    np.vdot: opaque_function("vdot", "np.vdot", ("a", "b"), ("a", "b")),
    np.cross: opaque_function("cross", "np.cross", ("a", "b", "axisa", "axisb", "axisc", "axis"), ("a", "b")),
}
