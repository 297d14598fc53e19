"""Program shapes beyond fuzzgen's straight-line array statements.

Each shape draws a small whole program (Python source defining `f`) and the inputs of each
call (fresh objects per call, built by factories), and says what the compiler may do with it:

- `one_graph`: with dynamic=True every call after the first is served without a recompile
  (calls vary sizes and values only, never dtypes, ranks, layouts or Python types). False
  when the program specialises on purpose, with the reason in `specialises` (a branch on a
  size, a size used as a Python int where it must specialise, closure cells or defaults
  that change, a Python int beyond int64).
- `errstate`: None (errors ignored, warnings silenced as in fuzzgen), "warn" (the warnings'
  categories must match) or "raise" (FloatingPointError must be raised at the same call).

Shapes: floats and ints computed from sizes, Python containers around array code (dicts and
lists built, mutated, returned; attributes written on an object argument; loops over lists of
arrays; branches on sizes),
NumPy scalars and big Python ints as arguments, closures and defaults changing between
calls, data-dependent sizes reused downstream, chained slicing, float error states,
Fortran-ordered / negative-stride / self-overlapping inputs and in-place updates of views.
"""
from __future__ import annotations

import functools
import types

import numpy as np

from fuzzgen import SIZES, Program, gen_program, make_array

FLOAT_DTYPES = ("float64", "float32")
ARRAY_DTYPES = ("float64", "float32", "int64", "int32")
ELEMENTWISE = ("{a} * 2 + 1", "np.sin({a})", "np.abs({a}) - {a}", "{a} * {a}", "np.maximum({a}, 0)",
               "np.where({a} > 0, {a}, -{a})", "{a} - {a}.mean()", "np.cumsum({a})")
FLOAT_ONLY = ("np.sin({a})", "{a} - {a}.mean()")


def _array_factory(src, dims_list, dtype, layout="C", specials=False):
    """A factory of fresh arrays (one per entry of dims_list, sizes drawn per call)."""
    def make(sizes, seed):
        rng = np.random.default_rng(seed)
        out = []
        for dims in dims_list:
            shape = tuple(sizes[d] if isinstance(d, str) else d for d in dims)
            a = make_array(shape, dtype, layout, False, rng)
            if specials and a.size and a.dtype.kind == "f":
                flat = a.reshape(-1) if a.flags.c_contiguous else None
                if flat is not None:
                    flat[rng.integers(a.size)] = rng.choice([0.0, -0.0, -1.0, np.nan, np.inf])
            out.append(a)
        return out
    return make


def _sizes(src, n_calls, lo=0):
    """Sizes of each call. Mostly distinct sizes >= 2 (sizes 0 and 1 are specialised and
    equal sizes share a symbol: either recompiles under dynamic=True, by design); sometimes
    edge sizes, and then `sizes.edge` says so."""
    edge = src.chance(0.25)
    out = []
    for _ in range(n_calls):
        if edge:
            out.append({d: src.choice([s for s in SIZES if s >= lo]) for d in ("n", "m", "k")})
        else:
            pool = [s for s in SIZES if s >= 2]
            n = src.choice(pool)
            m = src.choice([s for s in pool if s != n])
            k = src.choice([s for s in pool if s not in (n, m)])
            out.append({"n": n, "m": m, "k": k})
    return _Sizes(out, edge)


def _calls(src, sizes, make):
    """One input factory per call: make(sizes, seed), the seed drawn now."""
    return [functools.partial(make, s, src.randint(0, 2**31)) for s in sizes]


class _Sizes(list):
    def __init__(self, items, edge):
        super().__init__(items)
        self.edge = edge


def _program(sizes, source, factories, *, one_graph=True, specialises="", errstate=None):
    src = "import numpy as np\n\n" + source
    if one_graph and sizes.edge:
        one_graph, specialises = False, "sizes 0/1 or equal sizes (specialised or duck-sized)"
    return Program(src, [], [], factories=factories, one_graph=one_graph,
                   specialises=specialises, errstate=errstate)


def _expr(src, a, dtype):
    pool = [e for e in ELEMENTWISE if dtype in FLOAT_DTYPES or e not in FLOAT_ONLY]
    return src.choice(pool).format(a=a)


# ---- shapes -----------------------------------------------------------------------------------

def shape_containers(src):
    """Dicts/lists built, mutated and returned around array code."""
    dt = src.choice(ARRAY_DTYPES)
    lines = ["def f(x, y):", "    d = {'a': " + _expr(src, "x", dt) + ", 'items': []}"]
    if src.chance(0.5):
        lines += ["    for i, t in enumerate([x, y, x]):",
                  "        d['items'].append(t.sum(axis=0) + i)"]
    else:
        lines += ["    acc = []", "    for t in (x, y):", "        acc.append(" + _expr(src, "t", dt) + ")",
                  "    d['items'] = acc"]
    if src.chance(0.5):
        lines += ["    d['b'] = d['a'] - y", "    d['a'] += 1"]
    if src.chance(0.4):
        lines += ["    d.pop('items')"]
    if src.chance(0.5):
        lines += ["    d['items' if 'items' in d else 'z'] = [len(d), x.shape[0]]"]
    ret = src.choice(("d", "[d['a'], d]", "(d, list(d))", "sorted(d)"))
    lines += [f"    return {ret}"]
    mk = _array_factory(src, [("n", "m"), ("n", "m")], dt)
    sizes = _sizes(src, 3)
    factories = _calls(src, sizes, mk)
    return _program(sizes, "\n".join(lines) + "\n", factories)


def shape_object_attrs(src):
    """Attributes written on an object argument; the object is an output too."""
    dt = src.choice(FLOAT_DTYPES)
    body = ["def f(x, box):", "    box.v = " + _expr(src, "x", dt), "    box.total = box.v.sum()"]
    if src.chance(0.5):
        body += ["    box.count = box.count + 1"]
    if src.chance(0.5):
        body += ["    box.v[0:1] = -1" if src.chance(0.5) else "    box.v *= 2"]
    body += ["    return box.v - box.total, (box.v, box.total, box.count)"]
    mk = _array_factory(src, [("n",)], dt)

    def factory(s, seed):
        return [mk(s, seed)[0], types.SimpleNamespace(count=100)]
    sizes = _sizes(src, 3, 1)
    factories = _calls(src, sizes, factory)
    return _program(sizes, "\n".join(body) + "\n", factories)


def shape_loop_over_list(src):
    """A loop over a list of arrays (fixed length), accumulating; optionally a size branch."""
    dt = src.choice(ARRAY_DTYPES)
    k = src.randint(1, 4)
    body = ["def f(xs):", "    acc = np.zeros_like(xs[0])", "    out = []", "    for t in xs:",
            "        acc = acc + " + _expr(src, "t", dt), "        out.append(acc.max() if acc.size else 0)"]
    branch = src.chance(0.4)
    if branch:
        body += ["    if xs[0].shape[0] > 4:", "        acc = acc[:4]", "    else:", "        acc = acc * 3"]
    body += ["    return acc, out"]
    mk = _array_factory(src, [("n",)] * k, dt)
    sizes = _sizes(src, 3, 1)
    factories = _calls(src, sizes, lambda s, seed: [mk(s, seed)])
    return _program(sizes, "\n".join(body) + "\n", factories, one_graph=not branch,
                    specialises="branch on a size (xs[0].shape[0] > 4)" if branch else "")


NP_SCALARS = {
    "float64": (np.float64("nan"), np.float64(-0.0), np.float64(0.0), np.float64(2.5),
                np.float64("inf"), np.float64(-3.0)),
    "float32": (np.float32(1.5), np.float32(-0.0), np.float32("nan"), np.float32(3e38)),
    "int64": (np.int64(3), np.int64(-7), np.int64(0), np.int64(2**62)),
    "bool_": (np.True_, np.False_),
    # Python floats are graph inputs too (README: they never recompile)
    "pyfloat": (float("nan"), -0.0, 0.0, 2.5, float("inf"), -1e308),
}
COMPLEX = (complex(1, 2), complex(float("inf"), float("nan")), complex(0.0, -0.0), 1j)
BIG_INTS = (2**63, 2**64, -2**70, 2**63 - 1, -2**63)


def shape_scalars(src):
    """NumPy scalars (NaN, -0.0, inf, extremes) and big Python ints as arguments."""
    big = src.chance(0.25)
    cplx = not big and src.chance(0.15)
    kind = None if big or cplx else src.choice(tuple(NP_SCALARS))
    dt = src.choice(ARRAY_DTYPES)
    expr = src.choice(("x * s + s", "x + s", "np.copysign(1.0, s) * x", "x / s", "np.maximum(x, s)",
                       "(x > s).sum()", "x - s * 2", "np.where(x > 0, s, x)", "x ** 2 + s"))
    src_text = f"def f(x, s):\n    r = {expr}\n    return r, s\n"
    if src.chance(0.3):
        src_text = f"def f(x, s):\n    t = s * 2\n    r = {expr}\n    return r, t\n"
    mk = _array_factory(src, [("n",)], dt)
    factories = []
    sizes = _sizes(src, 3)
    for sz in sizes:
        val = src.choice(BIG_INTS) if big else src.choice(COMPLEX) if cplx else src.choice(NP_SCALARS[kind])
        seed = src.randint(0, 2**31)
        factories.append(lambda sz=sz, val=val, seed=seed: [mk(sz, seed)[0], val])
    return _program(sizes, src_text, factories, one_graph=not (big or cplx),
                    specialises="Python int beyond int64" if big else
                    "complex Python scalar (no promise made)" if cplx else "")


def _make_closure(c):
    def g(t):
        return t * c + 1
    return g


def _with_default(t, k=2.0):
    return t * k - 1


def shape_closures(src):
    """A fresh closure per call (same code, another cell value); defaults changed between calls."""
    which = src.choice(("closure", "defaults", "lambda"))
    dt = src.choice(FLOAT_DTYPES)
    source = "def f(x, g):\n    y = g(x)\n    return y + g(y)\n"
    mk = _array_factory(src, [("n",)], dt)
    factories = []
    sizes = _sizes(src, 3)
    for sz in sizes:
        c = src.choice((0.5, 2.0, -1.0, 3.0))
        seed = src.randint(0, 2**31)
        if which == "closure":
            factories.append(lambda sz=sz, c=c, seed=seed: [mk(sz, seed)[0], _make_closure(c)])
        elif which == "lambda":
            factories.append(lambda sz=sz, c=c, seed=seed: [mk(sz, seed)[0], (lambda t: t - c)])
        else:
            def factory(sz=sz, c=c, seed=seed):
                _with_default.__defaults__ = (c,)
                return [mk(sz, seed)[0], _with_default]
            factories.append(factory)
    return _program(sizes, source, factories, one_graph=False,
                    specialises="closure cell / default value read as a constant")


def shape_data_dependent(src):
    """Sizes from masks, nonzero and unique reused downstream."""
    dt = src.choice(ARRAY_DTYPES)
    make = src.choice(("x[x > 0]", "np.nonzero(x)[0]", "np.unique(x)", "x[np.isfinite(x * 1.0)]",
                       "np.flatnonzero(x > 1)"))
    uses = ["np.ones_like(m)", "x[: m.shape[0]]", "np.zeros(m.shape[0])", "m / max(len(m), 1)",
            "m * (1.0 / (m.size + 1))", "np.concatenate([m, m[::-1]])", "m[1:] - m[:-1]",
            "np.arange(len(m)) * 2", "m.sum() / (len(m) + 1)", "x[m.shape[0]:]"]
    chosen = [src.choice(uses) for _ in range(src.randint(1, 3))]
    body = ["def f(x):", f"    m = {make}"] + [f"    r{i} = {u}" for i, u in enumerate(chosen)]
    body += ["    return " + ", ".join(f"r{i}" for i in range(len(chosen))) + ","]
    mk = _array_factory(src, [("n",)], dt, specials=src.chance(0.3))
    sizes = _sizes(src, 3)
    factories = _calls(src, sizes, mk)
    return _program(sizes, "\n".join(body) + "\n", factories)


def shape_chained_slices(src):
    """x = x[1:] - x[:-1] repeated (or halving / growing); compile time must stay polynomial."""
    dt = src.choice(ARRAY_DTYPES)
    levels = src.randint(1, 8)
    step = src.choice(("x = x[1:] - x[:-1]", "x = x[::2] + 1", "x = np.concatenate([x, x[:1]])",
                       "x = x[1:-1] * 2", "x = (x[1:] + x[:-1]) / 2"))
    body = f"def f(x):\n    for _ in range({levels}):\n        {step}\n    return x, x.shape[0]\n"
    mk = _array_factory(src, [("n",)], dt)
    sizes = _sizes(src, 3)
    factories = _calls(src, sizes, mk)
    return _program(sizes, body, factories)


def shape_float_errors(src):
    """log/divide/sqrt of zeros and negatives, overflow; under warn/raise, or errstate inside."""
    dt = src.choice(FLOAT_DTYPES)
    op = src.choice(("np.log(x)", "1.0 / x", "x / y", "np.sqrt(x)", "np.exp(x * 1000)", "np.log10(x - 1)",
                     "np.arccos(x)", "x % y", "np.power(x, -1.0)", "x // y", "np.log(x).sum()"))
    inside = src.chance(0.3)
    if inside:
        mode = src.choice(("ignore", "raise"))
        body = (f"def f(x, y):\n    a = x + 0\n    with np.errstate(all='{mode}'):\n        r = {op}\n"
                f"    return r, a\n")
        errstate = "warn"
    else:
        body = f"def f(x, y):\n    r = {op}\n    return r\n"
        errstate = src.choice(("warn", "raise"))
    mk = _array_factory(src, [("n",), ("n",)], dt, specials=True)
    sizes = _sizes(src, 3)
    factories = _calls(src, sizes, mk)
    return _program(sizes, body, factories, errstate=errstate)


def _overlapping(n, m, dtype, rng):
    base = np.round(rng.standard_normal(n + m - 1) * 3, 2).astype(dtype)
    return np.lib.stride_tricks.as_strided(base, shape=(n, m), strides=(base.itemsize,) * 2,
                                           writeable=False)


def shape_layouts(src):
    """Fortran-ordered, negative-stride, self-overlapping inputs; in-place updates of views."""
    dt = src.choice(ARRAY_DTYPES)
    layout = src.choice(("F", "neg", "strided", "overlap"))
    reads = ("x.sum(axis=0)", "x.T @ x", "x[:, ::-1] * 2", "x.ravel()", "x.reshape(-1)", "x.copy()",
             "np.ascontiguousarray(x)", "x + x.T.T", "x[1:] - x[:-1]", "x.flatten(order='K')")
    writes = ("v = x[::2]\n    v += 1", "v = x.T\n    v[0] = 0", "x[1:] += x[:-1]", "x[::-1] *= 2",
              "v = x[:, 1:]\n    v -= x[:, :-1]", "x[...] = x[::-1]", "x[x > 0] = 0")
    lines = ["def f(x):"]
    if layout != "overlap" and src.chance(0.6):
        lines.append("    " + src.choice(writes))
    r = src.choice(reads)
    lines += [f"    r = {r}", "    return r, x"]
    mk = _array_factory(src, [("n", "m")], dt, layout="C" if layout == "overlap" else layout)

    def factory(s, seed):
        if layout == "overlap":
            return [_overlapping(s["n"], s["m"], dt, np.random.default_rng(seed))]
        return mk(s, seed)
    sizes = _sizes(src, 3, 1)
    factories = _calls(src, sizes, factory)
    # known (xfail test_negative_stride_input_does_not_recompile_per_size): the strides of a
    # negative-stride or strided input are guarded as constants, so each size recompiles
    exact_strides = layout in ("neg", "strided")
    return _program(sizes, "\n".join(lines) + "\n", factories, one_graph=not exact_strides,
                    specialises="strides of a non-contiguous input guarded exactly" if exact_strides else "")


def shape_size_floats(src):
    """Floats and ints computed from sizes, used as scalars in array code (normalisations)."""
    dt = src.choice(ARRAY_DTYPES)
    exprs = ("x * (1.0 / x.shape[0])", "x / len(x) ** 0.5", "np.clip(x, -x.shape[0] / 2, x.shape[0] / 2)",
             "x - x.sum() / x.size", "x * (x.shape[1] - 1)", "x + x.shape[0] // 2",
             "np.full(x.shape[1], x.shape[0] * 0.5)", "x.reshape(-1)[: x.size // 2]",
             "np.arange(x.shape[0]) / x.shape[0]", "x ** (1 / x.shape[1])")
    chosen = [src.choice(exprs) for _ in range(src.randint(1, 3))]
    body = ["def f(x):"] + [f"    r{i} = {e}" for i, e in enumerate(chosen)]
    body += ["    return " + ", ".join(f"r{i}" for i in range(len(chosen))) + ","]
    mk = _array_factory(src, [("n", "m")], dt)
    sizes = _sizes(src, 3)
    factories = _calls(src, sizes, mk)
    return _program(sizes, "\n".join(body) + "\n", factories)


SHAPES = (shape_size_floats, shape_containers, shape_object_attrs, shape_loop_over_list, shape_scalars,
          shape_closures,
          shape_data_dependent, shape_chained_slices, shape_float_errors, shape_layouts)


def gen_shaped(src) -> Program:
    return src.choice(SHAPES)(src)


def gen_any(src, shaped=0.5) -> Program:
    """A shaped program with probability `shaped`, else one of fuzzgen's straight-line ones."""
    return gen_shaped(src) if src.chance(shaped) else gen_program(src)
