"""Matrix products in our own loop nests (lower/matmul.py) against NumPy: every pair of int and
float operand dtypes (mixed ones read in their own dtype, never cast as a whole), sizes 0, 1, odd
and large, transposed / strided / reversed / Fortran operands, 1-d and batched forms, the run-time
switch to BLAS, and elementwise epilogues fused into the product's kernel.

Float results are compared within the reduction-order bound (README "What 'same result as NumPy'
means"): |ours - NumPy's| <= k * eps * (|a| @ |b|), the error any order of the k additions allows.
Integer results are exact (both wrap in the result dtype).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.lower.matmul import MIXED_MAX_ROWS, SAME_DTYPE_MAX_ROWS, choice
from tracing import A, Traced

rng = np.random.default_rng(20)
DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint64", "float32", "float64"]


def data(shape, dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind == "u":
        return rng.integers(0, 7, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-6, 7, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def assert_product(got, want, a, b):
    """Same dtype and shape; ints exact; floats within the reduction-order bound."""
    assert type(got) is type(want), (type(got), type(want))
    assert got.dtype == want.dtype and np.shape(got) == np.shape(want), (got.dtype, want.dtype, np.shape(got))
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    k = a.shape[-1]
    mag = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    bound = 4 * max(k, 1) * np.finfo(want.dtype).eps * mag + np.finfo(want.dtype).tiny
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound), np.max(np.abs(got - want))


def run(t, *values):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return t.llvm(*values)[0]


@pytest.mark.parametrize("da", DTYPES)
def test_every_pair_of_dtypes(da):
    """a of one dtype times b of every dtype (one graph, symbolic sizes); rows, columns and k of
    0, 1, odd and large."""
    t = Traced(lambda a, *bs: tuple(a @ b for b in bs), A(("n", "k"), da), *[A(("k", "m"), db) for db in DTYPES])
    n_nests = sum(np.result_type(da, db) not in (np.dtype(bool), np.dtype(np.float32)) for db in DTYPES)
    assert t.run.source.count("mm v") == n_nests                    # our nests (bool: NumPy's or-of-ands;
    #                                                                  float32 results: BLAS, matmul.kernel_when)
    for n, k, m in ((1, 288, 130), (3, 5, 7), (0, 4, 3), (2, 0, 3), (1, 1, 1), (33, 17, 9), (5, 3, 0)):
        a, bs = data((n, k), da), [data((k, m), db) for db in DTYPES]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = t.llvm(a, *bs)
        for g, b in zip(got, bs):
            assert_product(g, a @ b, a, b)


def test_integer_products_never_call_blas():
    t = Traced(lambda a, b, c: (a @ b, b.T @ c), A(("n", "k"), "int64"), A(("k", "m"), "int32"), A(("k", "m"), "uint8"))
    assert "matmul" not in t.run.source
    a, b, c = data((4, 6), "int64"), data((6, 5), "int32"), data((6, 5), "uint8")
    got = t.llvm(a, b, c)
    np.testing.assert_array_equal(got[0], a @ b)
    np.testing.assert_array_equal(got[1], b.T @ c)


@pytest.mark.parametrize("da,db", [("float64", "float32"), ("float32", "float64"), ("int64", "float32"),
                                   ("float64", "float64"), ("int32", "int16")])
def test_layouts_of_operands(da, db):
    """Transposed (the dots form), strided, reversed and Fortran-ordered operands, read in place."""
    t = Traced(lambda a, b: a @ b, A(("n", "k"), da), A(("k", "m"), db))
    n, k, m = 3, 37, 11
    bs = {"C": data((k, m), db), "T": data((m, k), db).T, "F": np.asfortranarray(data((k, m), db)),
          "strided": data((2 * k, 3 * m), db)[::2, ::3], "reversed": data((k, m), db)[::-1, ::-1]}
    as_ = {"C": data((n, k), da), "T": data((k, n), da).T, "strided": data((n, 2 * k), da)[:, ::2]}
    for a, b in itertools.product(as_.values(), bs.values()):
        assert_product(run(t, a, b), a @ b, a, b)


@pytest.mark.parametrize("dt", ["float64", "float32", "int64"])
def test_vector_and_batched_forms(dt):
    w = "float32" if dt == "float64" else dt            # a mixed pair where the result is float64
    cases = [
        (lambda v, m: v @ m, ("k",), ("k", "m")),              # v @ M: the rows form, no outer loop
        (lambda m, v: m @ v, ("n", "k"), ("k",)),              # M @ v: a dot product per row
        (lambda u, v: u @ v, ("k",), ("k",)),                  # u @ v: a NumPy scalar
        (lambda u, v: np.dot(u, v), ("k",), ("k",)),
        (lambda u, v: 1.5 - u @ v, ("k",), ("k",)),             # a NumPy scalar read by its epilogue
        (lambda a, b: np.dot(a, b), ("n", "k"), ("k", "m")),
        (lambda a, b: a @ b, ("b", "n", "k"), ("b", "k", "m")),     # batched
        (lambda a, b: a @ b, ("b", "n", "k"), ("k", "m")),          # b broadcast over the batch
        (lambda a, b: a @ b, (1, "n", "k"), ("b", "k", "m")),       # a size-1 batch dim
        (lambda a, b: a @ b, ("b", "k"), ("b", "k", "m")),          # 1-d a against a batch
    ]
    sizes = {"n": (1, 4), "k": (0, 1, 9), "m": (1, 6), "b": (1, 3)}
    for fn, sa, sb in cases:
        t = Traced(fn, A(sa, dt), A(sb, w))
        for pick in itertools.product(*[sizes[s] for s in ("n", "k", "m", "b")]):
            env = dict(zip("nkmb", pick))
            a = data(tuple(env.get(s, s) for s in sa), dt)
            b = data(tuple(env.get(s, s) for s in sb), w)
            assert_product(run(t, a, b), fn(a, b), np.atleast_2d(a), b)


def test_run_time_switch_to_blas():
    """Same dtypes, symbolic rows: our nest for a few rows, BLAS (into the same array, the epilogue
    reading it) for many; one graph serves both."""
    f = lambda x, w, c: np.tanh(x @ w + c)            # noqa: E731
    t = Traced(f, A(("n", 64)), A((64, 96)), A((96,)))
    assert choice(next(n for n in t.graph.nodes if n.op == "matmul")) == "auto"
    assert "_use = 1 if" in t.run.source
    w, c = data((64, 96), "f8"), data((96,), "f8")
    for n in (1, SAME_DTYPE_MAX_ROWS, 300, 2):
        x = data((n, 64), "f8")
        got = run(t, x, w, c)
        np.testing.assert_allclose(got, f(x, w, c), rtol=1e-12, atol=1e-12)
    t = Traced(lambda x, w: x @ w, A(("n", 16)), A((16, 8), "f4"))
    w = data((16, 8), "f4")
    for n in (1, MIXED_MAX_ROWS, MIXED_MAX_ROWS + 1, 500):   # mixed: BLAS on a cast kept across calls
        x = data((n, 16), "f8")
        assert_product(run(t, x, w), x @ w, x, w)


def test_epilogues_fuse_into_the_product_kernel():
    """Bias, activation, scaling, a product of two products: one kernel, the product written
    over by its epilogue (one allocation per distinct result)."""
    x, b = data((1, 288), "f8"), data((768,), "f4")
    w1, w3, w2 = data((288, 768), "f4"), data((288, 768), "f4"), data((768, 288), "f4")

    def mlp(x, w1, w3, w2):
        g = x @ w1
        return (g / (1.0 + np.exp(-g)) * (x @ w3)) @ w2
    t = Traced(mlp, A((1, 288)), A((288, 768), "f4"), A((288, 768), "f4"), A((768, 288), "f4"))
    assert t.run.source.count("_k") >= 1 and "_op_matmul" not in t.run.source
    assert len(t.run.kernels) == 1
    np.testing.assert_allclose(run(t, x, w1, w3, w2), mlp(x, w1, w3, w2), rtol=1e-10, atol=1e-10)

    t = Traced(lambda x, w, b: np.tanh(x @ w + b), A((1, 288)), A((288, 768), "f4"), A((768,), "f4"))
    assert len(t.run.kernels) == 1 and "in place" in t.run.source and t.run.source.count("_empty(") == 1
    got = run(t, x, w1, b)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.tanh(x @ w1 + b), rtol=1e-12, atol=1e-12)


def test_attention_scores_softmax_fuses():
    """softmax(q @ k.T / sqrt(d)): the scores row, its max, exp and sum in one kernel."""
    def attn(q, k, v):
        s = q @ k.T / np.sqrt(q.shape[-1])
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v
    t = Traced(attn, A(("n", 16)), A(("n", 16)), A(("n", 16)))
    for n in (1, 3, 20):
        q, k, v = data((n, 16), "f8"), data((n, 16), "f8"), data((n, 16), "f8")
        np.testing.assert_allclose(run(t, q, k, v), attn(q, k, v), rtol=1e-11, atol=1e-12)
    mm = [ln for ln in t.run.loop_ir.splitlines() if ln.startswith("kernel")]
    assert len(mm) <= 2


def test_epilogue_warnings_and_flags_as_numpy():
    """FP errors of the product and of its epilogue: NumPy's warnings, raised under errstate."""
    def f(x, w):
        return np.exp(x @ w)
    t = Traced(f, A(("n", 3)), A((3, 2), "f4"))
    x = np.array([[1e3, 1.0, 1.0]])
    w = np.ones((3, 2), np.float32)
    with np.errstate(over="ignore"):
        want = f(x, w)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = t.run([x, w], [1])[0]
    np.testing.assert_array_equal(got, want)
    assert [str(w.message) for w in got_w] == ["overflow encountered in exp"]
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        t.run([x, w], [1])
    # inf * 0 inside the product: NumPy's "invalid value encountered in matmul"
    t = Traced(lambda a, b: a @ b, A((1, 2)), A((2, 1), "f4"))
    a, b = np.array([[np.inf, 1.0]]), np.array([[0.0], [1.0]], np.float32)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = t.run([a, b], [])[0]
    assert np.isnan(got[0, 0]) and [str(w.message) for w in got_w] == ["invalid value encountered in matmul"]


def test_integer_products_wrap_as_numpy():
    t = Traced(lambda a, b: a @ b, A(("n", "k"), "int8"), A(("k", "m"), "uint8"))
    a = np.full((2, 70), 100, np.int8)
    b = np.full((70, 3), 200, np.uint8)
    np.testing.assert_array_equal(run(t, a, b), a @ b)            # int16, wrapped


class Projection:
    """float32 weights meeting float64 activations, as NEP 50 gives them (a model as users write it)."""

    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return np.maximum(x @ self.w + self.b, 0.0) * 0.5


def test_mixed_precision_model_compiles_once_for_every_length():
    layer = Projection(data((24, 40), "f4"), data((40,), "f4"))
    cache = np.zeros((8, 24))                                   # float64, as np.zeros gives it

    def model(tokens):
        x = cache[:tokens.shape[0]] + tokens[:, None] * 0.1      # float64 activations
        return layer(x).sum(axis=-1)

    ft.reset()
    cm = ft.compile(model, dynamic=True)
    for n in (2, 3, 5, 8):
        toks = rng.standard_normal(n)
        np.testing.assert_allclose(cm(toks), model(toks), rtol=1e-12, atol=1e-12)
    assert ft.stats().unique_graphs == 1


class Layer:
    """A user's layer: a dense product with bias and activation, its sizes changing per call."""

    def __init__(self, w, c):
        self.w, self.c = w, c

    def forward(self, x, w, c):
        return np.tanh(x @ w + c)


def test_native_entry_runs_the_nest_and_misses_to_blas():
    """A product that picks our nest or BLAS by its sizes ("auto") runs from the native entry where
    our nest computes it (before: no native entry at all, ~4x NumPy's call time for a
    10x10 matrix-vector product), and where BLAS does (the entry calls it), for an F-ordered x
    too (the wrapper's layouts, native_layouts.py) and at sizes whose kernel is large enough for
    the thread pool (runtime.call from the entry)."""
    import frametrace as ft
    w, c = data((64, 96), "f8"), data((96,), "f8")
    layer = Layer(w, c)
    f = ft.compile(layer.forward, backend="llvm")

    def hits():
        return sum(e.native.hits for e in f._frametrace_cache.entries if e.native is not None)
    for n in (1, 2):                                   # static, then dynamic rows
        x = data((n, 64), "f8")
        np.testing.assert_allclose(f(x, w, c), layer.forward(x, w, c), rtol=1e-12, atol=1e-12)
    for n, native in ((3, True), (SAME_DTYPE_MAX_ROWS, True), (300, True), (2, True), (301, True)):
        x = data((n, 64), "f8")
        if n == 300:
            x = np.asfortranarray(x)
        before = hits()
        got = f(x, w, c)
        np.testing.assert_allclose(got, layer.forward(x, w, c), rtol=1e-12, atol=1e-12)
        assert got.shape == (n, 96) and (hits() == before + 1) == native, n
    g = ft.compile(lambda a, v: a @ v, backend="llvm")
    for n in (4, 10, 33, 64):
        a, v = data((n, n), "f8"), data((n,), "f8")
        np.testing.assert_allclose(g(a, v), a @ v, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g(a[::-1, ::2], v[::2]), a[::-1, ::2] @ v[::2], rtol=1e-12, atol=1e-12)
