"""Every ufunc NumPy has, called and through its methods (reduce, accumulate, outer, at) and
with out= / where=, compiled with fullgraph=True on both backends against NumPy on random
inputs: no graph break, NumPy's values, dtypes and types, or NumPy's exception type.

Not walked: the generalized ufuncs (matmul, vecdot, matvec, vecmat: NumPy has no methods
for them; tests/ir cover the calls) and isnat (datetime operands only)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}
UFUNCS = sorted((v for v in vars(np).values() if isinstance(v, np.ufunc) and v.signature is None
                 and v is not np.isnat), key=lambda u: u.__name__)
UFUNCS = list({u.__name__: u for u in UFUNCS}.values())


def _loop(u, chars):
    """Operand type chars of the ufunc's first loop starting with one of `chars` (in order)."""
    for ch in chars + "dl?":          # float_power has float64 loops only
        for t in u.types:
            ins = t.split("->")[0]
            if ins[0] == ch:
                return ins
    raise AssertionError(u)


def _array(rng, ch, shape):
    if ch == "d":
        return rng.standard_normal(shape) * 2
    if ch in "fe":
        return (rng.standard_normal(shape) * 2).astype(np.dtype(ch))
    if ch in "liB":
        return rng.integers(1, 6, shape).astype(np.dtype(ch))
    return rng.random(shape) > 0.5


def _cases(u, rng, chars):
    ins = _loop(u, chars)
    xs = [_array(rng, ch, (5, 4)) for ch in ins]
    mask = rng.random((5, 4)) > 0.5
    outs = [np.zeros((5, 4), np.dtype(t)) for t in next(t for t in u.types if t.startswith(ins)).split("->")[1]]
    n = u.nin
    cases = {"call": (lambda *a: u(*a), xs)}
    if u.nout == 1:
        cases["out"] = (lambda *a: (u(*a[:n], out=a[n]), a[n] * 1)[1], xs + outs)
        cases["where"] = (lambda *a: (u(*a[:n], out=a[n], where=a[n + 1]), a[n] * 1)[1], xs + outs + [mask])
        cases["at"] = ((lambda x, i: (u.at(x, i), x)[1], [xs[0][0].copy(), np.array([0, 2, 0])]) if n == 1 else
                       (lambda x, i, v: (u.at(x, i, v), x)[1], [xs[0][0].copy(), np.array([0, 2, 0]), xs[1][0, :3]]))
    else:
        cases["out"] = (lambda *a: tuple(o * 1 for o in u(*a[:n], out=tuple(a[n:]))), xs + outs)
        cases["out_where"] = (lambda *a: tuple(o * 1 for o in u(*a[:n], out=tuple(a[n:-1]), where=a[-1])),
                              xs + outs + [mask])
        cases["out_positional"] = (lambda *a: tuple(o * 1 for o in u(*a)), xs + outs)
    if n == 2 and u.nout == 1:
        x = xs[0]
        cases["reduce"] = (lambda x: (u.reduce(x), u.reduce(x, axis=1, keepdims=True)), [x])
        cases["reduce_all"] = (lambda x: u.reduce(x, axis=None), [x])
        cases["reduce_out"] = (lambda x, o: (u.reduce(x, axis=1, out=o), o * 1)[1], [x, outs[0][:, 0].copy()])
        cases["accumulate"] = (lambda x: (u.accumulate(x), u.accumulate(x, axis=1)), [x])
        cases["outer"] = (lambda a, b: u.outer(a, b), [xs[0][0], xs[1][:, 0]])
    return cases


def _run(fn, args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*[a.copy() for a in args])


@pytest.mark.parametrize("chars", ["dl?", "fB?"], ids=["f8-i8", "f4-u1"])
@pytest.mark.parametrize("u", UFUNCS, ids=[u.__name__ for u in UFUNCS])
def test_ufunc_and_its_methods(u, chars, backend, rng):
    for what, (fn, args) in _cases(u, rng, chars).items():
        ft.reset()
        compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
        try:
            want = _run(fn, args)
        except Exception as exc:             # NumPy refuses (subtract.reduce over two axes, ...)
            with pytest.raises(type(exc)):
                _run(compiled, args)
            continue
        got = _run(compiled, args)
        assert_same(got, want, 1e-9 if chars[0] == "d" else 2e-6)
        s = ft.stats()
        assert s.graph_breaks == 0 and s.unique_graphs == 1, (u.__name__, what, s)


def test_non_reorderable_reduce_folds_left_to_right(backend, rng):
    def f(x):
        return np.subtract.reduce(x, axis=0), np.divide.reduce(x, axis=1), np.power.reduce(np.abs(x) + 0.5)
    x = rng.standard_normal((4, 3))
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(x), f(x), 1e-12)


def test_ldexp_out_and_where(backend, rng):
    def f(x, e, o, m):
        np.ldexp(x, e, out=o, where=m)
        return o * 1, np.ldexp.outer(x[0], e[:, 0])
    x, e, m = rng.standard_normal((3, 4)), rng.integers(-3, 3, (3, 4)), rng.random((3, 4)) > 0.5
    o1, o2 = np.zeros((3, 4)), np.zeros((3, 4))
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(x, e, o1, m), f(x, e, o2, m))


def test_unary_at_with_repeated_indices(backend, rng):
    def f(x, i):
        np.negative.at(x, i)                # unbuffered: index 1 negated twice
        np.sqrt.at(x, [0])
        return x
    x = np.abs(rng.standard_normal(5))
    i = np.array([1, 1, 3])
    a, b = x.copy(), x.copy()
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(a, i), f(b, i))


def test_reduce_initial_where_and_accumulate_out(backend, rng):
    def f(x, m, o):
        np.subtract.accumulate(x, axis=1, out=o)
        return (np.add.reduce(x, axis=0, initial=10.0), np.maximum.reduce(x, axis=1, where=m, initial=-5.0),
                np.multiply.reduce(x[:0], axis=0, initial=2.0), np.add.reduce(x, axis=None, where=m),
                np.minimum.reduce(x, axis=0, keepdims=True, initial=0.0), o * 1)
    x, m = rng.standard_normal((4, 5)), rng.random((4, 5)) > 0.4
    o1, o2 = np.zeros((4, 5)), np.zeros((4, 5))
    assert_same(ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(x, m, o1), f(x, m, o2), 1e-12)
    np.testing.assert_array_equal(o1, o2)
