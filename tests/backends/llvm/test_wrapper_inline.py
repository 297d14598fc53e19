"""Wrapper ops written as the NumPy operation itself (wrapper.py `inline`): basic-slice getitem,
transpose, reshape and ufunc fallbacks give NumPy's values, shapes, strides and views on
every size, and the generated wrapper really uses the inline form."""
import numpy as np
import pytest

from tracing import A, Traced, assert_same

VIEWS = {
    "slices": (lambda x: (x[1:, 2:7:2] * 1.0, x[1:, 2:7:2]), "_op_getitem"),
    "int_and_newaxis": (lambda x: (x[2], x[:, None, 3], x[1:3, None]), "_op_getitem"),
    "negative_step": (lambda x: (x[::-1, ::-2],), None),      # py_slice's cases: the reference
    "transpose": (lambda x: (x.T, np.transpose(x[1:], (1, 0))), "_op_transpose"),
    "reshape": (lambda x: (x.reshape(-1), x[:, :4].reshape(-1, 2)), None),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_inline_views_are_numpys(name):
    fn, ref_name = VIEWS[name]
    t = Traced(fn, A(("n", 8)))
    if ref_name is not None:
        assert ref_name not in t.run.source
    rng = np.random.default_rng(3)
    for n in (4, 7, 12, 5):
        base = rng.standard_normal((n, 8))
        for x in (base, np.asfortranarray(base), rng.standard_normal((n, 16))[:, ::2]):
            got, want = t.llvm(x), fn(x)
            for g, w in zip(got, want):
                assert_same(g, w)
                assert g.strides == w.strides, name
                assert np.shares_memory(g, x) == np.shares_memory(w, x), name


def test_ufunc_fallback_inline_keeps_numpy_semantics():
    """A ufunc the kernels do not take (float16: NumPy's) is called directly, with NEP 50
    promotion and Python scalars as NumPy treats them."""
    fn = lambda x: (x * 3 + 0.5, np.maximum(x, 1))             # noqa: E731
    t = Traced(fn, A(("n",), "float16"))
    assert "_uf_" in t.run.source
    x = (np.random.default_rng(4).standard_normal(9) * 4).astype(np.float16)
    for g, w in zip(t.llvm(x), fn(x)):
        assert_same(g, w)
