"""The graph passes run between tracing and a backend, each followed by the IR verifier when
`config.verify_ir` is on (ir/verify.py)."""
from __future__ import annotations

from ..config import config
from ..ir.verify import verify_graph
from .dce import eliminate_dead_code
from .licm import hoist_loop_invariants
from .sizes import apply_size_replacements

PASSES = (("sizes", apply_size_replacements), ("licm", hoist_loop_invariants), ("dce", eliminate_dead_code))


def maybe_verify(graph, where: str) -> None:
    if config.verify_ir:
        verify_graph(graph, where)


def run_passes(graph) -> None:
    """Verify the traced graph, then run each pass in place and verify after it."""
    maybe_verify(graph, "after tracing")
    for name, run in PASSES:
        run(graph)
        maybe_verify(graph, f"after {name}")
