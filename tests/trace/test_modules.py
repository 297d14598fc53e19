"""Programs spread over several modules: an inlined callee reads (and writes) the globals of its
own module, in the frame's entry, in resume functions after a graph break and under the global
hook; its guards are written against `fn.__globals__`, never the compiled frame's globals."""
import contextlib
import io
import sys
import textwrap

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """write(name, source) writes and imports a module from a fresh folder; all are forgotten after."""
    names = []
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(name, source):
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        names.append(name)
        __import__(name)
        return sys.modules[name]
    yield write
    for name in names:
        sys.modules.pop(name, None)


LOSSES = """
    import numpy as np
    SCALE = 2.0
    CALLS = {"n": 0}
    def accuracy(y):
        CALLS["n"] += 1
        return np.sum(y, axis=0) / len(y) * SCALE
    class Loss:
        def acc(self, y):
            return accuracy(y)
"""

NET = """
    import numpy as np
    from {losses} import Loss
    SCALE = 10.0                # the same name as a global of the other module, another value
    class Net:
        def __init__(self):
            self.loss = Loss()
        def step(self, x):
            y = np.tanh(x) * SCALE
            {brk}
            return self.loss.acc(y)
"""


def _quiet(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*args)


@pytest.mark.parametrize("brk", ["print('step')", "pass"])
def test_method_of_another_module_reads_its_own_globals(modules, brk):
    losses = modules("ml_losses_a", LOSSES)
    net = modules("ml_net_a", NET.format(losses="ml_losses_a", brk=brk))
    step = ft.compile(net.Net().step)
    for k in range(4):
        x = np.ones((4, 3)) * k
        want = np.sum(np.tanh(x) * 10.0, axis=0) / 4 * 2.0
        assert_same(_quiet(step, x), want)
    assert losses.CALLS["n"] == 4
    # the other module's global is guarded there, not in the frame's module
    losses.SCALE = 3.0
    x = np.ones((4, 3))
    assert_same(_quiet(step, x), np.sum(np.tanh(x) * 10.0, axis=0) / 4 * 3.0)
    net.SCALE = 1.0
    assert_same(_quiet(step, x), np.sum(np.tanh(x), axis=0) / 4 * 3.0)
    assert losses.CALLS["n"] == 6


def test_the_guard_names_the_callees_module(modules):
    modules("ml_losses_b", LOSSES)
    net = modules("ml_net_b", NET.format(losses="ml_losses_b", brk="pass"))
    guards = [str(g) for g in ft.explain(net.Net().step, np.ones((4, 3))).guards]
    assert any(g.startswith("ml_losses_b.__dict__['accuracy'].__code__") for g in guards), guards
    assert not any("G['accuracy']" in g for g in guards), guards


def test_global_store_in_another_module(modules):
    counter = modules("ml_counter", """
        import numpy as np
        TOTAL = 0
        def bump(x):
            global TOTAL
            TOTAL = TOTAL + 1
            return x + TOTAL
    """)
    user = modules("ml_user", """
        from ml_counter import bump
        TOTAL = 100
        class Runner:
            def run(self, x):
                return bump(x) * 2
    """)
    run = ft.compile(user.Runner().run)
    for k in range(1, 5):
        assert_same(run(np.zeros(3)), np.full(3, 2.0 * k))
    assert counter.TOTAL == 4 and user.TOTAL == 100


def test_a_builtin_shadowed_later_in_the_other_module(modules):
    helper = modules("ml_helper", """
        import numpy as np
        def size_of(y):
            return y * len(y)
        class H:
            def go(self, y):
                return size_of(y)
    """)
    user = modules("ml_user2", """
        from ml_helper import H
        h = H()
        def f(x):
            return h.go(x) + 1
    """)
    f = ft.compile(user.f)
    assert_same(f(np.ones(3)), np.full(3, 4.0))
    helper.len = lambda y: 7          # a global now shadows the builtin in the callee's module only
    assert_same(f(np.ones(3)), np.full(3, 8.0))


def test_decode_loop_with_model_functions_from_another_module(modules):
    model = modules("ml_model", """
        import numpy as np
        TEMPERATURE = 1.0
        def softmax(x):
            e = np.exp((x - np.max(x, axis=-1, keepdims=True)) / TEMPERATURE)
            return e / np.sum(e, axis=-1, keepdims=True)
        class Model:
            def __init__(self, w):
                self.w = w
            def __call__(self, tokens):
                return softmax(self.w[tokens]).sum(0)
    """)
    w = np.random.default_rng(1).standard_normal((16, 8))

    def decode(m, tokens, n):
        for _ in range(n):
            logits = m(np.array(tokens))
            print(len(tokens))                  # a graph break in the loop
            tokens.append(int(np.argmax(logits)))
        return tokens
    want = _quiet(decode, model.Model(w), [1, 2], 5)
    assert _quiet(ft.compile(decode), model.Model(w), [1, 2], 5) == want
    ft.reset()
    with ft.enabled():
        assert _quiet(decode, model.Model(w), [1, 2], 5) == want


def test_a_method_of_another_module_writes_its_globals(modules):
    # the method comes with no source of its own (read off a guarded class): its module's globals
    # are held by the entry, for reads, writes and builtins alike
    lib = modules("ml_stateful", """
        import numpy as np
        K = 3
        STEPS = 0
        class Counter:
            def go(self, y):
                global STEPS
                STEPS = STEPS + 1
                return y * K + len(y)
    """)
    user = modules("ml_stateful_user", """
        STEPS = 100
        def f(h, x):
            return h.go(x) + 1
    """)
    f = ft.compile(user.f)
    h = lib.Counter()
    for k in range(1, 4):
        assert_same(f(h, np.ones(3)), np.full(3, 7.0))
        assert (lib.STEPS, user.STEPS) == (k, 100)
    lib.K = 4
    assert_same(f(h, np.ones(3)), np.full(3, 8.0))
    lib.len = lambda v: 100
    assert_same(f(h, np.ones(3)), np.full(3, 105.0))
    assert lib.STEPS == 5
