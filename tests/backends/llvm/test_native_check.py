"""The guards of a model passed as an object, checked by one native builtin (native_check.py):
every source read once, the graph's inputs handed back. Each field of a weight deep in the model
(dtype, shape, ndim, strides / layout, type, the array object's own shape changed in place, dict
keys, list length, an int or float attribute, a function's identity) is changed in turn: the
native check must miss exactly where the Python check fails, and the compiled model must recompile
and return the eager result."""
from __future__ import annotations

import copy
import sys
import warnings

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


def _check_of(entry):
    """The entry's native check: its own (a graph without a native entry), or, beside a native
    entry that walks the model (the model's graph is one native call since session 10), the
    check its Python path asks when the native entry misses (trace/compile._MissPath builds it
    on the path's second call: built here)."""
    call = entry.call
    if getattr(call, "native_check", None) is None and hasattr(call, "build"):
        call.fn = call.fn or call.build()
    return call.native_check


def _agree(entry, model, x):
    nat = _check_of(entry).fn(model, x) is not NATIVE_MISS
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
        with warnings.catch_warnings():                 # NumPy 2.5 deprecates the shape setter
            warnings.simplefilter("ignore", DeprecationWarning)
            w.shape = (w.shape[1], w.shape[0])          # the same object, its shape changed

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
        ("identity", setw("ff", "w_in", lambda w: w * 2.0), False),          # another object, same fields
        ("read-only", setw("ff", "w_in", _read_only), False),                # only read: flags not guarded
    ]


def _read_only(w):
    w = w.copy()
    w.flags.writeable = False
    return w


def test_model_guards_are_one_native_check():
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    np.testing.assert_allclose(cm(x), model(x), rtol=1e-12)
    entry = _entry_of(model, x)
    nc = _check_of(entry)
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


def test_replaced_weight_objects_are_the_ones_read():
    """A weight replaced by another array of the same fields passes the guards (no recompile),
    and the call reads the new object: the inputs handed back come from this call's walk."""
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    cm(x)
    graphs = ft.stats().unique_graphs
    for i in range(4):
        b = model.blocks[i]
        b.ff["w_in"] = b.ff["w_in"] * -1.5
        b.norm = np.ascontiguousarray(b.norm[::-1])
        np.testing.assert_allclose(cm(x), model(x), rtol=1e-12)
    ro = _read_only(model.head)
    model.head = ro
    np.testing.assert_allclose(cm(x), model(x), rtol=1e-6)
    assert ft.stats().unique_graphs == graphs


WRITER_SOURCE = """
class Cache:
    def __init__(self):
        self.layers = [{"k": np.zeros((6, 4))} for _ in range(3)]

    def __call__(self, x, pos):
        for layer in self.layers:
            layer["k"][pos] = x * 2.0
            x = layer["k"][:pos + 1].sum(axis=0)
        return x
"""


def test_read_only_flag_of_a_deep_array_written_in_place():
    """A deep array the graph writes into, made read-only: NumPy's ValueError, from the compiled
    model as from the eager one (the writeable flag is guarded or checked where it is written)."""
    ns = {"np": np, "__name__": "native_check_writer"}
    exec(compile(WRITER_SOURCE, "native_check_writer.py", "exec"), ns)
    ft.reset()
    model, eager = ns["Cache"](), ns["Cache"]()
    cm = ft.compile(model)
    x = np.arange(4.0)
    for pos in range(3):
        np.testing.assert_array_equal(cm(x, pos), eager(x, pos))
    model.layers[2]["k"].flags.writeable = False
    eager.layers[2]["k"].flags.writeable = False
    with pytest.raises(ValueError) as want:
        eager(x, 3)
    with pytest.raises(ValueError) as got:
        cm(x, 3)
    assert str(got.value) == str(want.value)
    for a, b in zip(model.layers, eager.layers):
        np.testing.assert_array_equal(a["k"], b["k"])      # writes before the error, as NumPy's


def test_references_balanced_over_many_checks():
    """The check takes a reference to every object it walks and hands the inputs' references
    to its result: after many hits and misses every object's count is what it was."""
    ft.reset()
    model = fresh_model()
    cm = ft.compile(model)
    x = rng.standard_normal((5, 8))
    cm(x)
    entry = _entry_of(model, x)
    fn = _check_of(entry).fn
    objs = [model, model.blocks, model.head, x] + [o for b in model.blocks
                                                   for o in (b, b.ff, b.ff["w_in"], b.ff["w_out"], b.norm)]
    before = [sys.getrefcount(o) for o in objs]
    other = copy.deepcopy(model)
    other.blocks[3].ff["w_out"] = other.blocks[3].ff["w_out"].astype(np.float32)   # a miss late in the walk
    for _ in range(1000):
        got = fn(model, x)
        assert isinstance(got, tuple)
        del got
        assert fn(other, x) is NATIVE_MISS
    assert [sys.getrefcount(o) for o in objs] == before
