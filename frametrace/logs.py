"""Log channels (`dynamic`, `recompiles`, `graph_breaks`, `graph_code`, `guards`, `output_code`,
`loops`, `compile`: what each compile cost, per phase)."""
from __future__ import annotations

import logging

CHANNELS = ("dynamic", "recompiles", "graph_breaks", "graph_code", "guards", "output_code", "loops", "compile")


def get_logger(channel: str) -> logging.Logger:
    """The logger of one channel, e.g. get_logger("dynamic") -> "frametrace.dynamic"."""
    assert channel in CHANNELS, channel
    return logging.getLogger(f"frametrace.{channel}")
