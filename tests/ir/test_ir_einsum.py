"""np.einsum lowered to views, fused products + sums and matmuls (ir/numpy_api/einsum.py),
against NumPy's einsum on both backends: values (exact for ints and bools), dtype, type,
shape, strides, aliasing with the operands, NumPy's errors, and one graph per shape class."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frametrace as ft
from frametrace.ir.builder import GraphBuilder
from frametrace.ir.numpy_api import einsum as E
from helpers import assert_same

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}

# (subscripts, operand shapes); every case also runs with other sizes of the same rank
CASES = [
    ("bij,bjk->bik", [(5, 4, 4), (5, 4, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("i,i->", [(7,), (7,)]),
    ("i,i", [(7,), (7,)]),
    ("ij->ji", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ii->", [(4, 4)]),
    ("ij->", [(3, 5)]),
    ("ij->j", [(3, 5)]),
    ("iij->ji", [(3, 3, 2)]),
    ("iij,j->i", [(3, 3, 2), (2,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]),
    ("ij,jk->ik", [(20, 30), (30, 25)]),
    ("ij,kj->ik", [(20, 30), (25, 30)]),
    ("ij,jk->ki", [(20, 30), (30, 25)]),
    ("ij,jk", [(20, 30), (30, 25)]),
    ("abc,cd->abd", [(3, 4, 12), (12, 10)]),
    ("ab,bcd->acd", [(10, 12), (12, 3, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 3, 4), (4, 5)]),
    ("...i,...i", [(2, 3, 4), (4,)]),
    ("i...->...", [(3, 2, 4)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("ij,jk", [(2, 1), (3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("i,i,i->", [(6,), (6,), (6,)]),
    ("Ba,aC", [(2, 3), (3, 4)]),
    (",ij->ij", [(), (2, 3)]),
    ("", [()]),
    ("->", [()]),
    (",", [(), ()]),
]


def _operand(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) > 0.4
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-5 if np.dtype(dtype).kind == "i" else 0, 6, shape).astype(dtype)
    x = rng.standard_normal(shape) * 3
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _fresh(sub):
    """A new function (code object) per test: compile counts are per code object."""
    return eval("lambda *xs: np.einsum(sub, *xs)", {"np": np, "sub": sub})


def _check(got, want, ops, sub=None):
    """Type, dtype, shape, NumPy's layout and aliasing; values within rtol, or with `sub`
    within the order bound `4 k eps (|a| (x) |b|)` of a sum of k products in another order (an
    elementwise rtol is no bound for a cancelling sum)."""
    if sub is not None and np.asarray(want).dtype.kind == "f":
        assert type(got) is type(want) and got.dtype == want.dtype and np.shape(got) == np.shape(want)
        mag = np.einsum(sub, *[np.abs(x).astype(np.float64) for x in ops])
        k = max(x.size for x in ops)          # at least the number of products per result element
        bound = 4 * k * np.finfo(want.dtype).eps * mag + np.finfo(want.dtype).tiny
        assert np.all(np.abs(got.astype(np.float64) - want.astype(np.float64)) <= bound)
    else:
        assert_same(got, want, 1e-5 if np.asarray(want).dtype in (np.float32, np.complex64) else 1e-11)
    if isinstance(want, np.ndarray):
        real = [i for i, d in enumerate(want.shape) if d > 1]     # a size-1 dim's stride is free
        assert [got.strides[i] for i in real] == [want.strides[i] for i in real], (got.strides, want.strides)
        for x in ops:
            assert np.shares_memory(got, x) == np.shares_memory(want, x)
        assert got.flags.writeable == want.flags.writeable


def _resized(shapes, grow):
    """The shapes with every size > 1 grown by `grow` (equal sizes stay equal)."""
    return [tuple(d + grow if d > 1 else d for d in s) for s in shapes]


@pytest.mark.parametrize("sub,shapes", CASES, ids=[c[0] or "empty" for c in CASES])
def test_einsum_matches_numpy(sub, shapes, backend, rng):
    fn = _fresh(sub)
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for grow in (0, 2, 3):      # the size rule does not flip within these
        ops = [_operand(rng, s, np.float64) for s in _resized(shapes, grow)]
        _check(compiled(*ops), fn(*ops), ops)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.unique_graphs <= 2, s


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int64, np.uint16, np.bool_, np.complex128,
                                   np.float16])
@pytest.mark.parametrize("sub,shapes", [("bij,bjk->bik", [(6, 4, 4), (6, 4, 4)]),
                                        ("ij,jk->ik", [(40, 40), (40, 40)]),
                                        ("ij->", [(5, 7)]), ("ii->i", [(4, 4)]),
                                        ("i,i", [(9,), (9,)])])
def test_einsum_dtypes(sub, shapes, dtype, backend, rng):
    """Sums wrap in the result dtype (int8 stays int8), bool is any-of-ands, exact for ints."""
    fn = _fresh(sub)
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    ops = [_operand(rng, s, dtype) * (np.ones((), dtype) if dtype != np.bool_ else True) for s in shapes]
    if dtype == np.int8:
        ops = [x * np.int8(20) for x in ops]        # products and sums that wrap around
    want = fn(*ops)
    got = compiled(*ops)
    if np.dtype(dtype) == np.float16:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-2)
        assert type(got) is type(want) and got.dtype == want.dtype
    else:
        _check(got, want, ops, sub)
    assert ft.stats().graph_breaks == 0


def test_mixed_dtypes_promote_as_numpy(backend, rng):
    fn = _fresh("ij,j->i")
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for a, b in [(np.float32, np.float64), (np.int8, np.int16), (np.int64, np.float32), (np.bool_, np.int32)]:
        ops = [_operand(rng, (4, 5), a), _operand(rng, (5,), b)]
        _check(compiled(*ops), fn(*ops), ops)


def test_python_scalar_operand(backend, rng):
    def f(x):
        return np.einsum(",i->i", 2, x)
    x = _operand(rng, (5,), np.float32)
    _check(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(x), f(x), [x])


def test_non_contiguous_and_fortran_operands(backend, rng):
    fn = _fresh("ij,jk->ik")
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    a, b = rng.standard_normal((30, 40)), rng.standard_normal((40, 50))
    for x, y in [(a[::-1], b[:, ::2]), (np.asfortranarray(a), np.asfortranarray(b)), (a[:, ::-2], b[::2].T.copy().T)]:
        _check(compiled(x, y), fn(x, y), [x, y])
    small = _fresh("bij,bjk->bik")
    c = ft.compile(small, fullgraph=True, backend=FT_BACKEND[backend])
    p, q = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5, 3))
    for x, y in [(p[::-1], q.transpose(0, 2, 1).copy().transpose(0, 2, 1)), (np.asfortranarray(p), q[:, ::-1])]:
        _check(c(x, y), small(x, y), [x, y])


def test_sizes_zero_and_one(backend, rng):
    for sub, shapes in [("ij,jk->ik", [(0, 3), (3, 4)]), ("ij,jk->ik", [(2, 0), (0, 4)]),
                        ("i,i->", [(0,), (0,)]), ("ij->", [(1, 1)]), ("bij,bjk->bik", [(1, 1, 1), (1, 1, 1)])]:
        fn = _fresh(sub)
        ops = [_operand(rng, s, np.float64) for s in shapes]
        _check(ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])(*ops), fn(*ops), ops)


def test_special_values(backend):
    fn = _fresh("ij,j->i")
    a = np.array([[np.nan, 1.0], [np.inf, 0.0], [-0.0, -0.0]])
    v = np.array([1.0, -0.0])
    with np.errstate(all="ignore"):
        _check(ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])(a, v), fn(a, v), [a, v])


def test_views_alias_their_operand_as_in_numpy(backend, rng):
    def f(a):
        v = np.einsum("ij->ji", a)
        v[0] = -1.0                       # writes into a, as NumPy's einsum view does
        return a.sum()

    def g(a):
        d = np.einsum("ii->i", a)
        return d * 2.0

    a = rng.standard_normal((4, 4))
    for fn in (f, g):
        x, y = a.copy(), a.copy()
        assert_same(ft.compile(fn, backend=FT_BACKEND[backend])(x), fn(y))
        np.testing.assert_array_equal(x, y)
    r = ft.compile(lambda a: np.einsum("ii->i", a), backend=FT_BACKEND[backend])(a)
    assert r.flags.writeable and np.shares_memory(r, a)


def test_writes_through_a_diagonal_view_are_graph_breaks_not_wrong(backend, rng):
    def f(a):
        d = np.einsum("ii->i", a)
        d[1] = 7.0
        return a * 1.0
    x, y = rng.standard_normal((3, 3)), None
    y = x.copy()
    assert_same(ft.compile(f, backend=FT_BACKEND[backend])(x), f(y))
    np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("bad", [
    ("ij,jk->ik", [(2, 3), (4, 5)]),        # contracted sizes differ
    ("ii->i", [(2, 3)]),                    # a diagonal of a non-square array
    ("i->j", [(3,)]),                       # output label not in the inputs
    ("ij->i", [(2, 3, 4)]),                 # more dims than subscripts
    ("i,i", [(3,)]),                        # fewer operands than terms
    ("ii->ii", [(3, 3)]),                   # repeated output label
    ("i$->i", [(3, 3)]),                    # bad character
])
def test_numpy_errors(bad, backend, rng):
    sub, shapes = bad
    fn = _fresh(sub)
    ops = [_operand(rng, s, np.float64) for s in shapes]
    with pytest.raises(ValueError) as want:
        fn(*ops)
    with pytest.raises(type(want.value)):
        ft.compile(fn, backend=FT_BACKEND[backend])(*ops)


def test_dynamic_sizes_one_graph(backend, rng):
    fn = _fresh("bij,bjk->bik")
    compiled = ft.compile(fn, dynamic=True, fullgraph=True, backend=FT_BACKEND[backend])
    for b, n in [(3, 4), (7, 4), (2, 4), (9, 4)]:
        ops = [_operand(rng, (b, n, n), np.float64) for _ in range(2)]
        _check(compiled(*ops), fn(*ops), ops)
    assert ft.stats().unique_graphs == 1


def test_size_rule_picks_matmul_for_large_contractions(monkeypatch, backend, rng):
    seen = []
    original = GraphBuilder.emit

    def emit(self, op, *args, **attrs):
        seen.append(op)
        return original(self, op, *args, **attrs)
    monkeypatch.setattr(GraphBuilder, "emit", emit)
    for shapes, matmul in [([(64, 4, 4), (64, 4, 4)], False), ([(4, 16, 16), (4, 16, 16)], True)]:
        seen.clear()
        fn = _fresh("bij,bjk->bik")
        ops = [_operand(rng, s, np.float64) for s in shapes]
        _check(ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])(*ops), fn(*ops), ops)
        assert ("matmul" in seen) == matmul and ("sum" in seen) != matmul, seen
    seen.clear()                                # NumPy's result is F-ordered here: no matmul
    fn = _fresh("ij,jk->ki")
    ops = [_operand(rng, s, np.float64) for s in [(40, 30), (30, 50)]]
    _check(ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])(*ops), fn(*ops), ops)
    assert "matmul" not in seen


def test_optimize_and_out(backend, rng):
    def f(a, b, c):
        return (np.einsum("ij,jk,kl->il", a, b, c, optimize=True),
                np.einsum("ij,jk->ik", a, b, optimize="greedy"),
                np.einsum("ij->j", a, optimize=True))

    def g(a, b, out):
        r = np.einsum("ij,jk->ik", a, b, out=out)
        return r is out, out * 1.0

    ops = [_operand(rng, s, np.float64) for s in [(3, 4), (4, 5), (5, 2)]]
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(*ops), f(*ops))
    o1, o2 = np.zeros((3, 5)), np.zeros((3, 5))
    assert_same(ft.compile(g, fullgraph=True, backend=FT_BACKEND[backend])(ops[0], ops[1], o1), g(ops[0], ops[1], o2))
    np.testing.assert_allclose(o1, o2, rtol=1e-12)
    assert ft.stats().graph_breaks == 0


def test_interleaved_form(backend, rng):
    def f(a, b):
        return np.einsum(a, [0, 1], b, [1, 2], [0, 2]) + np.einsum(a, [Ellipsis, 1], b, [1, 2])
    ops = [_operand(rng, s, np.float64) for s in [(3, 4), (4, 5)]]
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(*ops), f(*ops))


def test_fused_with_neighbours_in_one_graph(backend, rng):
    def f(q, k, v):
        s = np.einsum("bqd,bkd->bqk", q, k) * 0.5
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return np.einsum("bqk,bkd->bqd", w / w.sum(axis=-1, keepdims=True), v)
    ops = [_operand(rng, (3, 4, 4), np.float64) for _ in range(3)]
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(*ops), f(*ops))
    assert ft.stats().unique_graphs == 1


_LABELS = "abcdeA"


@st.composite
def _specs(draw):
    n_ops = draw(st.integers(1, 3))
    size = {c: draw(st.integers(1, 4)) for c in _LABELS}
    terms = [draw(st.lists(st.sampled_from(_LABELS), min_size=0, max_size=3)) for _ in range(n_ops)]
    used = sorted({c for t in terms for c in t})
    explicit = draw(st.booleans())
    out = draw(st.permutations(used)).copy() if used else []
    out = out[:draw(st.integers(0, len(out)))] if out else []
    sub = ",".join("".join(t) for t in terms) + ("->" + "".join(out) if explicit else "")
    shapes = [tuple(size[c] for c in t) for t in terms]
    dtype = draw(st.sampled_from([np.float64, np.int32, np.bool_]))
    return sub, shapes, dtype


@settings(max_examples=60, deadline=None)
@given(_specs(), st.integers(0, 2 ** 32 - 1))
def test_random_subscripts(spec, seed):
    sub, shapes, dtype = spec
    rng = np.random.default_rng(seed)
    ops = [_operand(rng, s, dtype) for s in shapes]
    fn = _fresh(sub)
    ft.reset()
    try:
        want = fn(*ops)
    except ValueError:
        with pytest.raises(ValueError):
            ft.compile(fn, backend="llvm")(*ops)
        return
    _check(ft.compile(fn, fullgraph=True, backend="llvm")(*ops), want, ops)
    assert ft.stats().graph_breaks == 0


def test_spec_parser():
    assert E.parse("...ij,...jk->...ik", [3, 2]) == E.Spec((("A", "i", "j"), ("j", "k")), ("A", "i", "k"))
    assert E.parse("ij,jk", [2, 2]).out == ("i", "k")
    assert E.parse("Ba,aC", [2, 2]).out == ("B", "C")
    assert E.parse("ii", [2]).out == ()
    assert E.parse("i...", [3]).out == ("A", "B", "i")


def test_dtype_and_casting(backend, rng):
    def f(a, b):
        return (np.einsum("ij,jk->ik", a, b, dtype=np.float64),
                np.einsum("i,i", a[0], b[:, 0], dtype=np.float32, casting="same_kind"),
                np.einsum("ij->", a, dtype=np.int64, casting="unsafe"))

    def bad(a):
        return np.einsum("ij->", a, dtype=np.int64)       # float64 -> int64 is not 'safe'

    a, c = rng.standard_normal((3, 4)).astype(np.float32) * 3, rng.integers(-3, 3, (4, 5))
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(a, c), f(a, c))
    x = rng.standard_normal((2, 3))
    with pytest.raises(TypeError):
        bad(x)
    with pytest.raises(TypeError):
        ft.compile(bad, backend=FT_BACKEND[backend])(x)


@pytest.mark.parametrize("sub", ["ij,jk->ik", "ij->j", "ij,ij->j", "ij,jk->ki", "bij,bkj->bik"])
def test_symbolic_sizes_across_the_size_rule(sub, backend, rng):
    """Sizes vary across MATMUL_MIN_WORK: a guard on the work picks the form; at most one
    graph per side of the rule, each right for every size it admits."""
    fn = _fresh(sub)
    compiled = ft.compile(fn, dynamic=True, fullgraph=True, backend=FT_BACKEND[backend])
    ndims = [len(t) for t in sub.split("->")[0].split(",")]
    for n in (3, 5, 4, 20, 33, 6, 24):
        ops = [_operand(rng, (n,) * d if d == 2 else (2, n, n), np.float64) for d in ndims]
        _check(compiled(*ops), fn(*ops), ops)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.unique_graphs <= 2, s


@pytest.mark.parametrize("subscripts, shapes", [("ab,cc->bac", [(2, 2), (1, 1)]), ("ab,cc->bac", [(3, 2), (1, 1)]),
                                                ("ab,c->bac", [(2, 3), (1,)])])
def test_a_one_dim_operand_does_not_make_the_result_c_order(subscripts, shapes):
    """A 1-d value among the operands (here a (1, 1) diagonal) says nothing of the result's
    order: NumPy lays `bac` out from x's axes (strides (8, 16, 8) for (2, 2)), not in C order
    (found by hypothesis on the decoder's layout change, backends/llvm/layouts.py)."""
    ops = [np.random.default_rng(7).standard_normal(s) for s in shapes]
    fn = lambda *a: np.einsum(subscripts, *a)  # noqa: E731
    _check(ft.compile(fn, fullgraph=True, backend="llvm")(*ops), fn(*ops), ops)
