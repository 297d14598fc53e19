"""Dynamo's frame-callback semantics for ft.compile: while a compiled function runs, including
its eager parts, every candidate frame it calls compiles as its own frame; outside, hooked
functions run their own code. Results are compared with plain NumPy on random inputs."""
import sys
import threading

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import global_hook
from helpers import BACKENDS, assert_same

rng = np.random.default_rng(11)


def layer(x, w):
    return np.tanh(x @ w) * 0.5 + x


def stack_gen(x, ws):
    """A generator: never a candidate itself, but what it calls is. (The tracer inlines a
    generator its caller consumes; the print makes this one run in Python.)"""
    for w in ws:
        x = layer(x, w)
        print(end="")
        yield x


def through_generator(x, ws):
    return list(stack_gen(x, ws))[-1]


def noisy_stack(x, ws):
    for w in ws:
        x = layer(x, w)
        print("layer", x.shape)            # a break inside a loop: the loop goes on in a resume function
    return x


def own_cache(fn):
    """The cache the hook gave `fn` (its code object's), or None if it was never hooked."""
    rec = global_hook._records.get(fn)
    return None if rec is None else rec.cache


def inputs(n, d=6, layers=3):
    return rng.standard_normal((n, d)), [rng.standard_normal((d, d)) * 0.3 for _ in range(layers)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_callees_of_a_generator_frame_compile(backend):
    f = ft.compile(through_generator, backend=backend)
    for n in (4, 4, 5, 4):
        x, ws = inputs(n)
        assert_same(f(x, ws), through_generator(x, ws))
    s = ft.stats()
    assert s.unique_graphs >= 1, s
    cache = own_cache(layer)
    assert cache is not None and cache.entries, "layer was not compiled as its own frame"
    assert s.cache_hits >= 6, s


@pytest.mark.parametrize("backend", BACKENDS)
def test_callees_of_a_frame_with_a_break_in_a_loop_compile(backend, capsys):
    from frametrace.trace.graph_break import MAX_NESTED_RESUMES
    f = ft.compile(noisy_stack, backend=backend)
    layers = MAX_NESTED_RESUMES + 6
    x, ws = inputs(5, layers=layers)
    assert_same(f(x, ws), noisy_stack(x, ws))
    assert capsys.readouterr().out.count("layer (5, 6)") == 2 * layers
    # the first iterations are in noisy_stack's graph and its loop's resume function (layer
    # inlined); past the nesting bound the rest of the loop runs in Python, and there layer
    # compiles as its own frame on its first call and hits on the next ones
    cache = own_cache(layer)
    assert cache is not None and cache.entries
    s = ft.stats()
    assert s.cache_hits >= 1 and s.frames_compiled >= 3 and s.eager_fallbacks == 0, s


def test_hooked_callees_run_their_own_code_outside_a_compiled_call():
    f = ft.compile(through_generator)
    x, ws = inputs(4)
    f(x, ws)
    assert layer.__code__ is not own_cache(layer).fn.__code__       # still hooked
    compiled, hits = ft.stats().frames_compiled, ft.stats().cache_hits
    for n in (7, 8, 9):                                              # new sizes: no compile outside
        x, ws = inputs(n)
        assert_same(layer(x, ws[0]), np.tanh(x @ ws[0]) * 0.5 + x)
    assert ft.stats().frames_compiled == compiled and ft.stats().cache_hits == hits
    assert sys.getprofile() is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compiled_function_called_from_another_compiled_frame(backend, capsys):
    inner = ft.compile(layer, backend=backend)

    def traced(x, w):                      # inlines inner's original code
        return inner(x, w).sum(0)

    def eager(x, ws):                      # calls inner from its eager part
        for w in ws:
            x = inner(x, w)
            print(x.shape)
        return x

    for n in (3, 4):
        x, ws = inputs(n)
        assert_same(ft.compile(traced, backend=backend)(x, ws[0]), (np.tanh(x @ ws[0]) * 0.5 + x).sum(0))
        assert_same(ft.compile(eager, backend=backend)(x, ws), noisy_stack(x, ws))
    assert ft.stats().unique_graphs >= 2


def scaled_steps(x, n):
    out = x * 2.0
    for i in range(n):
        out = out + i
    return out


def test_a_frame_that_runs_eagerly_still_serves_matching_entries():
    g = ft.compile(scaled_steps)
    x = rng.standard_normal(4)
    with ft.config.patch(cache_size_limit=1):
        assert_same(g(x, 2), scaled_steps(x, 2))      # compiles
        compiled = ft.stats().frames_compiled
        with pytest.warns(RuntimeWarning, match="cache_size_limit"):
            assert_same(g(x, 4), scaled_steps(x, 4))  # a miss at the limit: the frame now runs eagerly
        hits = ft.stats().cache_hits
        assert_same(g(x, 2), scaled_steps(x, 2))      # the first entry still serves n == 2
    assert ft.stats().cache_hits == hits + 1
    assert ft.stats().frames_compiled == compiled


def test_callees_compile_under_threads():
    errors = []
    f = ft.compile(through_generator)

    def work(seed):
        local = np.random.default_rng(seed)
        try:
            for n in (3, 4, 3, 4):
                x = local.standard_normal((n, 6))
                ws = [local.standard_normal((6, 6)) * 0.3 for _ in range(3)]
                assert_same(f(x, ws), through_generator(x, ws))
            assert sys.getprofile() is None          # nothing left behind in this thread
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert own_cache(layer).entries and ft.stats().cache_hits >= 12


def blend(x, w):
    """Called only by the next test: not hooked by any other test before it."""
    return np.cos(x @ w) * x


def blend_gen(x, ws):
    for w in ws:
        x = blend(x, w)
        print(end="")
        yield x


def through_blend_gen(x, ws):
    return list(blend_gen(x, ws))[-1]


def test_callees_are_found_on_the_first_call_though_the_miss_path_is_long(monkeypatch):
    """The first call of a compiled function arms discovery, then misses and compiles. The miss
    path before the compile can be more than QUIET_CALLS known calls (the compiler's first import,
    a loaded machine's logging), after which the profiler steps aside (here: made to, at the last
    step before the compile): discovery must be on again when the compile is done and the user's
    code runs, or `blend` runs eagerly until a later armed call finds it, after the backoff."""
    from frametrace import distributed
    exchange = distributed.exchange

    def exchange_then_step_aside(*args):
        exchange(*args)
        global_hook.disarm()

    monkeypatch.setattr(distributed, "exchange", exchange_then_step_aside)
    f = ft.compile(through_blend_gen)
    x, ws = inputs(4)
    assert_same(f(x, ws), through_blend_gen(x, ws))
    cache = own_cache(blend)
    assert cache is not None and cache.entries, "blend was not compiled on the first call"
    assert sys.getprofile() is None


def shift(x, w):
    return np.tanh(x @ w) - x


def shift_gen(x, ws):
    for w in ws:
        x = shift(x, w)
        print(end="")
        yield x


def through_shift_gen(x, ws):
    return list(shift_gen(x, ws))[-1]


def test_a_function_also_compiled_with_ft_compile_is_found_where_called_plainly():
    """`ft.compile(shift)` used from a compiled function's eager part: that function's scope
    reaches the trampoline by name, and must not mark `shift`'s own code as seen: plain calls of
    `shift` from another compiled function's eager part (a generator) still compile it."""
    inner = ft.compile(shift)

    def eager(x, ws):                      # calls inner from its eager part
        for w in ws:
            x = inner(x, w)
            print(end="")
        return x

    x, ws = inputs(4)
    assert_same(ft.compile(eager)(x, ws), through_shift_gen(x, ws))
    f = ft.compile(through_shift_gen)
    for n in (4, 4, 4):
        x, ws = inputs(n)
        assert_same(f(x, ws), through_shift_gen(x, ws))
    cache = own_cache(shift)
    assert cache is not None and cache.entries, "shift was never hooked"


def test_scope_is_popped_on_exceptions():
    def bad(x, ws):
        for w in ws:
            x = layer(x, w)
            print("ok")
        raise ValueError("user error")

    x, ws = inputs(3)
    with pytest.raises(ValueError, match="user error"):
        ft.compile(bad)(x, ws)
    assert global_hook.active_options() is None and sys.getprofile() is None
    compiled = ft.stats().frames_compiled
    layer(x, ws[0])                        # outside any compiled call: its own code
    assert ft.stats().frames_compiled == compiled


class Stack:
    """A model object: its method picks a layer's cache by a Python int (`self.caches[i]`)."""

    def __init__(self, d=6, layers=3):
        self.ws = [rng.standard_normal((d, d)) * 0.3 for _ in range(layers)]
        self.caches = [np.zeros((4, d)) for _ in range(layers)]

    def block(self, x, w, i):
        self.caches[i][0] = x[0]
        return np.tanh(x @ w) + self.caches[i].sum()

    def __call__(self, x):
        for i, w in enumerate(self.ws):
            x = self.block(x, w, i)
        return x


def test_a_compiled_method_called_on_another_instance_compiles_under_enable():
    """ft.compile(model) makes a trampoline for Stack.__call__; another instance called under
    ft.enable() runs the method's own code, not the trampoline: that call compiles (the hook's
    cache), with `block` inlined, instead of running eagerly while `block` compiles on its own
    once per layer index (its int guarded by value, past the cache-size limit)."""
    ft.reset()
    compiled_model, plain, eager = Stack(), Stack(), Stack()
    for m in (plain, eager):
        m.ws = compiled_model.ws
    compiled = ft.compile(compiled_model)
    x = rng.standard_normal((5, 6))
    assert_same(compiled(x), eager(x))
    with ft.enabled():
        for n in (5, 5, 7):
            x = rng.standard_normal((n, 6))
            assert_same(plain(x), eager(x))
            for a, b in zip(plain.caches, eager.caches):
                assert_same(a, b)
    assert own_cache(Stack.__call__) is not None and own_cache(Stack.__call__).entries
    block = own_cache(Stack.block)
    assert block is None or not block.entries, "block compiled on its own, per layer index"
