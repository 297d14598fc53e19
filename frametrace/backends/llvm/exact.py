"""Does a compiled graph give exactly the results NumPy eager gives (bit for bit)? Then its
cache entry may run either way, and the runtime keeps the faster (csrc_free_runtime/tuning.py).

Exact: elementwise arithmetic, comparisons, casts, data movement, max/min/argmax (NumPy's NaN
and zero signs), integer reductions, column reductions that accumulate in NumPy's own order,
scans, and everything the wrapper hands to NumPy itself (opaque calls, np.matmul). Not exact:
float sums and products reassociated to vectorise (sum, mean, var, ...: within rounding of
NumPy's pairwise sums), the vectorised transcendental functions (within a few ulp), and the
structured loops of the graph (their bodies are compiled on their own: not examined here).
"""
from __future__ import annotations

from ...lower.loop_ir import Op, walk_exprs
from ...lower.peephole import EXPENSIVE

_REASSOCIATED = ("red_add", "red_mul")


def same_as_eager(run) -> bool:
    """`run`: a compiled graph (backends/llvm compile_graph's result)."""
    plan = getattr(run, "plan", None)
    if plan is None or getattr(plan, "loop_natives", None) or getattr(plan, "loop_runners", None) \
            or getattr(plan, "array_loops", None):
        return False
    return not any(_inexact(x) for k in run.kernels for e in _exprs(k.body) for x in walk_exprs(e))


def _inexact(e) -> bool:
    return isinstance(e, Op) and (e.op in EXPENSIVE or (e.op in _REASSOCIATED and e.dtype.startswith("float")))


def _exprs(body):
    for s in body:
        inner = getattr(s, "body", None)
        if isinstance(inner, list):
            yield from _exprs(inner)
        for attr in ("value", "init", "cond", "stop"):
            e = getattr(s, attr, None)
            if e is not None and not isinstance(e, list):
                yield e


__all__ = ["same_as_eager"]
