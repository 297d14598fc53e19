"""Product kernels (lower/matmul.py) in a whole decoder and across tiers: a Llama-style decoder with
float32 or float64 weights under ft.compile and ft.enable() (same tokens as NumPy, no graph break,
no compile per token), the nests vectorised with the host's widest vectors, and both kernel tiers
of a product giving the same bits (which tier runs is a matter of background timing)."""
from __future__ import annotations

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import compile_graph, kernel_cache
from llama_model import build, generate
from tracing import A, Traced

rng = np.random.default_rng(23)
PROMPT = [1, 17, 40, 3, 9]


def assert_logits(got, want, dtype):
    """Equal up to the order of additions: with float32 weights the prompt's first products and norms
    are float32 (until the float64 rotary table promotes), so their rounding is float32's."""
    tol = 1e-5 if dtype == "float32" else 1e-9
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_decoder_compiles_once_for_every_token_under_both_entry_points(dtype):
    want_tokens, want_logits = generate(build(dtype), PROMPT, 10)
    ft.reset()
    with ft.config.patch(pgo=False):
        model = ft.compile(build(dtype))
        tokens, logits = generate(model, PROMPT, 10)
        assert tokens == want_tokens
        assert_logits(logits, want_logits, dtype)
        first = ft.stats()
        assert first.graph_breaks == 0 and first.eager_fallbacks == 0 and first.internal_errors == 0, first
        assert first.unique_graphs <= 3, first        # the prompt, the first step, steps of any length
        tokens, logits = generate(model, PROMPT, 10)   # every length again: nothing compiles
        again = ft.stats()
        assert tokens == want_tokens
        assert (again.frames_compiled, again.recompiles, again.unique_graphs) == \
            (first.frames_compiled, first.recompiles, first.unique_graphs), (first, again)

        ft.reset()
        hooked = build(dtype)
        with ft.enabled():
            tokens, logits = generate(hooked, PROMPT, 10)
        assert tokens == want_tokens
        assert_logits(logits, want_logits, dtype)
        first = ft.stats()
        assert first.graph_breaks == 0 and first.eager_fallbacks == 0 and first.internal_errors == 0, first
        assert first.unique_graphs <= 3, first         # the whole __call__, as under ft.compile
        with ft.enabled():
            tokens, _ = generate(hooked, PROMPT, 10)
        again = ft.stats()
        assert tokens == want_tokens
        assert (again.frames_compiled, again.recompiles, again.unique_graphs) == \
            (first.frames_compiled, first.recompiles, first.unique_graphs), (first, again)


def test_product_kernels_take_the_widest_vectors():
    """A kernel holding a product nest asks LLVM for 512-bit vectors (the default stops at 256 on
    AVX-512 hosts: the float32 weights' widening loads and the multiply-adds take half the
    instructions); other kernels keep the default."""
    t = Traced(lambda x, w, b: np.tanh(x @ w) + b, A((1, "k")), A(("k", "m"), "f4"), A(("m",)))
    wide = [k for k in t.run.kernels if k.wide]
    assert len(wide) == 1
    ir = kernel_cache.canonical_ir(wide[0], True)
    assert ir.count('"prefer-vector-width"="512"') == 2             # the body and the entry it is inlined into
    x, w, b = rng.standard_normal((1, 37)), rng.standard_normal((37, 19)).astype("f4"), rng.standard_normal(19)
    np.testing.assert_allclose(t.llvm(x, w, b)[0], np.tanh(x @ w) + b, rtol=1e-12, atol=1e-12)

    t = Traced(lambda x, b: np.tanh(x) + b, A(("n",)), A(("n",)))
    assert not any(k.wide for k in t.run.kernels)
    assert all("prefer-vector-width" not in kernel_cache.canonical_ir(k, True) for k in t.run.kernels)


PRODUCTS = {
    "rows": (lambda x, w: x @ w, lambda k, m: (k, m)),             # x @ W, W read along its rows
    "dots": (lambda x, w: x @ w.T, lambda k, m: (m, k)),           # x @ W.T: a dot product per column
    "epilogue": (lambda x, w: np.tanh(x @ w) * 0.5, lambda k, m: (k, m)),
}


@pytest.mark.parametrize("form", sorted(PRODUCTS))
@pytest.mark.parametrize("da,db", [("f8", "f4"), ("f8", "f8"), ("f8", "i4"), ("i8", "i2")])
def test_both_tiers_of_a_product_give_the_same_bits(form, da, db):
    fn, wshape = PRODUCTS[form]
    if form == "epilogue" and np.dtype(da).kind == "i":
        pytest.skip("tanh of an integer product is a float64 epilogue: covered by the float pairs")
    quick = Traced(fn, A(("n", "k"), da), A(wshape("k", "m"), db))
    full = Traced(fn, A(("n", "k"), da), A(wshape("k", "m"), db))
    quick.graph.hints = {s: 2 for s in quick.graph.symbols}
    full.graph.hints = {s: 1 << 12 for s in full.graph.symbols}
    quick.run, full.run = compile_graph(quick.graph), compile_graph(full.graph)
    assert {k.tier for k in quick.run.kernels} == {"quick"} and {k.tier for k in full.run.kernels} == {"full"}
    for n, k, m in ((1, 0, 3), (1, 1, 1), (1, 37, 19), (3, 288, 130), (2, 5, 0)):
        x = (rng.standard_normal((n, k)) * 4).astype(da)
        w = (rng.standard_normal(wshape(k, m)) * 4).astype(db)
        a, b = np.asarray(quick.llvm(x, w)[0]), np.asarray(full.llvm(x, w)[0])
        want = fn(x, w)
        assert a.dtype == b.dtype == want.dtype and a.shape == b.shape == want.shape
        assert a.tobytes() == b.tobytes(), (n, k, m)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(a, want, rtol=1e-11, atol=1e-11)
        else:
            np.testing.assert_array_equal(a, want)
