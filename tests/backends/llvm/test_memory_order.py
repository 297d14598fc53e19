"""Elementwise nests run in the operands' memory order (codegen/llvm_kernels/loop_order.py):
F-ordered, transposed, permuted, strided and reversed inputs give NumPy's values, dtypes and
result strides on both backends, and the F-order copy of a nest is vectorised."""
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import frametrace as ft
from frametrace.backends.llvm import jit, runtime
from frametrace.codegen.llvm_kernels import loop_order, module_ir
from frametrace.lower.loop_ir import Acc, Affine, Const, Load, Loop, Op, Store, Update, Var
from helpers import BACKENDS, assert_same
from tracing import A, Traced

rng = np.random.default_rng(14)


def _c(shape, dtype="f8"):
    return (rng.standard_normal(shape) * 3).astype(dtype)


# name -> array of shape (n, m) in that layout (a fresh base each call)
LAYOUTS_2D = {
    "C": lambda n, m, dt: _c((n, m), dt),
    "F": lambda n, m, dt: np.asfortranarray(_c((n, m), dt)),
    "T": lambda n, m, dt: _c((m, n), dt).T,
    "strided": lambda n, m, dt: _c((n, 2 * m + 1), dt)[:, 1::2],
    "F strided": lambda n, m, dt: np.asfortranarray(_c((2 * n, m), dt))[::2],
    "rows reversed": lambda n, m, dt: _c((n, m), dt)[::-1],
    "T reversed": lambda n, m, dt: _c((m, n), dt).T[:, ::-1],
}

# operator chains on large temporaries (`np.exp(x) + y`) let NumPy elide the temporary and add
# in place into it, which keeps *its* layout (not modelled: the ufunc's K order is); the
# programs use the functions where a temporary meets a differently ordered operand
PROGRAMS = {
    "affine": lambda x, y: x * 2.0 + 1.0,
    "exp_add": lambda x, y: np.add(np.exp(x), y),
    "where": lambda x, y: np.where(x > y, x - y, y * 0.5),
    "two_outputs": lambda x, y: (x * y, np.maximum(x, y) - 1.0),
    "row_broadcast": lambda x, y: np.subtract(x * y[:1], 0.5),
    "col_broadcast": lambda x, y: x + y[:, :1],
    "scalar": lambda x, y: np.add(x * x.dtype.type(3), y),
}


def _same_layout(got, want):
    """Same values, dtype and strides (NumPy's K-order result layout)."""
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert_same(g, w)
        if w.size > 1:
            assert g.strides == w.strides, (g.strides, w.strides)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("layout", sorted(LAYOUTS_2D))
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_layouts_match_numpy(program, layout, backend):
    fn = PROGRAMS[program]
    f = lambda x, y: fn(x, y)          # noqa: E731  (a code object per case)
    compiled = ft.compile(f, backend=backend, dynamic=True)
    make = LAYOUTS_2D[layout]
    # the first call's sizes make full-tier kernels (work >= tiers.QUICK_WORK); then odd,
    # small and degenerate sizes run the same kernels (0 and 1 specialise: their own graphs)
    for n, m in ((300, 257), (37, 5), (3, 1000), (2, 2), (1, 9), (0, 4)):
        x, y = make(n, m, "f8"), LAYOUTS_2D["C"](n, m, "f8")
        with np.errstate(all="ignore"):
            want = f(x.copy(order="K"), y.copy(order="K"))
            got = compiled(x, y)
        _same_layout(got, want)
    assert ft.stats().unique_graphs <= 3, ft.stats()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("perm", [(0, 1, 2), (2, 1, 0), (2, 0, 1), (1, 2, 0), (0, 2, 1), (1, 0, 2)])
def test_3d_axis_permutations(perm, backend):
    f = lambda x, y: x * y - np.sqrt(np.abs(x))     # noqa: E731
    compiled = ft.compile(f, backend=backend, dynamic=True)
    for shape in ((40, 41, 43), (3, 1, 5), (2, 7, 2)):
        base = _c(shape)
        x = base.transpose(perm)
        y = _c(x.shape)
        _same_layout(compiled(x, y), f(x, y))
        xf = np.asfortranarray(x)
        _same_layout(compiled(xf, y.T.copy().T), f(xf, y.T.copy().T))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("other", ["C", "F", "row", "col", "scalar"])
def test_in_place_update_of_an_f_array(other, backend):
    def f(x, y):
        x += y
        x *= 2.0
        return x

    compiled = ft.compile(f, backend=backend)
    for n, m in ((300, 301), (5, 3)):
        x = np.asfortranarray(_c((n, m)))
        y = {"C": _c((n, m)), "F": np.asfortranarray(_c((n, m))), "row": _c((m,)), "col": _c((n, 1)),
             "scalar": 1.5}[other]
        want_x = x.copy(order="K")
        want = f(want_x, y)
        got = compiled(x, y)
        assert got is x                         # the argument itself, updated in place
        assert_same(x, want_x)
        assert x.flags.f_contiguous and want.flags.f_contiguous


REDUCTIONS = {
    "sum": lambda x: x.sum(),
    "sum_of_products": lambda x: (x * x + 1).sum(),
    "prod_int": lambda x: (x % 3 + 1).prod(),
    "max_int": lambda x: x.max(),
    "any": lambda x: (x > 2).any(),
    "all": lambda x: (x > -5).all(),
    "mean_axes_0_2": lambda x: (x * 2).mean(axis=(0, 2)) if x.ndim == 3 else x.mean(),
    "max_float": lambda x: np.maximum(x, 0.0).max(),
    "argmax": lambda x: np.argmax(x),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_full_reductions_of_permuted_arrays(name, rank, backend):
    fn = REDUCTIONS[name]
    f = lambda x: fn(x)            # noqa: E731
    compiled = ft.compile(f, backend=backend, dynamic=True)
    dt = "i8" if name.endswith("_int") else "f8"
    for shape in ((301, 300), (3, 5), (2, 1), (1, 7), (0, 3)):
        if rank == 2:
            xs = (np.asfortranarray(_c(shape, dt)), _c(shape[::-1], dt).T, _c(shape, dt))
        else:
            xs = (np.asfortranarray(_c(shape + (4,), dt)), _c(shape + (3,), dt).transpose(2, 0, 1))
        for x in xs:
            if x.size == 0 and name in ("max_int", "max_float", "argmax"):
                continue
            with np.errstate(all="ignore"):
                assert_same(compiled(x), f(x), rtol=1e-9)
    assert ft.stats().unique_graphs <= 6, ft.stats()     # never the eager fallback (cache limit 8)


@pytest.mark.parametrize("dtype", ["f4", "i4", "u1", "?", "i8"])
def test_dtypes_in_f_order(dtype):
    t = Traced(lambda x, y: (x == y) | (x > y) if dtype == "?" else x * y + x, A(("n", "m"), dtype),
               A(("n", "m"), dtype))
    for n, m in ((0, 3), (1, 1), (1, 17), (17, 1), (33, 65)):
        x, y = np.asfortranarray(_c((n, m), dtype)), _c((m, n), dtype).T
        t.check(x, y)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), program=st.sampled_from(sorted(PROGRAMS)), n=st.integers(0, 12), m=st.integers(1, 40),
       lx=st.sampled_from(sorted(LAYOUTS_2D)), ly=st.sampled_from(sorted(LAYOUTS_2D)))
def test_random_layout_pairs_match_reference(data, program, n, m, lx, ly):
    t = _traced(program)
    x, y = LAYOUTS_2D[lx](n, m, "f8"), LAYOUTS_2D[ly](n, m, "f8")
    t.check(x, y)


_TRACED = {}


def _traced(program):
    if program not in _TRACED:
        _TRACED[program] = Traced(PROGRAMS[program], A(("n", "m")), A(("n", "m")))
    return _TRACED[program]


def test_thread_chunks_partition_the_reordered_nest(monkeypatch):
    """The split loop's chunks [lo, hi) cut the outermost level of the order run."""
    monkeypatch.setattr(runtime, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(runtime, "MIN_CHUNK_WORK", 1)
    monkeypatch.setattr(runtime, "num_threads", lambda: 3)
    t = Traced(lambda x, y: np.exp(x) * y, A(("n", "m")), A(("n", "m")))
    t3 = Traced(lambda x: x + 1.0, A(("n", "m", "k")))

    def bump(x, y):                            # overlapping chunks would add twice
        x += y
        return x
    ti = Traced(bump, A(("n", "m")), A(("n", "m")))
    for n, m in ((7, 5), (2, 3), (1, 4), (4, 1), (100, 33), (5, 200)):
        t.check(np.asfortranarray(_c((n, m))), _c((m, n)).T)
        t.check(_c((n, m)), np.asfortranarray(_c((n, m))))
        t3.check(_c((m, 3, n)).transpose(2, 0, 1))
        t3.check(np.asfortranarray(_c((n, m, 2))))
        ti.check(np.asfortranarray(_c((n, m))), np.asfortranarray(_c((n, m))))
        ti.check(_c((m, n)).T, _c((n, m)))


def _sections(ir: str) -> dict:
    """Optimised IR text of each copy of a reordered nest: label prefix orderC -> its text."""
    parts = re.split(r"^(order\d+)\.\d+:", ir, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.parametrize("shape, copies", [(("n", "m"), 2), (("n", "m", "k"), 3)])
def test_every_order_copy_is_vectorised(shape, copies):
    """The copy running an F-ordered (or permuted) call has a vector loop, as the C copy does."""
    t = Traced(lambda x, y: x * y + 1.0, A(shape), A(shape))
    _, mod = jit._optimized(t.run.llvm_ir)
    sections = _sections(str(mod))
    assert sorted(sections) == [f"order{c}" for c in range(copies)], sorted(sections)
    for name, text in sections.items():
        assert re.search(r"load <\d+ x double>", text) and re.search(r"store <\d+ x double>", text), name


def test_quick_tier_reorders_and_tiny_kernels_do_not():
    """Quick-tier kernels serve calls too small to tier up, F-ordered ones included; a tiny
    static kernel (optnone) keeps C order."""
    t = Traced(lambda x, y: np.exp(x) + y, A(("n", "m")), A(("n", "m")))
    for k in t.run.kernels:
        k.tier = "quick"
    assert re.search(r"^order0\.\d+:", module_ir(t.run.kernels), re.M)
    tiny = Traced(lambda x, y: np.exp(x) + y, A((3, 4)), A((3, 4)))
    assert "order0." not in tiny.run.llvm_ir
    tiny.check(np.asfortranarray(_c((3, 4))), _c((4, 3)).T)


@pytest.mark.parametrize("layout", ["F", "T", "T reversed", "strided"])
def test_quick_tier_kernels_on_permuted_inputs(layout):
    """A graph first compiled for small sizes runs quick-tier kernels for calls below the
    tier-up work (tiers.py): they reorder and match NumPy too."""
    f = lambda x, y: np.add(np.sin(x) * 2.0, y)     # noqa: E731
    compiled = ft.compile(f, backend="llvm", dynamic=True)
    make = LAYOUTS_2D[layout]
    for n, m in ((20, 30), (200, 301), (3, 7), (301, 2)):
        x, y = make(n, m, "f8"), LAYOUTS_2D["F"](n, m, "f8")
        _same_layout(compiled(x, y), f(x, y))
    assert ft.stats().unique_graphs == 1, ft.stats()


def _nest(body, n=2):
    vars_ = [f"i{k}" for k in range(n)]
    for v in reversed(vars_):
        body = [Loop(v, Const(10, "int64"), body)]
    return body[0]


class _B:
    noalias = True


def test_reorderable_nests():
    i, j = Affine.var("i0"), Affine.var("i1")
    load = Load(1, (i, j), "float64")
    bufs = [_B(), _B()]
    assert loop_order.reorderable(_nest([Store(0, (i, j), load)]), bufs) is not None
    # transposed store, broadcast load: still one element per iteration
    assert loop_order.reorderable(_nest([Store(0, (j, i), Load(1, (Affine(), j), "float64"))]), bufs)
    # reads another iteration's element of the buffer it writes: C order only
    shifted = Load(0, (i, j + Affine(const=1)), "float64")
    assert loop_order.reorderable(_nest([Store(0, (i, j), shifted)]), bufs) is None
    # not injective (every row writes one element), an accumulator, the index as a value
    assert loop_order.reorderable(_nest([Store(0, (i, Affine()), load)]), bufs) is None
    # accumulators: order-free combiners only (float max/min: the sign of a zero result)
    acc = Var("a", "float64")
    assert loop_order.reorderable(_nest([Update("a", Op("red_add", "float64", (acc, load)))]), bufs)
    assert loop_order.reorderable(_nest([Update("a", load)]), bufs) is None
    assert loop_order.reorderable(_nest([Update("a", Op("red_max", "float64", (acc, load)))]), bufs) is None
    iacc, iload = Var("a", "int64"), Load(1, (i, j), "int64")
    assert loop_order.reorderable(_nest([Update("a", Op("red_max", "int64", (iacc, iload)))]), bufs)
    b = Var("b", "float64")                     # reads another accumulator of the nest
    reads_b = Update("a", Op("red_add", "float64", (acc, Op("multiply", "float64", (load, b)))))
    assert loop_order.reorderable(_nest([reads_b, Update("b", Op("red_add", "float64", (b, load)))]), bufs) is None
    assert loop_order.reorderable(_nest([Acc("a", "float64", load)]), bufs) is None
    idx = Op("cast", "float64", (Op("affine", "int64", (i,)),))
    assert loop_order.reorderable(_nest([Store(0, (i, j), idx)]), bufs) is None
    # a single loop, or a nest deeper than MAX_DEPTH: the plain loops
    assert loop_order.reorderable(Loop("i0", Const(3, "int64"), [Store(0, (i,), load)]), bufs) is None
    deep = loop_order.MAX_DEPTH + 1
    idx = tuple(Affine.var(f"i{k}") for k in range(deep))
    assert loop_order.reorderable(_nest([Store(0, idx, Load(1, idx, "float64"))], deep), bufs) is None
    aliased = [_B(), _B()]
    aliased[0].noalias = False
    assert loop_order.reorderable(_nest([Store(0, (i, j), load)]), aliased) is None


@pytest.mark.parametrize("layout", ["C", "F", "T"])
def test_in_place_overflow_of_an_f_array_is_redone_by_numpy(layout):
    """The native entry saves the written region (one memmove for an F-contiguous one: the
    scratch takes its order) and puts it back when NumPy must redo a flagged call. (Under
    errstate "raise", NumPy leaves x written and the compiled call leaves it restored: a
    difference of fp_errors.py on C arrays too, not checked here.)"""
    def f(x, y):
        x += y
        return x

    compiled = ft.compile(f, backend="llvm")
    for big in (False, True, False):
        x, y = LAYOUTS_2D[layout](300, 301, "f8"), LAYOUTS_2D["F"](300, 301, "f8")
        if big:
            x[7, 11], y[7, 11] = 1e308, 1e308          # overflows: NumPy warns, inf
        with np.errstate(over="warn"):
            want_x = x.copy(order="K")
            with pytest.warns(RuntimeWarning) if big else _nothing():
                want = f(want_x, y)
            with pytest.warns(RuntimeWarning) if big else _nothing():
                got = compiled(x, y)
        assert got is x
        _same_layout(got, want)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _extremes(x):
    return x.max(), x.min(), np.nanmax(x), np.nanmin(x)


@pytest.mark.parametrize("fill", ["zeros", "nan", "inf"])
def test_float_extremes_of_fortran_arrays_in_memory_order(fill):
    """max/min over the non-NaN elements run in memory order for F arrays (loop_order's
    red_max_nonan): same values and zero signs as NumPy, which redoes a call that saw both."""
    rng = np.random.default_rng(len(fill))
    x = np.asfortranarray(rng.standard_normal((37, 23)))
    if fill == "zeros":
        x[:] = 0.0
        x[rng.integers(0, 37, 5), rng.integers(0, 23, 5)] = -0.0
    elif fill == "nan":
        x[3, 4] = np.nan
    else:
        x[::5, ::3] = -np.inf
    for backend in ("llvm", "numpy"):
        got = ft.compile(_extremes, backend=backend)(x)
        want = _extremes(x)
        for g, w in zip(got, want):
            assert type(g) is type(w)
            assert (g == w and np.signbit(g) == np.signbit(w)) or (np.isnan(g) and np.isnan(w))


def _concat_cast_transposed(x):
    return np.concatenate([x, x]).astype(np.float64).T.reshape(-1)


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("layout", ["C", "F", "neg"])
def test_concatenation_segments_keep_their_loop_order(dynamic, layout):
    """A concatenation's segments are loops that start inside their dimension (and end at an
    expression): they keep C order (a reordered segment wrote out of bounds: found by the fuzzer,
    seed 77077, as heap corruption)."""
    for m, k in ((7, 7), (7, 4), (3, 5), (0, 7)):
        x = np.arange(m * k * k, dtype=np.int32).reshape(m, k, k)
        x = np.asfortranarray(x) if layout == "F" else x[::-1] if layout == "neg" else x
        for backend in ("llvm", "numpy"):
            got = ft.compile(_concat_cast_transposed, backend=backend, dynamic=dynamic)(x)
            assert_same(got, _concat_cast_transposed(x))
