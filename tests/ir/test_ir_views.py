# ruff: noqa: B023  (the lambdas built in loops are called within the same iteration)
"""View ops: basic indexing (hypothesis over random slices), transpose, reshape (-1),
expand_dims, squeeze, broadcast_to; references return views exactly where NumPy does."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.errors import NumpyError, Unsupported
from frametrace.ir.graph import IndexSlice
from frametrace.ir.numpy_api import array_attribute, getitem, lookup_function, lookup_method
from frametrace.ir.ops.indexing import normalize_slice, py_slice, slice_length
from ir_helpers import Rt, check, run, views

bound = st.one_of(st.none(), st.integers(-12, 12))
step = st.one_of(st.none(), st.integers(-4, 4).filter(lambda s: s != 0))
slices = st.builds(slice, bound, bound, step)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 9), slices)
def test_slice_normalisation_matches_python(n, s):
    ns = normalize_slice(s, n)
    assert (ns.start, ns.stop, ns.step) == s.indices(n)
    assert slice_length(ns.start, ns.stop, ns.step) == len(range(n)[s])
    assert list(range(n)[py_slice(ns)]) == list(range(n)[s])


entry = st.one_of(slices, st.integers(-6, 5), st.none(), st.just(Ellipsis))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=0, max_size=3), st.lists(entry, max_size=4),
       st.booleans())
def test_basic_indexing_matches_numpy(shape, index, reverse):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    if reverse and x.ndim:
        x = x[::-1]
    got = check(lambda b, x: getitem(b, x, tuple(index)), lambda x: x[tuple(index)], x)
    if isinstance(got, np.ndarray):
        assert np.shares_memory(got, x) or got.size == 0 or x.size == 0


def test_getitem_single_entries_and_scalars():
    x = np.arange(12.0).reshape(3, 4)
    for idx in [0, -1, 2, (1, 2), (-1, -4), slice(None), (None, 1), Ellipsis, (Ellipsis, 1),
                (0, Ellipsis), (1, 2, Ellipsis), (), np.newaxis, (slice(None, None, -1), None)]:
        check(lambda b, x: getitem(b, x, idx), lambda x: x[idx], x)
    z = np.array(5.0)
    for idx in [(), Ellipsis, None, (None, Ellipsis)]:
        got = check(lambda b, x: getitem(b, x, idx), lambda x: x[idx], z)
        if isinstance(got, np.ndarray):
            assert not isinstance(got, np.generic)
    for idx in [(), Ellipsis, None]:
        check(lambda b, x: getitem(b, x, idx), lambda x: x[idx], np.float32(2.5))
    for idx in [3, -4, (0, 4), (0, 0, 0), (Ellipsis, Ellipsis), 1.5, slice(None, None, 0)]:
        check(lambda b, x: getitem(b, x, idx), lambda x: x[idx], x)


def test_getitem_without_a_shape_env_rejects_masks_and_lists_of_run_time_values():
    x = np.arange(5.0)
    with pytest.raises(Unsupported):             # a mask's count needs an unbacked size
        run(lambda b, x, m: getitem(b, x, m), x, x > 2)
    with pytest.raises(Unsupported):             # a list may hold ints and sizes, not arrays
        run(lambda b, x, i: getitem(b, x, [0, i]), x, np.array([1]))
    with pytest.raises(NumpyError):
        run(lambda b, x: getitem(b, x, 0), Rt(1.0))


def test_negative_step_reference_stop_minus_one():
    x = np.arange(6.0)
    from frametrace.ir.ops.views import getitem_ref
    assert list(getitem_ref(x, index=(IndexSlice(5, -1, -1),))) == [5, 4, 3, 2, 1, 0]
    assert list(getitem_ref(x, index=(IndexSlice(-1, -1, -2),))) == []
    assert list(getitem_ref(x, index=(IndexSlice(4, 0, -2),))) == [4, 2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.data())
def test_reshape_with_minus_one(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    target = list(data.draw(st.permutations(shape)))
    if data.draw(st.booleans()):
        target[data.draw(st.integers(0, len(target) - 1))] = -1
    if data.draw(st.booleans()):
        target.append(data.draw(st.sampled_from([1, 2, -1])))
    got = check(lambda b, x: lookup_function(np.reshape)(b, x, tuple(target)),
                lambda x: np.reshape(x, tuple(target)), x)
    check(lambda b, x: lookup_method("reshape")(b, x, *target), lambda x: x.reshape(*target), x)
    if got is not None:
        assert np.shares_memory(got, x) or x.size == 0


def test_reshape_views_and_copies_like_numpy(rng):
    base = rng.standard_normal((4, 6))
    for x in views(base):
        for shape in [(-1,), (6, 4), (2, -1, 3), (24, 1)]:
            got = check(lambda b, x: lookup_function(np.reshape)(b, x, shape),
                        lambda x: np.reshape(x, shape), x)
            assert np.shares_memory(got, x) == np.shares_memory(np.reshape(x, shape), x)
    for shape in [(5, -1), (-1, -1), (0, -1)]:
        check(lambda b, x: lookup_function(np.reshape)(b, x, shape), lambda x: np.reshape(x, shape), base)
    check(lambda b, x: lookup_function(np.reshape)(b, x, (0, -1)), lambda x: np.reshape(x, (0, -1)),
          np.ones((0, 3)))
    check(lambda b, x: lookup_function(np.ravel)(b, x), np.ravel, base.T)
    check(lambda b, x: lookup_method("flatten")(b, x), lambda x: x.flatten(), base[::-1])


def test_transpose_family(rng):
    x = rng.standard_normal((2, 3, 4))
    for axes in [None, (2, 0, 1), (-1, 0, 1), (0, 0, 1), (0, 1), (0, 1, 3)]:
        got = check(lambda b, x: lookup_function(np.transpose)(b, x, axes),
                    lambda x: np.transpose(x, axes), x)
        if got is not None:
            assert np.shares_memory(got, x)
    check(lambda b, x: lookup_method("transpose")(b, x, 1, 0, 2), lambda x: x.transpose(1, 0, 2), x)
    check(lambda b, x: lookup_method("transpose")(b, x), lambda x: x.transpose(), x)
    check(lambda b, x: lookup_method("swapaxes")(b, x, 0, -1), lambda x: x.swapaxes(0, -1), x)
    check(lambda b, x: lookup_function(np.moveaxis)(b, x, 0, -1), lambda x: np.moveaxis(x, 0, -1), x)
    check(lambda b, x: lookup_function(np.moveaxis)(b, x, (0, 1), (2, 0)),
          lambda x: np.moveaxis(x, (0, 1), (2, 0)), x)
    check(lambda b, x: array_attribute(b, x, "T"), lambda x: x.T, x)
    check(lambda b, x: array_attribute(b, x, "mT"), lambda x: x.mT, x)
    check(lambda b, x: array_attribute(b, x, "mT"), lambda x: x.mT, np.ones(3))
    check(lambda b, x: array_attribute(b, x, "T"), lambda x: x.T, np.float64(2))
    check(lambda b, x: lookup_function(np.transpose)(b, x), np.transpose, np.float64(2))


def test_expand_dims_squeeze_broadcast_to(rng):
    x = rng.standard_normal((3, 1, 4))
    for axis in [0, -1, (0, 2), (0, 0), 4, (1, -1)]:
        check(lambda b, x: lookup_function(np.expand_dims)(b, x, axis),
              lambda x: np.expand_dims(x, axis), x)
    for axis in [None, 1, -2, (1,), 0, 3]:
        check(lambda b, x: lookup_function(np.squeeze)(b, x, axis), lambda x: np.squeeze(x, axis), x)
    check(lambda b, x: lookup_function(np.squeeze)(b, x), np.squeeze, np.float64(1))
    check(lambda b, x: lookup_function(np.squeeze)(b, x), np.squeeze, np.ones((1, 1)))
    check(lambda b, x: lookup_function(np.expand_dims)(b, x, 0), lambda x: np.expand_dims(x, 0),
          np.float32(1))
    for shape in [(2, 3, 1, 4), (3, 5, 4), (3, 4), (2, -1, 1, 4), (0, 3, 1, 4)]:
        got = check(lambda b, x: lookup_function(np.broadcast_to)(b, x, shape),
                    lambda x: np.broadcast_to(x, shape), x)
        if got is not None and got.size:
            assert np.shares_memory(got, x) and not got.flags.writeable


def test_shape_attributes(rng):
    x = rng.standard_normal((2, 3))
    b_proxy = run(lambda b, x: x, x)[0]
    from frametrace.ir.builder import GraphBuilder
    b = GraphBuilder()
    p = b.input_array("x", (2, 3), np.float32)
    assert array_attribute(b, p, "shape") == (2, 3)
    assert array_attribute(b, p, "ndim") == 2 and array_attribute(b, p, "size") == 6
    assert array_attribute(b, p, "dtype") == np.float32 and array_attribute(b, p, "nbytes") == 24
    assert lookup_function(np.shape)(b, p) == (2, 3) and lookup_function(np.ndim)(b, p) == 2
    assert lookup_function(np.size)(b, p, 1) == 3
    with pytest.raises(Unsupported):
        array_attribute(b, p, "strides")
    assert b_proxy is not None
