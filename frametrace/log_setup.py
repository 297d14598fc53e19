"""FRAMETRACE_LOGS / ft.set_logs: route the channels to stderr in PyTorch's glog-like format.

    I1122 03:21:10.941000 5405 frametrace/shapes/symbols.py:88] [0/1] create_symbol s0 = 20 for L['x'].shape[0] ...
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
import time

from .logs import CHANNELS

compile_id_var: contextvars.ContextVar = contextvars.ContextVar("frametrace_compile_id", default=None)

_handler = None
_pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def compile_context(compile_id: str):
    """Log lines emitted inside carry `[compile_id]`."""
    token = compile_id_var.set(compile_id)
    try:
        yield
    finally:
        compile_id_var.reset(token)


class _Formatter(logging.Formatter):
    def format(self, record):
        t = time.localtime(record.created)
        stamp = time.strftime("%m%d %H:%M:%S", t) + f".{int(record.msecs * 1000):06d}"
        path = os.path.relpath(record.pathname, _pkg_root) if record.pathname.startswith(_pkg_root) \
            else record.pathname
        cid = compile_id_var.get()
        prefix = f"{record.levelname[0]}{stamp} {record.process} {path}:{record.lineno}] "
        if cid is not None:
            prefix += f"[{cid}] "
        channel = record.name.rsplit(".", 1)[-1]
        if channel in ("recompiles", "graph_breaks", "guards", "output_code", "graph_code", "loops", "compile"):
            prefix += f"[__{channel}] "
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        return "\n".join(prefix + line for line in message.splitlines() or [""])


def _ensure_handler():
    global _handler
    if _handler is None:
        _handler = logging.StreamHandler(sys.stderr)
        _handler.setFormatter(_Formatter())
        root = logging.getLogger("frametrace")
        root.addHandler(_handler)
        root.propagate = True
    return _handler


def set_logs(**channels):
    """ft.set_logs(dynamic=True, recompiles=True, ...): True = INFO, "debug" = DEBUG, False = off."""
    for name, level in channels.items():
        if name not in CHANNELS:
            raise ValueError(f"unknown log channel {name!r}; known: {', '.join(CHANNELS)}")
        logger = logging.getLogger(f"frametrace.{name}")
        if level is False or level is None:
            logger.setLevel(logging.WARNING)
            continue
        _ensure_handler()
        if level == "debug" or level == logging.DEBUG:
            logger.setLevel(logging.DEBUG)
        elif isinstance(level, int) and not isinstance(level, bool):
            logger.setLevel(level)
        else:
            logger.setLevel(logging.INFO)


def configure(spec: str, strict: bool = True):
    """Turn on the channels of a FRAMETRACE_LOGS-style spec: "graph_breaks,+dynamic,all"
    (+name: debug). strict: an unknown name raises ValueError (else it is ignored)."""
    kw = {}
    for item in filter(None, (s.strip() for s in spec.split(","))):
        debug = item.startswith("+")
        name = item.lstrip("+-")
        if name in CHANNELS:
            kw[name] = "debug" if debug else True
        elif name == "all":
            kw.update({c: "debug" if debug else True for c in CHANNELS})
        elif strict:
            raise ValueError(f"unknown log channel {name!r}; known: {', '.join(CHANNELS)}, all")
    if kw:
        set_logs(**kw)


def configure_from_env():
    configure(os.environ.get("FRAMETRACE_LOGS", ""), strict=False)
