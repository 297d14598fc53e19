"""Dead-code elimination: drop nodes whose values reach no output and no mutation."""
from __future__ import annotations

from ..ir.registry import get_op


def eliminate_dead_code(graph) -> int:
    """Remove unused nodes in place; mutation nodes are kept (they write into live buffers)."""
    live = set(graph.outputs)
    kept = []
    for node in reversed(graph.nodes):
        if node in live or get_op(node.op).kind == "mutation":
            kept.append(node)
            live.update(node.inputs())
    removed = len(graph.nodes) - len(kept)
    graph.nodes[:] = reversed(kept)
    return removed
