"""Does a compiled graph give exactly the results NumPy eager gives (bit for bit)? Then its
cache entry may run either way, and the runtime keeps the faster (csrc_free_runtime/tuning.py).

Exact: elementwise arithmetic, comparisons, casts, data movement, max/min/argmax (NumPy's NaN
and zero signs), integer reductions, column reductions that accumulate in NumPy's own order,
scans, float sums of a whole 1-d array (or (n, 1), ...) in NumPy's pairwise order (sum, mean,
var, std: a pairwise loop at the kernel's top level, codegen/llvm_kernels/pairwise.py),
everything the wrapper hands to NumPy itself (opaque calls, np.matmul), and the transcendental
functions a kernel computes with NumPy's own loop (codegen/llvm_kernels/chunked.py: routed,
and `routed_exact`: no operand whose strides NumPy may have seen negative where the kernel
cannot know). Not exact: np.einsum's sums (NumPy adds them in its own order) and float powers
by a constant integer other than NumPy's fast paths (multiplications here, pow there); other
float sums and products, reassociated to vectorise (within
rounding of NumPy's); pairwise row sums (`x.sum(axis=-1)`: NumPy's order for C-ordered rows and,
tested at run time, in order for an F-ordered input's, but sums fused into one loop whose
operands disagree on the order stay pairwise: pairwise.numpy_sums_in_order); the
transcendental functions of our own vectorised math (float64 sin and cos: within a few ulp);
functions evaluated outside an innermost loop (NumPy's loop on one element,
chunked.invariant_ops: its bits, unless NumPy's own call saw the operand reversed); dot
products, matrix-vector products and sums in native loop nests (float ones reassociated or in loop order, complex ones
in loop order, where NumPy's BLAS has its own);
array loops (not examined here). Otherwise a native loop nest computes in the Python loop's
order with NumPy's formulas (complex ones too: codegen/llvm_kernels/complex_ops.py), and a
loop the wrapper runs per iteration is as exact as its body's compiled graph.
"""
from __future__ import annotations

import numpy as np
import sympy

from ...codegen.llvm_kernels.chunked import routed_exact, routed_ops
from ...ir.graph import OWN_ORDER, SCALAR_MATH
from ...codegen.llvm_kernels.pairwise import pairwise_sums
from ...lower.loop_ir import If, Loop, Op, Update, nested, walk_exprs
from ...lower.peephole import EXPENSIVE

_REASSOCIATED = ("red_add", "red_mul")


def same_as_eager(run, graph=None) -> bool:
    """`run`: a compiled graph (backends/llvm compile_graph's result), `graph` the graph it
    compiled. A structured loop the wrapper runs per iteration (its body a compiled graph of its
    own) is exact when its body is."""
    if graph is not None and _any_other_order(graph):
        return False
    plan = getattr(run, "plan", None)
    if plan is None or getattr(plan, "array_loops", None):
        return False
    if not all(same_as_eager(body) for body in getattr(plan, "loop_runners", {}).values()):
        return False
    for nl in getattr(plan, "loop_natives", {}).values():      # element arithmetic in loop order
        if nl.float_products:                                   # BLAS's order is not the loop's
            return False
        if any(_inexact(x, set()) or isinstance(x, Op) and x.op == "red_muladd"
               for e in _exprs(nl.kernel.body) for x in walk_exprs(e)):
            return False
    for k in run.kernels:
        exact = _numpy_computed(k, k.body)
        if any(_inexact(x, exact) for e in _exprs(_exact_sums_apart(k.body)) for x in walk_exprs(e)):
            return False
    return True


def _any_other_order(graph) -> bool:
    for n in graph.nodes:
        body = n.attr("body") if n.op == "loop" else None
        if _other_order(n) or body is not None and _any_other_order(body.graph):
            return True
    return False


def _other_order(node) -> bool:
    """A node whose lowering computes NumPy's value in another order of operations: np.einsum's
    sums (graph.OWN_ORDER), a float power by a constant integer made multiplications
    (lower/pointwise.py `_power`) where NumPy calls pow: other than its array fast paths
    x**0, x**1, x**2 and x**-1 (np.power of a NumPy scalar, its scalar math and Python's float
    call pow for every exponent). Complex powers are NumPy's call but for z**1 and z**2 of
    arrays (lower/pointwise.py `_complex`)."""
    if node.attr(OWN_ORDER):
        return True
    if node.op != "power" or node.dtype is None or node.dtype.kind != "f" or len(node.args) < 2:
        return False
    c = node.args[1]
    c = c.item() if isinstance(c, np.generic) else c
    if isinstance(c, sympy.Basic):
        if not (c.is_number and c.is_real):
            return False
        c = float(c)
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not float(c).is_integer():
        return False
    return int(c) not in (0, 1, 2, -1) or node.scalar or bool(node.attr(SCALAR_MATH))


def _exact_sums_apart(body) -> list:
    """The kernel's statements, the pairwise sums of its top-level loops (a whole array's sum
    in NumPy's order) reduced to the elements they add up."""
    out = []
    for s in body:
        sums = pairwise_sums(s) if isinstance(s, Loop) else {}
        if sums:
            s = Loop(s.var, s.stop, [Update(x.name, x.value.args[1]) if isinstance(x, Update) and x.name in sums
                                     else x for x in s.body], s.start)
        out.append(s)
    return out


def _numpy_computed(kernel, body) -> set:
    """The function ops of the kernel's innermost loops that NumPy's own loop computes, exactly."""
    out = set()
    for s in body:
        if isinstance(s, Loop) and not any(isinstance(x, (Loop, If)) for x in s.body):
            out |= {r.op for r in routed_ops(kernel, s) if routed_exact(kernel, s, r)}
        for inner in nested(s):
            out |= _numpy_computed(kernel, inner)
    return out


def _inexact(e, exact: set) -> bool:
    return isinstance(e, Op) and ((e.op in EXPENSIVE and e not in exact)
                                  or (e.op in _REASSOCIATED and e.dtype.startswith(("float", "complex"))))


def _exprs(body):
    for s in body:
        inner = getattr(s, "body", None)
        if isinstance(inner, list):
            yield from _exprs(inner)
        for attr in ("value", "init", "cond", "stop"):
            e = getattr(s, attr, None)
            if e is not None and not isinstance(e, list):
                yield e


def wrapper_loops(run) -> bool:
    """Does the graph run a structured loop per iteration through its body's wrapper? (Each
    iteration then pays a Python call of the body's graph: often slower than the Python loop.)"""
    plan = getattr(run, "plan", None)
    return bool(getattr(plan, "loop_runners", None))


__all__ = ["same_as_eager", "wrapper_loops"]
