"""What ranks exchange at a compile, and how it merges into a FrameState (no MPI here).

A message is JSON (never pickle: nothing received is executed):

    {"v": 1, "seq": 3, "rank": 1, "frame": "prog.py:12:f", "where": "/abs/prog.py:12 f",
     "sizes": {"L['x']": [10, null]}, "ints": {"L['n']": 4}}

`sizes` values are lists (`null` = seen varying in that dim) or `null` (the ndim varied); `ints`
values are ints or `null`. Merging is the automatic-dynamic lattice join: equal stays, different
becomes varying, so a size that differs across ranks is dynamic on every rank.
"""
from __future__ import annotations

import json
import os

from ..dynamic_policy import VARYING, FrameState

VERSION = 1
_MAX_DEPTH = 2          # L['xs'][0], L['d']['k'][1]: as deep as the tracer's containers usually go


def frame_key(code) -> str:
    """`prog.py:12:f`: what must agree across ranks (basename, so mount points may differ)."""
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}:{code.co_name}"


def frame_where(code) -> str:
    """`/abs/prog.py:12 f`: how errors name the frame."""
    return f"{code.co_filename}:{code.co_firstlineno} {code.co_name}"


def observe(state: FrameState, values_by_source: dict) -> None:
    """Record this call's arrays and ints (and those inside tuples, lists and dicts) in `state`,
    under the source names the tracer uses (`L['x']`, `L['xs'][0]`, `L['d']['k']`)."""
    for name, value in values_by_source.items():
        _observe(state, name, value, 0)


def _observe(state, name, value, depth):
    import numpy as np
    kind = type(value)
    if kind is np.ndarray:
        state.observe_array(name, value.shape)
    elif kind is int:
        state.observe_int(name, value)
    elif depth < _MAX_DEPTH and kind in (tuple, list):
        for i, item in enumerate(value):
            _observe(state, f"{name}[{i!r}]", item, depth + 1)
    elif depth < _MAX_DEPTH and kind is dict:
        for key, item in value.items():
            if type(key) in (str, int):
                _observe(state, f"{name}[{key!r}]", item, depth + 1)


def encode(seq: int, rank: int, code, state: FrameState) -> bytes:
    sizes = {n: (None if s is VARYING else list(s)) for n, s in state.sizes.items()}
    msg = {"v": VERSION, "seq": seq, "rank": rank, "frame": frame_key(code), "where": frame_where(code),
           "sizes": sizes, "ints": dict(state.ints)}
    return json.dumps(msg, separators=(",", ":")).encode()


def encode_verdict(verdict: dict) -> bytes:
    return json.dumps(verdict, separators=(",", ":")).encode()


def decode(data) -> dict:
    msg = json.loads(bytes(data).decode())
    if not isinstance(msg, dict):
        raise ValueError("not a frametrace collectives message")
    return msg


def state_of(msg: dict) -> FrameState:
    """The FrameState a message carries (malformed entries are dropped, not trusted)."""
    state = FrameState()
    for name, size in (msg.get("sizes") or {}).items():
        if size is None:
            state.sizes[name] = VARYING
        elif isinstance(size, list) and all(d is None or type(d) is int for d in size):
            state.sizes[name] = tuple(size)
    for name, value in (msg.get("ints") or {}).items():
        if value is None or type(value) is int:
            state.ints[name] = value
    return state


def join(states) -> FrameState:
    """The lattice join of several ranks' states (pgo.merge, pairwise)."""
    from ..pgo import merge
    out = FrameState()
    for s in states:
        out = merge(out, s)
    return out


def apply(state: FrameState, merged: FrameState) -> list:
    """Raise `state` in place to `merged` (which must be above it); the source names that changed."""
    changed = []
    for name, size in merged.sizes.items():
        if state.sizes.get(name, "unset") != size:
            state.sizes[name] = size
            changed.append(name)
    for name, value in merged.ints.items():
        if state.ints.get(name, "unset") != value:
            state.ints[name] = value
            changed.append(name)
    if changed:
        state.changed = True
    return changed
