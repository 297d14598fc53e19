"""Size replacements on the graph: every shape in terms of the symbols that remain.

The ShapeEnv learns replacements while tracing (`mask.shape[0] == x.shape[0] - 2` once
`x[1:-1][mask]` is traced: s1 -> s0 - 2), but a node made before (a graph input, first of all)
keeps the symbol in its shape. A backend compares shapes statically (lower/views.py
broadcast_ok): `where(mask, 1, x[1:-1])` with mask (s1,) and the view (s0 - 2,) cannot be
proved equal and ran as a NumPy call. With every shape rewritten it is one kernel. The guards
(ShapeEnv.produce_guards) check each replacement at run time; a replaced symbol stays bound
from its input, so attributes made before the replacement still evaluate.

Then the clamps the guards decide (ShapeEnv.clamp_equalities): a slice `cos[p:p + 1]` of a
128-row table has the length `Max(0, Min(1, 128 - p))`; once a guard says it equals 1 (the
tracer needed it for a reshape or a broadcast), every shape that mentions it says 1, so
`x * cos[p:p + 1]` broadcasts in a kernel instead of running as a NumPy call. Only shapes are
rewritten; a slice's bounds keep their clamps (they compute the same values under the guards).
"""
from __future__ import annotations

import sympy


def apply_size_replacements(graph) -> int:
    """Rewrite node shapes in place with `graph.size_replacements` (Symbol -> expression, set by
    the tracer), then `graph.size_equalities` (clamp expression -> its value under the guards);
    in the graphs of loop bodies too. Returns how many shapes changed."""
    repl = getattr(graph, "size_replacements", None) or {}
    eqs = getattr(graph, "size_equalities", None) or {}
    return _apply(graph, repl, eqs) if repl or eqs else 0


def _rewrite(d, repl, eqs):
    if not isinstance(d, sympy.Basic):
        return d
    if repl and d.free_symbols & repl.keys():
        d = d.xreplace(repl)
    if eqs and d.has(sympy.Min, sympy.Max):
        d = d.xreplace(eqs)
    return int(d) if isinstance(d, sympy.Integer) else d


def _apply(graph, repl, eqs) -> int:
    changed = 0
    for node in list(graph.inputs) + list(graph.nodes):
        shape = tuple(_rewrite(d, repl, eqs) for d in node.shape)
        if shape != tuple(node.shape):
            object.__setattr__(node, "shape", shape)
            changed += 1
        if node.op == "loop":
            changed += _apply(node.attr("body").graph, repl, eqs)
    return changed


__all__ = ["apply_size_replacements"]
