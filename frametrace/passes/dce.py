"""Dead-code elimination: drop nodes whose values reach no output, no mutation and no op
that may raise at run time."""
from __future__ import annotations

from ..ir.registry import may_raise


def eliminate_dead_code(graph) -> int:
    """Remove unused nodes in place. Kept even when unused: mutations (they write into live
    buffers) and nodes that may raise at run time (`int_array ** -1`: NumPy raises whether or
    not the result is used; see `registry.may_raise`)."""
    live = set(graph.outputs)
    kept = []
    for node in reversed(graph.nodes):
        if node in live or may_raise(node):
            kept.append(node)
            live.update(node.inputs())
    removed = len(graph.nodes) - len(kept)
    graph.nodes[:] = reversed(kept)
    return removed
