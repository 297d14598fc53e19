"""Instance attributes read by native checks without PyObject_GetAttr (walk_helpers.py,
pyversion/instance_attrs.py): the class's version tag and the managed dict's values. Every
change to a deep weight, to an instance's dict or to its class must still be caught: the native
check and the native entry miss exactly where the Python condition fails, and the compiled model
recompiles (or not) to the eager result. The model is a user program in two modules (the classes
in one, the call in another)."""
from __future__ import annotations

import copy
import importlib
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frametrace as ft
from csrc_free_runtime import cache as rt_cache
from csrc_free_runtime.native import NATIVE_MISS
from frametrace.backends.llvm.native_check import build_native_check
from frametrace.backends.llvm.walk_helpers import helper_address
from frametrace.pyversion import instance_attrs as ia

LAYERS_SOURCE = '''
import numpy as np


class Layer:
    def __init__(self, rng, d):
        self.w = rng.standard_normal(d)
        self.p = {"bias": rng.standard_normal(d) * 0.1}
        self.gain = 1.5

    def __call__(self, x):
        return np.tanh(x * self.w + self.p["bias"]) * self.gain


class Model:
    def __init__(self, n, d=6, seed=0):
        rng = np.random.default_rng(seed)
        self.layers = [Layer(rng, d) for _ in range(n)]
        self.head = rng.standard_normal((d, 2))

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x @ self.head
'''

RUN_SOURCE = '''
import frametrace as ft


def compiled(model):
    return ft.compile(model)


def forward(cm, x):
    return cm(x)
'''

_count = [0]


@pytest.fixture
def program(tmp_path, monkeypatch):
    """(layers module, run module) of a fresh two-module program (new classes each time)."""
    _count[0] += 1
    names = (f"walk_layers_{_count[0]}", f"walk_run_{_count[0]}")
    (tmp_path / f"{names[0]}.py").write_text(textwrap.dedent(LAYERS_SOURCE))
    (tmp_path / f"{names[1]}.py").write_text(textwrap.dedent(RUN_SOURCE))
    monkeypatch.syspath_prepend(str(tmp_path))
    mods = tuple(importlib.import_module(n) for n in names)
    yield mods
    for n in names:
        sys.modules.pop(n, None)


def _entry(model, x):
    found = [e for c in rt_cache.all_caches() if c.code is type(model).__call__.__code__
             for e in c.entries if e.check(model, x)]
    assert len(found) == 1
    return found[0]


def _check_of(entry):
    """The entry's guards as a stand-alone native check (as models whose graph has no native
    entry get one), built here so that the test does not depend on which entry the graph got."""
    nc = build_native_check(entry.info.argnames, entry.info.guards, [], [], entry.info.namespace, "walk_test")
    assert nc is not None and nc.guarded == len(entry.info.guards)
    return nc.fn


def _compile(program, n=3):
    layers, run = program
    ft.reset()
    model, x = layers.Model(n), np.linspace(-1.0, 1.0, 30).reshape(5, 6)
    cm = run.compiled(model)
    np.testing.assert_allclose(run.forward(cm, x), model(x), rtol=1e-12)
    return model, cm, x, _entry(model, x)


def test_attributes_are_read_through_the_helper(program):
    assert ia.AVAILABLE, "this CPython's instance layout was not recognised"
    model, cm, x, entry = _compile(program)
    nc = build_native_check(entry.info.argnames, entry.info.guards, [], [], entry.info.namespace, "walk_test")
    assert str(helper_address("ft_attr_read")) in nc.entry.ir
    assert str(helper_address("ft_keys_same")) in nc.entry.ir
    layer = model.layers[1]
    for name in ("w", "p", "gain"):
        slot = ia.attr_slot(type(layer), name)
        assert slot is not None and ia.read(layer, slot) is getattr(layer, name)
    assert ia.attr_slot(type(model), "__call__") is None          # a class attribute: generic


def _field_changes():
    """(name, change(layer), guarded) for one layer of the model."""
    def set_w(f):
        return lambda layer: setattr(layer, "w", f(layer.w))

    def set_b(f):
        return lambda layer: layer.p.__setitem__("bias", f(layer.p["bias"]))

    return [
        ("dtype", set_w(lambda w: w.astype(np.float32)), True),
        ("shape", set_w(lambda w: np.ones(w.shape[0] + 1)), True),
        ("ndim", set_b(lambda b: b[None]), True),
        ("type", set_w(lambda w: w.tolist()), True),
        ("subclass", set_b(lambda b: b.view(np.ma.MaskedArray)), True),
        ("keys", lambda layer: layer.p.update(extra=1), True),
        ("key gone", lambda layer: setattr(layer, "p", {"c": layer.p["bias"]}), True),
        ("deleted", lambda layer: delattr(layer, "w"), True),
        ("gain type", lambda layer: setattr(layer, "gain", 2), True),
        ("same fields", set_w(lambda w: w * 3.0), False),
        ("strided", set_w(lambda w: np.repeat(w, 2)[::2]), False),
        ("gain value", lambda layer: setattr(layer, "gain", -0.5), False),
        ("materialised", lambda layer: vars(layer), False),
        ("combined dict", lambda layer: [setattr(layer, f"x{i}", i) for i in range(40)], False),
        ("deleted and set", lambda layer: (delattr(layer, "w"), setattr(layer, "w", np.zeros(6))), False),
        ("own __dict__", lambda layer: setattr(layer, "__dict__", dict(vars(layer))), False),
        # the keys guard's in-place read (dict_entries.py) declines; PyDict_Next decides
        ("equal key", lambda layer: setattr(layer, "p", {"".join(["bi", "as"]): layer.p["bias"]}), False),
        ("deleted entry", lambda layer: (layer.p.update(z=1), layer.p.pop("z")), False),
        ("new b", lambda layer: setattr(layer, "p", {"bias": layer.p["bias"].copy()}), False),
    ]


CHANGES = _field_changes()


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_change_of_any_layer_is_caught(program, data):
    """Hypothesis over which layer and which of its fields change (one or two changes): the
    native check agrees with the Python condition, and misses where a guarded field changed."""
    model, cm, x, entry = _cached(program)
    fn = _check_of(entry)
    m = copy.deepcopy(model)
    picks = data.draw(st.lists(st.tuples(st.integers(0, len(m.layers) - 1), st.sampled_from(CHANGES)),
                               min_size=1, max_size=2))
    guarded = False
    for i, (_, change, g) in picks:
        try:
            change(m.layers[i])
        except (AttributeError, KeyError, TypeError):
            continue                     # e.g. `w` deleted, or made a list, by the first change
        guarded = guarded or g
    python = entry.check(m, x)
    assert (fn(m, x) is not NATIVE_MISS) == python
    if not guarded:
        assert python


_compiled: dict = {}


def _cached(program):
    """One compile per program fixture instance (hypothesis reuses the fixture's modules)."""
    key = program[0].__name__
    if key not in _compiled:
        _compiled.clear()
        _compiled[key] = _compile(program)
    return _compiled[key]


@pytest.mark.parametrize("name", [c[0] for c in CHANGES])
def test_each_change_recompiles_to_the_eager_result(program, name):
    _, change, guarded = next(c for c in CHANGES if c[0] == name)
    model, cm, x, _ = _compile(program)
    graphs = ft.stats().unique_graphs
    change(model.layers[2])
    layers, run = program
    try:
        want = model(x)
    except Exception as exc:             # noqa: BLE001 - the eager model raises: so must we
        with pytest.raises(type(exc)):
            run.forward(cm, x)
        return
    np.testing.assert_allclose(np.asarray(run.forward(cm, x), np.float64), np.asarray(want, np.float64), rtol=1e-6)
    assert ft.stats().unique_graphs == graphs + guarded


CLASS_CHANGES = [
    ("property", lambda cls: setattr(cls, "w", property(lambda self: np.full(6, 2.0)))),
    ("class default shadowed", lambda cls: setattr(cls, "gain", 3.0)),
    ("__getattr__", lambda cls: setattr(cls, "__getattribute__",
                                        lambda self, n: np.zeros(6) if n == "w" else object.__getattribute__(self, n))),
    ("base class", lambda cls: setattr(cls.__mro__[1] if cls.__mro__[1] is not object else cls, "w",
                                       property(lambda self: np.full(6, 2.0)))),
]


@pytest.mark.parametrize("name", [c[0] for c in CLASS_CHANGES])
def test_class_changes_take_the_generic_lookup(program, name):
    """A class changed after compiling (a new version tag): reads take PyObject_GetAttr, whose
    answer the guards then judge; the compiled model gives the eager result."""
    change = dict(CLASS_CHANGES)[name]
    model, cm, x, entry = _compile(program)
    fn = _check_of(entry)
    before = (fn(model, x) is not NATIVE_MISS, entry.check(model, x))
    change(type(model.layers[0]))
    layers, run = program
    assert before == (True, True)
    assert (fn(model, x) is not NATIVE_MISS) == entry.check(model, x)
    np.testing.assert_allclose(np.asarray(run.forward(cm, x), np.float64), model(x), rtol=1e-6)


def test_class_swapped_on_an_instance(program):
    """`layer.__class__ = Sub`: the type guard misses; a Sub whose layout differs is never read
    at the old class's index."""
    model, cm, x, entry = _compile(program)
    fn = _check_of(entry)
    layers, run = program

    class Sub(layers.Layer):
        @property
        def w(self):
            return np.full(6, 2.0)

    model.layers[1].__class__ = Sub
    assert fn(model, x) is NATIVE_MISS and not entry.check(model, x)
    np.testing.assert_allclose(run.forward(cm, x), model(x), rtol=1e-12)


def test_native_entry_of_a_model_without_products_uses_the_helper(program):
    """Models without a product get a native entry on the same walk: the helper serves it too,
    and it misses where the Python condition fails."""
    layers, run = program
    ft.reset()

    class Plain(layers.Model):
        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    model, x = Plain(4), np.linspace(-1.0, 1.0, 6)
    cm = run.compiled(model)
    np.testing.assert_allclose(run.forward(cm, x), model(x), rtol=1e-12)
    entry = _entry(model, x)
    assert entry.native is not None and str(helper_address("ft_attr_read")) in entry.native.ir
    hits = entry.native.hits
    np.testing.assert_allclose(run.forward(cm, x), model(x), rtol=1e-12)
    assert entry.native.hits == hits + 1
    for name, change, guarded in CHANGES:
        m = copy.deepcopy(model)
        try:
            change(m.layers[3])
        except (AttributeError, KeyError):
            continue
        got = entry.native.fn(m, x)
        assert (got is not NATIVE_MISS) == entry.check(m, x), name
        assert not (guarded and got is not NATIVE_MISS), name
        if got is not NATIVE_MISS:
            np.testing.assert_allclose(got, m(x), rtol=1e-12)


def test_references_balanced_through_the_fast_reads(program):
    model, cm, x, entry = _compile(program)
    fn = _check_of(entry)
    objs = [model, model.layers, model.head] + [o for layer in model.layers for o in (layer, layer.w, layer.p,
                                                                                      layer.p["bias"], layer.gain)]
    other = copy.deepcopy(model)
    other.layers[2].p["bias"] = other.layers[2].p["bias"].astype(np.float32)      # a miss late in the walk
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(500):
        got = fn(model, x)
        assert isinstance(got, tuple)
        del got
        assert fn(other, x) is NATIVE_MISS
    assert [sys.getrefcount(o) for o in objs] == before


PRODUCT_SOURCE = '''
import numpy as np


class Block:
    def __init__(self, rng, d):
        self.scale = {"g": rng.standard_normal(d) * 0.1 + 1.0}
        self.proj = rng.standard_normal((d, d)) / d

    def __call__(self, x):
        return np.tanh(x * self.scale["g"]) @ self.proj + x
'''


def test_models_with_products_get_the_walking_native_entry(tmp_path, monkeypatch):
    """A product that our nest computes at some sizes and BLAS at others (lower/matmul.py) no
    longer costs a model its native entry: the entry decides from the sizes, as the wrapper, and
    calls NumPy's product into the output where BLAS computes it."""
    (tmp_path / "walk_product_blocks.py").write_text(PRODUCT_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("walk_product_blocks", None)
    blocks = importlib.import_module("walk_product_blocks")
    ft.reset()
    rng = np.random.default_rng(3)
    model = [blocks.Block(rng, 128) for _ in range(3)]

    def forward(model, x):
        for b in model:
            x = b(x)
        return x

    cf = ft.compile(forward)
    entries = set()
    # rows <= 6: our nest, 7: BLAS (dynamic from 8 on); from 8 rows the kernel's work (counted
    # as if the nest ran) passes the thread pool's threshold: the Python path serves those
    for rows in (3, 8, 2, 5, 9, 7, 4):
        x = rng.standard_normal((rows, 128))
        want = forward(model, x)
        np.testing.assert_allclose(cf(model, x), want, rtol=1e-10, atol=1e-12)
        found = [e for c in rt_cache.all_caches() if c.code is forward.__code__ for e in c.entries if e.check(model, x)]
        assert len(found) == 1
        e = found[0]
        if rows <= 7 and rows != 3:
            assert e.native is not None, rows
            hits = e.native.hits
            np.testing.assert_allclose(cf(model, x), want, rtol=1e-10, atol=1e-12)
            assert e.native.hits == hits + 1, rows
            entries.add(id(e))
    assert len(entries) == 1                       # one dynamic entry serves both sides
    del model[1].scale["g"]                        # a guard of the walk still misses
    model[1].scale["h"] = np.ones(128)
    with pytest.raises(KeyError):
        cf(model, rng.standard_normal((5, 128)))
