"""What each graph node becomes in the LLVM backend: a rule table over the op catalog.

Categories:
  input     a graph input (array or Python scalar)
  pw        elementwise, fusible: computed inside a kernel at each index, never stored
            unless it must be (see schedule.MATERIALIZE_RULES)
  red       a reduction computed by a kernel (fused with its producers and consumers)
  scan      cumsum / cumprod, sort_rows: a kernel of its own (fused with its producers)
  view      a view: an index map inside kernels, or a NumPy view in the wrapper
  assign    a mutation: a kernel writing into the destination (or NumPy for plain copies)
  compact   x[mask] with mask.shape == x.shape: count + compaction kernels (compact.py)
  matmul    np.matmul / np.dot called by the wrapper (BLAS beats our loops; see bench)
  scalar    Python-scalar arithmetic (weak operands only): the reference, in the wrapper
  fallback  anything else: the op's NumPy reference, in the wrapper
"""
from __future__ import annotations

import numpy as np
import sympy

from ..ir.graph import Node
from ..ir import ops as _registered  # noqa: F401  (registers every op the tables below read)
from ..ir.registry import Creation, Gather, Reduction, Scan, Scatter, Sort, get_op, lowered_as, lowering
from .loop_ir import Var
from .matmul import MATMULS
from .pointwise import SUPPORTED_DTYPES, NotLowerable, lower_elementwise, operand_dt, weak_node
from .reductions import count_expr
from .views import broadcast_ok, inlinable
from .weak_ints import range_checks

# the ops with a kernel lowering of each family, as registered (OpDef.lowering)
REDUCTIONS = frozenset(lowered_as(Reduction))
SCANS = frozenset(lowered_as(Scan))
CREATION = frozenset(lowered_as(Creation))
SCATTERS = frozenset(lowered_as(Scatter))
GATHERS = frozenset(lowered_as(Gather))


def _dtypes_ok(node: Node, *extra) -> bool:
    names = [node.dtype.name] + [np.dtype(d).name for d in extra]
    return all(n in SUPPORTED_DTYPES for n in names)


def _elementwise(node: Node) -> str:
    if weak_node(node):
        return "scalar"                        # Python semantics: the reference decides
    if not all(broadcast_ok(a.shape, node.shape) for a in node.inputs()):
        return "fallback"                      # a size only guarded to be 1: NumPy broadcasts
    if not all(a.dtype is not None and a.dtype.name in SUPPORTED_DTYPES for a in node.inputs()):
        return "fallback"                      # e.g. a float16 operand
    if range_checks(node) == "numpy":
        return "fallback"                      # a run-time int beyond the dtype: NumPy compares exactly
    try:                                       # an operand without a loop type (a complex Python scalar)
        placeholders = [Var("_", operand_dt(a)) if isinstance(a, Node) or not isinstance(
            a, (bool, int, float, np.generic, type(None))) else None for a in node.args]
        lower_elementwise(node, placeholders)
        return "pw"
    except (NotLowerable, KeyError, TypeError):
        return "fallback"


def _array_arg(node: Node):
    x = node.args[0] if node.args else None
    return x if isinstance(x, Node) and x.dtype is not None else None


def _reduction(node: Node) -> str:
    x = _array_arg(node)
    if node.op not in REDUCTIONS or x is None or not _dtypes_ok(node, x.dtype):
        return "fallback"
    if node.op in ("mean", "var", "std") and node.dtype.kind not in "fc":
        return "fallback"                      # mean(dtype=int): NumPy divides in float, then truncates
    if node.op in ("mean", "var", "std") and count_expr(node) == 0:
        return "fallback"                      # over nothing: NumPy's warnings (a kernel's 0 / 0 folds)
    return "red"


def _scan(node: Node) -> str:
    x = _array_arg(node)
    sort = lowering(node.op)
    if isinstance(sort, Sort):                 # short rows: a sorting network (sorting.py)
        n = x.shape[-1] if x is not None and x.ndim else None
        small = isinstance(n, int) and n <= sort.max_row and node.attr("axis") == x.ndim - 1 \
            and x.dtype.kind in "fiu"              # (bools: NumPy)
        return "scan" if small and _dtypes_ok(node, x.dtype) else "fallback"
    if node.op not in SCANS or x is None or not _dtypes_ok(node, x.dtype):
        return "fallback"
    if (node.attr("axis") is None and x.ndim > 1) or x.ndim == 0:
        return "fallback"                      # flattened scan of an n-d / 0-d array: NumPy
    return "scan"


def _creation(node: Node) -> str:
    if node.op not in CREATION or not _dtypes_ok(node, *(a.dtype for a in node.inputs())):
        return "fallback"
    if node.op == "full" and isinstance(node.args[0], Node) and node.args[0].ndim:
        return "fallback"                      # an array fill: NumPy broadcasts it
    if node.op == "copy":
        x = _array_arg(node)
        return "pw" if x is not None and _dtypes_ok(node, x.dtype) else "fallback"
    if node.op == "concatenate":               # pieces read through segments (segments.py)
        ok = all(isinstance(a, Node) and a.dtype is not None for a in node.args)
        return "pw" if ok and _dtypes_ok(node, *(a.dtype for a in node.args)) else "fallback"
    return "pw"


def _indexed_gather(node: Node) -> str:
    """take_along: a load inside kernels ("pw"), when the gathered axis has an element to
    clamp a bad index to (a static positive size, or a symbol known positive)."""
    arr, idx = node.args
    ax = node.attr("axis")
    n = arr.shape[ax]
    nonempty = (isinstance(n, int) and n >= 1) or (isinstance(n, sympy.Basic) and n.is_positive is True)
    rest = tuple(arr.shape[:ax]) + (1,) + tuple(arr.shape[ax + 1:])     # arr's axis is gathered
    ok = nonempty and broadcast_ok(rest, node.shape) and broadcast_ok(idx.shape, node.shape)
    return "pw" if ok and _dtypes_ok(node, arr.dtype, idx.dtype) else "fallback"


def _gather(node: Node) -> str:
    if getattr(lowering(node.op), "indexed", False):
        return _indexed_gather(node)
    if node.op not in GATHERS or not compactable(node) or not _dtypes_ok(node, node.args[0].dtype):
        return "fallback"                      # argwhere, unique, take, masks over leading dims
    return "compact"


# op kind (registry) -> rule; one line each
RULES = {
    "elementwise": _elementwise,                      # fusible unless a dtype/op has no loop
    "reduction": _reduction,                          # kernels with accumulators
    "scan": _scan,                                    # sequential kernels along the axis
    "view": lambda n: "view",                         # index maps / NumPy views
    "creation": _creation,                            # constants and aranges are pointwise
    "copy": _creation,                                # copy: identity; concatenate: segments; stack: NumPy
    "matmul": lambda n: "matmul" if n.op in MATMULS else "fallback",  # BLAS
    "mutation": lambda n: "assign" if n.op in SCATTERS else "fallback",
    "gather": _gather,                                # x[mask] over all dims: two kernels
}


def categorize(node: Node) -> str:
    """The category of one node (see module doc)."""
    if node.op == "input":
        return "input"
    try:
        kind = get_op(node.op).kind
    except KeyError:
        return "fallback"
    if node.dtype is not None and node.dtype.name not in SUPPORTED_DTYPES and kind != "view":
        return "fallback"
    return RULES.get(kind, lambda n: "fallback")(node)


def view_is_inlinable(node: Node) -> bool:
    return node.op != "input" and get_op(node.op).kind == "view" and inlinable(node)


def compactable(node: Node) -> bool:
    """mask_select whose mask covers every dim of x (the meta checked the sizes match)."""
    x, m = node.args[0], node.args[1]
    return isinstance(x, Node) and isinstance(m, Node) and x.ndim >= 1 and m.ndim == x.ndim \
        and m.dtype == np.bool_
