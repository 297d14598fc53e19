"""Row max / min fused with their neighbours (softmax, log-softmax, attention, layernorm-style
statistics, argmax next to a sum) keep NumPy's NaN and signed-zero results exactly, while the
hot loop is a plain vectorised max: the zero signs are decided after the loop, by a second pass
that runs only for rows whose maximum is a zero (lower/reductions.py _zero_sign_phase)."""
import re
import warnings

import numpy as np
import pytest

import frametrace as ft
from tracing import A, Traced

rng = np.random.default_rng(25)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def log_softmax(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


class LayerNorm:
    """A normalisation layer without learnt weights: the row mean and variance fused with the
    normalisation."""

    def __init__(self, eps, gain):
        self.eps, self.gain = eps, gain

    def __call__(self, x):
        m = x.mean(axis=-1, keepdims=True)
        v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.eps) * self.gain


class Attention:
    """Scores, a stable softmax and the weighted values, as a model's method."""

    def __init__(self, d):
        self.scale = 1.0 / np.sqrt(d)

    def __call__(self, q, k, v):
        s = (q @ k.T) * self.scale
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        return (p / p.sum(axis=-1, keepdims=True)) @ v, s.max(axis=-1)


def stats(x):
    """Row statistics a normalisation layer reads, with the extremes' signs made visible
    (1 / -0.0 is -inf)."""
    hi, lo = x.max(axis=1), x.min(axis=1)
    return (hi, lo, 1.0 / hi, 1.0 / lo, hi - lo, x.argmax(axis=1), x.argmin(axis=1), x.sum(axis=1),
            x.mean(axis=1), x.var(axis=1), np.nanmax(x, axis=1), 1.0 / np.nanmin(x, axis=1))


def whole(x):
    return x.max(), x.min(), 1.0 / x.max(), 1.0 / x.min()


def _rows(m):
    """Rows that exercise the NaN and zero-sign rules, each `m` long."""
    base = rng.standard_normal(m)
    rows = {
        "random": base,
        "all -0.0": np.full(m, -0.0),
        "all +0.0": np.zeros(m),
        "-0.0 then +0.0": np.where(np.arange(m) < m // 2, -0.0, 0.0),
        "+0.0 then -0.0": np.where(np.arange(m) < m // 2, 0.0, -0.0),
        "zeros and negatives": np.where(np.arange(m) % 3 == 0, -0.0, -np.abs(base) - 1),
        "+0.0 among negatives": np.where(np.arange(m) == m - 1, 0.0, -np.abs(base) - 1),
        "both zeros under a positive": np.where(np.arange(m) % 2 == 0, 0.0, -0.0) + (np.arange(m) == 1) * 2.0,
        "NaN first": np.where(np.arange(m) == 0, np.nan, base),
        "NaN last": np.where(np.arange(m) == m - 1, np.nan, base),
        "NaN only": np.full(m, np.nan),
        "NaN and zeros": np.where(np.arange(m) == m // 2, np.nan, -0.0),
        "inf": np.where(np.arange(m) == m // 3, np.inf, base),
        "-inf only": np.full(m, -np.inf),
        "+-inf": np.where(np.arange(m) % 2 == 0, np.inf, -np.inf),
    }
    return rows


def _matrix(m, dtype):
    rows = _rows(m)
    return np.array(list(rows.values()), dtype=dtype), list(rows)


def _run(fn, *args):
    """Results and warning messages of fn under the default error state."""
    with warnings.catch_warnings(record=True) as w, np.errstate(all="warn"):
        warnings.simplefilter("always")
        out = fn(*args)
    return out, sorted({str(x.message) for x in w})


def _identical(got, want, names=None, rtol=0.0):
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if rtol:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True)
            if w.dtype.kind == "f":                       # zeros keep NumPy's sign
                zero = (w == 0) & (g == 0)
                assert (np.signbit(g[zero]) == np.signbit(w[zero])).all(), (names, g, w)
        else:
            bad = ~((g == w) | (np.isnan(g) & np.isnan(w)) if w.dtype.kind == "f" else (g == w))
            if w.dtype.kind == "f":
                bad |= (np.signbit(g) != np.signbit(w)) & ~np.isnan(w)
            assert not bad.any(), (names, g, w)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("m", [1, 7, 64, 1031])
def test_row_statistics_keep_numpys_nan_and_zero_signs(dtype, m):
    x, names = _matrix(m, dtype)
    f = ft.compile(stats, backend="llvm")
    for v in (x, x[::-1], np.asfortranarray(x), x[:, ::-1]):
        (got, got_w), (want, want_w) = _run(f, v), _run(stats, v)
        _identical(got[:7] + got[10:], want[:7] + want[10:], names)
        _identical(got[7:10], want[7:10], names, rtol=1e-5 if dtype == "float32" else 1e-12)
        assert got_w == want_w
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("fn", [softmax, log_softmax, LayerNorm(1e-5, 2.0)], ids=["softmax", "log_softmax",
                                                                                   "layernorm"])
@pytest.mark.parametrize("m", [1, 5, 1030])
def test_softmax_family_on_special_rows(fn, m):
    x, names = _matrix(m, "float64")
    f = ft.compile(fn, backend="llvm")
    for v in (x, np.asfortranarray(x), x[::-1, ::2]):
        (got, got_w), (want, want_w) = _run(f, v), _run(fn, v)
        _identical(got, want, names, rtol=1e-12)
        assert got_w == want_w


def test_attention_scores_and_their_row_max():
    att = Attention(16)
    q, k, v = (rng.standard_normal((n, 16)) for n in (9, 33, 33))
    q[3] = 0.0                                    # a query of zeros: every score of its row is 0.0
    q[4] = -0.0
    k[:, 0] = np.where(np.arange(33) % 2, -0.0, 0.0)
    f = ft.compile(att, backend="llvm")
    (got, got_w), (want, want_w) = _run(f, q, k, v), _run(att, q, k, v)
    _identical(got[0], want[0], rtol=1e-12)
    _identical(got[1], want[1])
    assert got_w == want_w


@pytest.mark.parametrize("m", [3, 40, 1029])
def test_whole_array_extremes(m):
    x, _ = _matrix(m, "float64")
    f = ft.compile(whole, backend="llvm")
    for rows in ([1, 2], [0, 2], [3], [4], [5, 6], [0, 7], [8, 0], [13], [14, 0]):
        for v in (x[rows], np.asfortranarray(x[rows])):
            (got, got_w), (want, want_w) = _run(f, v), _run(whole, v)
            _identical(got, want)
            assert got_w == want_w


def test_mixed_zero_rows_need_numpy_only_where_the_max_is_a_zero(monkeypatch):
    """Both zero signs in a row whose maximum is positive decide nothing: no redo. Only a row
    whose maximum is a zero of both signs hands the call to NumPy."""
    from frametrace.backends.llvm import reports
    redone = []
    redo = reports.Reports.redo
    monkeypatch.setattr(reports.Reports, "redo", lambda self, *a: redone.append(1) or redo(self, *a))
    f = ft.compile(lambda x: x.max(axis=1), backend="llvm")
    x = np.array([[2.0, 0.0, -0.0, -1.0], [-0.0, -3.0, -0.0, -1.0], [0.0, -3.0, 0.0, -1.0]])
    for _ in range(2):
        _identical(f(x), x.max(axis=1))
    assert redone == []
    y = x.copy()
    y[1, 0] = 0.0                                 # row 1: +0.0 and -0.0, maximum a zero
    _identical(f(y), y.max(axis=1))
    assert len(redone) == 1


def test_hot_loop_is_a_plain_vectorised_max():
    """No zero-sign work per element (integer minima of the bits, selects): loads, a NaN test,
    the max; the zero pass is a loop of its own whose trip count is 0 unless the max is a zero."""
    t = Traced(lambda x: x.max(axis=1), A(("n", "m")))
    assert re.search(r"for i0 in \[0:int64, where\(where\(logical_not\(nan\d+\):bool, "
                     r"logical_not\(m\d+\):bool, False:bool\):bool, arg0, 0:int64\):int64\)", t.run.loop_ir)
    asm = t.run.module.asm
    assert not re.search(r"vpmin[su]q", asm)
    assert not re.search(r"\bv(p)?blendm", asm)           # NaN is not masked out before the max
    assert len(re.findall(r"\bvmaxpd\b[^\n]*%[yz]mm", asm)) >= 4
    x = rng.standard_normal((5, 300))
    x[2] = -0.0
    t.check(x)


def peak_and_scale(x):
    return (x * 0.5).sum(axis=1), x.max(axis=1) * 0.5, np.nanmin(x, axis=1) * 0.5


def test_max_of_rows_with_nan_alone_and_fused(monkeypatch):
    """NaN reaches vmaxpd unmasked (lower/reductions.py _NAN_APART: 0.88x -> 1.02x NumPy on a
    4096x1024 row max), which sets "invalid" in the status register: a max alone never reads
    it (no call handed to NumPy); a kernel that reads it for its other work (x * 0.5 may
    underflow) hands a call with a NaN to NumPy, with NumPy's results and warnings either way."""
    from frametrace.backends.llvm import reports
    redone = []
    redo = reports.Reports.redo
    monkeypatch.setattr(reports.Reports, "redo", lambda self, *a: redone.append(1) or redo(self, *a))
    x = rng.standard_normal((6, 50))
    x[1, 7] = x[2, 0] = x[3, 49] = np.nan
    x[4] = -0.0
    x[5, :3] = [0.0, -0.0, np.nan]
    for reduce in (lambda x: x.max(axis=1), lambda x: np.min(x, axis=-1)):
        _identical(ft.compile(reduce, backend="llvm")(x), reduce(x))
    assert redone == []
    f = ft.compile(peak_and_scale, backend="llvm")
    (got, got_w), (want, want_w) = _run(f, x), _run(peak_and_scale, x)
    _identical(got, want, rtol=1e-12)
    assert got_w == want_w
