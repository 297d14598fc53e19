"""Concatenates read through segments (lower/segments.py): np.roll, np.pad, np.concatenate,
np.append fuse with their neighbours into one kernel whose loops are split per piece."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frametrace as ft
from frametrace.lower.loop_ir import Affine, Arg, Const, Load, Loop, Op, Store, format_kernel, walk_exprs
from frametrace.lower.segments import SEGMENT, has_segments, segment, split_body
from tracing import A, Traced, kernel_count

rng = np.random.default_rng(5)


def r(*shape, dtype="f8"):
    return (rng.standard_normal(shape) * 8).astype(dtype)


def roll_diff(u):
    return (np.roll(u, -1, axis=1) - np.roll(u, 1, axis=1)) * 0.5 + (np.roll(u, -1, axis=0) - u)


def pad_stencil(u):
    p = np.pad(u, 1)
    return 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]) - u


def _segments_left(t) -> int:
    out = 0
    for k in t.run.kernels:
        stack = list(k.body)
        while stack:
            s = stack.pop()
            if isinstance(s, Loop):
                stack += s.body
            elif getattr(s, "value", None) is not None:
                out += sum(isinstance(e, Op) and e.op == SEGMENT for e in walk_exprs(s.value))
    return out


@pytest.mark.parametrize("fn", [roll_diff, pad_stencil], ids=["roll", "pad"])
def test_stencils_are_one_kernel_without_branches(fn, compiled_graphs):
    ft.reset()
    c = ft.compile(fn, backend="llvm", fullgraph=True, dynamic=True)
    for u in (r(5, 7), r(2, 2), r(64, 33), r(9, 12)[::-1, ::2], r(3, 1), r(1, 3)):
        np.testing.assert_allclose(c(u), fn(u), rtol=1e-13, atol=1e-13)
    run = compiled_graphs[0]
    t = type("T", (), {"run": run})
    assert kernel_count(t) == 1 and _segments_left(t) == 0
    assert "concatenate" not in run.source and "_pad" not in run.source
    assert ft.stats().unique_graphs <= 4       # sizes 1 specialise; np.pad guards the layout class


def test_pieces_of_every_dtype_and_size():
    def f(a, b, c):
        return np.concatenate([a, b.astype(a.dtype), c], axis=1) * 2
    t = Traced(f, A(("n", "m"), "f4"), A(("n", "k"), "i4"), A(("n", "j"), "f4"))
    assert kernel_count(t) == 1
    for m, k, j in ((3, 0, 2), (0, 0, 1), (1, 5, 0), (4, 4, 4)):
        t.check(r(3, m, dtype="f4"), r(3, k, dtype="i4"), r(3, j, dtype="f4"))
    t.check(r(0, 2, dtype="f4"), r(0, 3, dtype="i4"), r(0, 1, dtype="f4"))


def test_reversed_and_strided_reads_of_a_concatenate():
    """[::-1] splits the loop the other way round; [::2] cannot split: it branches."""
    t = Traced(lambda a, b: np.concatenate([a, b])[::-1] + 1, A(("n",)), A(("m",)))
    assert _segments_left(t) == 0
    t2 = Traced(lambda a, b: np.concatenate([a, b])[::2] + 1, A(("n",)), A(("m",)))
    assert _segments_left(t2) > 0
    for n, m in ((3, 4), (1, 1), (0, 5), (6, 0), (7, 2)):
        t.check(r(n), r(m))
        t2.check(r(n), r(m))


def test_concatenate_read_by_a_reduction_and_a_broadcast():
    def f(a, b):
        c = np.concatenate([a, b], axis=0)
        return c.sum(axis=0) + c.max(axis=1)[:, None].sum(), np.hstack([a, a]).min(axis=1)
    t = Traced(f, A(("n", "m")), A(("k", "m")))
    for n, k, m in ((3, 2, 4), (1, 1, 1), (5, 3, 2)):
        t.check(r(n, m), r(k, m), rtol=1e-12)


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_pad_modes_match_numpy(mode, backend):
    def f(u):
        return np.pad(u, ((1, 2), (2, 0)), mode=mode) * 3
    for dt in ("f8", "f4", "i8", "u1", "?"):
        ft.reset()
        c = ft.compile(f, backend=backend, fullgraph=True, dynamic=True)
        for shape in ((4, 5), (3, 3), (9, 4), (6, 2)):
            u = r(*shape, dtype=dt)
            want = f(u)
            got = c(u)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
        # (6, 2): a width beyond one reflection (NumPy's np.pad) or the width equal to the size
        assert ft.stats().unique_graphs <= 3 and ft.stats().graph_breaks == 0


def test_pad_constant_values_convert_as_numpy_assigns():
    def f(u):
        return np.pad(u, ((1, 1), (2, 1)), constant_values=((1.7, -2), (1e300, 300)))
    for dt in ("f8", "f4", "i4", "u1"):
        ft.reset()
        c = ft.compile(f, backend="llvm", fullgraph=True)
        u = r(3, 4, dtype=dt)
        with np.errstate(all="ignore"):
            try:
                want = f(u)
            except (ValueError, OverflowError) as exc:
                with pytest.raises(type(exc)):
                    c(u)
                continue
            np.testing.assert_array_equal(c(u), want)


def test_pad_with_a_run_time_fill_value():
    def f(u, v):
        return np.pad(u, 2, constant_values=v) + 1
    ft.reset()
    c = ft.compile(f, backend="llvm", fullgraph=True)
    for v in (0.5, -3.0, float("nan")):
        u = r(4, 3, dtype="f4")
        np.testing.assert_array_equal(c(u, v), f(u, v))
    assert ft.stats().unique_graphs == 1


def test_pad_beyond_one_reflection_runs_numpy():
    f = lambda u: np.pad(u, 5, mode="reflect") + 1     # noqa: E731  (NumPy reflects repeatedly)
    ft.reset()
    c = ft.compile(f, backend="llvm", fullgraph=True)
    for n in (3, 8):
        u = r(n, n)
        np.testing.assert_array_equal(c(u), f(u))
    assert ft.stats().graph_breaks == 0


def test_pad_negative_width_raises_as_numpy():
    ft.reset()
    c = ft.compile(lambda u: np.pad(u, -1), backend="llvm")
    with pytest.raises(ValueError, match="negative"):
        c(r(3, 3))


def test_roll_and_pad_fuse_with_dynamic_sizes_one_compile():
    ft.reset()
    c = ft.compile(lambda u: pad_stencil(u) + roll_diff(u), backend="llvm", fullgraph=True, dynamic=True)
    for n in (4, 9, 30, 2):
        u = r(n, n + 3)
        np.testing.assert_allclose(c(u), pad_stencil(u) + roll_diff(u), rtol=1e-13, atol=1e-13)
    assert ft.stats().unique_graphs == 1 and ft.stats().recompiles == 0


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(0, 9), m=st.integers(1, 9), shift=st.integers(-12, 12),
       lo=st.integers(0, 3), hi=st.integers(0, 3), special=st.sampled_from([np.nan, np.inf, -0.0, 1.0]))
def test_random_rolls_and_pads(n, m, shift, lo, hi, special):
    u = r(n, m)
    if u.size:
        u.flat[0] = special

    def f(u):
        return np.roll(u, shift, axis=1) * 2 - np.pad(u, ((0, 0), (lo, hi)), mode="edge")[:, lo:lo + u.shape[1]]
    t = TRACED.setdefault((shift, lo, hi), Traced(f, A(("n", "m"))))
    t.check(u)
    t.check(u[::-1])


TRACED: dict = {}


# ---- the splitting pass on hand-written loop IR ------------------------------------------

def _store(value):
    return Store(0, (Affine.var("i"),), value)


def test_split_decides_conditions_a_constant_apart():
    n = Arg(0, "int64")
    x = Load(1, (Affine.var("i"),), "float64")
    inner = segment(Affine.var("i", 1) + Affine(const=1), n, x, Const(0.0, "float64"), "float64")
    outer = segment(Affine.var("i"), Const(1, "int64"), Const(0.0, "float64"), inner, "float64")
    body = split_body([Loop("i", n, [_store(outer)])])
    assert not has_segments(body)
    assert len(body) == 3 and all(isinstance(s, Loop) for s in body)     # [0, 1) [1, n-1) [n-1, n)


def test_split_leaves_conditions_on_two_variables_as_branches():
    cond = segment(Affine.var("i") + Affine.var("j"), Arg(0, "int64"), Const(1.0, "float64"),
                   Const(2.0, "float64"), "float64")
    body = split_body([Loop("i", Arg(1, "int64"), [Loop("j", Arg(1, "int64"), [_store(cond)])])])
    assert has_segments(body)


def test_constant_conditions_fold():
    a, b = Const(1.0, "float64"), Const(2.0, "float64")
    assert segment(Affine(const=3), Const(4, "int64"), a, b, "float64") is a
    assert segment(Affine(const=4), Const(4, "int64"), a, b, "float64") is b


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_results_have_numpys_memory_order(backend):
    progs = (lambda u: np.tile(u, (2, 2)), lambda u: np.tile(u, 3), lambda u: np.pad(u, 1),
             lambda u: np.pad(u, (1, 2), mode="edge"), lambda u: np.roll(u, 1, axis=0),
             lambda u: np.concatenate([u, u], axis=1))
    for f in progs:
        ft.reset()
        c = ft.compile(f, backend=backend)
        for u in (r(3, 4), np.asfortranarray(r(3, 4)), np.asfortranarray(r(3, 4))[::-1], r(5, 6)[::2, ::-1]):
            want, got = f(u), c(u)
            assert got.strides == want.strides and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_nested_concatenates_stay_small_and_exact():
    """Each lazy level doubles its reader's expression: every third level is stored, read by
    a later kernel (compile time stays linear; tests/soundness/test_compile_time.py)."""
    def grow(x):
        for _ in range(12):
            x = np.concatenate([x, x[:1] * 2])
        return x
    t = Traced(grow, A(("n",)))
    assert 2 <= kernel_count(t) <= 8
    assert all(len(format_kernel(k)) < 20000 for k in t.run.kernels)
    for n in (1, 2, 5, 40):
        t.check(r(n))


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_roll_over_several_axes(backend):
    progs = (lambda u: np.roll(u, (1, -2), axis=(0, 1)) - u, lambda u: np.roll(u, 2, axis=(0, 1)),
             lambda u: np.roll(u, (1, 1), axis=(1, 1)) * 2, lambda u: np.roll(u, (1, 2, 3), axis=(0, 1)))
    for f in progs:
        ft.reset()
        c = ft.compile(f, backend=backend, dynamic=True)
        for s in ((4, 5), (7, 3), (2, 2)):
            u = r(*s)
            try:
                want = f(u)
            except ValueError:
                with pytest.raises(ValueError):
                    c(u)
                continue
            np.testing.assert_array_equal(c(u), want)
        assert ft.stats().graph_breaks == 0 and ft.stats().unique_graphs <= 1
