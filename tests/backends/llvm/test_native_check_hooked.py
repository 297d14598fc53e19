"""A compiled function's native check once the helpers it inlined are hooked.

`ft.compile` hooks the functions a compiled function reaches by name at its first call (their
`__code__` becomes a trampoline: global_hook.hook_reachable), and the entry guards each inlined
helper by its code object. The native check compared `__code__` with the user's code alone, so
from then on it missed on every call and the entry fell back to the whole Python condition (a
GPT-style decoder: ~220 guards in Python per token). It now also accepts the trampoline of the
function hooked last (global_hook.trampoline_cell); a helper replaced by other code still misses.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import cache as rt_cache
from csrc_free_runtime.native import NATIVE_MISS

HELPERS = '''
import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def layer_norm(x, g, b, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(np.var(x, axis=-1, keepdims=True) + eps) + b


def linear(x, w, b):
    return x @ w + b
'''

MODEL = '''
import numpy as np

from nc_hooked_helpers import gelu, layer_norm, linear


class Block:
    def __init__(self, d, rng):
        self.p = {"fc": {"w": rng.standard_normal((d, 4 * d)) * 0.2, "b": np.zeros(4 * d)},
                  "proj": {"w": rng.standard_normal((4 * d, d)) * 0.2, "b": np.zeros(d)},
                  "ln": {"g": np.ones(d), "b": np.zeros(d)}}

    def forward(self, x):
        y = layer_norm(x, **self.p["ln"])
        return x + linear(gelu(linear(y, **self.p["fc"])), **self.p["proj"])


def run(tokens, wte, blocks):
    x = wte[tokens]
    for blk in blocks:
        x = blk.forward(x)
    return layer_norm(x, 1.0, 0.0) @ wte.T
'''


@pytest.fixture
def modules(tmp_path, monkeypatch):
    (tmp_path / "nc_hooked_helpers.py").write_text(HELPERS)
    (tmp_path / "nc_hooked_model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("nc_hooked_helpers", "nc_hooked_model"):
        sys.modules.pop(name, None)
    helpers = importlib.import_module("nc_hooked_helpers")
    model = importlib.import_module("nc_hooked_model")
    yield helpers, model
    for name in ("nc_hooked_helpers", "nc_hooked_model"):
        sys.modules.pop(name, None)


def _args(model, n=6, d=8):
    rng = np.random.default_rng(3)
    tokens = [int(t) for t in rng.integers(0, 32, n)]          # a Python list of ints, as decoders pass
    return tokens, rng.standard_normal((32, d)), [model.Block(d, rng) for _ in range(2)]


def _entries(fn):
    return [e for c in rt_cache.all_caches() if c.code is fn.__code__ for e in c.entries]


def _native_passes(entry, args) -> bool:
    """Does the entry's native builtin (its native entry, else its native check) pass?"""
    fn = entry.native.fn if entry.native is not None else entry.call.native_check.fn
    return fn(*args) is not NATIVE_MISS


def test_native_check_passes_with_hooked_helpers(modules):
    helpers, model = modules
    user_code = helpers.layer_norm.__code__
    args = _args(model)
    compiled = ft.compile(model.run)
    want = model.run(*args)
    np.testing.assert_allclose(compiled(*args), want, rtol=1e-9, atol=1e-12)
    assert helpers.layer_norm.__code__ is not user_code      # hooked: a trampoline runs it now
    (entry,) = [e for e in _entries(model.run) if e.check(*args)]
    assert _native_passes(entry, args)
    # the Python condition is not evaluated: no function's code is looked up through the hook
    import frametrace.guards.python_check as pc
    seen = []
    original = pc.original_function
    pc.original_function = lambda fn: seen.append(fn) or original(fn)
    try:
        for _ in range(3):
            np.testing.assert_allclose(compiled(*args), want, rtol=1e-9, atol=1e-12)
    finally:
        pc.original_function = original
    assert seen == []
    assert ft.stats().unique_graphs == 1


def test_helper_replaced_by_other_code_misses(modules):
    helpers, model = modules
    args = _args(model)
    compiled = ft.compile(model.run)
    compiled(*args)
    (entry,) = [e for e in _entries(model.run) if e.check(*args)]

    def layer_norm(x, g, b, eps=1e-5):                        # another function: other code
        return g * x + b

    model.layer_norm = layer_norm
    assert not _native_passes(entry, args)
    assert not entry.check(*args)
    np.testing.assert_allclose(compiled(*args), model.run(*args), rtol=1e-9, atol=1e-12)


def test_helper_given_its_code_back_still_passes(modules):
    helpers, model = modules
    user_code = helpers.layer_norm.__code__
    args = _args(model)
    compiled = ft.compile(model.run)
    compiled(*args)
    (entry,) = [e for e in _entries(model.run) if e.check(*args)]
    hooked = helpers.layer_norm.__code__
    assert hooked is not user_code
    helpers.layer_norm.__code__ = user_code                       # as when the hook gives up on it
    try:
        assert _native_passes(entry, args)
    finally:
        helpers.layer_norm.__code__ = hooked
    assert _native_passes(entry, args)
