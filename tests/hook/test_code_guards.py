"""A caller that inlined a helper is guarded by the helper's code object. The global hook swaps a
function's `__code__` for its trampoline when it hooks it (and gives it back when it gives up on
it): neither is a change of the code the caller inlined, so neither recompiles the caller. A new
function under the same name still does."""
import numpy as np

import frametrace as ft


def scale(a):
    return a * np.pi


def caller(x, a):
    return x * scale(a) + 1


def test_hooking_a_helper_after_its_caller_compiled_does_not_recompile_the_caller():
    ft.reset()
    x = np.arange(8.0)
    with ft.enabled():
        got = []
        for k in range(4):
            got.append(caller(x, 1.5))
            got.append(scale(2.0 + k))          # called directly: now hooked (its trampoline)
        for _ in range(3):
            got.append(caller(x, 1.5))
    want = []
    for k in range(4):
        want += [caller(x, 1.5), scale(2.0 + k)]
    want += [caller(x, 1.5)] * 3
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    s = ft.stats()
    assert s.recompiles == 0 and s.eager_fallbacks == 0, s


def test_a_new_helper_under_the_same_name_still_recompiles_the_caller():
    global scale
    ft.reset()
    x = np.arange(8.0)
    f = ft.compile(caller)
    np.testing.assert_array_equal(f(x, 1.5), x * (1.5 * np.pi) + 1)
    old = scale
    try:
        def scale(a):                          # noqa: F811 - rebinding the global is the point
            return a * 2.0
        np.testing.assert_array_equal(f(x, 1.5), x * 3.0 + 1)
    finally:
        scale = old
    assert ft.stats().recompiles == 1


class Model:
    def __init__(self, rng, n=4, width=6):
        self.ws = [rng.standard_normal((width, width)) * 0.3 for _ in range(n)]
        self.b = rng.standard_normal(width)


def act(v):
    return np.tanh(v) + 0.5 * v


def forward(model, x):
    for w in model.ws:                       # weights reached through an object: a native check
        x = act(x @ w + model.b)
    return x


def test_a_native_guard_check_that_meets_a_hooked_helper_asks_the_python_condition():
    ft.reset()
    rng = np.random.default_rng(3)
    model, x = Model(rng), rng.standard_normal((3, 6))
    with ft.enabled():
        got = [forward(model, x), forward(model, x)]
        for k in range(3):                   # the helper on floats: the hook gives it its code back
            got += [act(0.5 * k), forward(model, x)]
    want = [forward(model, x)] * 2
    for k in range(3):
        want += [act(0.5 * k), forward(model, x)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)     # (products' summation order)
    s = ft.stats()
    assert s.recompiles == 0 and s.eager_fallbacks == 0, s


def half(v):
    return v * 0.5


def test_reset_makes_a_function_given_its_code_back_a_candidate_again():
    """A hooked function whose first graph holds no array work gets its own code back; ft.reset()
    forgets that decision with the rest: hooked again, on arrays it compiles."""
    from csrc_free_runtime import global_hook
    ft.reset()
    own = half.__code__
    with ft.enabled():
        assert half(3.0) == 1.5 and half(5.0) == 2.5
        assert half.__code__ is own and half not in global_hook.hooked_functions()   # given back
        ft.reset()
        assert half.__code__ is not own and half in global_hook.hooked_functions()   # hooked again
        x = np.arange(6.0)
        got = [half(x) for _ in range(3)]
        assert ft.stats().frames_compiled == 1
    for g in got:
        np.testing.assert_array_equal(g, x * 0.5)
    assert half.__code__ is own                       # ft.disable() gives it back
