"""Size replacements on the graph: every shape in terms of the symbols that remain.

The ShapeEnv learns replacements while tracing (`mask.shape[0] == x.shape[0] - 2` once
`x[1:-1][mask]` is traced: s1 -> s0 - 2), but a node made before (a graph input, first of all)
keeps the symbol in its shape. A backend compares shapes statically (lower/views.py
broadcast_ok): `where(mask, 1, x[1:-1])` with mask (s1,) and the view (s0 - 2,) cannot be
proved equal and ran as a NumPy call. With every shape rewritten it is one kernel. The guards
(ShapeEnv.produce_guards) check each replacement at run time; a replaced symbol stays bound
from its input, so attributes made before the replacement still evaluate.
"""
from __future__ import annotations

import sympy


def apply_size_replacements(graph) -> int:
    """Rewrite node shapes in place with `graph.size_replacements` (Symbol -> expression, set by
    the tracer); in the graphs of loop bodies too. Returns how many shapes changed."""
    repl = getattr(graph, "size_replacements", None)
    return _apply(graph, repl) if repl else 0


def _apply(graph, repl) -> int:
    changed = 0
    for node in list(graph.inputs) + list(graph.nodes):
        shape = tuple(d.xreplace(repl) if isinstance(d, sympy.Basic) and d.free_symbols & repl.keys() else d
                      for d in node.shape)
        if shape != tuple(node.shape):
            object.__setattr__(node, "shape", tuple(int(d) if isinstance(d, sympy.Integer) else d for d in shape))
            changed += 1
        if node.op == "loop":
            changed += _apply(node.attr("body").graph, repl)
    return changed


__all__ = ["apply_size_replacements"]
