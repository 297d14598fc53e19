"""The options a frame compiles with: what ft.compile / ft.enable were given (a plain record).

It sits below the frame-conversion layer: ft.compile (eval_frame.py) and ft.enable (enable.py)
make them, the miss path (convert_frame.py) reads them, and a graph break's resume functions
compile with the options of the frame they came from.
"""
from __future__ import annotations


class FrameOptions:
    __slots__ = ("dynamic", "backend", "fullgraph")

    def __init__(self, dynamic=None, backend=None, fullgraph=False):
        self.dynamic, self.backend, self.fullgraph = dynamic, backend, fullgraph

    def __repr__(self):
        return f"FrameOptions(dynamic={self.dynamic}, backend={self.backend}, fullgraph={self.fullgraph})"

    def _key(self):
        return self.dynamic, self.backend, self.fullgraph

    def __eq__(self, other):          # equal options share a rebuilt cache (csrc_free_runtime/pickling.py)
        return isinstance(other, FrameOptions) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __reduce__(self):
        return FrameOptions, self._key()
