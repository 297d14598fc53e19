"""argmax / argmin in blocks (lower/arg_reductions.py): one pass of per-block extremes, then the
winning block searched. NumPy's rules at every block boundary: the first occurrence of the
extreme when it occurs in several blocks, the first NaN (in an early block, the last whole
block, the tail), -0.0 == 0.0 ties across blocks, all -inf / all int minimum; symbolic lengths
around the block size, whole-array argmax of 2-d and 3-d arrays in every layout."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.lower import arg_reductions
from tracing import A, Traced

rng = np.random.default_rng(23)
B = arg_reductions.BLOCK
LENGTHS = (1, 2, B - 1, B, B + 1, 2 * B, 2 * B + 3, 5 * B + 17)


def row_args(x):
    return x.argmax(axis=-1), np.argmin(x, axis=-1), x.argmax(), np.argmin(x)


def _variants(n, dtype):
    """Rows of length n: ties of the extreme in several blocks, NaN in several places, signed zeros."""
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(-3 if info.min else 0, 4, size=(4, n)).astype(dt)
        yield x
        yield np.full((4, n), info.min, dt)
        y = x.copy()
        y[:, ::B // 2] = info.max                          # the max in many blocks: the first wins
        y[1, -1] = info.min
        yield y
        return
    x = np.round(rng.standard_normal((4, n)) * 2).astype(dt)
    yield x
    y = x.copy()
    y[:, ::B // 2] = 9.0                                   # ties of the max across blocks
    y[:, 1::B // 2] = -9.0
    yield y
    for where in (0, B // 2, B - 1, B, n // 2, n - 1):    # a NaN in the first block, at block ends, the tail
        if where < n:
            y = x.copy()
            y[:, where] = np.nan
            y[1, n - 1] = np.nan                           # a later NaN too: the first wins
            yield y
    z = np.where(rng.random((4, n)) < 0.5, -0.0, 0.0).astype(dt)
    z[2] = -1.0
    z[3, n // 2:] = 0.0
    yield z                                                # max 0 of both signs: the first zero wins
    yield np.full((4, n), -np.inf, dt)
    yield np.full((4, n), np.inf, dt)
    w = np.where(x > 0, np.inf, -np.inf).astype(dt)
    w[0, n // 3] = np.nan
    yield w


@pytest.mark.parametrize("dtype", ("float64", "float32", "int64", "int16", "uint8"))
def test_blocked_argmax_over_symbolic_lengths(dtype):
    t = Traced(row_args, A(("n", "m"), dtype))
    assert "kb" in t.run.loop_ir                           # the blocked pass (not two whole passes)
    for n in LENGTHS:
        for x in _variants(n, dtype):
            for lay in (x, np.asfortranarray(x), x[::-1, ::-1], x[::2]):
                t.check(lay)


@pytest.mark.parametrize("dtype, shape", (("float64", (3, 5, 2 * B + 1)), ("int32", (2 * B + 1, 3, 2)),
                                          ("float64", (1, 1, 1))))
def test_whole_array_argmax_of_3d(shape, dtype):
    def f(x):
        return x.argmax(), x.argmin(), (x * 2).argmax(), x.argmax(axis=0), x.argmin(axis=1)
    g = ft.compile(f, backend="llvm", fullgraph=True)
    x = np.round(rng.standard_normal(shape) * 3).astype(dtype)
    cases = [x, x[::-1, :, ::-1]]
    if dtype == "float64":
        y = x.copy()
        y.flat[[x.size // 3, x.size - 1]] = np.nan
        cases += [y, y[::-1]]
    for c in cases:
        for got, want in zip(g(c), f(c)):
            assert np.asarray(got).dtype == np.asarray(want).dtype
            assert np.array_equal(got, want), (c.shape, got, want)


class Tracker:
    """A user's object: the best of each batch's scores, and the overall best."""

    def __init__(self):
        self.best = []

    def update(self, scores):
        picks = scores.argmax(axis=1)
        self.best.append(picks)
        return picks, scores.argmin()


def test_argmax_in_a_users_class_matches_numpy():
    t, ref = Tracker(), Tracker()
    f = ft.compile(t.update, backend="llvm")
    for n in (300, 301, 700):
        s = rng.standard_normal((6, n))
        s[2, 150:] = np.nan
        got, want = f(s), ref.update(s)
        assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert ft.stats().graph_breaks == 0


def test_short_rows_of_a_known_length_keep_two_passes():
    t = Traced(lambda x: x.argmax(axis=1), A((5, 2 * B - 1)))
    assert "kb" not in t.run.loop_ir and "red_peak_max" in t.run.loop_ir
    t.check(rng.standard_normal((5, 2 * B - 1)))
    t = Traced(lambda x: x.argmax(axis=1), A((5, 2 * B)))
    assert "kb" in t.run.loop_ir
    t.check(rng.standard_normal((5, 2 * B)))


def test_zero_d_and_empty_arrays():
    f = ft.compile(lambda x: (x.argmax(), np.argmin(x)), backend="llvm")
    for x in (np.float64(3.5), np.array(-1.0), np.array(np.nan), np.array([7]), np.arange(2 * B + 5)[::-1]):
        assert [int(v) for v in f(x)] == [int(np.argmax(x)), int(np.argmin(x))]
    for x in (np.zeros(0), np.zeros((3, 0))):
        with pytest.raises(ValueError, match="empty sequence"):
            f(x)
