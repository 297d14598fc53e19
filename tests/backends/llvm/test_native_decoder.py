"""A Llama-style decode step served by its native entry (native_entry.py), the whole call one
native builtin: the step's head splits and merges (views of values it computes), the rotary
pairs, the KV cache written in place (a cast when float32 values meet the float64 cache), the
attention scores laid out as NumPy's einsum lays them out, NumPy's own products. Before, every
step ran the Python wrapper (~0.5 ms of a ~2.3 ms float64 step). The tokens must be NumPy's,
every step after the compiling ones native, and a changed weight must still miss and recompile."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import cache as rt_cache
from csrc_free_runtime.native import AVAILABLE
from llama_model import Llama, build, generate

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="native entries need CPython 3.11+ and NumPy 2 layouts")

PROMPT = [1, 17, 40, 3, 9]


@pytest.fixture(autouse=True)
def defaults():
    """The configuration users get: native entries, float products as NumPy's calls."""
    with ft.config.patch(native_dispatch=True, exact_float_products=True, pgo=False):
        yield


def _caches():
    """The frame caches of Llama.__call__ (under ft.enable() its __code__ is a trampoline's)."""
    code = Llama.__call__.__code__
    return [c for c in rt_cache.all_caches()
            if (c.code.co_filename, c.code.co_firstlineno) == (code.co_filename, code.co_firstlineno)]


def _entries():
    return [e for c in _caches() for e in c.entries]


def _hits():
    return sum(e.native.hits for e in _entries() if e.native is not None)


def _calls():
    return sum(c.hits for c in _caches())


@pytest.mark.parametrize("entry_point,dtype", [("compile", "float32"), ("enable", "float64")])
def test_every_decode_step_is_native(dtype, entry_point):
    want, want_logits = generate(build(dtype), PROMPT, 8)
    ft.reset()
    model = build(dtype)
    run = ft.compile(model) if entry_point == "compile" else model
    compiled = hits = calls = None
    for again in (False, True):             # compiles the prompt's and the steps' graphs, then runs them
        if again:
            assert _entries() and all(e.native is not None for e in _entries()), "a decoder entry has no native entry"
            model.cache_k = [np.zeros_like(c) for c in model.cache_k]
            model.cache_v = [np.zeros_like(c) for c in model.cache_v]
            compiled, hits, calls = ft.stats().frames_compiled, _hits(), _calls()
        tokens, pos, logits = list(PROMPT), 0, []
        for _ in range(8):                  # (in the test's own frame: under ft.enable() a helper's
            with ft.enabled() if entry_point == "enable" else ft.config.patch():   # loop is hooked too)
                out = run(np.array(tokens[pos:]), pos)
            logits.append(out)
            pos = len(tokens)
            tokens.append(int(np.argmax(out)))
    tokens = tokens[len(PROMPT):]
    assert tokens == want
    for g, w in zip(logits, want_logits):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-9 if dtype == "float64" else 1e-5, atol=1e-9)
    assert ft.stats().frames_compiled == compiled
    assert _hits() - hits == 8 and _calls() - calls == 8   # the prompt and 7 steps


def test_a_changed_weight_still_misses():
    want, _ = generate(build("float64"), PROMPT, 6)
    ft.reset()
    model = build("float64")
    run = ft.compile(model)
    generate(run, PROMPT, 6)
    for change in (lambda m: m.layers[1].__setitem__("wq", m.layers[1]["wq"].astype(np.float32)),
                   lambda m: m.layers[0].__setitem__("w1", np.asfortranarray(m.layers[0]["w1"]))):
        reference = build("float64")
        change(model)
        change(reference)
        for m in (model, reference):
            m.cache_k = [np.zeros_like(c) for c in m.cache_k]
            m.cache_v = [np.zeros_like(c) for c in m.cache_v]
        want, want_logits = generate(reference, PROMPT, 6)
        tokens, logits = generate(run, PROMPT, 6)
        assert tokens == want
        for g, w in zip(logits, want_logits):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert all(e.native is not None for e in _entries())


def test_the_native_log_channel_names_why_an_entry_has_none(caplog):
    """FRAMETRACE_LOGS=native: the construct that keeps an entry on the Python wrapper, and where."""
    def f(x):
        with np.errstate(divide="ignore"):              # the wrapper decides what its flags report
            return np.log(x) * 2.0
    ft.set_logs(native=True)
    try:
        g = ft.compile(f)
        with caplog.at_level(logging.INFO, logger="frametrace.native"):
            x = np.arange(5.0)
            np.testing.assert_array_equal(g(x), f(x))
    finally:
        ft.set_logs(native=False)
    lines = [r.getMessage() for r in caplog.records if r.name == "frametrace.native"]
    assert any("no native entry for f" in m and "test_native_decoder.py" in m and "np.errstate" in m
               for m in lines), lines
