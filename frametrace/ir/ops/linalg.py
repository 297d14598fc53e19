"""Matrix products.

Canonical forms:
  matmul(a, b)   np.matmul / `a @ b`: 1-d operands are promoted and the added dim removed;
                 batch dims broadcast; 0-d operands raise ValueError as in NumPy
  dot(a, b)      np.dot: a 0-d operand multiplies; 1-d . 1-d is an inner product (a NumPy
                 scalar); N-d . 1-d sums over a's last axis; N-d . M-d sums a's last axis
                 with b's second-to-last
"""
from __future__ import annotations

import numpy as np

from ...errors import NumpyError
from ..registry import Matmul, register
from .broadcast import broadcast_shapes
from .promotion import fake_like, probe, shape_of
from .symbolic import fmt_shape, same_size

_SIG = "(n?,k),(k,m?)->(n?,m?)"


@register("matmul", kind="matmul", ufunc=np.matmul, lowering=Matmul(), layout="c")
def matmul_meta(a, b):
    """np.matmul(a, b) (gufunc (n?,k),(k,m?)->(n?,m?))."""
    sa, sb = shape_of(a), shape_of(b)
    for i, s in enumerate((sa, sb)):
        if len(s) == 0:
            raise NumpyError(ValueError(f"matmul: Input operand {i} does not have enough "
                                        f"dimensions (has 0, gufunc core with signature "
                                        f"{_SIG} requires 1)"))
    value = probe(np.matmul, a, b)
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if not same_size(ka, kb):
        raise NumpyError(ValueError(f"matmul: Input operand 1 has a mismatch in its core "
                                    f"dimension 0, with gufunc signature {_SIG} (size {kb} is "
                                    f"different from {ka})"))
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    shape = batch + (sa[-2:-1] if len(sa) > 1 else ()) + (sb[-1:] if len(sb) > 1 else ())
    return fake_like(value, shape)


@register("dot", kind="matmul", ref=np.dot, lowering=Matmul(), layout="c")
def dot_meta(a, b):
    """np.dot(a, b)."""
    sa, sb = shape_of(a), shape_of(b)
    value = probe(np.dot, a, b)
    if len(sa) == 0 or len(sb) == 0:
        shape = broadcast_shapes(sa, sb)
    else:
        kdim = 0 if len(sb) == 1 else len(sb) - 2
        if not same_size(sa[-1], sb[kdim]):
            raise NumpyError(ValueError(f"shapes {fmt_shape(sa)} and {fmt_shape(sb)} not aligned: "
                                        f"{sa[-1]} (dim {len(sa) - 1}) != {sb[kdim]} (dim {kdim})"))
        shape = sa[:-1] + sb[:kdim] + sb[kdim + 1:]
    return fake_like(value, shape)
