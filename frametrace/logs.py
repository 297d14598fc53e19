"""Log channels (`dynamic`, `recompiles`, `graph_breaks`, `graph_code`, `guards`, `output_code`,
`loops`, `compile`: what each compile cost, per phase; `native`: why a cache entry keeps the
Python wrapper instead of a native entry)."""
from __future__ import annotations

import logging

CHANNELS = ("dynamic", "recompiles", "graph_breaks", "graph_code", "guards", "output_code", "loops", "compile",
            "native")


def get_logger(channel: str) -> logging.Logger:
    """The logger of one channel, e.g. get_logger("dynamic") -> "frametrace.dynamic"."""
    assert channel in CHANNELS, channel
    return logging.getLogger(f"frametrace.{channel}")
