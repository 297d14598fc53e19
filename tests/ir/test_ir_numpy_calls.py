# ruff: noqa: E731
"""The NumPy functions added as native compositions (split, stacks, triangles, repetition,
flips, rolls, diffs) and as opaque NumPy calls (np.linalg, sorting, statistics, signal), end
to end through ft.compile with fullgraph=True on both backends: sizes 0, 1 and larger,
contiguous, reversed, transposed (Fortran) and strided inputs, several dtypes, NaN/inf/-0.0;
the result type, dtype, shape and values equal NumPy's and each function compiles at most
two graphs (static, then dynamic sizes). Where NumPy raises, the compiled function raises
the same exception type."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}


def _layouts(x):
    out = [x, x[::-1]] if x.ndim else [x]
    if x.ndim == 2:
        out += [np.asfortranarray(x), np.repeat(np.repeat(x, 2, 0), 2, 1)[::2, ::-2][:, ::-1]]
    return out


def _run(fn, args_by_call, backend, rtol=None, per_shape=2):
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for args in args_by_call:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            except Exception as exc:           # NumPy raises: so must the compiled function
                with pytest.raises(type(exc)):
                    compiled(*args)
                continue
            got = compiled(*args)
        assert_same(got, want, rtol)
    assert ft.stats().unique_graphs <= per_shape * max(1, len({tuple(np.shape(a) for a in args)
                                                       for args in args_by_call}))


def _vectors(rng, dtype=np.float64, sizes=(0, 1, 7, 9)):
    out = []
    for n in sizes:
        v = (rng.standard_normal(n) * 3).astype(dtype)
        out += [(x,) for x in _layouts(v)]
    return out


def _matrices(rng, dtype=np.float64, shapes=((0, 3), (1, 1), (4, 5), (6, 5))):
    out = []
    for s in shapes:
        m = (rng.standard_normal(s) * 3).astype(dtype)
        out += [(x,) for x in _layouts(m)]
    return out


def _special(rng):
    v = rng.standard_normal(8)
    v[[1, 4, 6]] = [np.nan, np.inf, -0.0]
    return [(v,), (v[::-2],)]


COMPOSED_1D = {
    "split": lambda v: np.array_split(v, 3)[1] * 2,
    "hstack": lambda v: np.hstack([v, v * 2, v[:1]]),
    "vstack": lambda v: np.vstack((v, v + 1)),
    "column_stack": lambda v: np.column_stack((v, v * v)),
    "append": lambda v: np.append(v, [1.0, 2.0]),
    "outer": lambda v: np.outer(v, v[::-1]),
    "repeat": lambda v: np.repeat(v, 3),
    "tile": lambda v: np.tile(v, (2, 3)),
    "flip": lambda v: np.flip(v) + 0,
    "roll": lambda v: np.roll(v, 2),
    "roll_negative": lambda v: np.roll(v, -3),
    "diff": lambda v: np.diff(v, n=2),
    "ediff1d": lambda v: np.ediff1d(v),
    "tri": lambda v: np.tri(v.shape[0], k=-1) @ v,
    "diag": lambda v: np.diag(v),
    "meshgrid": lambda v: np.meshgrid(v, v[:3])[0] * 2,
    "select": lambda v: np.select([v < -0.5, v > 0.5], [v * 2, v * 3], default=0.0),
    "extract": lambda v: np.extract(v > 0, v),
    "sort": lambda v: np.sort(v),
    "argsort": lambda v: np.argsort(v, kind="stable"),
    "median": lambda v: np.median(v),
    "percentile": lambda v: np.percentile(v, [10, 50, 90]),
    "nansum": lambda v: np.nansum(np.where(v > 1, np.nan, v)),
    "nanmax": lambda v: np.nanmax(np.where(v > 1, np.nan, v)),
    "interp": lambda v: np.interp(v, [-1.0, 0.0, 1.0], [0.0, 10.0, 5.0]),
    "convolve": lambda v: np.convolve(v, [0.25, 0.5, 0.25], mode="same"),
    "histogram": lambda v: np.histogram(v, bins=4, range=(-2, 2))[0],
    "isclose": lambda v: np.isclose(v, v + 1e-12 * (v > 0)),
    "allclose": lambda v: np.allclose(v, v + 1e-12),
    "maximum_accumulate": lambda v: np.maximum.accumulate(v),
    "multiply_outer": lambda v: np.multiply.outer(v, v),
    "count_nonzero": lambda v: np.count_nonzero(v > 0),
    "index_list": lambda v: v[[0, -1, 0]] if v.shape[0] else v,
    "gcd": lambda v: np.gcd(np.floor(v).astype(np.int64), 6),
    "modf": lambda v: np.modf(v * 3)[0],
    "digitize": lambda v: np.digitize(v, [-1.0, 0.0, 2.0]),
    "trapezoid": lambda v: np.trapezoid(v),
    "cumulative_sum": lambda v: np.cumulative_sum(v, include_initial=True),
    "polyval": lambda v: np.polyval([1.0, -2.0, 0.5], v),
    "vander": lambda v: np.vander(v, 3),
    "diagflat": lambda v: np.diagflat(v, 1),
    "isposinf": lambda v: np.isposinf(v) | np.isneginf(v),
    "vector_norm": lambda v: np.linalg.vector_norm(v),
    "linalg_outer": lambda v: np.linalg.outer(v, v),
    "copyto_where": lambda v: _copyto(v),
}


def _copyto(v):
    out = np.zeros_like(v)
    np.copyto(out, v * 2, where=v > 0)
    return out


@pytest.mark.parametrize("name", sorted(COMPOSED_1D))
def test_vector_functions(name, backend, rng):
    _run(COMPOSED_1D[name], _vectors(rng) + _special(rng), backend)


@pytest.mark.parametrize("name", ["repeat", "tile", "flip", "roll", "diff", "outer", "hstack", "sort",
                                  "argsort", "index_list"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.uint8, np.bool_, np.complex128])
def test_vector_functions_dtypes(name, dtype, backend, rng):
    if name in ("diff",) and dtype is np.bool_:
        pass                                   # np.diff of bools is not_equal
    _run(COMPOSED_1D[name], _vectors(rng, dtype, (0, 1, 6)), backend)


COMPOSED_2D = {
    "tril": lambda a: np.tril(a),
    "triu_k": lambda a: np.triu(a, k=1),
    "tril_negative_k": lambda a: np.tril(a, -2),
    "split_cols": lambda a: np.split(a, [1, 3], axis=1)[1] * 2,
    "hsplit": lambda a: np.hsplit(a, [1, 3])[2],
    "dstack": lambda a: np.dstack([a, -a]),
    "repeat_axis": lambda a: np.repeat(a, 2, axis=1),
    "flip_axis": lambda a: np.flip(a, axis=0) + 0,
    "rot90": lambda a: np.rot90(a) + 0,
    "rot90_k3": lambda a: np.rot90(a, 3) * 1,
    "roll_axis": lambda a: np.roll(a, -1, axis=1),
    "roll_flat": lambda a: np.roll(a, 4),
    "pad_constant": lambda a: np.pad(a, ((1, 2), (0, 1))),
    "diagonal": lambda a: np.diag(a, k=-1),
    "trace": lambda a: np.trace(a),
    "ptp": lambda a: np.ptp(a, axis=1),
    "take_axis": lambda a: np.take(a, [0, 2], axis=1),
    "index_pairs": lambda a: a[[0, 0, 0], [4, 3, 2]] if a.shape[0] else a,
    "index_column_list": lambda a: a[:, [-1]],
    "sort_axis0": lambda a: np.sort(a, axis=0),
    "take_along_axis": lambda a: np.take_along_axis(a, np.argsort(a, axis=1), axis=1),
    "norm_rows": lambda a: np.linalg.norm(a, axis=1),
    "norm_fro": lambda a: np.linalg.norm(a),
    "svd_values": lambda a: np.linalg.svd(a, compute_uv=False),
    "qr_r": lambda a: np.abs(np.linalg.qr(a)[1]),
    "pinv": lambda a: np.linalg.pinv(a) @ a,
    "einsum": lambda a: np.einsum("ij,kj->ik", a, a),
    "tensordot": lambda a: np.tensordot(a, a, axes=([0], [0])),
    "cov": lambda a: np.cov(a, rowvar=False),
    "nanmean_axis": lambda a: np.nanmean(np.where(a > 1, np.nan, a), axis=0),
    "add_reduce": lambda a: np.add.reduce(a, axis=0),
    "cumprod_accumulate": lambda a: np.multiply.accumulate(a, axis=1),
    "eye_mul": lambda a: np.eye(a.shape[0], a.shape[1], k=1) * a,
    "argpartition_values": lambda a: np.take_along_axis(a, np.argpartition(a, 0, axis=1), axis=1)[:, :1],
    "matrix_norm": lambda a: np.linalg.matrix_norm(a),
    "svdvals": lambda a: np.linalg.svdvals(a),
    "linalg_diagonal": lambda a: np.linalg.diagonal(a, offset=1) + 0,
    "matrix_transpose": lambda a: np.linalg.matrix_transpose(a) * 2,
    "vecdot": lambda a: np.vecdot(a, a),
}


@pytest.mark.parametrize("name", sorted(COMPOSED_2D))
def test_matrix_functions(name, backend, rng):
    _run(COMPOSED_2D[name], _matrices(rng), backend, rtol=1e-9)


@pytest.mark.parametrize("name", ["tril", "triu_k", "repeat_axis", "rot90", "roll_axis", "pad_constant",
                                  "index_pairs", "sort_axis0"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.complex128])
def test_matrix_functions_dtypes(name, dtype, backend, rng):
    # np.pad fuses a C-contiguous input (guarded on that); its result order depends on the
    # input's layout, so the reversed, Fortran and strided inputs compile graphs of their own
    _run(COMPOSED_2D[name], _matrices(rng, dtype, ((1, 5), (4, 5))), backend,
         per_shape=4 if name == "pad_constant" else 2)


def _spd(rng, n):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


LINALG = {
    "solve": lambda s: np.linalg.solve(s, np.arange(float(s.shape[0]))),
    "inv": lambda s: np.linalg.inv(s) @ s,
    "det_slogdet": lambda s: np.linalg.det(s) + np.linalg.slogdet(s)[1],
    "cholesky": lambda s: np.linalg.cholesky(s),
    "eigh": lambda s: np.linalg.eigh(s)[0],
    "matrix_power": lambda s: np.linalg.matrix_power(s / 10, 3),
    "multi_dot": lambda s: np.linalg.multi_dot([s.T, s, s[:, :2]]),
    "lstsq": lambda s: np.linalg.lstsq(s, s[:, 0], rcond=None)[0],
    "kron": lambda s: np.kron(s[:2, :2], np.ones((2, 3))),
    "cross": lambda s: np.cross(s[:, :3], s[:, 1:4]),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg(name, backend, rng):
    args = [(s,) for n in (4, 5) for s in _layouts(_spd(rng, n))[:3]]
    _run(LINALG[name], args, backend, rtol=1e-8)


def test_singular_matrix_raises_linalg_error(backend):
    f = ft.compile(lambda s: np.linalg.inv(s) + 1, backend=FT_BACKEND[backend])
    f(np.eye(3))
    with pytest.raises(np.linalg.LinAlgError):
        f(np.zeros((3, 3)))


def test_data_dependent_sizes_one_graph(backend, rng):
    def f(i):
        return np.unique(i, return_counts=True)[1] * 2, np.bincount(i, minlength=3) + 0
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend], dynamic=True)
    for n in (3, 8, 8, 20):
        i = rng.integers(0, n, n)
        assert_same(c(i), f(i))
    assert ft.stats().unique_graphs == 1


def test_indexing_mutations_end_to_end(backend, rng):
    def f(v, i, m):
        out = v.copy()
        out[i] += 1.0              # buffered: a repeated index adds once
        out[m] = v[m] * 2          # mask with an array value
        np.add.at(out, i, 0.5)     # unbuffered: repeated indices accumulate
        out[[0, -1]] = -1.0
        return out
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (2, 7, 9):
        v, i = rng.standard_normal(n), rng.integers(-n, n, 2 * n)
        m = v > 0
        assert_same(c(v, i, m), f(v, i, m))


def test_writes_through_an_aliasing_opaque_result_break_the_graph(backend):
    def f(c):
        c.real[...] = 0            # np.real is a view: the write must reach c
        return c
    x = np.arange(4) + 1j
    with pytest.raises(ft.errors.GraphBreakError if hasattr(ft, "errors") else Exception):
        ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])(x.copy())
    got = ft.compile(f, backend=FT_BACKEND[backend])(x.copy())
    assert_same(got, f(x.copy()))


def test_float_arange_with_symbolic_stop(backend, rng):
    f = lambda v: np.arange(0.0, v.shape[0] / 2, 0.5) + v
    _run(f, [(rng.standard_normal(n),) for n in (1, 4, 7)], backend)


def test_range_over_a_size_as_an_index_stays_symbolic(backend, rng):
    def f(wpe, x):
        return x + wpe[range(x.shape[0])] + wpe[range(1, x.shape[0] + 1)]
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])
    wpe = rng.standard_normal((16, 4))
    for n in (2, 3, 5, 7, 9, 11):
        x = rng.standard_normal((n, 4))
        assert_same(c(wpe, x), f(wpe, x))
    assert ft.stats().unique_graphs <= 2
    with pytest.raises(IndexError):
        c(wpe, rng.standard_normal((16, 4)))


def test_run_time_python_scalars_stay_weak_in_opaque_calls(backend):
    def f(a, t):        # a float32 array and a Python float: NEP 50 keeps float32
        return np.isclose(a, t), np.interp(t, [0.0, 1.0], [2.0, 3.0]), np.linspace(0.0, t, 4)
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend], dynamic=True)
    a = np.float32([0.1, 0.2])
    for t in (0.1, 0.2, 0.30000001):
        assert_same(c(a, t), f(a, t))
    assert ft.stats().unique_graphs == 1


def test_boolean_arrays_among_other_indices(backend, rng):
    def f(x, m, m2):
        y = x.copy()
        y[:, m] = -1.0
        return x[:, m], x[..., m] * 2, x[m2, 1:], y
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (3, 5, 5, 6):
        x = rng.standard_normal((4, n))
        m, m2 = rng.random(n) > 0.5, rng.random(4) > 0.5
        assert_same(c(x, m, m2), f(x, m, m2))
    assert ft.stats().unique_graphs <= 2
    with pytest.raises(IndexError):
        c(np.ones((4, 3)), np.ones(2, bool), np.ones(4, bool))


def test_scatter_mutations_keep_program_order_with_fused_values(backend, rng):
    def f(x, i):
        y = x * 2                  # computed before the scatters: must see the old x
        x[i] = 0.0
        z = y + x
        np.add.at(x, i, 1.0)
        w = z + x
        x[x > 1] = 5.0
        s = x.sum()
        x[[0, 1]] += 1
        return y, z, w, s, x * 1
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (4, 6, 6, 9):
        x, i = rng.standard_normal(n) * 3, rng.integers(0, n, 3)
        x1, x2 = x.copy(), x.copy()
        assert_same(c(x1, i), f(x2, i))
        assert_same(x1, x2)
    assert ft.stats().unique_graphs <= 2


def test_index_lists_holding_sizes_and_run_time_ints(backend):
    def f(x, k):
        n = x.shape[0]
        return x[[n - 1, 0, k]], x[:, [k, n - 2]]
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend], dynamic=True)
    for n in (4, 5, 7):
        x = np.arange(n * n, dtype=float).reshape(n, n)
        for k in (1, 2, -1):
            assert_same(c(x, k), f(x, k))
    assert ft.stats().unique_graphs <= 3        # k specialised at 1, then dynamic sizes and k
    with pytest.raises(IndexError):
        c(np.ones((4, 4)), 9)


def test_unique_with_every_flag_and_in_place_sort(backend, rng):
    def f(a):
        u, i, inv, cnt = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
        y = a.astype(float)
        y[1:].sort()               # in place through a view
        return u * 2, i, inv + 1, cnt, y
    c = ft.compile(f, fullgraph=True, backend=FT_BACKEND[backend])
    for n in (1, 3, 6, 8, 9):
        a = rng.integers(0, 4, (2, n))
        assert_same(c(a), f(a))
    assert ft.stats().unique_graphs <= 2
