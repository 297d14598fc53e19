"""NumPy's memory layout of traced values (numpy_api/layout.py) against NumPy eager: the
predicted strides of every value, and ravel / reshape making a view exactly where NumPy
does, for inputs of every layout and for values computed from them."""
import numpy as np
import pytest

from frametrace.ir.numpy_api import getitem, lookup_function, lookup_method
from frametrace.ir.numpy_api.layout import is_c_contiguous, strides_of
from ir_helpers import check, trace

F = lookup_function


def _layouts():
    base = np.arange(60.0).reshape(3, 4, 5)
    big = np.arange(240.0).reshape(6, 8, 5)
    return {
        "C": base, "F": np.asfortranarray(base), "T": base.transpose(1, 0, 2), "strided": big[::2, ::2],
        "neg": base[::-1, :, ::-1], "row": base[:1], "col": base[:, :1], "cut": big[:3, :4],
    }


PROGRAMS = {
    "mul": (lambda b, x: F(np.multiply)(b, x, 2.0), lambda x: x * 2.0),
    "add_T": (lambda b, x: F(np.add)(b, x, F(np.transpose)(b, x, (0, 1, 2))), lambda x: x + x),
    "add_bcast": (lambda b, x: F(np.add)(b, x, lookup_method("sum")(b, x, 0)), lambda x: x + x.sum(0)),
    "np_copy": (lambda b, x: F(np.copy)(b, x), np.copy),
    "copy_method": (lambda b, x: lookup_method("copy")(b, x), lambda x: x.copy()),
    "astype": (lambda b, x: lookup_method("astype")(b, x, np.float32), lambda x: x.astype(np.float32)),
    "sum0": (lambda b, x: lookup_method("sum")(b, x, 0), lambda x: x.sum(0)),
    "sum2_keep": (lambda b, x: lookup_method("sum")(b, x, 2, keepdims=True), lambda x: x.sum(2, keepdims=True)),
    "cumsum1": (lambda b, x: F(np.cumsum)(b, x, 1), lambda x: np.cumsum(x, 1)),
    "where": (lambda b, x: F(np.where)(b, F(np.greater)(b, x, 3.0), x, 0.0), lambda x: np.where(x > 3, x, 0.0)),
    "concat": (lambda b, x: F(np.concatenate)(b, [x, x], 1), lambda x: np.concatenate([x, x], 1)),
    "transpose_mul": (lambda b, x: F(np.multiply)(b, F(np.transpose)(b, x), 2.0), lambda x: x.T * 2.0),
    "slice_neg": (lambda b, x: F(np.negative)(b, getitem(b, x, (slice(None), slice(1, None)))), lambda x: -x[:, 1:]),
}


def _check_strides(b, proxy, want):
    st = strides_of(b, proxy)
    if st is None:
        return False
    for d, s, w in zip(want.shape, st, want.strides):
        if d > 1 and want.size:             # strides of size-1 dims and empty arrays do not matter
            assert s == w, (st, want.strides, want.shape)
    assert is_c_contiguous(b, proxy) == want.flags.c_contiguous
    return True


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_predicted_strides_match_numpy(prog):
    build, eager = PROGRAMS[prog]
    known = 0
    for x in _layouts().values():
        b, proxy, _ = trace(build, x)
        known += _check_strides(b, proxy, eager(x))
    assert known >= 6, known               # unknown ("not modelled") is the exception


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
@pytest.mark.parametrize("shape", [(-1,), (12, 5), (3, -1), (60, 1), (1, 3, 20)])
def test_reshape_of_computed_values_views_like_numpy(prog, shape):
    build, eager = PROGRAMS[prog]
    for x in _layouts().values():
        want_value = eager(x)
        if want_value.size != 60:
            continue
        want = np.reshape(want_value, shape)
        got = check(lambda b, x: F(np.reshape)(b, build(b, x), shape), lambda x: np.reshape(eager(x), shape), x)
        # the reshape adds a copy exactly when NumPy copies (when the value's layout is known)
        b, value, _ = trace(build, x)
        before = len(b.graph.nodes)
        F(np.reshape)(b, value, shape)
        copies = [n for n in b.graph.nodes[before:] if n.op == "copy"]
        if strides_of(b, value) is not None:
            assert bool(copies) == (not np.shares_memory(want, want_value)), (prog, shape, x.strides)
        np.testing.assert_array_equal(got, want)


VIEWS = {
    "same": (lambda b, a: a, lambda a: a),
    "slice": (lambda b, a: getitem(b, a, (slice(1, None),)), lambda a: a[1:]),
    "step": (lambda b, a: getitem(b, a, (slice(None), slice(None, None, 2))), lambda a: a[:, ::2]),
    "T": (lambda b, a: F(np.transpose)(b, a), lambda a: a.T),
    "row": (lambda b, a: getitem(b, a, (0,)), lambda a: a[0]),
    "newaxis": (lambda b, a: getitem(b, a, (None, 0)), lambda a: a[None, 0]),
}


@pytest.mark.parametrize("name", sorted(_layouts()))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_ravel_of_inputs_and_their_views(name, view):
    x = _layouts()[name]
    build, eager = VIEWS[view]
    want = np.ravel(eager(x))
    got = check(lambda b, a: F(np.ravel)(b, build(b, a)), lambda a: np.ravel(eager(a)), x)
    assert np.shares_memory(got, x) == np.shares_memory(want, x), (name, view)
    got = check(lambda b, a: F(np.reshape)(b, build(b, a), -1), lambda a: np.reshape(eager(a), -1), x)
    assert np.shares_memory(got, x) == np.shares_memory(np.reshape(eager(x), -1), x), (name, view)


def test_flatten_is_always_a_copy():
    for x in _layouts().values():
        b, proxy, _ = trace(lambda b, a: lookup_method("flatten")(b, a), x)
        assert any(n.op == "copy" for n in b.graph.nodes)
