"""Dead-code elimination: drop nodes whose values reach no output, no mutation, no op that may
raise at run time, and define no size a live node or a runtime assert uses."""
from __future__ import annotations

from ..ir.registry import may_raise, warns_unused
from ..ir.verify import unbacked_definitions, used_symbols


def eliminate_dead_code(graph) -> int:
    """Remove unused nodes in place, in loop bodies too (a body's outputs are its roots). Kept
    even when unused: mutations (they write into live buffers), nodes that may raise at run time
    (`int_array ** -1`: NumPy raises whether or not the result is used; see
    `registry.may_raise`), and the node defining an unbacked size (`np.ones_like(a[a > 0])`
    needs the count of the mask, not its selection)."""
    removed = 0
    for node in graph.nodes:                    # loop bodies first: what they no longer read
        if node.op == "loop":
            removed += eliminate_dead_code(node.attr("body").graph)
    definer = unbacked_definitions(graph)
    live = set(graph.outputs)
    live_syms = set()
    for expr, _ in getattr(graph, "runtime_asserts", ()):
        live_syms.update(getattr(expr, "free_symbols", ()))
    for out in graph.outputs:
        live_syms.update(used_symbols(out))
    kept = []
    for node in reversed(graph.nodes):
        if node in live or may_raise(node) or warns_unused(node) or any(definer.get(s) is node for s in live_syms):
            kept.append(node)
            live.update(node.inputs())
            live_syms.update(used_symbols(node))
    removed += len(graph.nodes) - len(kept)
    graph.nodes[:] = reversed(kept)
    return removed
