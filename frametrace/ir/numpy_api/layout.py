"""Memory layout as NumPy eager has it: byte strides of a traced value, for the few calls
whose result depends on it (`x.ravel()` is a view only of a C-contiguous array; `reshape`
is a view only when NumPy can compute strides for it).

`strides_of(b, x)` derives the strides NumPy eager would give the value from the graph that
made it: graph inputs ask `b.input_layout(node, shape)` (set by the tracer; it guards the input's
layout class lazily, so only frames that ravel or reshape pay for layout guards); views
transform their operand's strides; new arrays follow NumPy's allocation order (C for
creation/matmul, "K" (keep the operands' order) for ufuncs, astype, np.copy, reductions and
scans). The result is None when the layout is not known at trace time (a size whose value
is data-dependent, an allocation order not modelled): callers then decide at run time or
break the graph. Sizes and strides are ints or SymInts, so every decision is a guard.
"""
from __future__ import annotations

import sympy

from ...errors import Unsupported
from ..graph import IndexSlice, Node
from ..ops.symbolic import statically_known_true
from ..registry import get_op, ops_where

# ops that always allocate a C-ordered result, and reductions keeping their operand's order
# over the kept axes: each op's `layout` in the registry
_C_ORDER = ops_where(lambda op: op.layout == "c")
_KEEP_ORDER_REDUCTIONS = ops_where(lambda op: op.layout == "keep")
# a question about sizes the trace cannot answer (Unsupported: data-dependent), or a graph
# form this model does not cover: the layout is "not known", never a guess
_UNDECIDED = (Unsupported, ArithmeticError, TypeError, ValueError, IndexError, KeyError)


def _node(x):
    return getattr(x, "node", x)


def _size(b, e):
    """A graph size (int or sympy expr) as an int or SymInt, so comparisons become guards.
    A builder with `size_of` answers itself (the LLVM wrapper's run-time layouts: traced ints)."""
    if isinstance(e, int):
        return e
    size_of = getattr(b, "size_of", None)
    if size_of is not None:
        return size_of(e)
    e = sympy.sympify(e)
    if e.is_Integer:
        return int(e)
    env = getattr(b, "shape_env", None)
    if env is None:
        raise Unsupported("a symbolic size without a ShapeEnv", kind="layout")
    from ...shapes.symint import wrap
    return wrap(e, "int", env)


def _is(cond) -> bool:
    """Decide a size condition (a guard when not statically known)."""
    return bool(cond)


def _known_equal(a, b) -> bool:
    return (a == b) if isinstance(a, int) and isinstance(b, int) else statically_known_true(a == b)


def c_strides(shape, itemsize) -> tuple:
    out, sd = [], itemsize
    for d in reversed(shape):
        out.append(sd)
        sd = sd * d
    return tuple(reversed(out))


def f_strides(shape, itemsize) -> tuple:
    out, sd = [], itemsize
    for d in shape:
        out.append(sd)
        sd = sd * d
    return tuple(out)


def stride_formula(shape, strides, itemsize):
    """The strides of an array (concrete `shape`, `strides`) as functions of its sizes, or None:
    ((coef, dims), ...) with strides[d] == coef * prod(shape[j] for j in dims). Dims taken in
    order of |stride|, each stride is a whole multiple (the step, with its sign) of the span
    of the dims inside it: with s the itemsize, `x[::-1, ::-1]` of a C array has strides
    (-s*shape[1], -s), `x[::2]` (2*s*shape[1], s), `x[:, ::2]` (2*s*shape[1], 2*s) (which
    holds while x's rows have an even length). Size-1 and stride-0 dims keep their exact stride.
    None when no such formula holds (dims overlap, or a gap that is no multiple of a span)."""
    inner, span, unit, out = [], itemsize, itemsize, [None] * len(shape)
    for d in sorted(range(len(shape)), key=lambda d: abs(strides[d])):
        n, st = shape[d], strides[d]      # span == unit * prod(shape[j] for j in inner)
        if n <= 1 or st == 0:
            out[d] = (st, ())
            continue
        if abs(st) < span or abs(st) % span:
            return None
        step = abs(st) // span
        out[d] = ((1 if st > 0 else -1) * step * unit, tuple(inner))
        inner.append(d)
        unit, span = unit * step, abs(st) * n
    return tuple(out)


def _contiguous(shape, strides, itemsize, order="C") -> bool:
    """NumPy's C_CONTIGUOUS (or F_CONTIGUOUS) flag: strides dense in that order, ignoring
    dims of size 1; an array with no element is contiguous."""
    dims = list(zip(shape, strides))
    if order == "C":
        dims.reverse()
    sd, ok = itemsize, True
    for d, s in dims:
        if not _known_equal(s, sd) and not _is(d == 1) and not _is(s == sd):
            ok = False
        sd = sd * d
    return ok or any(_is(d == 0) for d in shape)


def strides_of(b, x):
    """Byte strides NumPy eager gives value x (a Proxy or Node), or None if not known."""
    node = _node(x)
    cache = b.__dict__.setdefault("_layout_cache", {})
    if node not in cache:
        try:
            cache[node] = _strides(b, node)
        except _UNDECIDED:                      # e.g. a data-dependent size: not known here
            cache[node] = None
    return cache[node]


def is_c_contiguous(b, x):
    """True / False as NumPy's C_CONTIGUOUS flag of x, or None when x's layout is not known."""
    node = _node(x)
    st = strides_of(b, node)
    if st is None:
        return None
    try:
        return _contiguous([_size(b, d) for d in node.shape], st, node.dtype.itemsize)
    except _UNDECIDED:
        return None


def is_contiguous(b, x, order: str):
    """True / False as NumPy's C_CONTIGUOUS ("C") or F_CONTIGUOUS ("F") flag of x, or None when
    x's layout is not known."""
    node = _node(x)
    st = strides_of(b, node)
    if st is None:
        return None
    try:
        return _contiguous([_size(b, d) for d in node.shape], st, node.dtype.itemsize, order)
    except _UNDECIDED:
        return None


def always_c_order(node: Node) -> bool:
    """NumPy allocates node's value in C order whatever its operands' layouts: a C-order op,
    a value of at most one dim, or `x[idx]` (take) with a 1-d index on an x of at most 2 dims
    (the index's dims are laid out as the index is, outermost; x's remaining axis innermost)."""
    if node.op in _C_ORDER or node.ndim <= 1:
        return True
    if node.op != "take":
        return False
    x, idx = node.args[:2]
    return isinstance(x, Node) and isinstance(idx, Node) and x.ndim <= 2 and idx.ndim <= 1


def _strides(b, node: Node):
    shape = [_size(b, d) for d in node.shape]
    itemsize = node.dtype.itemsize
    if node.ndim == 0:
        return ()
    if node.op == "input":
        provider = getattr(b, "input_layout", None)
        return None if provider is None else provider(node, shape)
    op, kind = node.op, get_op(node.op).kind
    args = [a for a in node.args if isinstance(a, Node)]
    if kind == "view":
        return _view_strides(b, node, shape, itemsize)
    if op == "einsum_view":                    # np.einsum's diagonal view: a label's strides add up
        return _einsum_view_strides(b, node)
    if always_c_order(node):
        return c_strides(shape, itemsize)
    if op == "argwhere":                       # NumPy stacks the nonzero indices: F order
        return f_strides(shape, itemsize)
    if op == "copy":
        order = node.attr("order", "K")
        if order == "C":
            return c_strides(shape, itemsize)
        if order == "A":
            xs = strides_of(b, args[0])
            if xs is None:
                return None
            xshape = [_size(b, d) for d in args[0].shape]
            f = _contiguous(xshape, xs, args[0].dtype.itemsize, "F")
            return (f_strides if f else c_strides)(shape, itemsize)
        return keep_order(b, [args[0]], shape, itemsize)
    if kind == "elementwise":
        return keep_order(b, args, shape, itemsize)
    if op in _KEEP_ORDER_REDUCTIONS:
        return _reduction(b, node, shape, itemsize)
    if kind == "scan":                         # axis given (axis None is 1-d)
        return keep_order(b, [args[0]], shape, itemsize)
    if op == "concatenate":
        return _concatenate_strides(b, args, shape, itemsize)
    if op == "take" and args[0].ndim == 1:     # `x[idx]` of a 1-d x: laid out as the index is
        return keep_order(b, [args[1]], shape, itemsize)
    if op == "stack":                          # np.stack: concatenate of the operands, each
        return _stack_strides(b, args, node.attr("axis"), shape, itemsize)   # with a new axis
    # C when the operands are C-contiguous (a mask or a 1-d index does not matter); other
    # orders (NumPy keeps the operand's order for the trailing axes) are not modelled
    if op in ("mask_select", "take") and is_c_contiguous(b, args[0]) and (op == "mask_select" or args[1].ndim <= 1):
        return c_strides(shape, itemsize)
    return None


def _view_strides(b, node, shape, itemsize):
    x = node.args[0]
    if node.scalar:                            # a NumPy scalar, not a view
        return ()
    if not isinstance(x, Node):
        return None
    xs = strides_of(b, x)
    if xs is None:
        return None
    xshape = [_size(b, d) for d in x.shape]
    a = node.kwargs
    if node.op == "transpose":
        return tuple(xs[i] for i in a["axes"])
    if node.op == "expand_dims":
        it = iter(xs)
        return tuple(0 if i in a["axis"] else next(it) for i in range(node.ndim))
    if node.op == "squeeze":
        return tuple(s for i, s in enumerate(xs) if i not in a["axis"])
    if node.op == "broadcast_to":
        off = node.ndim - len(xs)
        return (0,) * off + tuple(0 if _is(d == 1) and not _is(t == 1) else s
                                  for d, s, t in zip(xshape, xs, shape[off:]))
    if node.op == "getitem":
        out, k = [], 0
        for e in a["index"]:
            if e is None:
                out.append(0)
            elif isinstance(e, IndexSlice):
                out.append(xs[k] * (1 if e.step is None else _size(b, e.step)))
                k += 1
            else:
                k += 1
        return tuple(out) + tuple(xs[k:])
    if node.op == "reshape":
        return reshape_strides(xshape, xs, shape, itemsize) or c_strides(shape, itemsize)
    return None


def _einsum_view_strides(b, node):
    xs = strides_of(b, node.args[0])
    if xs is None:
        return None
    term, out = node.attr("subscripts").split("->")
    return tuple(sum(s for c, s in zip(term, xs) if c == label) for label in out)


def _reduction(b, node, shape, itemsize):
    x = node.args[0]
    xs = strides_of(b, x)
    if xs is None:
        return None
    axis = node.attr("axis")
    axes = range(x.ndim) if axis is None else axis
    keep = node.attr("keepdims", False)
    # allocated in the order of the operand's remaining axes (kept axes: size 1)
    rest = tuple(0 if i in axes else s for i, s in enumerate(xs) if keep or i not in axes)
    return _keep(b, [(shape, rest, itemsize)], shape, itemsize)


def keep_order(b, operands, shape, itemsize):
    """Strides of a new array NumPy allocates in "K" order for `operands` (Nodes) broadcast
    to `shape` (ufuncs, astype, np.copy, scans, concatenate)."""
    layouts = []
    for a in operands:
        if a.ndim == 0:
            continue                           # 0-d operands have no axes to follow
        st = strides_of(b, a)
        if st is None:
            return None
        layouts.append(([_size(b, d) for d in a.shape], st, a.dtype.itemsize))
    return _keep(b, layouts, shape, itemsize)


def _keep(b, layouts, shape, itemsize):
    if sum(1 for d in shape if not _is(d == 1)) <= 1:
        return c_strides(shape, itemsize)      # at most one real axis: C and F alike
    if all(_contiguous(*lay) for lay in layouts):
        return c_strides(shape, itemsize)
    # F order only when nothing broadcasts: a size-1 dim stretched to n is a stride-0 axis
    # NumPy's iterator sorts by the others ((2,1,1) * (1,4,3) F-views give no F result)
    if all(_contiguous(*lay, "F") and _same_shape(lay[0], shape) for lay in layouts):
        return f_strides(shape, itemsize)
    per_op = []
    for ashape, st, _ in layouts:
        # NumPy's iterator gives a dim of size 1 (broadcast or not) stride 0
        per_op.append((0,) * (len(shape) - len(st)) + tuple(0 if _is(d == 1) else s for d, s in zip(ashape, st)))
    return _keep_order_strides(per_op, shape, itemsize)


def _same_shape(ashape, shape) -> bool:
    return len(ashape) == len(shape) and all(_known_equal(a, d) or _is(a == d) for a, d in zip(ashape, shape))


def _keep_order_strides(per_op, shape, itemsize):
    """NumPy's npyiter_find_best_axis_ordering (an insertion sort of the axes, fastest
    first, that follows the operands' |strides| and keeps C order where they are ambiguous),
    then a dense allocation in that order with positive strides."""
    ndim = len(shape)
    perm = _sort_axes(list(range(ndim))[::-1], lambda j0, j1: (
        _is(abs(st[j1]) <= abs(st[j0])) for st in per_op if not _is(st[j0] == 0) and not _is(st[j1] == 0)))
    out, sd = [0] * ndim, itemsize
    for ax in perm:
        out[ax] = sd
        sd = sd * shape[ax]
    return tuple(out)


def _sort_axes(perm: list, votes) -> list:
    """The insertion sort of axes NumPy's two layout rules share (the iterator's and
    concatenate's): `votes(j0, j1)` yields, for each operand that has a say on the pair, whether
    axis j0 stays after j1 (True) or moves before it; the first operand with a say decides a
    swap, any later one voting to stay cancels it, and an axis stops at the first pair decided."""
    for i0 in range(1, len(perm)):
        ipos, j0 = i0, perm[i0]
        for i1 in range(i0 - 1, -1, -1):
            ambig, swap = True, False
            for stay in votes(j0, perm[i1]):
                if stay:
                    swap = False
                elif ambig:
                    swap = True
                ambig = False
            if not ambig:
                if not swap:
                    break
                ipos = i1
        if ipos != i0:
            perm.insert(ipos, perm.pop(i0))
    return perm


def _concatenate_strides(b, operands, shape, itemsize):
    """np.concatenate's layout (PyArray_CreateMultiSortedStridePerm), not the iterator's: an
    insertion sort of the axes, slowest first, by the operands' |strides|, where an operand
    with size 1 on either axis has no say (np.stack's new axis: `np.stack([a, b], axis=1)`
    of F-ordered (3, 4) operands has strides (16, 8, 48), the iterator's order (8, 96, 24))."""
    layouts = []
    for a in operands:
        st = strides_of(b, a)
        if st is None:
            return None
        layouts.append(([_size(b, d) for d in a.shape], st))
    return _multi_sorted_strides(layouts, shape, itemsize)


def _stack_strides(b, operands, axis, shape, itemsize):
    """np.stack's layout: concatenate's (below) of the operands seen with a new axis of length
    1 at `axis`, which has no say in the order (`np.mgrid[0:n, 0:m]`'s broadcast rows: C)."""
    layouts = []
    for a in operands:
        st = strides_of(b, a)
        if st is None:
            return None
        ashape = [_size(b, d) for d in a.shape]
        layouts.append((ashape[:axis] + [1] + ashape[axis:], tuple(st[:axis]) + (0,) + tuple(st[axis:])))
    return _multi_sorted_strides(layouts, shape, itemsize)


def _multi_sorted_strides(layouts, shape, itemsize):
    ndim = len(shape)
    perm = _sort_axes(list(range(ndim)), lambda j0, j1: (
        _is(abs(st[j0]) <= abs(st[j1])) for ashape, st in layouts
        if not _is(ashape[j0] == 1) and not _is(ashape[j1] == 1)))
    out, sd = [0] * ndim, itemsize
    for ax in reversed(perm):
        out[ax] = sd
        sd = sd * shape[ax]
    return tuple(out)


def reshape_strides(shape, strides, newshape, itemsize):
    """Strides of `reshape(newshape)` as a view, or None when NumPy must copy
    (PyArray_Newshape and _attempt_nocopy_reshape, C order)."""
    if len(shape) == len(newshape) and all(_known_equal(a, c) or _is(a == c) for a, c in zip(shape, newshape)):
        return tuple(strides)
    total = 1
    for d in shape:
        total = total * d
    if _is(total <= 1) or _contiguous(shape, strides, itemsize):
        return c_strides(newshape, itemsize)
    old = [(d, s) for d, s in zip(shape, strides) if not _is(d == 1)]
    olddims = [d for d, _ in old]
    oldstrides = [s for _, s in old]
    newstrides = [None] * len(newshape)
    oi, oj, ni, nj = 0, 1, 0, 1
    try:
        while ni < len(newshape) and oi < len(olddims):
            np_, op = newshape[ni], olddims[oi]
            while _is(np_ != op):
                if _is(np_ < op):              # trailing 1s of the new shape come later
                    np_ = np_ * newshape[nj]
                    nj += 1
                else:
                    op = op * olddims[oj]
                    oj += 1
            for ok in range(oi, oj - 1):       # can the old axes be combined?
                if not _is(oldstrides[ok] == olddims[ok + 1] * oldstrides[ok + 1]):
                    return None
            newstrides[nj - 1] = oldstrides[oj - 1]
            for nk in range(nj - 1, ni, -1):
                newstrides[nk - 1] = newstrides[nk] * newshape[nk]
            ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    except IndexError:
        raise Unsupported("reshape sizes not decidable at trace time", kind="layout") from None
    last = newstrides[ni - 1] if ni >= 1 else itemsize
    for nk in range(ni, len(newshape)):
        newstrides[nk] = last
    return tuple(newstrides)


def reshape_is_view(b, x, newshape):
    """True if NumPy's reshape of x to newshape is a view, False if a copy, None if unknown."""
    node = _node(x)
    st = strides_of(b, node)
    if st is None:
        return None
    try:
        shape = [_size(b, d) for d in node.shape]
        return reshape_strides(shape, st, list(newshape), node.dtype.itemsize) is not None
    except _UNDECIDED:
        return None
