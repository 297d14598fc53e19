"""The runtime's trampoline and dispatch loop, independent of the compiler."""
import threading

import pytest

import csrc_free_runtime as rt
from csrc_free_runtime.cache import dispatch
from csrc_free_runtime.hook import frame_value_names


@pytest.fixture(autouse=True)
def _no_discovery():
    """The fake callbacks below live in this (candidate) module: keep them from being hooked."""
    import frametrace  # noqa: F401  (sets the real rules; restored below)
    from csrc_free_runtime import global_hook
    rules = dict(global_hook._rules)
    global_hook.set_rules(lambda code: False, rules["on_install"])
    yield
    global_hook.set_rules(rules["consider"], rules["on_install"])


def _with_callback(cb):
    import frametrace  # noqa: F401  (installs the real callback; restored below)
    from csrc_free_runtime import cache as c
    old = c._callback
    rt.set_callback(cb)
    return old


def test_frame_values_follow_co_varnames_then_free_vars():
    k = 7

    def f(a, b=2, *args, c, d=4, **kw):
        return a + b + c + d + k + len(args) + len(kw)

    assert frame_value_names(f.__code__) == ("a", "b", "c", "d", "args", "kw", "k")
    seen = []
    old = _with_callback(lambda cache, values: (seen.append(values), cache.run_original(*values))[1])
    try:
        t, _ = rt.make_trampoline(f)
        assert t(1, c=3) == f(1, c=3)
        assert t(1, 5, 6, 7, c=3, d=1, z=9) == f(1, 5, 6, 7, c=3, d=1, z=9)
    finally:
        rt.set_callback(old)
    assert seen[0] == (1, 2, 3, 4, (), {}, 7)
    assert seen[1] == (1, 5, 3, 1, (6, 7), {"z": 9}, 7)


def test_trampoline_keeps_signature_errors():
    def f(a, /, b):
        return a - b

    old = _with_callback(lambda cache, values: cache.run_original(*values))
    try:
        t, _ = rt.make_trampoline(f)
        assert t(5, b=2) == 3
        with pytest.raises(TypeError):
            t(a=5, b=2)
        with pytest.raises(TypeError):
            t(1, 2, 3)
    finally:
        rt.set_callback(old)


def test_entries_are_tried_newest_first_and_miss_falls_through():
    def f(x):
        return x

    calls = []
    old = _with_callback(lambda cache, values: ("miss", values))
    try:
        t, cache = rt.make_trampoline(f)
        cache.add(rt.CacheEntry(lambda x: "old" if x == 1 else rt.MISS, lambda x: x == 1, "0/0"))
        cache.add(rt.CacheEntry(lambda x: (calls.append(x), "new")[1] if x > 0 else rt.MISS,
                                lambda x: x > 0, "0/1"))
        assert t(1) == "new"
        assert t(-1) == ("miss", (-1,))
        assert calls == [1]
    finally:
        rt.set_callback(old)


def test_skip_mode_runs_the_original():
    def f(x):
        return x + 1

    old = _with_callback(lambda cache, values: pytest.fail("compiler called"))
    try:
        t, cache = rt.make_trampoline(f)
        cache.action = rt.Mode.SKIP
        assert t(1) == 2
        cache.action = rt.Mode.DEFAULT
        rt.set_mode(rt.Mode.SKIP)
        assert dispatch(cache, (2,)) == 3
    finally:
        rt.set_mode(rt.Mode.DEFAULT)
        rt.set_callback(old)


def test_adding_entries_while_other_threads_dispatch():
    def f(x):
        return x

    old = _with_callback(lambda cache, values: values[0])
    try:
        t, cache = rt.make_trampoline(f)
        errors = []

        def caller():
            try:
                for i in range(2000):
                    assert t(i) == i
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=caller) for _ in range(4)]
        for th in threads:
            th.start()
        for i in range(200):
            cache.add(rt.CacheEntry(lambda x, i=i: x if x == -i - 1 else rt.MISS, lambda x: False, f"0/{i}"))
        for th in threads:
            th.join()
        assert not errors
        assert len(cache.entries) == 200
    finally:
        rt.set_callback(old)


def test_defaults_are_read_from_the_function_at_each_call():
    def f(a, b=2, *, c=3):
        return a * 100 + b * 10 + c

    seen = []
    old = _with_callback(lambda cache, values: (seen.append(values), cache.run_original(*values))[1])
    try:
        t, _ = rt.make_trampoline(f)
        assert t(1) == f(1) == 123
        f.__defaults__ = (5,)
        f.__kwdefaults__ = {"c": 7}
        assert t(1) == f(1) == 157
        assert t(1, 4, c=0) == f(1, 4, c=0) == 140
    finally:
        rt.set_callback(old)
    assert seen == [(1, 2, 3), (1, 5, 7), (1, 4, 0)]
