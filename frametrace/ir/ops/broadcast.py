"""Broadcasting rules on symbolic shapes (NumPy's, deciding size equalities with guards).

Two sizes a, b broadcast to: a if a == b, b if a == 1, a if b == 1, else NumPy raises
ValueError. Equality is asked first (one guard, Eq or Ne, where it is not statically known),
then "== 1" size-obliviously (a dynamic size counts as >= 2: no 0/1 specialisation). A static
1 on either side is taken first, so an unbacked size broadcasts against 1 without a guard.
Sound: a result is only returned when the sizes are equal or one side is 1.
"""
from __future__ import annotations

from ...errors import NumpyError
from .symbolic import fmt_shape, guard_size_oblivious, is_static, same_size, statically_known_true


def _dim(a, b):
    """The broadcast of two sizes, or None when they do not broadcast."""
    if a is b or statically_known_true(a == b):
        return a
    if is_static(b) and b == 1:            # the common `x + row` cases: no question to ask
        return a
    if is_static(a) and a == 1:
        return b
    if same_size(a, b):                    # one guard (Eq or Ne); covers a == b == 1 too
        return a
    if guard_size_oblivious(a == 1):
        return b
    if guard_size_oblivious(b == 1):
        return a
    return None


def _fits(s, d) -> bool:
    """Size s broadcasts one-way to size d: equal, or s == 1."""
    if s is d or statically_known_true(s == d) or (is_static(s) and s == 1):
        return True
    return same_size(s, d) or guard_size_oblivious(s == 1)


def broadcast_shapes(*shapes) -> tuple:
    """np.broadcast_shapes on int/SymInt shapes; NumpyError(ValueError) on a mismatch."""
    if not shapes:
        return ()
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        off = ndim - len(s)
        for i, d in enumerate(s):
            r = _dim(out[off + i], d)
            if r is None:
                shown = " ".join(fmt_shape(x) for x in shapes)
                raise NumpyError(ValueError(
                    f"operands could not be broadcast together with shapes {shown} "))
            out[off + i] = r
    return tuple(out)


def check_broadcast_to(src, dst, *, strip_leading_ones: bool = False, what: str = "") -> None:
    """Check that shape `src` broadcasts one-way to exactly `dst` (as np.broadcast_to does).

    `strip_leading_ones`: assignment (`dst[...] = src`) also accepts extra leading size-1
    dims of src, e.g. a (1, 3) value into a (3,) slot.
    """
    orig = src = tuple(src)
    dst = tuple(dst)
    extra = len(src) - len(dst)
    ok = True
    if extra > 0:
        ok = strip_leading_ones and all(same_size(d, 1) for d in src[:extra])
        src = src[extra:]
    if ok:
        off = len(dst) - len(src)
        ok = all(_fits(s, d) for s, d in zip(src, dst[off:], strict=True))
    if not ok:
        if strip_leading_ones:
            msg = f"could not broadcast input array from shape {fmt_shape(orig)} into shape {fmt_shape(dst)}"
        else:
            msg = (f"{what or 'operands could not be broadcast together'}: shape "
                   f"{fmt_shape(orig)} does not broadcast to {fmt_shape(dst)}")
        raise NumpyError(ValueError(msg))
