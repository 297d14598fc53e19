"""np.ascontiguousarray / np.asfortranarray traced (issue 23 part 5: image and interop code calls
them before handing arrays on): the same object when the layout already is the one asked for,
else a copy in that order; NumPy's strides, dtypes and 1-d result for 0-d input."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS

BASE = np.arange(48.0).reshape(6, 8)
VIEWS = {"c": BASE, "t": BASE.T, "rows": BASE[::2], "cols": BASE[:, ::2], "f": np.asfortranarray(BASE),
         "one_row": BASE[:1], "empty": BASE[:0], "1d": BASE[0], "1d_strided": BASE[0, ::3], "neg": BASE[::-1],
         "0d": np.array(3.0), "3d": BASE.reshape(2, 3, 8).transpose(1, 0, 2)}


def layouts(x):
    c = np.ascontiguousarray(x)
    f = np.asfortranarray(x)
    return (c, f, c is x, f is x, np.ascontiguousarray(x, dtype=np.float32), np.ascontiguousarray(x * 2) + 1,
            np.asfortranarray(x, dtype=np.float64) is x)


def check(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert type(g) is np.ndarray and g.dtype == w.dtype and g.shape == w.shape
            assert g.strides == w.strides, (g.strides, w.strides)
            assert np.array_equal(g, w)
        else:
            assert g == w, (g, w)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_layouts_and_identity(view, backend):
    x = VIEWS[view]
    check(ft.compile(layouts, backend=backend, fullgraph=True)(x), layouts(x))


def blur_for_c_library(img):
    """A pipeline that hands a C-contiguous buffer on, written as users write it."""
    buf = np.ascontiguousarray(img[:, ::-1])
    buf[0, 0] = 0.0                                  # writes into the copy, never the input
    return buf, buf.sum(), np.ascontiguousarray(img) is img


def test_writes_and_one_graph_across_sizes():
    f = ft.compile(blur_for_c_library, fullgraph=True)
    for n in (4, 6, 9):
        img = np.arange(n * 5.0).reshape(n, 5)
        want_img = img.copy()
        got = f(img)
        want = blur_for_c_library(want_img)
        assert np.array_equal(img, want_img)
        check(got, want)
    assert ft.stats().graph_breaks == 0


def test_scalars_and_lists():
    def f(x):
        return np.ascontiguousarray(x.sum()), np.ascontiguousarray([x[0], 2.0]), np.asfortranarray(7)
    x = np.arange(3.0)
    check(ft.compile(f, fullgraph=True)(x), f(x))


# ------------------------------------------------- reductions of lists and tuples (np.asarray)

def list_reductions(x, m):
    a, b = x.min(), x.max()
    return (np.sum([a, b, 1.0]), np.prod(m.shape), np.mean([x[0], x[1]]), np.max((a, b)), np.argmax([a, b]),
            np.cumsum([1, 2, 3]), np.std([x[0], 2.0, 4.0]), np.sum([[1, 2], [3, x.shape[0]]], axis=0),
            np.any([x[0] > 1, False]), np.min([np.int8(3), 2]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_reductions_of_sequences(backend):
    for x, m in ((np.linspace(-1, 2, 5), np.ones((3, 4))), (np.array([np.nan, 1.0]), np.ones((2, 0)))):
        ft.reset()
        got = ft.compile(list_reductions, backend=backend, fullgraph=True)(x, m)
        want = list_reductions(x, m)
        for g, w in zip(got, want):
            assert type(g) is type(w) and g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True), (g, w)


def test_size_from_np_prod_breaks_with_a_hint():
    def f(m):
        return m.reshape(int(np.prod(m.shape)))
    e = ft.explain(f, np.ones((2, 3)))
    assert e.graph_break_count == 1 and "math.prod(x.shape)" in str(e.break_reasons[0])
