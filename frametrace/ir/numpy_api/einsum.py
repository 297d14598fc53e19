"""np.einsum lowered to graph ops, so contractions fuse into one kernel with their neighbours.

The subscripts are parsed into one label per operand dim (`...` becomes spare letters,
right-aligned across operands as NumPy broadcasts them; the implicit output is the
ellipsis dims, then the labels seen once, in ASCII order) and lowered as NumPy's einsum
computes them (`optimize=False`: no BLAS, a sum of products per output element):

  one operand, no label summed   a view, as NumPy's einsum returns one: `transpose` for a
                                 permutation, NumPy's own writeable view (the opaque op
                                 `einsum_view`, aliasing its operand) for a diagonal `ii->i`
  otherwise                      each operand's diagonal (`einsum_view`), a transpose into one
                                 label order and size-1 dims for its missing labels; the
                                 broadcast product of all operands in the result dtype; `sum`
                                 (`any` for bool) over the summed labels; a transpose (view) into
                                 the output order. The LLVM backend fuses the product into the
                                 reduction: one loop nest, nothing materialised. The label order
                                 keeps the operands' last axes innermost (see `_fused`) where
                                 that gives NumPy's result layout, else it is NumPy's own;
                                 with three operands or more, where the chain of products
                                 would lay the result out otherwise than NumPy's one iterator,
                                 NumPy's einsum runs (opaque)
  two operands, large            `matmul` (BLAS for floats) on (batch, free-left, summed) x (batch,
                                 summed, free-right) reshapes, when the contraction has
                                 M * N * K >= MATMUL_MIN_WORK (M, N, K: the products of the
                                 free-left, free-right and summed sizes; decided with a guard
                                 where they are symbolic) and NumPy's result is C-ordered (so the
                                 matmul's layout is NumPy's); see benchmarks/bench_numpy_api.py

Values agree with NumPy's einsum up to the order of the additions (NumPy's inner loops are
unrolled; BLAS blocks); integer results are exact (they wrap in the result dtype, as NumPy's),
bool results are "any of the ands". `optimize=` is accepted: with one or two operands the
result is computed as above (NumPy's path choice only reorders the additions, except that it
may return a differently ordered layout: two operands with a truthy `optimize` stay NumPy's own
call); with more operands and a truthy `optimize`, and for dtypes without a native product
(float16, longdouble, object), NumPy's einsum runs as an opaque call inside the graph.
Bad subscripts raise NumPy's own error (NumPy checks them on size-1 stand-ins at trace time).
"""
from __future__ import annotations

import string
from collections import Counter
from dataclasses import dataclass
from functools import cmp_to_key

import numpy as np

from ...errors import NumpyError, Unsupported
from ..ops.opaque import register_opaque
from ..ops.promotion import shape_of
from ..ops.symbolic import is_static, prod, same_size, statically_known_true
from .common import as_array, as_dtype, is_array, unwrap_out, write_reduction_out
from .layout import keep_order, strides_of

_LETTERS = string.ascii_uppercase + string.ascii_lowercase    # NumPy's label set, ASCII order
_LOWERED_KINDS = "biuc"                                        # plus float32 / float64
# M*N*K from which a matmul beats the fused loop nest (benchmarks/bench_numpy_api.py; measured
# on batches of n x n products: BLAS wins from n = 8 for floats, our integer matmul loop nest
# (lower/matmul.py) only from about n = 32)
MATMUL_MIN_WORK = {"f": 8 ** 3, "c": 8 ** 3, "i": 32 ** 3, "u": 32 ** 3, "b": 32 ** 3}


@dataclass(frozen=True)
class Spec:
    """Parsed subscripts: one label per dim of each operand, and the output's labels."""
    terms: tuple            # tuple[tuple[str, ...], ...]
    out: tuple              # tuple[str, ...]

    def text(self) -> str:
        return ",".join("".join(t) for t in self.terms) + "->" + "".join(self.out)


def interleaved(args: tuple):
    """(subscripts, operands) of the interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    def term(sub):
        if not isinstance(sub, (list, tuple)):
            raise Unsupported("np.einsum: a sublist that is not a list", kind="call", context="np.einsum")
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < len(_LETTERS):
                out.append(string.ascii_letters[s])     # NumPy: 0-25 -> a-z, 26-51 -> A-Z
            else:
                raise NumpyError(ValueError("subscript is not within the valid range [0, 52)"))
        return "".join(out)
    operands, terms = args[0:len(args) - len(args) % 2:2], [term(s) for s in args[1::2]]
    subscripts = ",".join(terms[:len(operands)])
    if len(args) % 2:
        subscripts += "->" + term(args[-1])
    return subscripts, operands


def parse(subscripts: str, ndims) -> Spec:
    """Labels of valid subscripts (NumPy has checked them) for operands of ranks `ndims`."""
    s = subscripts.replace(" ", "")
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    spare = [c for c in _LETTERS if c not in s]
    n_ell = max([nd - len(t) + 3 for t, nd in zip(terms, ndims, strict=True) if "..." in t], default=0)
    if n_ell > len(spare):
        raise Unsupported("np.einsum: too many labels", kind="call", context="np.einsum")
    ell = tuple(spare[:n_ell])

    def expand(t, nd):
        if "..." not in t:
            return tuple(t)
        pre, _, post = t.partition("...")
        k = nd - len(pre) - len(post)
        return tuple(pre) + ell[n_ell - k:] + tuple(post)
    labels = tuple(expand(t, nd) for t, nd in zip(terms, ndims, strict=True))
    if arrow:
        out_labels = expand(out, len(out) - 3 + n_ell) if "..." in out else tuple(out)
    else:
        counts = Counter(c for t in terms for c in t if c != ".")
        out_labels = ell + tuple(sorted(c for c, n in counts.items() if n == 1))
    return Spec(labels, out_labels)


def check_subscripts(subscripts: str, metas) -> None:
    """NumPy's own error for bad subscripts: its einsum on size-1 stand-ins (they broadcast
    against anything, so only the subscripts themselves can be wrong)."""
    try:
        np.einsum(subscripts, *[np.zeros((1,) * len(shape_of(m)), getattr(m, "dtype", None))
                                for m in metas])
    except (ValueError, TypeError) as e:
        raise NumpyError(e) from None


def label_sizes(spec: Spec, shapes) -> dict:
    """label -> size: equal within an operand (a diagonal), broadcast (equal or 1) across."""
    sizes = {}
    for k, (term, shape) in enumerate(zip(spec.terms, shapes, strict=True)):
        own = {}
        for c, d in zip(term, shape, strict=True):
            if c in own and not same_size(own[c], d):
                raise NumpyError(ValueError(f"dimensions in operand {k} for collapsing index "
                                            f"'{c}' don't match ({own[c]} != {d})"))
            own.setdefault(c, d)
        for c, d in own.items():
            if c not in sizes or (is_static(sizes[c]) and sizes[c] == 1):
                sizes[c] = d
            elif not (is_static(d) and d == 1) and not same_size(sizes[c], d):
                raise NumpyError(ValueError(
                    "operands could not be broadcast together with remapped shapes "
                    f"[original->remapped]: label '{c}' has sizes {sizes[c]} and {d}"))
    return sizes


def _einsum_shape(*operands, subscripts, optimize=False):
    metas = list(operands)
    check_subscripts(subscripts, metas)
    spec = parse(subscripts, [len(shape_of(m)) for m in metas])
    sizes = label_sizes(spec, [shape_of(m) for m in metas])
    return tuple(sizes[c] for c in spec.out)


def _einsum_view_shape(x, *, subscripts):
    return _einsum_shape(x, subscripts=subscripts)


register_opaque("einsum", lambda *ops, subscripts, optimize=False: np.einsum(subscripts, *ops, optimize=optimize),
                _einsum_shape, doc="np.einsum (an opaque NumPy call: several operands with optimize=, "
                                   "dtypes without a native product)")
register_opaque("einsum_view", lambda x, subscripts: np.einsum(subscripts, x), _einsum_view_shape,
                aliases=True, doc="np.einsum of one operand taking a diagonal: NumPy's writeable view")


# ---- lowering -------------------------------------------------------------------------------

def _diagonal(b, x, term):
    """x with repeated labels collapsed (NumPy's view), labels in order of first appearance."""
    uniq = tuple(dict.fromkeys(term))
    if len(uniq) == len(term):
        return x, term
    return b.emit("einsum_view", x, subscripts="".join(term) + "->" + "".join(uniq)), uniq


def _aligned(b, x, term, full):
    """x transposed into the order of `full` with size-1 dims for the labels it lacks."""
    order = tuple(sorted(range(len(term)), key=lambda d: full.index(term[d])))
    if order != tuple(range(len(term))):
        x = b.emit("transpose", x, axes=order)
    present = {term[d] for d in order}
    missing = tuple(i for i, c in enumerate(full) if c not in present)
    return b.emit("expand_dims", x, axis=missing) if missing else x


def _reduce(b, x, axes, dtype):
    if axes is not None and not axes:
        return x if x.dtype == dtype else b.emit("astype", x, dtype=dtype)
    if dtype == np.bool_:
        return b.emit("any", x, axis=axes, keepdims=False)
    with b.in_own_order("einsum"):             # NumPy's einsum adds in its own order, not sum's
        return b.emit("sum", x, axis=axes, keepdims=False, dtype=dtype)


def _fused(b, spec: Spec, xs, dtype):
    """The broadcast product over all labels, summed over the labels not in the output, then
    transposed (a view) into the output order. The label order keeps the inner loop on the
    operands' last axes (unit-stride for C-ordered operands): the output labels then the summed
    ones when every operand's last axis is summed (dot products: `ij,ij->i`, `bhqd,bhkd->bhqk`),
    else the order of first appearance (`ij->j` stays a column sum, `ij,jk->ik` runs i-j-k)."""
    terms = [_diagonal(b, x, term) for x, term in zip(xs, spec.terms, strict=True)]
    summed = tuple(dict.fromkeys(c for _, t in terms for c in t if c not in spec.out))
    full = spec.out + summed                 # NumPy's iterator order (its layout ties)
    views = [_aligned(b, x, term, full) for x, term in terms]
    natural = tuple(dict.fromkeys(c for _, t in terms for c in t))
    if summed and natural != full and not all(t[-1] in summed for _, t in terms if t):
        nviews = [_aligned(b, x, term, natural) for x, term in terms]
        if _out_order(b, nviews, natural, spec.out, dtype) == _out_order(b, views, full, spec.out, dtype) != ():
            full, views = natural, nviews    # the same result layout as NumPy's
    prod_ = views[0]
    if len(views) == 1 and prod_.dtype != dtype:
        prod_ = b.emit("astype", prod_, dtype=dtype)
    for v in views[1:]:
        prod_ = b.emit("multiply", prod_, v)
    if not spec.out:
        return _reduce(b, prod_, None, dtype)        # all axes: a NumPy scalar
    kept = tuple(c for c in full if c in spec.out)
    r = _reduce(b, prod_, tuple(i for i, c in enumerate(full) if c not in spec.out), dtype)
    order = tuple(kept.index(c) for c in spec.out)
    r = r if order == tuple(range(len(order))) else b.emit("transpose", r, axes=order)
    if len(views) > 2:
        # NumPy iterates all operands at once; a chain of products can break the layout's
        # ties differently ((c, a) * (a, c)-ordered operands): None, NumPy's own call then
        np_full = spec.out + summed
        np_views = [_aligned(b, x, term, np_full) for x, term in terms]
        if _out_order(b, np_views, np_full, spec.out, dtype) != _result_order(b, r, spec.out):
            return None
    return r


def _result_order(b, r, out):
    """The labels of `r` (an array with labels `out`) from its fastest to its slowest axis."""
    st = strides_of(b, r)
    if st is None:
        return None
    real = [c for c, d in zip(out, r.shape) if not (is_static(d) and d == 1)]
    s = {c: st[out.index(c)] for c in real}
    return tuple(sorted(real, key=cmp_to_key(lambda p, q: -1 if bool(s[p] < s[q]) else 1)))


def _out_order(b, views, full, out, dtype):
    """The output labels from the fastest to the slowest axis of a result allocated in "K"
    order over the product of `views` (labels `full`); () when the layout is not known."""
    shape = tuple(v for v in _broadcast_dims(views))
    strides = keep_order(b, [v.node for v in views], shape, dtype.itemsize)
    if strides is None:
        return ()
    real = [c for c in out if not (is_static(shape[full.index(c)]) and shape[full.index(c)] == 1)]
    st = {c: strides[full.index(c)] for c in real}
    # dense strides: each is the previous one times a size >= 2, so these are never close calls
    return tuple(sorted(real, key=cmp_to_key(lambda p, q: -1 if bool(st[p] < st[q]) else 1)))


def _broadcast_dims(views):
    for dims in zip(*[v.shape for v in views], strict=True):
        yield next((d for d in dims if not (is_static(d) and d == 1)), 1)


def _groups(spec: Spec):
    """(batch, left, right, summed) labels of a two-operand contraction, or None when a label
    is private to one operand and summed, or an operand repeats a label."""
    (ta, tb), out = spec.terms, spec.out
    if len(set(ta)) != len(ta) or len(set(tb)) != len(tb):
        return None
    if any(c not in out and c not in tb for c in ta) or any(c not in out and c not in ta for c in tb):
        return None
    batch = tuple(c for c in out if c in ta and c in tb)
    left = tuple(c for c in out if c in ta and c not in tb)
    right = tuple(c for c in out if c in tb and c not in ta)
    summed = tuple(c for c in ta if c not in out)
    return batch, left, right, summed


def _is_large(work, kind: str) -> bool:
    """The size rule: a guard on the symbolic work where it is not static."""
    if is_static(work):
        return work >= MATMUL_MIN_WORK[kind]
    try:
        return bool(work >= MATMUL_MIN_WORK[kind])
    except Unsupported:                 # an unbacked size: no hint to decide on
        return False


def _numpy_order_is_c(b, spec: Spec, xs, sizes, itemsize) -> bool:
    """Whether NumPy's einsum allocates a C-ordered result: its iterator runs over the output
    labels, then the summed ones, in "K" order; the output follows that order."""
    summed = tuple(dict.fromkeys(c for t in spec.terms for c in t if c not in spec.out))
    full = spec.out + summed
    views = [_aligned(b, x, term, full) for x, term in zip(xs, spec.terms, strict=True)]
    shape = tuple(sizes[c] for c in full)
    strides = keep_order(b, [v.node for v in views], shape, itemsize)
    if strides is None:
        return False
    n = len(spec.out)
    out = [(s, d) for s, d in zip(strides[:n], shape[:n]) if not (is_static(d) and d == 1)]
    return all(statically_known_true(a[0] > c[0]) or bool(a[0] > c[0]) for a, c in zip(out, out[1:]))


def _matmul(b, spec: Spec, xs, sizes, dtype):
    """The contraction as one (batched) matmul; None where the rule says the fused loop."""
    g = _groups(spec)
    if g is None:
        return None
    batch, left, right, summed = g
    if not summed or not (left or right):       # batched dot products: the fused loop
        return None
    (ta, tb), (a, bb) = spec.terms, xs
    for c in summed:                    # a size-1 summed dim broadcasts in einsum, not in matmul
        da, db = a.shape[ta.index(c)], bb.shape[tb.index(c)]
        if not (da is db or statically_known_true(da == db)):
            return None
    m, n, k = (prod([sizes[c] for c in grp]) for grp in (left, right, summed))
    if spec.out != batch + left + right or not _is_large(m * n * k, dtype.kind):
        return None
    if not _numpy_order_is_c(b, spec, xs, sizes, dtype.itemsize):
        return None

    def arrange(x, term, first, second):
        order = tuple(term.index(c) for c in batch + first + second)
        if order != tuple(range(len(term))):
            x = b.emit("transpose", x, axes=order)
        shp = tuple(x.shape[:len(batch)]) + (prod([sizes[c] for c in first]), prod([sizes[c] for c in second]))
        return b.emit("reshape", x, shape=shp) if len(first) != 1 or len(second) != 1 else x
    if a.dtype != dtype:
        a = b.emit("astype", a, dtype=dtype)
    if bb.dtype != dtype:
        bb = b.emit("astype", bb, dtype=dtype)
    r = b.emit("matmul", arrange(a, ta, left, summed), arrange(bb, tb, summed, right))
    shape = tuple(r.shape[:len(batch)]) + tuple(sizes[c] for c in left + right)
    return b.emit("reshape", r, shape=shape) if len(left) != 1 or len(right) != 1 else r


def lower(b, spec: Spec, xs, dtype, sizes):
    """The einsum of arrays `xs` (Proxies) as graph ops (module doc)."""
    if _is_view(spec):
        x, term = xs[0], spec.terms[0]
        if len(set(term)) == len(term):
            return b.emit("transpose", x, axes=tuple(term.index(c) for c in spec.out))
        return b.emit("einsum_view", x, subscripts=spec.text())
    mm = _matmul(b, spec, xs, sizes, dtype) if len(xs) == 2 else None
    if mm is not None:
        return mm
    r = _fused(b, spec, xs, dtype)
    return b.emit("einsum", *xs, subscripts=spec.text()) if r is None else r


def _is_view(spec: Spec) -> bool:
    """One operand and no label summed: NumPy returns a view of it."""
    return len(spec.terms) == 1 and bool(spec.out) and set(spec.out) == set(spec.terms[0])


def _cast_operands(b, xs, dtype, casting, is_view):
    """einsum(..., dtype=dt): the operands cast to dt under `casting` (NumPy's iterator)."""
    if is_view:                  # NumPy returns the view and ignores dtype= there
        raise Unsupported("np.einsum(dtype=) of a view", kind="call", context="np.einsum")
    for k, x in enumerate(xs):
        if not np.can_cast(x.dtype, dtype, casting):
            raise NumpyError(TypeError(f"Iterator operand {k} dtype could not be cast from dtype('{x.dtype}') "
                                       f"to dtype('{dtype}') according to the rule '{casting}'"))
    return [x if x.dtype == dtype else b.emit("astype", x, dtype=dtype) for x in xs]


def einsum_impl(b, *args, out=None, optimize=False, dtype=None, casting="safe", order="K", **kwargs):
    """np.einsum(subscripts, *operands, out=None, optimize=False, dtype=None, casting="safe")
    (module doc); order= other than "K" is not traced (it changes the result's layout)."""
    if not args:
        raise NumpyError(TypeError("einsum() missing required argument 'subscripts' (pos 0)"))
    if kwargs or order != "K" or casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise Unsupported(f"np.einsum with {sorted(kwargs) or 'order=' if order != 'K' else 'casting='}",
                          kind="call", context="np.einsum", hints=("leave order= at 'K'",))
    if isinstance(args[0], str):
        subscripts, operands = args[0], args[1:]
    else:
        subscripts, operands = interleaved(args)
    if not isinstance(optimize, (bool, str)):
        raise Unsupported("np.einsum with an explicit optimize= path", kind="call", context="np.einsum")
    xs = [as_array(b, x, "np.einsum") for x in operands]
    check_subscripts(subscripts, [x.fake for x in xs])
    spec = parse(subscripts, [x.ndim for x in xs])
    sizes = label_sizes(spec, [tuple(x.shape) for x in xs])
    if dtype is not None:
        xs = _cast_operands(b, xs, as_dtype(dtype, "np.einsum"), casting, _is_view(spec))
    dtype = np.result_type(*[x.dtype for x in xs])
    lowered = dtype.kind in _LOWERED_KINDS or dtype in (np.float32, np.float64)
    if not lowered or (optimize and len(xs) > 1):
        attrs = {"subscripts": spec.text()} | ({"optimize": optimize} if optimize else {})
        result = b.emit("einsum", *xs, **attrs)
    else:
        result = lower(b, spec, xs, dtype, sizes)
    out = unwrap_out(out, "np.einsum")
    if out is None:
        return result
    if not is_array(out) or out.dtype != dtype:
        raise Unsupported("np.einsum with out= of another dtype than the result", kind="call",
                          context="np.einsum", hints=("cast the result instead",))
    if _is_view(spec):
        result = b.emit("copy", result)         # a view of an operand: copied, as NumPy does
    return write_reduction_out(b, "np.einsum", result, out)


FUNCTIONS = {np.einsum: einsum_impl}
