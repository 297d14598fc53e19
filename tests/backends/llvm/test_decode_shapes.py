"""What a decode step needs to be kernels, not NumPy calls in the wrapper: np.stack as one
kernel, slice lengths the guards decide (passes/sizes.py), NumPy's layout of `x[idx]`
decided at compile time (layout.always_c_order), each against NumPy: values, dtypes,
strides, errors."""
import logging

import numpy as np
import pytest

import frametrace as ft
from frametrace.ir.graph import Node
from frametrace.ir.numpy_api.layout import always_c_order
from helpers import assert_same

_R = np.random.default_rng(23)


def _code_of(caplog, fn, *args):
    with caplog.at_level(logging.INFO, logger="frametrace.output_code"):
        out = fn(*args)
    return out, caplog.text


def _layouts(x):
    out = [x, x[::-1]]
    if x.ndim >= 2:
        out += [np.asfortranarray(x), np.repeat(x, 2, axis=1)[:, ::-2], np.swapaxes(x, 0, -1).copy().swapaxes(0, -1)]
    return out


# ---- np.stack --------------------------------------------------------------------------------

def _stack_pair(a, b, axis):
    return np.stack([a * 2, b], axis=axis)


def _stack_views(x, axis):
    """The rotary embedding's pattern: pairs of (even, odd) columns, rotated, interleaved."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return np.stack([x0 * 0.5 - x1 * 0.25, x0 * 0.25 + x1 * 0.5], axis=axis)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_stack_values_strides_and_one_kernel(axis, caplog):
    compiled = ft.compile(_stack_views, fullgraph=True, dynamic=False)     # (the axis a constant)
    for shape in ((3, 8), (1, 2), (0, 4), (5, 6)):
        for x in _layouts(_R.standard_normal(shape)):
            got, text = _code_of(caplog, compiled, x, axis)
            want = _stack_views(x, axis)
            assert_same(got, want)
            assert got.strides == want.strides or want.size == 0     # (empty: NumPy's strides vary)
    assert "_op_stack" not in text and "np.stack" not in text


@pytest.mark.parametrize("da,db", [("float32", "float64"), ("int32", "float32"), ("bool", "int8"),
                                   ("int64", "uint8"), ("complex64", "float64"), ("float32", "float32")])
def test_stack_promotes_as_numpy(da, db):
    compiled = ft.compile(_stack_pair, fullgraph=True, dynamic=False)
    a = (_R.standard_normal((4, 3)) * 3).astype(da)
    b = (_R.standard_normal((4, 3)) * 3).astype(db)
    for axis in (0, 1, 2, -1):
        got, want = compiled(a, b, axis), _stack_pair(a, b, axis)
        assert got.dtype == want.dtype
        assert_same(got, want)


def test_stack_errors_as_numpy():
    compiled = ft.compile(_stack_pair)
    a, b = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(ValueError, match="same shape"):
        _stack_pair(a, b, 0)
    with pytest.raises(ValueError, match="same shape"):
        compiled(a, b, 0)
    with pytest.raises(np.exceptions.AxisError):
        compiled(a, a, 3)
    with pytest.raises(ValueError, match="same shape"):
        ft.compile(lambda a, b: np.stack([a, b]))(np.ones(3), np.ones((1, 3)))


def test_stack_of_scalars_and_single_array():
    def f(x, s):
        return np.stack([x, x + s]), np.stack([x.sum(), s]), np.stack([x])
    compiled = ft.compile(f, fullgraph=True)
    for x in (np.arange(5.0), np.zeros(0), np.float32([1.5])):
        for got, want in zip(compiled(x, 2.0), f(x, 2.0)):
            assert got.dtype == want.dtype
            assert_same(got, want)


# ---- slice lengths the guards decide -----------------------------------------------------------

class Rotary:
    def __init__(self, dim, max_len=16):
        freqs = 1.0 / 10000.0 ** (np.arange(0, dim, 2) / dim)
        angles = np.outer(np.arange(max_len), freqs)
        self.cos, self.sin = np.cos(angles), np.sin(angles)

    def __call__(self, x, pos):
        n = x.shape[0]
        cos = self.cos[pos:pos + n][:, None, :]
        sin = self.sin[pos:pos + n][:, None, :]
        pairs = x.reshape(x.shape[:-1] + (-1, 2))
        x0, x1 = pairs[..., 0], pairs[..., 1]
        out = np.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1)
        return out.reshape(x.shape)


def test_rotary_slice_of_a_table_broadcasts_in_kernels(caplog):
    """`cos[pos:pos + 1]` of a 16-row table has the length Max(0, Min(1, 16 - pos)); the
    reshape guards it equal to 1, and from then on the graph's shapes say 1: the products
    with it broadcast in kernels (no NumPy ufunc call in the wrapper). Past the table the
    guard fails: a new graph, NumPy's error."""
    rope = Rotary(8)
    compiled = ft.compile(rope)
    x = _R.standard_normal((1, 3, 8)).astype(np.float32)
    with caplog.at_level(logging.INFO, logger="frametrace.output_code"):
        for pos in (0, 1, 2, 5, 15):
            got, want = compiled(x, pos), rope(x, pos)
            assert got.dtype == want.dtype
            assert_same(got, want)
    code = caplog.text
    assert "_uf_multiply" not in code and "_op_stack" not in code
    with pytest.raises(ValueError):
        rope(x, 16)
    with pytest.raises(ValueError):
        compiled(x, 16)


def test_mask_of_the_cache_length_fuses_with_the_scores():
    """`keys = cache[:pos + 1]` has the length Min(16, pos + 1); a mask of `pos + 1` columns
    adds to scores over those keys once a guard equates them."""
    def scores(q, cache, pos):
        keys = cache[:pos + 1]
        s = q @ keys.T
        mask = np.triu(np.full((1, pos + 1), -np.inf), k=pos + 1)
        return s + mask
    compiled = ft.compile(scores)
    cache = _R.standard_normal((16, 4))
    q = _R.standard_normal((1, 4))
    for pos in (0, 3, 4, 5, 9, 15):
        assert_same(compiled(q, cache, pos), scores(q, cache, pos))
    with pytest.raises(ValueError):
        scores(q, cache, 16)
    with pytest.raises(ValueError):
        compiled(q, cache, 16)


# ---- the layout of x[idx] -------------------------------------------------------------------

def test_gather_rows_is_c_order_as_numpy_says():
    """always_c_order's claim for x[idx] (a 1-d index, x of <= 2 dims) against NumPy's
    strides; it makes no claim where NumPy keeps an order (x of 3 dims: its trailing axes'
    order; a 2-d index: the index's)."""
    for shape in ((5,), (7, 3), (3, 1), (4, 0), (5, 3, 4)):
        for x in _layouts(_R.standard_normal(shape)):
            for idx in (np.array([0]), np.array([2, 0, 1, 1]), np.array([], int)):
                if x.shape[0] == 0 and idx.size:
                    continue
                claim = always_c_order(_take(x.ndim, idx.ndim))
                assert claim == (x.ndim <= 2)
                if claim:
                    assert x[idx].flags.c_contiguous, (x.strides, idx)
    assert not always_c_order(_take(2, 2))
    idx2 = np.zeros((3, 2), int).T
    assert not np.ones(5)[idx2].flags.c_contiguous             # (why a 2-d index is not claimed)


def _take(x_ndim, idx_ndim):
    x = Node("input", shape=(4,) * x_ndim, dtype=np.dtype("f8"))
    idx = Node("input", shape=(2,) * idx_ndim, dtype=np.dtype("i8"))
    return Node("take", args=(x, idx), shape=(2,) * idx_ndim + (4,) * (x_ndim - 1), dtype=x.dtype)


class Embed:
    def __init__(self, table):
        self.table = table

    def __call__(self, tokens, w):
        x = self.table[tokens]
        return (x * w + 1.0).T * 2.0, x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-5)


@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_layouts_after_a_gather_are_decided_at_compile_time(order, caplog):
    table = _R.standard_normal((10, 6))
    table = {"C": table, "F": np.asfortranarray(table), "strided": np.repeat(table, 2, axis=1)[:, ::2]}[order]
    model, compiled = Embed(table), ft.compile(Embed(table), dynamic=True)
    w = _R.standard_normal(6)
    with caplog.at_level(logging.INFO, logger="frametrace.output_code"):
        for tokens in (np.array([3]), np.array([1, 2, 9]), np.array([], dtype=np.int64)):
            for got, want in zip(compiled(tokens, w), model(tokens, w)):
                assert_same(got, want)
                assert got.strides == want.strides or want.size == 0
    assert "_late_layout" not in caplog.text


# ---- in-place softmax over a size-1 query axis ------------------------------------------------

def _softmax_in_place(s):
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    s /= s.sum(axis=-1, keepdims=True)
    return s


def test_in_place_division_over_a_size_one_axis_reads_no_copy(caplog):
    """`s /= s.sum(axis=-1, keepdims=True)` on (heads, 1, keys) scores: the load of s has the
    broadcast index 0 along the size-1 axis where the store has its loop variable; it is the
    same element, so the kernel divides in place without saving a copy of s first."""
    compiled = ft.compile(_softmax_in_place, dynamic=True)
    with caplog.at_level(logging.INFO, logger="frametrace.output_code"):
        for shape in ((6, 1, 5), (6, 1, 9), (2, 1, 1), (3, 1, 4)):
            x = _R.standard_normal(shape)
            x[0, 0, 0] = np.inf if shape[2] > 3 else x[0, 0, 0]
            with np.errstate(invalid="ignore"):
                assert_same(compiled(x), _softmax_in_place(x))
            for v in (x[:, :, ::-1], np.asfortranarray(x)):
                with np.errstate(invalid="ignore"):
                    assert_same(compiled(v), _softmax_in_place(v))
    assert "_before = " not in caplog.text
