"""x.item() without a graph break (issue 23 part 5: `loss.item()` in every training loop): the
element as a Python float / int / bool, NumPy's errors for a size other than 1 or a bad index,
every dtype, views, NumPy scalars; the float is a Python float to NumPy's promotion rules."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import frametrace as ft
from helpers import BACKENDS, exactly, same_outcome


def same(fn, *args, backend="llvm", fullgraph=True):
    return same_outcome(fn, *args, backend=backend, fullgraph=fullgraph)

class Trainer:
    """A training loop's step, written as users write it."""

    def __init__(self, lr=0.1):
        self.lr, self.history = lr, []

    def step(self, w, x, y):
        pred = x @ w
        err = pred - y
        loss = (err ** 2).mean()
        w = w - self.lr * (x.T @ err) / len(y)
        self.history.append(loss.item())
        return w, loss.item(), bool((np.abs(err) < 0.5).all().item())


@pytest.mark.parametrize("backend", BACKENDS)
def test_training_step(backend):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 3)), rng.normal(size=20)
    eager, compiled = Trainer(), Trainer()
    f = ft.compile(compiled.step, backend=backend, fullgraph=True)
    w1 = w2 = np.zeros(3)
    for _ in range(3):
        w1, l1, ok1 = eager.step(w1, x, y)
        w2, l2, ok2 = f(w2, x, y)
        exactly((w2, l2, ok2), (w1, l1, ok1))
    assert eager.history == compiled.history and type(compiled.history[0]) is float
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int8, np.int64, np.uint8,
                                   np.uint64, np.bool_])
def test_every_dtype(dtype):
    def f(x):
        return x[1:2].item(), x.item(0), x[-1].item(), x.reshape(1, -1)[:, 2:3].item()
    with np.errstate(all="ignore"):
        x = np.array([0, -1.5, 2**63 + 2**11, 3, -0.0, np.nan, np.inf], dtype=np.float64).astype(dtype)
    same(f, x)


def test_indices():
    def f(m):
        return m.item(1, 2), m.item(4), m.item(-1), m.item((0, 3)), m.T.item(5), m[::2, ::-1].item(3)
    same(f, np.arange(12.0).reshape(3, 4))
    same(f, np.asfortranarray(np.arange(12).reshape(3, 4)))


def test_errors_as_numpy():
    x = np.arange(6.0)
    same(lambda x: x.item(), x, fullgraph=False)                       # size 6
    same(lambda x: x[:0].item(), x, fullgraph=False)                   # size 0
    same(lambda x: x.item(10), x, fullgraph=False)
    same(lambda x: x.reshape(2, 3).item(1, 9), x, fullgraph=False)
    same(lambda x: x.reshape(2, 3).item(1, 2, 0), x, fullgraph=False)
    same(lambda x: x.reshape(2, 3).item(-7), x, fullgraph=False)


def test_dynamic_sizes_one_graph():
    def f(x):
        return x * x.max().item() + x[:1].item()
    g = ft.compile(f, fullgraph=True)
    for n in (3, 5, 8, 13):
        exactly(g(np.arange(float(n))), f(np.arange(float(n))))
    assert ft.stats().unique_graphs <= 2


def test_python_float_promotion():
    """item() is a Python float: with float32 data NumPy keeps float32 (weak); the graph holds a
    float64, so that mix is a clean graph break, never a float64 result."""
    def f(x32, x):
        return x32 * x.sum().item()
    x32, x = np.ones(3, np.float32), np.arange(3.0)
    e = ft.explain(f, x32, x)
    assert e.graph_break_count == 1 and "float32" in str(e.break_reasons[0])
    same(f, x32, x, fullgraph=False)
    same(lambda x: x * x.sum().item() / 0.5, x)


def test_complex_breaks_cleanly():
    e = ft.explain(lambda z: z[0].item(), np.array([1 + 2j]))
    assert e.graph_break_count == 1 and "complex128" in str(e.break_reasons[0])


@settings(max_examples=30, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(1, 6), elements=st.floats(allow_nan=True, allow_infinity=True)),
       i=st.integers(-8, 8))
def test_item_random(x, i):
    ft.reset()
    same(lambda x: (x.item(i), x[i % len(x)].item() * 2.0), x, fullgraph=False)


# ------------------------------------------------------------------- bool() of a graph value

def nan_report(x, v):
    y = np.log(x)
    return {"bad": bool(np.isnan(y).any()), "first": bool(x[0]), "v": bool(v), "sum": bool(x.sum()),
            "f": bool(float(x[1])), "f32": bool(np.float32(x[2])), "i": bool(int(x[1])),
            "z": bool(x[1:2].astype(np.complex64)[0])}


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_of_values_is_a_python_bool(backend):
    """`bad = bool(np.isnan(y).any())`: a Python bool (NaN is true), no graph break; an `if` on
    it still branches on data (a graph break there, as before)."""
    for x, v in ((np.array([1.0, 0.0, -1.0, np.nan]), 0.0), (np.array([np.nan, -0.0, 2.0, 1.0]), 2.0),
                 (np.array([0.5, 3.0, 0.0, 1.0]), -0.0)):
        with np.errstate(all="ignore"):
            same(nan_report, x, v, backend=backend)
    assert ft.stats().graph_breaks == 0


def test_bool_of_arrays_still_branches():
    e = ft.explain(lambda x: bool(x > 0), np.ones(1))
    assert e.graph_break_count == 1
    same(lambda x: bool(x > 0), np.ones(3), fullgraph=False)          # NumPy's ValueError


# ------------------------------------------------------------------------------- x.tolist()

def summary(m, x):
    """A data program's JSON-ready summary."""
    return {"col_sums": m.sum(axis=0).tolist(), "rows": int(m.shape[0]), "head": x[:3].tolist(),
            "total": x.sum().tolist(), "mask": (m > 3).tolist(), "t": m.T[::-1].tolist(),
            "f32": x[:2].astype(np.float32).tolist(), "u64": np.array([2**64 - 1], np.uint64).tolist()}


@pytest.mark.parametrize("backend", BACKENDS)
def test_tolist_summary(backend):
    for m, x in ((np.arange(12).reshape(3, 4), np.linspace(1, 3, 7)),
                 (np.arange(6).reshape(2, 3) * -1, np.array([np.nan, -0.0, np.inf])),
                 (np.ones((1, 1), np.int64), np.array([0.1, 0.2, 0.3, 0.4]))):
        same(summary, m, x, backend=backend)
    assert ft.stats().graph_breaks == 0


def test_tolist_empty_and_0d():
    same(lambda x: (x[:0].tolist(), x[:0].reshape(0, 2).tolist(),
                    np.float32(x.sum()).tolist(), x[1:2].reshape(()).tolist()), np.arange(4.0))


def test_tolist_of_large_arrays_breaks_with_a_hint():
    def f(x):
        return (x * 2).tolist()
    e = ft.explain(f, np.ones(100))
    assert e.graph_break_count == 1
    reason = str(e.break_reasons[0])
    assert "more than 64 elements" in reason and "test_item_calls.py" in reason and ".tolist() outside" in reason
    same(f, np.ones(100), fullgraph=False)


def test_tolist_floats_stay_python_floats_against_float32():
    def f(x, y32):
        a, b = x[:2].tolist()
        return y32 * a, b * 2.0
    e = ft.explain(f, np.arange(3.0), np.ones(2, np.float32))
    assert e.graph_break_count == 1 and "float32" in str(e.break_reasons[0])
    same(f, np.arange(3.0), np.ones(2, np.float32), fullgraph=False)
