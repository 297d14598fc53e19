"""Run-time layouts per size class (backends/llvm/layouts.py, traced_ints.py): NumPy's strides
for transposed / broadcast / F-ordered graphs across many sizes, decided without sympy once the
size class is known."""
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frametrace as ft
from frametrace.backends.llvm.traced_ints import Trace, TracedInt

from tracing import A, Traced, assert_same

PROGRAMS = {
    "transpose_add": lambda x, y: x.T * 2 + y.T,
    "reversed_view": lambda x, y: x.T[::-1] * 2 + y.T,
    "broadcast_row": lambda x, y: (x.T + y.T.sum(axis=0)) * x.T,
    "reduce_keep": lambda x, y: (x - x.max(axis=0, keepdims=True)) * y,
    "exp_softmax_t": lambda x, y: np.exp(x.T - x.T.max(axis=-1, keepdims=True)),
    "cumsum_t": lambda x, y: np.cumsum(x.T, axis=1) + 1,
}


def _strides(v):
    """Strides of the dims of size > 1 (a size-1 dim's stride never addresses memory)."""
    return tuple(s if d != 1 else None for d, s in zip(v.shape, v.strides))


def _array(kind, shape, rng):
    n, m = shape
    base = rng.standard_normal((2 * (n + m) + 1, 2 * (n + m) + 1))
    if kind == "C":
        return np.ascontiguousarray(base[:n, :m])
    if kind == "F":
        return np.asfortranarray(base[:n, :m])
    if kind == "T":
        return np.ascontiguousarray(base[:m, :n]).T
    if kind == "strided":
        return base[: 2 * n: 2, : 2 * m: 2]
    if kind == "broadcast":                        # stride 0 along the rows
        return np.broadcast_to(base[:1, :m], (n, m))
    return base[:n, :m][::-1, ::-1]


KINDS = ["C", "F", "T", "strided", "reversed", "broadcast"]
TRACED = {}


def traced(name):
    if name not in TRACED:
        TRACED[name] = Traced(PROGRAMS[name], A(("n", "m")), A(("n", "m")))
    return TRACED[name]


def _sympy_calls(fn, *args):
    """(result, names of sympy functions entered while running fn)."""
    seen = []

    def prof(frame, event, arg):
        if event == "call" and "sympy" in frame.f_code.co_filename:
            seen.append(frame.f_code.co_name)
    sys.setprofile(prof)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(None)
    return out, seen


def test_new_sizes_of_a_known_class_call_no_sympy():
    t = traced("transpose_add")
    lay = t.run.__globals__["_layouts"]
    rng = np.random.default_rng(0)
    t.llvm(_array("C", (5, 7), rng), _array("C", (5, 7), rng))     # the class is learnt here
    classes = len(lay._classes)
    for n, m in [(6, 9), (11, 3), (40, 17), (2, 2)]:
        x, y = _array("C", (n, m), rng), _array("C", (n, m), rng)
        got, calls = _sympy_calls(lay, [x, y], t._sizes([x, y]))
        assert calls == [], calls[:10]
        assert got is not None                     # x.T + y.T: F order, as NumPy allocates it
        out, want = t.llvm(x, y)[0], PROGRAMS["transpose_add"](x, y)
        assert_same(out, want)
        assert _strides(out) == _strides(want)
    assert len(lay._classes) == classes


def test_growing_size_is_one_class():
    """A decode step: the cache slice grows by one each call, the layout class stays."""
    def step(cache, q):
        keys = cache.transpose(1, 2, 0)            # (heads, d, s)
        return np.exp(q @ keys - 1.0)
    t = Traced(step, A(("s", 6, 8)), A((6, 1, 8)))
    lay = t.run.__globals__["_layouts"]
    rng = np.random.default_rng(1)
    q = rng.standard_normal((6, 1, 8))
    for s in range(2, 40):
        cache = rng.standard_normal((64, 6, 8))[:s]
        out, want = t.llvm(cache, q)[0], step(cache, q)
        assert_same(out, want)
        assert _strides(out) == _strides(want)
    assert len(lay._classes) <= 1


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=st.sampled_from(sorted(PROGRAMS)), seed=st.integers(0, 2 ** 32 - 1),
       calls=st.lists(st.tuples(st.integers(0, 9), st.integers(1, 12),
                                st.sampled_from(KINDS), st.sampled_from(KINDS)),
                      min_size=1, max_size=6))
def test_layouts_match_numpy_across_sizes(name, seed, calls):
    """One compiled graph, many sizes and input layouts (sizes 0 and 1 included): values and
    the strides of every result are NumPy's, whether the class was new or known."""
    t, rng = traced(name), np.random.default_rng(seed)
    for n, m, kx, ky in calls:
        x, y = _array(kx, (n, m), rng), _array(ky, (n, m), rng)   # not copied: copies change layouts
        try:
            want = PROGRAMS[name](x, y)
        except ValueError:                         # e.g. max over an empty axis
            with pytest.raises(ValueError):
                t.llvm(x, y)
            continue
        got = t.llvm(x, y)[0]
        assert_same(got, want)
        assert _strides(got) == _strides(want), (n, m, kx, ky)


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_compiled_transposes_follow_numpy_layouts(backend):
    def f(x, y):
        z = np.sin(x.T) + y.T
        return z, z.reshape(-1), (x * 2).ravel()
    ft.reset()
    cf = ft.compile(f, dynamic=True, backend=backend)
    rng = np.random.default_rng(2)
    for kx in ("C", "F", "T"):                     # reshape/ravel views guard the input layout
        before = None
        for n, m in [(3, 5), (4, 9), (7, 2), (12, 30), (5, 6)]:
            x, y = _array(kx, (n, m), rng), _array("F", (n, m), rng)
            got, want = cf(x, y), f(x, y)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12)
                assert _strides(g) == _strides(w), (n, m, kx)
            assert np.shares_memory(got[0], got[1]) == np.shares_memory(want[0], want[1])
            before = before or ft.stats().unique_graphs
            assert ft.stats().unique_graphs == before      # a new size never recompiles
    assert ft.stats().unique_graphs <= 3


# ---- traced ints: the size class is exact ---------------------------------------------------

def _rule(a, b):
    """A rule shaped like the layout model: arithmetic and branches on the leaves."""
    out = []
    s = a * 8
    if abs(b) <= abs(s):
        out.append(b * a - 1)
    else:
        out.append(s + b)
    if a == 1 or b * b > a + 3:
        out.append(-b)
    out.append(s - 8 * a if a != b else a)
    return tuple(out)


@settings(max_examples=200, deadline=None)
@given(a1=st.integers(-6, 6), b1=st.integers(-60, 60), a2=st.integers(-6, 6), b2=st.integers(-60, 60))
def test_traced_class_gives_the_rules_answer(a1, b1, a2, b2):
    t = Trace(["a", "b"])
    got = _rule(t.leaf(a1, 0), t.leaf(b1, 1))
    src = "(" + "".join((x.src if isinstance(x, TracedInt) else repr(x)) + ", " for x in got) + ")"
    check, result = t.compile(src)
    assert check(a1, b1) and result(a1, b1) == _rule(a1, b1)
    if check(a2, b2):
        assert result(a2, b2) == _rule(a2, b2)
    else:                                          # another class: some comparison differs
        t2 = Trace(["a", "b"])
        _rule(t2.leaf(a2, 0), t2.leaf(b2, 1))
        assert any(t2.facts.get(k, v) != v for k, v in t.facts.items()) or t2.facts.keys() != t.facts.keys()


def test_traced_ints_refuse_inexact_operations():
    t = Trace(["a"])
    a = t.leaf(6, 0)
    for op in (lambda: a / 2, lambda: a // 2, lambda: hash(a), lambda: a % 4):
        with pytest.raises(TypeError):
            op()
    assert int(a) == 6 and t.facts == {"(a == 6)": True}    # int() specialises the class


_OPS = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: y - x, lambda x, y: x * y,
        lambda x, y: -x, lambda x, y: abs(x), lambda x, y: np.int64(3) * x, lambda x, y: 0 - x,
        lambda x, y: x * 1, lambda x, y: 1 * x + 0]


@settings(max_examples=200, deadline=None)
@given(a=st.integers(-50, 50), b=st.integers(-50, 50), a2=st.integers(-50, 50), b2=st.integers(-50, 50),
       ops=st.lists(st.tuples(st.integers(0, len(_OPS) - 1), st.booleans()), min_size=1, max_size=8))
def test_traced_int_arithmetic_is_pythons(a, b, a2, b2, ops):
    """Values and sources of traced arithmetic (NumPy ints too) equal Python's on any leaves."""
    t = Trace(["a", "b"])
    xs, plain, other = [t.leaf(a, 0), t.leaf(b, 1)], [a, b], [a2, b2]
    for k, swap in ops:
        i, j = (-1, -2) if swap else (-2, -1)
        xs.append(_OPS[k](xs[i], xs[j]))
        plain.append(_OPS[k](plain[i], plain[j]))
        other.append(_OPS[k](other[i], other[j]))
    assert isinstance(xs[-1], TracedInt) and xs[-1].value == plain[-1]
    assert eval(xs[-1].src, {"a": a2, "b": b2, "abs": abs}) == other[-1]
    assert t.facts == {}                            # arithmetic decides nothing
