"""The guards of a model passed as an object, checked by one native builtin (native_check.py):
every source read once, the graph's inputs handed back. Each field of a weight deep in the model
(dtype, shape, ndim, strides / layout, type, the array object's own shape changed in place, dict
keys, list length, an int or float attribute, a function's identity) is changed in turn: the
native check must miss exactly where the Python check fails, and the compiled model must recompile
and return the eager result."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import cache as rt_cache
from csrc_free_runtime.native import NATIVE_MISS

rng = np.random.default_rng(7)


MODEL_SOURCE = """
def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.8 * x))


class Block:
    def __init__(self, d, h):
        self.ff = {"w_in": rng.standard_normal((d, h)), "w_out": rng.standard_normal((h, d)) * 0.1}
        self.norm = rng.standard_normal(d) + 1.0
        self.scale = 0.5
        self.act = gelu

    def __call__(self, x):
        y = x * self.norm * self.scale
        return x + self.act(y @ self.ff["w_in"]) @ self.ff["w_out"]


class Model:
    def __init__(self, n_blocks=4, d=8, h=16):
        self.blocks = [Block(d, h) for _ in range(n_blocks)]
        self.head = rng.standard_normal((d, 3)).astype(np.float32)
        self.n_out = 3

    def __call__(self, x):
        for b in self.blocks:
            x = b(x)
        return (x @ self.head)[:, :self.n_out]
"""


def fresh_model():
    """A model of freshly defined classes (new code objects: no test sees another's compiles)."""
    ns = {"np": np, "rng": rng, "__name__": "native_check_model"}
    exec(compile(MODEL_SOURCE, "native_check_model.py", "exec"), ns)
    return ns["Model"]()


def _entry_of(model, x):
    """The compiled entry of `model.__call__` whose guards hold for (model, x)."""
    found = [e for c in rt_cache.all_caches() if c.code is type(model).__call__.__code__
             for e in c.entries if e.check(model, x)]
    assert len(found) == 1, found
    return found[0]


def _agree(entry, model, x):
    nat = entry.call.native_check.fn(model, x) is not NATIVE_MISS
    return nat == entry.check(model, x)


def perturbations():
    """(name, change(model)) pairs: each changes one thing a guard holds about blocks[2]."""
    def blk(m):
        return m.blocks[2]

    def setw(attr, key, value):
        def f(m):
            getattr(blk(m), attr)[key] = value(getattr(blk(m), attr)[key])
        return f

    def reshape_in_place(m):
        w = blk(m).ff["w_in"]
        w.shape = (w.shape[1], w.shape[0])              # the same object, its shape changed

    return [                        # (name, change, guarded: the entry must miss)
        ("dtype", setw("ff", "w_in", lambda w: w.astype(np.float32)), True),
        ("shape", setw("ff", "w_in", lambda w: np.ones((w.shape[0], w.shape[1] + 1))), True),
        ("ndim", setw("ff", "w_out", lambda w: w[None]), True),
        ("type", setw("ff", "w_in", lambda w: np.asarray(w).view(np.matrix)), True),
        ("list", setw("ff", "w_in", lambda w: w.tolist()), True),
        ("shape in place", reshape_in_place, True),
        ("keys", lambda m: blk(m).ff.update(extra=1), True),
        ("key order", lambda m: setattr(blk(m), "ff", {"w_out": blk(m).ff["w_out"], "w_in": blk(m).ff["w_in"]}), True),
        ("missing attribute", lambda m: delattr(blk(m), "norm"), True),
        ("int attribute", lambda m: setattr(m, "n_out", 2), True),
        ("int type", lambda m: setattr(m, "n_out", 3.0), True),
        ("function", lambda m: setattr(blk(m), "act", np.tanh), True),
        ("list length", lambda m: m.blocks.append(m.blocks[0]), True),
        ("list item type", lambda m: m.blocks.__setitem__(2, {"not": "a block"}), True),
        ("head dtype", lambda m: setattr(m, "head", m.head.astype(np.float64)), True),
        # not guarded: kernels take strides at run time, a float attribute is a graph input
        ("layout", setw("ff", "w_in", lambda w: np.asfortranarray(w)), False),
        ("strided", setw("ff", "w_in", lambda w: np.repeat(w, 2, axis=1)[:, ::2]), False),
        ("float attribute", lambda m: setattr(blk(m), "scale", 0.25), False),
    ]


def test_model_guards_are_one_native_check():
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    np.testing.assert_allclose(cm(x), model(x), rtol=1e-12)
    entry = _entry_of(model, x)
    nc = entry.call.native_check
    assert nc is not None and nc.full and not nc.rest          # every guard compiled, inputs handed back
    assert nc.guarded == len(entry.info.guards)
    assert isinstance(nc.fn(model, x), tuple)


@pytest.fixture(scope="module")
def compiled():
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    cm(x)
    return model, cm, x, _entry_of(model, x)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("name,change,guarded", perturbations(), ids=[p[0] for p in perturbations()])
def test_every_field_change_is_caught(compiled, name, change, guarded):
    """The native check misses exactly where the Python condition fails, on one field change."""
    model, _, x, entry = compiled
    changed = copy.deepcopy(model)
    change(changed)
    assert _agree(entry, changed, x)
    assert entry.check(changed, x) is not guarded


@pytest.mark.parametrize("which", ["dtype", "keys", "int attribute", "function", "layout"])
def test_changed_model_recompiles_to_the_eager_result(which):
    name, change, guarded = next(p for p in perturbations() if p[0] == which)
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    cm(x)
    graphs = ft.stats().unique_graphs
    change(model)
    np.testing.assert_allclose(np.asarray(cm(x), np.float64), np.asarray(model(x), np.float64), rtol=1e-6)
    assert ft.stats().unique_graphs == graphs + guarded


def test_same_model_changed_in_place_recompiles_and_stays_right():
    """One compiled model whose deep weight changes between calls (the same object path)."""
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    cm(x)
    before = ft.stats().unique_graphs
    model.blocks[3].ff["w_out"] = model.blocks[3].ff["w_out"].astype(np.float32)
    np.testing.assert_allclose(cm(x), model(x), rtol=1e-6)
    assert ft.stats().unique_graphs == before + 1
    model.blocks[1].ff["w_in"][:] = 0.0                        # values are not guarded: no recompile
    np.testing.assert_allclose(cm(x), model(x), rtol=1e-6)
    assert ft.stats().unique_graphs == before + 1


def test_random_perturbations_agree_with_python_check():
    """Differential: many random changes of the model; the native check passes exactly when the
    Python condition holds."""
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    cm(x)
    entry = _entry_of(model, x)
    changes = [c for _, c, _ in perturbations()]
    for trial in range(40):
        m = copy.deepcopy(model)
        for i in rng.choice(len(changes), size=rng.integers(0, 3), replace=False):
            try:
                changes[i](m)
            except Exception:
                pass
        assert _agree(entry, m, x), trial
