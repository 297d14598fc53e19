"""What the guard-soundness tests share: the backends, deep copies that keep layouts and
flags, and `run` (eager on copies vs compiled on the originals: results, exceptions and
argument mutations must agree)."""
from __future__ import annotations

import copy

import numpy as np
import frametrace as ft
from helpers import BACKENDS, assert_same  # noqa: F401 (BACKENDS is re-exported)




def clone(v, memo=None):
    """Deep copy that keeps what deepcopy loses: the read-only flag and the strides
    (a read-only or broadcast view stays read-only; aliasing between arguments is kept)."""
    memo = {} if memo is None else memo
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, np.ndarray):
        flip = tuple(slice(None, None, -1) if st < 0 else slice(None) for st in v.strides)
        out = np.array(v[flip], order="K", copy=True)[flip]    # same order, same signs
        if not v.flags.writeable:
            out.setflags(write=False)
        memo[id(v)] = out
        return out
    if isinstance(v, (list, tuple)):
        out = type(v)(clone(x, memo) for x in v)
    elif isinstance(v, dict):
        out = {k: clone(x, memo) for k, x in v.items()}
    else:
        return copy.deepcopy(v, memo)
    memo[id(v)] = out
    return out


def run(fn, *args, compiled):
    """Eager on copies, compiled on the originals; compare results and mutations.
    Exceptions: same type. Returns the compiled result."""
    eargs = clone(args)
    try:
        want, wexc = fn(*eargs), None
    except Exception as exc:    # noqa: BLE001
        want, wexc = None, exc
    try:
        got, gexc = compiled(*args), None
    except Exception as exc:    # noqa: BLE001
        got, gexc = None, exc
    if wexc is not None or gexc is not None:
        assert type(gexc) is type(wexc), (wexc, gexc)
    else:
        assert_same(got, want)
    for a, b in zip(args, eargs):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return got


def compiled_count():
    s = ft.stats()
    return s.frames_compiled + s.eager_fallbacks
