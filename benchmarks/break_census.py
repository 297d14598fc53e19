"""A census of graph breaks on common NumPy/Python idioms (issue 23 part 5, "never slower").

Each idiom is a small function written the way simulations, image pipelines, training loops and
data programs write it. For each one this compiles a fresh copy with `ft.explain`, counts graphs
and breaks, and checks the compiled result against the plain call.

    .venv/bin/python benchmarks/break_census.py            # the table
    .venv/bin/python benchmarks/break_census.py -v         # with each break's reason

The commonness rank (1 = most common) is a judgement from reading public NumPy programs
(npbench, scientific-python tutorials, training loops), not a measurement.
"""
from __future__ import annotations

import math
import sys

import numpy as np

import frametrace as ft

IDIOMS = []          # (rank, name, fn, args)


def idiom(rank, name, *args):
    def deco(fn):
        IDIOMS.append((rank, name, fn, args))
        return fn
    return deco


X = np.linspace(-2.0, 3.0, 50)
M = np.arange(24.0).reshape(4, 6) / 7.0
IMG = np.random.default_rng(0).random((16, 12))


# -- float()/int()/len()/item(): loop bounds, log lines, scalars out of arrays ------------------

@idiom(1, "float(x.sum()) / float(x[i])", X)
def f_float(x):
    total = float(x.sum())
    return total / float(x[3]) + x[0]


@idiom(1, "int(x.argmax())", X)
def f_int(x):
    i = int(np.argmax(x))
    return x * i


@idiom(1, "len(x) in arithmetic", X)
def f_len(x):
    n = len(x)
    return x.sum() / n


@idiom(2, "x.item()", X)
def f_item(x):
    m = x.max().item()
    return x / m


@idiom(2, "x.tolist()", X)
def f_tolist(x):
    y = x * 2
    return y.tolist()


@idiom(2, "f-string log line of a value", X)
def f_fstring(x):
    loss = np.mean(x ** 2)
    msg = f"loss={loss:.4f}"
    return x - loss, msg


@idiom(3, "round(float, n) of a result", X)
def f_round_builtin(x):
    r = round(float(x.mean()), 3)
    return x * r


@idiom(3, "round(np scalar, n)", X)
def f_round_npscalar(x):
    r = round(x.std(), 2)
    return x - r


@idiom(3, "np.round(x, n) on arrays", X)
def f_np_round(x):
    return np.round(x * 10, 2)


@idiom(3, "max(np_scalar, 0.5) / min(...)", X)
def f_max_scalar(x):
    s = max(x.std(), 0.5)
    t = min(x.mean(), 1.0)
    return x / s + t


# -- elementwise selection ----------------------------------------------------------------------

@idiom(1, "np.clip(x, lo, hi) / x.clip(min=)", X)
def f_clip(x):
    return np.clip(x, -1.0, 1.0) + x.clip(min=0.0)


@idiom(1, "np.where(cond, a, b)", X)
def f_where(x):
    return np.where(x > 0, x, 0.01 * x)


@idiom(2, "np.where(cond) (indices)", X)
def f_where_idx(x):
    (idx,) = np.where(x > 1.0)
    return idx


# -- scans and differences ------------------------------------------------------------------------

@idiom(2, "np.cumsum / np.diff", X)
def f_cumsum_diff(x):
    return np.diff(np.cumsum(x)), np.diff(x, n=2)


@idiom(3, "np.gradient(x) / np.gradient(f, dx)", X)
def f_gradient(x):
    return np.gradient(x), np.gradient(x * x, 0.1)


@idiom(4, "np.gradient(image) (2-d, tuple)", IMG)
def f_gradient_2d(img):
    gy, gx = np.gradient(img)
    return np.hypot(gx, gy)


# -- statistics -------------------------------------------------------------------------------------

@idiom(2, "np.percentile / np.median", X)
def f_percentile(x):
    return np.percentile(x, [5, 95]), np.median(x)


@idiom(3, "np.histogram(x, bins=10)", X)
def f_histogram(x):
    counts, edges = np.histogram(x, bins=10)
    return counts, edges


@idiom(2, "np.linalg.norm(x, ord, axis)", M)
def f_norm(m):
    return np.linalg.norm(m), np.linalg.norm(m, axis=1), np.linalg.norm(m, ord=1, axis=0)


@idiom(3, "np.einsum('ij,j->i')", M)
def f_einsum(m):
    v = np.ones(m.shape[1])
    return np.einsum("ij,j->i", m, v), np.einsum("ij->", m)


@idiom(3, "np.pad modes", IMG)
def f_pad(img):
    return np.pad(img, 1, mode="edge"), np.pad(img, ((1, 1), (2, 2)), mode="constant")


@idiom(2, "np.roll", X)
def f_roll(x):
    return np.roll(x, 1) - 2 * x + np.roll(x, -1)


@idiom(3, "np.interp", X)
def f_interp(x):
    xp = np.linspace(-3, 3, 7)
    return np.interp(x, xp, xp ** 2)


@idiom(3, "np.searchsorted", X)
def f_searchsorted(x):
    return np.searchsorted(x, [0.0, 1.5])


@idiom(3, "np.unique", X)
def f_unique(x):
    return np.unique(np.floor(x))


@idiom(2, "np.argsort / x[order]", X)
def f_argsort(x):
    order = np.argsort(-x)
    return x[order][:5]


@idiom(2, "if np.allclose(a, b):", X)
def f_allclose(x):
    y = np.sqrt(x * x)
    if np.allclose(y, np.abs(x)):
        return y
    return -y


@idiom(3, "np.isclose(a, b).all()", X)
def f_isclose(x):
    return np.isclose(x, x + 1e-12).all()


@idiom(2, "while not converged (any/all)", X)
def f_while_any(x):
    y = x.copy()
    while np.any(np.abs(y) > 0.1):
        y = y * 0.5
    return y


@idiom(2, "if (x > 0).all():", X)
def f_if_all(x):
    if (x > -5).all():
        return x + 1
    return x


# -- Python iteration over arrays --------------------------------------------------------------

@idiom(2, "enumerate(zip(a, b)) over arrays", X)
def f_enumerate_zip(x):
    acc = 0.0
    for i, (a, b) in enumerate(zip(x[:5], x[5:10])):
        acc += i * a * b
    return acc


@idiom(3, "list comprehension over rows", M)
def f_listcomp(m):
    return [row.sum() for row in m]


@idiom(3, "dict comprehension of stats", X)
def f_dictcomp(x):
    return {name: fn(x) for name, fn in (("mean", np.mean), ("max", np.max))}


# -- random, math, casts -------------------------------------------------------------------------

@idiom(2, "np.random.default_rng(seed) inside", X)
def f_rng(x):
    rng = np.random.default_rng(0)
    return x + rng.normal(size=x.shape)


@idiom(2, "math.sqrt / math.exp of np scalar", X)
def f_math(x):
    return x / math.sqrt(x.var()) * math.exp(-x.mean())


@idiom(2, "x.astype(int)", X)
def f_astype(x):
    return (x * 3).astype(int)


@idiom(3, "np.floor(x).astype(np.int64) as index", X)
def f_floor_index(x):
    idx = np.floor(np.abs(x) * 5).astype(np.int64) % len(x)
    return x[idx]


@idiom(3, "abs(np scalar) / pow", X)
def f_abs_scalar(x):
    return abs(x.min()) + pow(x.mean(), 2)


@idiom(3, "sum(list of np scalars)", X)
def f_sum_list(x):
    parts = [x[:10].sum(), x[10:].sum()]
    return sum(parts)


@idiom(3, "np.sign / np.abs / np.maximum", X)
def f_sign(x):
    return np.sign(x) * np.maximum(np.abs(x) - 0.5, 0.0)


@idiom(3, "np.outer / np.meshgrid", X)
def f_meshgrid(x):
    gx, gy = np.meshgrid(x[:5], x[:4])
    return np.outer(x[:3], x[:3]), gx + gy


@idiom(3, "np.nan_to_num / np.isnan().any()", X)
def f_nan(x):
    y = np.log(x)
    bad = bool(np.isnan(y).any())
    return np.nan_to_num(y), bad


@idiom(4, "str()/'%.3f' % value", X)
def f_percent_format(x):
    return x * 2, "%.3f" % x.mean()


@idiom(4, "np.array_equal in if", X)
def f_array_equal(x):
    if np.array_equal(x, x.copy()):
        return x + 1
    return x


@idiom(4, "x.any() and float in expression", X)
def f_bool_expr(x):
    flag = x.any() and x.mean() > 0
    return x * 2 if flag else x


@idiom(3, "x.sum(axis=0).tolist() for json", M)
def f_tolist_json(m):
    return {"col_sums": m.sum(axis=0).tolist(), "n": int(m.shape[0])}


@idiom(3, "np.float64 scalar -> float() -> round", X)
def f_round_nd(x):
    return [round(v, 1) for v in (x.min(), x.max())]


@idiom(2, "print(f\"step {loss:.4f}\") in a step", X)
def f_print_fstring(x):
    y = np.sqrt(np.abs(x))
    print(f"step {y.mean():.4f}", file=_SINK)
    return y + 1


@idiom(3, "', '.join(f'{v:.3f}' for v in stats)", X)
def f_join(x):
    stats = [x.min(), x.max(), x.mean()]
    return x * 2, ", ".join(f"{v:.3f}" for v in stats)


@idiom(4, "f\"{array}\" (an array in a string)", X)
def f_fstring_array(x):
    return x * 2, f"{x[:3]}"


@idiom(3, "np.ascontiguousarray(img[:, ::-1])", IMG)
def f_ascontiguous(img):
    return np.ascontiguousarray(img[:, ::-1]) * 2


@idiom(3, "np.sum([a, b, c]) / np.mean([x[0], x[1]])", X)
def f_sum_list_np(x):
    return np.sum([x.min(), x.max(), 1.0]) + np.mean([x[0], x[1]])


@idiom(3, "m.reshape(int(np.prod(m.shape)))", M)
def f_prod_shape(m):
    return m.reshape(int(np.prod(m.shape))) * 2


@idiom(3, "np.unravel_index(np.argmax(m), m.shape)", M)
def f_unravel(m):
    return np.unravel_index(np.argmax(m), m.shape)


@idiom(4, "np.fft.rfft", X)
def f_fft(x):
    return np.abs(np.fft.rfft(x))


@idiom(4, "x.view(np.int64)", X)
def f_view(x):
    return x.view(np.int64) & 1


@idiom(4, "sorted(x[:5])", X)
def f_sorted(x):
    return sorted(x[:5])


class _Sink:
    def write(self, s):
        return len(s)

    def flush(self):
        pass


_SINK = _Sink()


def _same(a, b, close=False) -> bool:
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(p, q, close) for p, q in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k], close) for k in a)
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        if not (type(a) is type(b) and a.dtype == b.dtype and np.shape(a) == np.shape(b)):
            return False
        if close:
            return bool(np.allclose(a, b, rtol=1e-14, atol=0, equal_nan=True))
        return bool(np.array_equal(a, b, equal_nan=True))
    if type(a) is not type(b):
        return False
    return a == b or (a != a and b != b)


def run(verbose: bool = False):
    rows = []
    for rank, name, fn, args in sorted(IDIOMS, key=lambda r: r[0]):
        with np.errstate(all="ignore"):
            expect = fn(*args)
            ft.reset()
            e = ft.explain(fn, *args)
            got = ft.compile(fn)(*args)
            ft.reset()
        reasons = [str(r).splitlines()[0] for r in e.break_reasons]
        same = "yes" if _same(expect, got) else "close" if _same(expect, got, close=True) else "NO"
        rows.append((rank, name, e.graph_count, e.graph_break_count, same, reasons))
    print(f"{'rank':>4}  {'idiom':<44} {'graphs':>6} {'breaks':>6}  same  reason")
    # same: "yes" bit for bit and type for type; "close" within 1e-14 relative (a sum order)
    for rank, name, g, nb, same, reasons in rows:
        why = reasons[0] if reasons else ""
        print(f"{rank:>4}  {name:<44} {g:>6} {nb:>6}  {same:<5} {why[:90]}")
        if verbose:
            for r in reasons[1:]:
                print(f"{'':>66}{r[:90]}")
    broken = sum(1 for r in rows if r[3])
    print(f"\n{len(rows)} idioms, {broken} break the graph, "
          f"{sum(1 for r in rows if r[4] == 'close')} within rounding of the plain call, "
          f"{sum(1 for r in rows if r[4] == 'NO')} differ")
    return rows


if __name__ == "__main__":
    run("-v" in sys.argv)
