"""ft.enable(): functions are compiled without decorators; ft.disable() restores them."""
import threading

import numpy as np

import frametrace as ft
from frametrace.enable import consider
from helpers import assert_same


def model(x, w):
    h = np.maximum(x @ w, 0.0)
    return (h * h).sum(axis=1)


def pure_python(a, b):
    return a * b + 1


class Layer:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(x @ self.w)


def test_enable_compiles_and_disable_restores_code_objects():
    original = model.__code__
    w = np.ones((4, 3))
    with ft.enabled():
        outs = [model(np.full((n, 4), 0.5), w) for n in (2, 3, 5, 7)]
        assert model.__code__ is not original        # swapped for the trampoline
    assert model.__code__ is original
    for n, o in zip((2, 3, 5, 7), outs):
        assert_same(o, model(np.full((n, 4), 0.5), w))
    s = ft.stats()
    assert s.frames_compiled >= 1 and 1 <= s.unique_graphs <= 3 and s.cache_hits >= 1


def test_methods_are_hooked_too():
    layer = Layer(np.eye(3))
    with ft.enabled():
        for n in (2, 3, 4):
            x = np.arange(3.0 * n).reshape(n, 3)
            assert_same(layer.forward(x), np.tanh(x @ layer.w))
    assert ft.stats().unique_graphs >= 1


def test_functions_without_array_work_get_their_code_back():
    original = pure_python.__code__
    with ft.enabled():
        for i in range(5):
            assert pure_python(i, 2) == i * 2 + 1
        assert pure_python.__code__ is original      # skipped after its first trace
    assert ft.stats().unique_graphs == 0


def test_skip_rules():
    import json
    assert consider(model.__code__)
    assert not consider(json.dumps.__code__)          # standard library
    assert not consider(np.linalg.norm.__wrapped__.__code__)      # installed package
    assert not consider(ft.compile.__code__)          # frametrace itself

    def gen():
        yield 1
    assert not consider(gen.__code__)


def test_hook_under_threads():
    w = np.ones((4, 2))
    errors = []

    def work():
        try:
            for n in (2, 3, 4, 5):
                x = np.full((n, 4), 0.25)
                np.testing.assert_allclose(model(x, w), ((np.maximum(x @ w, 0)) ** 2).sum(axis=1))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with ft.enabled():
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


class Dense:
    def __init__(self, w):
        self.w = w

    def __call__(self, x):                  # hooked too: inlined through its class, not dispatched
        return np.tanh(x @ self.w) * self.gain

    @property
    def gain(self):
        return self.unit() * 2.0

    @classmethod
    def unit(cls):
        return 1.0


class Stack2:
    def __init__(self):
        self.layers = [Dense(np.eye(3)), Dense(np.eye(3) * 0.5)]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x.sum()


def decode_with(model, x):
    return model(x) + 1.0


def test_hooked_methods_reached_through_objects_are_inlined():
    # __call__, a property and a classmethod of hooked classes: the trace inlines the user's code,
    # never the trampoline's call of the hook's own dispatch function
    model = Stack2()
    want = [decode_with(model, np.full((n, 3), 0.1 * n)) for n in (2, 3, 4)]
    with ft.enabled():
        got = [decode_with(model, np.full((n, 3), 0.1 * n)) for n in (2, 3, 4)]
    for g, w in zip(got, want):
        assert_same(g, w)
    assert ft.stats().graph_breaks == 0, ft.stats()


class Compiled:
    @ft.compile
    def scale(self, x):                     # an ft.compile'd method read off the class
        return x * self.k

    def __init__(self):
        self.k = 3.0

    def __call__(self, x):
        return self.scale(x) + 1


def test_an_ft_compiled_method_read_off_a_class_is_inlined():
    obj = Compiled()
    f = ft.compile(lambda o, x: o(x) * 2)
    for n in (2, 3):
        assert_same(f(obj, np.ones(n)), (np.ones(n) * 3.0 + 1) * 2)
    assert ft.stats().graph_breaks == 0, ft.stats()


def test_a_module_imported_twice_keeps_its_own_globals(tmp_path, monkeypatch):
    # the second import's functions have code objects equal (by content) to the first's: each
    # function must still read and write its own module's globals
    import importlib
    import sys
    (tmp_path / "hk_twice.py").write_text(
        "import numpy as np\nTOTAL = 0\n"
        "def bump(v):\n    global TOTAL\n    TOTAL = TOTAL + v.shape[0]\n    return v * TOTAL\n"
        "def run(v):\n    return bump(v) + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        first = importlib.import_module("hk_twice")
        with ft.enabled():
            first.run(np.ones(2))
        sys.modules.pop("hk_twice")
        second = importlib.import_module("hk_twice")
        assert second is not first and second.bump.__code__ == first.bump.__code__
        with ft.enabled():
            got = [second.run(np.ones(n)) for n in (3, 4)]
        assert_same(got[0], np.full(3, 4.0))
        assert_same(got[1], np.full(4, 8.0))
        assert (first.TOTAL, second.TOTAL) == (2, 7)
        run = ft.compile(second.run)           # a compiled scope hooks the callee too
        assert_same(run(np.ones(2)), np.full(2, 10.0))
        assert (first.TOTAL, second.TOTAL) == (2, 9)
    finally:
        sys.modules.pop("hk_twice", None)
