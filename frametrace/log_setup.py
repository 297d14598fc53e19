"""FRAMETRACE_LOGS / ft.set_logs: route the channels to stderr at the chosen level."""
from __future__ import annotations

import logging
import os
import sys

from .logs import CHANNELS

_handler = None


def _ensure_handler():
    global _handler
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(logging.Formatter("%(levelname).1s %(name)s: %(message)s"))
        root = logging.getLogger("frametrace")
        root.addHandler(_handler)
        root.propagate = True
    return _handler


def set_logs(**channels):
    for name, level in channels.items():
        if name not in CHANNELS:
            raise ValueError(f"unknown log channel {name!r}; known: {', '.join(CHANNELS)}")
        logger = logging.getLogger(f"frametrace.{name}")
        if level is False or level is None:
            logger.setLevel(logging.WARNING)
            continue
        _ensure_handler()
        logger.setLevel(logging.DEBUG if level == "debug" or level == logging.DEBUG else
                        level if isinstance(level, int) and level is not True else logging.INFO)


def configure_from_env():
    spec = os.environ.get("FRAMETRACE_LOGS", "")
    kw = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        debug = item.startswith("+")
        name = item.lstrip("+-")
        if name in CHANNELS:
            kw[name] = "debug" if debug else True
    if kw:
        set_logs(**kw)
