"""Native entries of models passed as objects (native_entry.py over native_check.py's walk):
the weights are reached through attributes, list items and dict items, read once per call,
checked field by field, and handed to the kernels by the same native function. Every field a
guard holds must still make the call miss (and recompile to NumPy's result) after the sharing;
what is not guarded (values, strides the kernels take at run time, which object holds the
fields) must give NumPy's result without a recompile."""
import copy
import gc
import sys
import warnings

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import cache as rt_cache
from csrc_free_runtime.native import NATIVE_MISS

from walked_model import Model, Rebuilding, gelu

X = np.random.default_rng(3).standard_normal((4, 4))


def _entries(model):
    return [e for c in rt_cache.all_caches() if c.code is type(model).__call__.__code__ for e in c.entries]


def _compiled(n_arrays):
    ft.reset()
    model = Model(n_arrays)
    cm = ft.compile(model)
    np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    (entry,) = _entries(model)
    assert entry.native is not None, "the model's entry has no native entry"
    return model, cm, entry


def _set_shape(a, shape):
    with warnings.catch_warnings():                 # NumPy 2.5 deprecates the shape setter
        warnings.simplefilter("ignore", DeprecationWarning)
        a.shape = shape


def _set_dtype(a, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        a.dtype = dtype


def _layer(m):
    return m.layers[len(m.layers) // 2]


# (name, change(model), guarded: the entry must miss and a new graph be compiled)
CHANGES = [
    ("type", lambda m: setattr(_layer(m), "w", _layer(m).w.view(np.matrix)), True),
    ("list instead of array", lambda m: _layer(m).p.__setitem__("g", _layer(m).p["g"].tolist()), True),
    ("dtype", lambda m: setattr(_layer(m), "w", _layer(m).w.astype(np.float32)), True),
    ("dtype in place", lambda m: _set_dtype(_layer(m).p["b"], np.int64), True),
    ("rank", lambda m: _layer(m).p.__setitem__("b", _layer(m).p["b"][None]), True),
    ("shape", lambda m: setattr(_layer(m), "w", np.ones((1, 1))), True),
    ("shape in place", lambda m: _set_shape(_layer(m).w, (4, 1)), True),
    ("callee", lambda m: setattr(_layer(m), "act", gelu), True),
    ("ufunc callee", lambda m: setattr(_layer(m), "act", np.sin), True),
    ("list length", lambda m: m.layers.append(copy.deepcopy(m.layers[0])), True),
    ("list shorter", lambda m: m.layers.pop(), True),
    ("list item type", lambda m: m.layers.__setitem__(0, {"not": "a layer"}), True),
    ("dict key added", lambda m: _layer(m).p.update(extra=np.ones(4)), True),
    ("dict key order", lambda m: setattr(_layer(m), "p", {"g": _layer(m).p["g"], "b": _layer(m).p["b"]}), True),
    ("dict key removed", lambda m: _layer(m).p.pop("g"), True),
    ("attribute removed", lambda m: delattr(_layer(m), "w"), True),
    ("scale type", lambda m: setattr(m, "scale", 2), True),
    # not guarded: the kernels read strides and values at run time; another object, same fields
    ("strided", lambda m: _layer(m).p.__setitem__("g", np.repeat(_layer(m).p["g"], 2)[::2]), False),
    ("reversed", lambda m: _layer(m).p.__setitem__("b", _layer(m).p["b"][::-1]), False),
    ("fortran", lambda m: setattr(_layer(m), "w", np.asfortranarray(_layer(m).w)), False),
    ("equal-shaped replacement", lambda m: setattr(_layer(m), "w", _layer(m).w * -3.0), False),
    ("values in place", lambda m: _layer(m).p["b"].__setitem__(slice(None), 7.0), False),
    ("scale value", lambda m: setattr(m, "scale", 0.25), False),
    ("tied weights", lambda m: setattr(m.layers[0], "w", m.layers[-1].w), False),
]


def _eager_or_error(model):
    try:
        return model(X), None
    except Exception as exc:                      # e.g. an attribute removed
        return None, exc


@pytest.fixture(scope="module")
def compiled10():
    return _compiled(10)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("name,change,guarded", CHANGES, ids=[c[0] for c in CHANGES])
def test_native_entry_misses_exactly_where_the_guards_fail(compiled10, name, change, guarded):
    """On a copy of the model with one field changed, the native entry misses exactly when the
    Python condition fails, and where it runs its result is NumPy's."""
    model, _, entry = compiled10
    changed = copy.deepcopy(model)
    change(changed)
    want, err = _eager_or_error(changed)
    python_passes = entry.check(changed, X)
    assert python_passes is not guarded
    got = entry.native.fn(changed, X)
    assert (got is not NATIVE_MISS) == python_passes
    if python_passes:
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert entry.native.fn(model, X) is not NATIVE_MISS     # the original still passes


_RECOMPILE = ["dtype", "dtype in place", "shape in place", "callee", "list length", "dict key added",
              "attribute removed", "equal-shaped replacement", "strided", "tied weights"]
_AT_100 = ["dtype in place", "shape in place", "list length", "equal-shaped replacement"]
_CASES = [(10,) + c for c in CHANGES if c[0] in _RECOMPILE] + [(100,) + c for c in CHANGES if c[0] in _AT_100]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("n_arrays,name,change,guarded", _CASES, ids=[f"{c[0]}-{c[1]}" for c in _CASES])
def test_changed_model_gives_numpy_result_and_recompiles_only_when_guarded(n_arrays, name, change, guarded):
    model, cm, _ = _compiled(n_arrays)
    graphs = ft.stats().unique_graphs
    change(model)
    want, err = _eager_or_error(model)
    if err is not None:
        with pytest.raises(type(err)):
            cm(X)
        return
    np.testing.assert_allclose(cm(X), want, rtol=1e-12)
    np.testing.assert_allclose(cm(X), want, rtol=1e-12)          # a second call: served by the cache
    assert ft.stats().unique_graphs == graphs + guarded


def test_weights_replaced_one_by_one_are_the_ones_read():
    """Every weight of a 100-array model replaced, between calls, by another array of the same
    fields: no recompile, and each call reads this call's objects (not the last call's)."""
    model, cm, entry = _compiled(100)
    graphs = ft.stats().unique_graphs
    hits = entry.native.hits
    for i, layer in enumerate(model.layers):
        which = ("w", "b", "g")[i % 3]
        if which == "w":
            layer.w = layer.w + 1.0
        else:
            layer.p[which] = layer.p[which] * -2.0
        np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    assert ft.stats().unique_graphs == graphs
    assert entry.native.hits == hits + len(model.layers)      # every call served natively


def test_in_place_shape_change_between_calls_recompiles():
    """`w.shape = ...` on a weight the entry saw (the same object, its fields changed): a miss,
    a recompile and NumPy's result; restored, the first entry serves again."""
    model, cm, entry = _compiled(100)
    graphs = ft.stats().unique_graphs
    w = model.layers[7].w
    _set_shape(w, (4, 1))
    np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    assert ft.stats().unique_graphs == graphs + 1
    _set_shape(w, (1, 4))
    hits = entry.native.hits
    np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    assert entry.native.hits == hits + 1
    assert ft.stats().unique_graphs == graphs + 1


def test_references_balanced_over_hits_and_misses():
    """The walk's references are released on every exit: a hit, a miss, a miss halfway (a
    missing attribute after other objects were taken)."""
    model, _, entry = _compiled(10)
    fn = entry.native.fn
    broken = copy.deepcopy(model)
    del broken.layers[-1].w
    other = copy.deepcopy(model)
    other.layers[1].p["b"] = other.layers[1].p["b"].astype(np.float32)
    objs = [model, model.layers, model.layers[1].w, model.layers[1].p, model.layers[1].p["b"],
            broken.layers, broken.layers[0].w, other.layers[1].p["b"], other.layers[0].w, X]
    def rounds(n):
        for _ in range(n):
            assert fn(model, X) is not NATIVE_MISS
            assert fn(broken, X) is NATIVE_MISS
            assert fn(other, X) is NATIVE_MISS
        gc.collect()
        return [sys.getrefcount(o) for o in objs]
    assert rounds(1000) == rounds(1)


def test_a_property_replacing_a_weight_during_the_walk():
    """An attribute read that runs Python (a property) and replaces an array: the result is
    NumPy's on every call (the objects the kernels read are alive until the call returns)."""
    ft.reset()
    model, eager = Rebuilding(10), Rebuilding(10)
    cm = ft.compile(model)
    for _ in range(5):
        np.testing.assert_allclose(cm(X), eager(X), rtol=1e-12)


def test_thousand_arrays():
    """1,000 weights: served natively; one weight's dtype changed: one recompile."""
    model, cm, entry = _compiled(1000)
    graphs = ft.stats().unique_graphs
    model.layers[-1].w = model.layers[-1].w * 0.5
    np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    assert ft.stats().unique_graphs == graphs
    assert entry.native.fn(model, X) is not NATIVE_MISS
    _set_dtype(model.layers[200].p["g"], np.int64)
    assert entry.native.fn(model, X) is NATIVE_MISS


class _OddKey(str):
    """Equal to its str, hashed differently: `d["b"]` does not find it (KeyError)."""

    def __hash__(self):
        return 12345

    def __eq__(self, other):
        return str.__eq__(self, other)


class _PlainKey(str):
    """A str subclass hashed and compared as str: `d["b"]` finds it."""


@pytest.mark.parametrize("make_key,found", [
    (lambda k: "".join(list(k)), True),             # an equal str, not the interned literal
    (_PlainKey, True),
    (_OddKey, False),
], ids=["runtime str", "str subclass", "str subclass hashed differently"])
def test_dict_keys_equal_but_not_identical(make_key, found):
    """The keys guard passes over the dict once and takes the items the entry reads from that
    pass; a key equal to the expected one but not it is read as `d[key]` would read it."""
    model, cm, entry = _compiled(10)
    layer = _layer(model)
    layer.p = {make_key(k): v for k, v in layer.p.items()}
    want, err = _eager_or_error(model)
    assert (err is None) == found
    assert (entry.native.fn(model, X) is not NATIVE_MISS) == entry.check(model, X) == found
    if found:
        layer.p["b"] = layer.p["b"] * 3.0                      # the value under the odd key
        np.testing.assert_allclose(entry.native.fn(model, X), model(X), rtol=1e-12)
        np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    else:
        with pytest.raises(KeyError):
            cm(X)


def test_a_second_entry_does_not_pay_the_first_ones_python_check():
    """Two cache entries of one model (float64 and float32 inputs): a call served by the second
    misses the first's native entry, whose Python entry then asks its native check (built at
    the native entry's first miss) instead of evaluating every guard in Python."""
    model, cm, first = _compiled(100)
    assert first.call.native_check is None          # built at the native entry's first miss
    x32 = X.astype(np.float32)
    np.testing.assert_allclose(cm(x32), model(x32), rtol=1e-6)
    assert first.call.native_check is not None and first.call.native_check.full
    second = [e for e in _entries(model) if e is not first]
    assert len(second) == 1 and second[0].native is not None
    assert first.call.native_check.fn(model, x32) is NATIVE_MISS
    hits = second[0].native.hits
    for _ in range(3):
        np.testing.assert_allclose(cm(x32), model(x32), rtol=1e-6)
        np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    assert second[0].native.hits == hits + 3


def test_weights_tied_when_compiled_then_untied():
    """Two layers sharing one weight array when compiled (read-only inputs: their aliasing is
    not guarded), then given separate arrays with other values: NumPy's result, no recompile;
    tied again to a third array: the same."""
    ft.reset()
    model = Model(10)
    model.layers[1].w = model.layers[0].w
    cm = ft.compile(model)
    np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    graphs = ft.stats().unique_graphs
    model.layers[1].w = model.layers[0].w * 0.5
    np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    model.layers[0].w = model.layers[1].w = -model.layers[2].w
    np.testing.assert_allclose(cm(X), model(X), rtol=1e-12)
    assert ft.stats().unique_graphs == graphs
