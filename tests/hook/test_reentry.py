"""The global hook keeps what it compiled (entries live with the code object), inlines user
functions, compiles closures, and leaves a user's profiler as it found it."""
import sys

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import global_hook
from helpers import BACKENDS, assert_same

rng = np.random.default_rng(5)


def act(x):
    return x / (1.0 + np.exp(-x))


def norm(x):
    return (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + 1e-5)


def block(x, w):
    return act(norm(x @ w))


def net(x, ws):
    for w in ws:
        x = block(x, w)
    return x


def make_scaled(alpha):
    def scaled(x):
        return np.maximum(x, alpha * x)
    return scaled


leaky = make_scaled(0.1)


def uses_closure(x):
    return leaky(x * 2.0).sum(0)


def reference_net(x, ws):
    for w in ws:
        h = x @ w
        h = (h - h.mean(-1, keepdims=True)) / (h.std(-1, keepdims=True) + 1e-5)
        x = h / (1.0 + np.exp(-h))
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_reentering_the_hook_compiles_nothing_new(backend):
    ws = [rng.standard_normal((8, 8)) for _ in range(3)]
    xs = [rng.standard_normal((n, 8)) for n in (3, 4, 5)]
    compiled = []
    for _ in range(3):
        with ft.enabled(backend=backend):
            got = [net(x, ws) for x in xs]
        for g, x in zip(got, xs):
            assert_same(g, reference_net(x, ws))
        compiled.append(ft.stats().frames_compiled)
        assert net.__code__ is global_hook._records[net].code     # disable() restored the code
    assert compiled[0] >= 1 and compiled[0] == compiled[1] == compiled[2], compiled
    s = ft.stats()
    assert s.graph_breaks == 0, s           # block/norm/act are inlined into net's graph
    assert s.cache_hits >= 2 * len(xs), s


def test_enable_then_disable_restores_the_user_profiler():
    events = []

    def mine(frame, event, arg):
        if event == "call" and frame.f_code is act.__code__:
            events.append(event)

    sys.setprofile(mine)
    try:
        with ft.enabled():
            assert sys.getprofile() is global_hook._profile
            act(rng.standard_normal(3))
        assert sys.getprofile() is mine
        assert events, "the user's profiler was not called while the hook ran"
    finally:
        sys.setprofile(None)


def test_a_compiled_call_restores_the_user_profiler():
    seen = []

    def mine(frame, event, arg):
        seen.append(event)

    x, ws = rng.standard_normal((3, 8)), [rng.standard_normal((8, 8))]
    f = ft.compile(net)
    sys.setprofile(mine)
    try:
        assert_same(f(x, ws), reference_net(x, ws))
        assert sys.getprofile() is mine
    finally:
        sys.setprofile(None)
    assert seen


def test_closures_are_compiled_under_the_hook():
    x = rng.standard_normal((4, 3))
    with ft.enabled():
        for _ in range(3):
            assert_same(uses_closure(x), np.maximum(2 * x, 0.2 * x).sum(0))
            assert_same(leaky(x), np.maximum(x, 0.1 * x))
        assert leaky.__code__ is not global_hook._records[leaky].code     # a trampoline
    assert ft.stats().frames_compiled >= 2 and ft.stats().cache_hits >= 2


def test_hooked_functions_are_inlined_not_called():
    x = rng.standard_normal((4, 8))
    ws = [rng.standard_normal((8, 8))]
    with ft.enabled():
        net(x, ws)                 # hooked at enable(): net compiles, block/norm/act inline
        net(x, ws)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.unique_graphs == 1, s
