"""One registry of NumPy ops: each op's meta rule (shape, dtype) and NumPy reference, side by side.

An op is registered once:

    @register("add", kind="elementwise", ufunc=np.add, lowering=Loop("fiub"))
    def add_meta(a, b): ...                  # FakeArray / scalars in -> FakeArray out

    (the NumPy reference defaults to the ufunc; pass `ref=` otherwise)

Beside its meta rule and reference, an op states how the backends treat it (`OpDef`):
`lowering` (one of the records below: a loop body, a reduction or scan descriptor, a view, a
gather / scatter, a creation, a matmul, or an explicit NumPy call in the wrapper), `cost`
("cheap" or "expensive": calls the vectorised math library), `layout` (the memory order
of its result where an op-specific rule applies: "c" always C-ordered, "keep" a reduction
keeping its operand's order over the kept axes; ir/numpy_api/layout.py) and `fp_errors`
(which floating-point error kinds its loop may report: FP_ERRORS). Every
name table of the lowering and code generator (`lower.pointwise.LOOP_OPS`,
`lower.peephole.EXPENSIVE`, `lower.classify.REDUCTIONS`, ...) is a query of this registry.

Adding a NumPy function: register it once, in the `ir/ops` (or `ir/numpy_api`) module of its
family, with its meta rule, its NumPy reference and its lowering side by side; bind it to the
NumPy callable in `ir/numpy_api`. A function NumPy should simply run is `register_opaque`
(ops/opaque.py: a shape rule and the function); an elementwise op with a native loop states
`Loop(kinds)` and gets a rule named after it in `codegen/llvm_kernels/ops.py` for each kind; a
reduction states its `Reduction` descriptor (combiner, identity, read-modify-write combiner,
parameters). tests/ir/test_ir_catalog.py fails for an op with no lowering declared.

Meta rules are written as ordinary Python over shapes whose entries are `int` or
`frametrace.shapes.SymInt`; comparisons of sizes go through the ShapeEnv (and become guards)
without the rule knowing. Backends use `OpDef.kind` to schedule and `OpDef.ref` as the
reference (and fallback) implementation; they never re-derive shapes.

Op catalog (args are positional Node/scalar arguments; attrs are keyword attributes):

  elementwise   unary ufuncs (x); binary ufuncs (a, b); where(cond, a, b); clip(x, lo, hi);
                astype(x; dtype)
  reduction     sum/prod/max/min/mean/var/std/any/all/argmax/argmin
                (x; axis: tuple[int] | None (normalised, non-negative), keepdims: bool,
                 dtype: np.dtype | None, ddof (var/std))
                argmax/argmin take axis: int | None
  scan          cumsum/cumprod (x; axis: int | None (None = over the flattened array), dtype);
                sort_rows(x; axis: x.ndim - 1, kind): np.sort of short rows (ops/sorting.py)
  view          getitem(x; index: tuple of int|expr / IndexSlice / None (newaxis), no Ellipsis,
                         one entry per consumed dim), transpose(x; axes), reshape(x; shape),
                expand_dims(x; axis: tuple), squeeze(x; axis: tuple), broadcast_to(x; shape)
  copy          concatenate(*xs; axis), stack(*xs; axis), copy(x; order "K" (default) | "C" | "A")
  creation      zeros/ones/empty(; shape, dtype), full(fill; shape, dtype),
                arange(start, stop, step; dtype)
  matmul        matmul(a, b), dot(a, b)
  mutation      assign(dst, src): copy src (broadcast, unsafe cast) into the buffer of dst,
                a view of an input or of an earlier value; no result value;
                index_put / ufunc_at (x[idx] = v, np.add.at): see ops/advanced_index.py
  gather        mask_select, argwhere, take, unique, index (advanced indexing)
  opaque        a NumPy function called as is (np.linalg.*, np.sort, ...): ops/opaque.py

`may_raise(node)` says whether a node can raise at run time for some input values
(`int_array ** negative_int` is a ValueError in NumPy, `x[idx]` an IndexError): such a node
is kept by dead-code elimination even when its value is unused, so the compiled function
raises where NumPy does. Mutations are always kept.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy

from .graph import SCALAR_MATH

# ----------------------------------------------------------------------------- lowerings
# What a backend does with an op; the LLVM backend's classify / pointwise / reductions /
# accumulate modules read these records, never lists of op names.


@dataclass(frozen=True)
class Loop:
    """Elementwise: a loop body computing one element. `kinds`: the operand kinds with a body
    ('f' float, 'i' signed, 'u' unsigned, 'b' bool): the code generator's rule named `body`
    (default: the op's name) in codegen/llvm_kernels/ops.py for each. `math`: the float body
    is a call into the vectorised math library (codegen/llvm_kernels/math.py)."""
    kinds: str = ""
    math: bool = False
    body: str | None = None      # a loop-IR op of another name (where, clip, cast)


@dataclass(frozen=True)
class Reduction:
    """A reduction computed by a kernel. `combiner`: the loop-IR op folding an element into a
    register accumulator (None: a loop of its own, var/std/argmax/argmin); `identity`: the
    accumulator's start, "zero" | "one" | "lowest" | "highest" of the accumulator dtype (False /
    True for bool); `rmw` / `rmw_bool`: the elementwise op updating the result in memory when
    the reduction keeps the inner dim (lower/accumulate.py), for a non-bool / bool result;
    `nonempty`: NumPy raises on an empty reduced axis (no identity); `params`: NumPy's
    positional parameters after the operand (np.sum(a, axis, dtype, out, ...))."""
    combiner: str | None = None
    identity: str | None = None
    rmw: str | None = None
    rmw_bool: str | None = None
    nonempty: bool = False
    params: tuple = ()


@dataclass(frozen=True)
class Scan:
    """A scan along an axis (cumsum, cumprod): `combiner` the elementwise op of the running
    accumulator; `params` as for Reduction."""
    combiner: str
    params: tuple = ()


@dataclass(frozen=True)
class Sort:
    """Sorting along the last axis, rows of a static length of at most `max_row`: a sorting
    network inside a kernel (lower/sorting.py); longer rows run NumPy's sort (`fallback`)."""
    fallback: str
    max_row: int = 16


@dataclass(frozen=True)
class View:
    """A view: an index map inside kernels, or a NumPy view in the wrapper."""


@dataclass(frozen=True)
class Creation:
    """A value computed at each index inside a kernel (constants, aranges, copies)."""


@dataclass(frozen=True)
class Matmul:
    """np.matmul / np.dot: BLAS from the wrapper, or a loop kernel (lower/matmul.py)."""


@dataclass(frozen=True)
class Gather:
    """A data-dependent gather: kernels of its own (x[mask]: count + compaction), or with
    `indexed`, a load at a data-dependent position inside kernels, fused like an elementwise
    op (np.take_along_axis: lower/kernels.py)."""
    indexed: bool = False


@dataclass(frozen=True)
class Scatter:
    """A write into the buffer of an existing value (assign): a kernel storing into it."""


@dataclass(frozen=True)
class NumpyCall:
    """Explicitly run by NumPy in the generated wrapper (no kernel), for `reason`;
    `opaque`: an opaque NumPy function (ops/opaque.py)."""
    reason: str
    opaque: bool = False


LOWERINGS = (Loop, Reduction, Scan, Sort, View, Creation, Matmul, Gather, Scatter, NumpyCall)
COSTS = ("cheap", "expensive")
# which of NumPy's floating-point error kinds (np.errstate: divide, over, under, invalid) the
# op's loop may report: "float" any kind, but only when it computes in floating point (the
# default: integer add/multiply wrap silently, as in NumPy); "none" never, on any input (quiet
# tests, sign manipulation, selects, exact rounding); "int_divide" as "float", and integer
# loops report a zero divisor ("divide") and MIN // -1 ("over") as NumPy's do
FP_ERRORS = ("float", "none", "int_divide")
LAYOUTS = (None, "c", "keep")

KINDS = ("elementwise", "reduction", "scan", "view", "copy", "creation", "matmul",
         "mutation", "gather", "opaque", "other")


@dataclass(frozen=True)
class OpDef:
    name: str
    kind: str
    meta: Callable          # (*args, **attrs) -> FakeArray | None
    ref: Callable           # (*numpy args, **attrs) -> np.ndarray | np.generic | None
    ufunc: np.ufunc | None = None
    doc: str = ""
    may_raise: Callable | None = None   # (node) -> bool: may raise at run time (see module doc)
    aliases: bool = False    # the result may share memory with an operand (NumPy returns a view,
                             # as np.real and np.diagonal do): the builder refuses writes through
                             # it (they are graph breaks) and the scheduler treats it as an input
    lowering: object = None  # one of LOWERINGS: how backends compute it (see above)
    cost: str = "cheap"      # "expensive": a call into the vectorised math library
    layout: str | None = None   # "c": always a C-ordered result; "keep": a reduction keeping
                                # the operand's order over the kept axes
    fp_errors: str = "float"    # one of FP_ERRORS: the FP error kinds its loop may report
    warns: Callable | None = None   # (node) -> [(condition, message)]: the RuntimeWarnings NumPy's
                                    # own Python code issues from sizes alone, before computing
                                    # (np.mean of an empty slice); condition: a bool or sympy bool


OPS: dict[str, OpDef] = {}


def register(name: str, *, kind: str, ufunc: np.ufunc | None = None, ref: Callable | None = None,
             may_raise: Callable | None = None, aliases: bool = False, lowering=None,
             cost: str = "cheap", layout: str | None = None, fp_errors: str = "float",
             warns: Callable | None = None):
    """Decorator registering `meta` for op `name`; the reference defaults to the ufunc.
    `may_raise(node) -> bool`: whether that node may raise at run time (None: never).
    `warns(node)`: the Python-level warnings of its reference that depend on sizes (OpDef).
    `lowering`, `cost`, `layout`, `fp_errors`: see the module doc and FP_ERRORS."""
    assert kind in KINDS, kind
    if not isinstance(lowering, LOWERINGS):
        raise ValueError(f"op {name!r}: lowering must be one of {[c.__name__ for c in LOWERINGS]}, "
                         f"got {lowering!r} (NumpyCall(reason) for an op NumPy runs in the wrapper)")
    assert cost in COSTS and layout in LAYOUTS and fp_errors in FP_ERRORS, (cost, layout, fp_errors)

    def deco(meta):
        if name in OPS:
            raise ValueError(f"op {name!r} registered twice")
        impl = ref if ref is not None else ufunc
        if impl is None:
            raise ValueError(f"op {name!r} needs a NumPy reference")
        OPS[name] = OpDef(name, kind, meta, impl, ufunc, (meta.__doc__ or "").strip(), may_raise, aliases,
                          lowering, cost, layout, fp_errors, warns)
        return meta
    return deco


def may_raise(node) -> bool:
    """Whether running `node` can raise (or, for a mutation, has an effect) at run time."""
    op = get_op(node.op)
    return op.kind == "mutation" or (op.may_raise is not None and bool(op.may_raise(node)))


def may_warn(node) -> bool:
    """Whether NumPy running `node` may warn (an FP error, its own Python warnings): every
    op but views and elementwise / copy ops that report no FP error. (report_if warns only
    through its flag: the backends run it.)"""
    if node.op in ("input", "report_if"):
        return False
    op = get_op(node.op)
    return op.kind != "view" and not (op.fp_errors == "none" and op.kind in ("elementwise", "copy"))


def reports_fp(node) -> bool:
    """May NumPy report an FP error computing `node` (fp_errors: a float loop, an integer
    divide, NumPy's scalar math on ints)?"""
    if node.op == "input":
        return False
    op = get_op(node.op)
    if op.fp_errors == "none":
        return False
    if op.fp_errors == "int_divide" or node.attr(SCALAR_MATH):
        return True
    return any(getattr(x, "dtype", None) is not None and x.dtype.kind in "fc" for x in (node, *node.inputs()))


def warns_unused(node) -> bool:
    """Does NumPy warn computing `node` even when nothing uses its value (`m = np.log(x)`, an
    unused `x.mean()` of an empty array)? Such a node is computed though dead (passes/dce.py,
    the llvm schedule). NumPy's own calls (opaque ops) are left out: one call may stand for
    several nodes (np.histogram's counts and edges), which would warn twice."""
    if node.op in ("input", "report_if") or get_op(node.op).kind in ("view", "mutation", "opaque"):
        return False
    return bool(size_warnings(node)) or reports_fp(node)


def size_warnings(node) -> list:
    """(condition, message) of the RuntimeWarnings NumPy's code issues for `node` from its
    sizes (OpDef.warns), without the conditions that are False as written."""
    warns = get_op(node.op).warns if node.op != "input" else None
    if warns is None:
        return []
    return [(c, m) for c, m in warns(node) if c is not False and c is not sympy.false]


def get_op(name: str) -> OpDef:
    try:
        return OPS[name]
    except KeyError:
        raise KeyError(f"unknown op {name!r}") from None


# ----------------------------------------------------------------------------- queries


def lowered_as(cls) -> dict[str, object]:
    """name -> lowering record, for the ops lowered as `cls` (Loop, Reduction, ...)."""
    return {n: op.lowering for n, op in OPS.items() if isinstance(op.lowering, cls)}


def lowering(name: str):
    """The lowering record of op `name` (None for an unknown op)."""
    op = OPS.get(name)
    return None if op is None else op.lowering


def ops_where(pred) -> frozenset:
    """Names of the ops whose OpDef satisfies `pred`."""
    return frozenset(n for n, op in OPS.items() if pred(op))
