# ruff: noqa: E731
"""Every registered op is exercised, on both backends (conftest.py: the reference interpreter
and LLVM), by a program that emits it: the walk over the registry fails for an op without a
case here, and each case checks that its program really emits the op. Inputs: sizes 0, 1 and
large; contiguous, reversed (negative strides), strided and Fortran-ordered; float32 / float64
/ int / bool / complex where the op takes them; NaN, inf and -0.0 among the values. Results
(type, dtype, shape, values) equal NumPy's; where NumPy raises, so does the compiled program.
Also: every loop body the registry declares has a code generator rule."""
import math
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.codegen.llvm_kernels import types as T
from frametrace.codegen.llvm_kernels.ops import RULES
from frametrace.errors import NumpyError
from frametrace.ir import numpy_api  # noqa: F401  (registers every op)
from frametrace.ir.builder import GraphBuilder
from frametrace.ir.registry import OPS, Loop, Reduction, Scan
from frametrace.lower.loop_ir import Op as LOp, Var, walk_exprs
from frametrace.lower.pointwise import LOOP_OPS, NotLowerable, lower_elementwise
from helpers import assert_same

FT_BACKEND = {"interpret": "numpy", "llvm": "llvm"}
LA = np.linalg
_R = np.random.default_rng(77)


# ---- inputs ---------------------------------------------------------------------------------

def _layouts(x):
    out = [x]
    if x.ndim and x.shape[0] > 1:
        out.append(x[::-1])                                   # negative strides
    if x.ndim == 1:
        out.append(np.repeat(x, 2)[::2])                      # strided
    if x.ndim == 2:
        out += [np.asfortranarray(x), np.repeat(np.repeat(x, 2, 0), 2, 1)[::2, ::-2]]
    return out


def _special(x):
    if x.dtype.kind in "fc" and x.size >= 4:
        flat = x.reshape(-1)
        flat[0], flat[1], flat[-1] = np.nan, np.inf, -0.0
    return x


def _values(shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return _R.random(shape) < 0.5
    if dt.kind in "iu":
        return _R.integers(0 if dt.kind == "u" else -5, 6, shape).astype(dt)
    x = _R.standard_normal(shape) * 3
    if dt.kind == "c":
        x = x + 1j * _R.standard_normal(shape)
    return x.astype(dt)


def vectors(dtype="f8", sizes=(0, 1, 9, 300), special=True):
    out = []
    for n in sizes:
        x = _values((n,), dtype)
        out += [(v,) for v in _layouts(x)]
        if special and n >= 4:
            out.append((_special(x.copy()),))
    return out


def matrices(dtype="f8", shapes=((0, 3), (1, 1), (4, 5), (40, 33)), special=True):
    out = []
    for s in shapes:
        x = _values(s, dtype)
        out += [(m,) for m in _layouts(x)]
        if special and x.size >= 4:
            out.append((_special(x.copy()),))
    return out


def pairs(dtype="f8", sizes=(0, 1, 9, 300)):
    out = []
    for n in sizes:
        x, y = _values((n,), dtype), _values((n,), dtype)
        out += [(a, b) for a, b in zip(_layouts(_special(x)), _layouts(y))]
    return out


def spd(sizes=(3, 4)):
    out = []
    for n in sizes:
        m = _R.standard_normal((n, n))
        out += [(s,) for s in _layouts(m @ m.T + n * np.eye(n))[:3]]
    return out


V, M, S = vectors, matrices, spd
VI = lambda: vectors("i8", special=False)
VC = lambda: vectors("c16", sizes=(0, 1, 7))


# ---- the cases: op name -> (program, inputs) ------------------------------------------------

def _empty_filled(v):
    e = np.empty(v.shape)
    e[...] = v
    return e


def _index_put(v):
    out = v.copy()
    out[[0, -1]] = 1.5
    return out


def _assign(v):
    out = np.zeros_like(v)
    out[1:] = v[:-1] * 2
    return out


def _ufunc_at(v):
    out = v.copy()
    np.add.at(out, [0, 0, -1], 1.0)
    return out


def _numpy_call(name):
    f = getattr(np, name)
    return lambda v: f(v)


def _loop(v):
    """A loop node (a range past loop_unroll_budget), its loop_out values, a select (a data-dependent
    `if` in the body) and a py_scalar (a carried int rebound to a constant)."""
    acc = v * 0
    s = v.sum() * 0
    k = 0
    for i in range(40):
        acc = acc * 0.5 + v
        if acc.sum() > i:
            s = s + 1
        k = 1
    return acc, s, k


HAND = {
    **{n: (_loop, V) for n in ("loop", "loop_out", "select", "py_scalar")},
    "index": (lambda v: v[[0, -1, 0]], V), "index_put": (_index_put, V), "ufunc_at": (_ufunc_at, V),
    "zeros": (lambda v: np.zeros(v.shape[0]) + v, V), "ones": (lambda v: np.ones((2, v.shape[0])) * v, V),
    "empty": (_empty_filled, V), "full": (lambda v: np.full(v.shape[0], 2.5) - v, V),
    "arange": (lambda v: np.arange(v.shape[0]) * v, V),
    "mask_select": (lambda v: v[v > 0] * 2, V), "argwhere": (lambda v: np.argwhere(v > 0), V),
    "take": (lambda v: np.take(v * 2, np.argsort(v, kind="stable")), V),
    "unique": (lambda v: np.unique(v), VI),
    "where": (lambda v: np.where(v > 0, v, -v), V), "clip": (lambda v: np.clip(v, -1, 1.5), V),
    "astype": (lambda v: v.astype(np.float32), V),
    "matmul": (lambda m: m @ m.T, M), "dot": (lambda m: np.dot(m.T, m), M),
    "assign": (_assign, V), "concatenate": (lambda v: np.concatenate([v, v[::-1] * 2]), V),
    "stack": (lambda v: np.array([v, v + 1]), V),   # (np.stack: expand_dims + concatenate)
    "copy": (lambda v: np.copy(v), V),
    "getitem": (lambda v: v[1:] * 2, V), "transpose": (lambda m: m.T * 2, M),
    "reshape": (lambda m: m.reshape(-1) * 2, M), "expand_dims": (lambda v: np.expand_dims(v, 0) * 2, V),
    "squeeze": (lambda v: np.squeeze(v[None], 0) * 2, V),
    "broadcast_to": (lambda v: np.broadcast_to(v, (2, v.shape[0])) * 2, V),
    "fix": (lambda v: np.fix(v), V), "real": (lambda c: np.real(c) * 2, VC), "imag": (lambda c: np.imag(c) * 2, VC),
    "arange_float": (lambda v: np.arange(0.0, v.shape[0] * 0.5, 0.5), V),
    "array_constant": (lambda v: np.append(v, [1.0, 2.0]), V),
    "median": (lambda v: np.median(v), V),
    **{n: (_numpy_call(n), V) for n in (
        "nanmax", "nanmin", "nanstd", "nanvar", "nanmedian", "sinc", "nan_to_num", "i0", "sort", "trapezoid",
        "isposinf", "isneginf", "isreal", "iscomplex", "diag", "average")},
    "divide_quiet": (lambda m: np.nanmean(m, axis=1), M),          # np.nanmean's count division
    "report_if": (lambda m: (np.nanmean(m, axis=0), np.nanargmin(m, axis=1)), M),
    "percentile": (lambda v: np.percentile(v, 30), V), "quantile": (lambda v: np.quantile(v, [0.1, 0.9]), V),
    "nanpercentile": (lambda v: np.nanpercentile(v, 50), V), "nanquantile": (lambda v: np.nanquantile(v, 0.2), V),
    "angle": (lambda c: np.angle(c), VC),
    "sort_rows": (lambda m: np.sort(m * 2, axis=1), M),             # rows up to 16: a network
    "repeat_each": (lambda v: np.repeat(v, (np.abs(v) * 2).astype(np.int64)) * 2, V),
    "argsort": (lambda v: np.argsort(v, kind="stable"), V), "partition": (lambda v: np.partition(v, 0), V),
    "searchsorted": (lambda v: np.searchsorted(np.sort(v), v), V),
    "take_along": (lambda m: np.take_along_axis(m * 2, np.argsort(m, axis=1, kind="stable")[:, ::-1], axis=1), M),
    "cov": (lambda m: np.cov(m), M), "corrcoef": (lambda m: np.corrcoef(m), M),
    "histogram_hist": (lambda v: np.histogram(v, bins=4, range=(-2, 2))[0], V),
    "histogram_edges": (lambda v: np.histogram(v, bins=3, range=(-1, 1))[1], V),
    "interp": (lambda v: np.interp(v, [-1.0, 0.0, 1.0], [0.0, 10.0, 5.0]), V),
    "convolve": (lambda v: np.convolve(v, [0.25, 0.5, 0.25], mode="same"), V),
    "correlate": (lambda v: np.correlate(v, [1.0, -1.0], mode="full"), V),
    "isclose": (lambda v: np.isclose(v, v * (1 + 1e-12)), V), "allclose": (lambda v: np.allclose(v, v + 1e-12), V),
    "array_equal": (lambda v: np.array_equal(v, v, equal_nan=True), V),
    "linspace": (lambda v: np.linspace(0.0, 1.0, v.shape[0]), V),
    "logspace": (lambda v: np.logspace(0.0, 2.0, v.shape[0]), V),
    "geomspace": (lambda v: np.geomspace(1.0, 8.0, v.shape[0]), V),
    "pad": (lambda v: np.pad(v, 2, mode="linear_ramp"), V),
    "trace": (lambda m: np.trace(m), M), "diagonal": (lambda m: np.diagonal(m) + 0, M),
    "bincount": (lambda i: np.bincount(np.abs(i)), VI),
    "unique_counts": (lambda i: np.unique(i, return_counts=True)[1], VI),
    "unique_index": (lambda i: np.unique(i, return_index=True)[1], VI),
    "unique_inverse": (lambda i: np.unique(i, return_inverse=True)[1], VI),
    "count_nonzero": (lambda v: np.count_nonzero(v > 0), V),
    "count_nonzero_axis": (lambda m: np.count_nonzero(m > 0, axis=0), M),
    "linalg_norm": (lambda m: LA.norm(m, "nuc"), M), "linalg_solve": (lambda s: LA.solve(s, s[:, 0]), S),
    "linalg_inv": (lambda s: LA.inv(s), S), "linalg_det": (lambda s: LA.det(s), S),
    "linalg_slogdet_sign": (lambda s: LA.slogdet(s)[0], S), "linalg_slogdet_logabsdet": (lambda s: LA.slogdet(s)[1], S),
    "linalg_cholesky": (lambda s: LA.cholesky(s), S), "linalg_qr_q": (lambda s: LA.qr(s)[0], S),
    "linalg_qr_r": (lambda s: LA.qr(s)[1], S), "linalg_eigh_values": (lambda s: LA.eigh(s)[0], S),
    "linalg_eigh_vectors": (lambda s: np.abs(LA.eigh(s)[1]), S), "linalg_eigvalsh": (lambda s: LA.eigvalsh(s), S),
    "linalg_svd_values": (lambda s: LA.svd(s, compute_uv=False), S),
    "linalg_lstsq_x": (lambda s: LA.lstsq(s, s[:, 0], rcond=None)[0], S),
    "linalg_lstsq_residuals": (lambda s: LA.lstsq(s[:, :2], s[:, 0], rcond=None)[1], S),
    "linalg_lstsq_rank": (lambda s: LA.lstsq(s, s[:, 0], rcond=None)[2], S),
    "linalg_lstsq_s": (lambda s: LA.lstsq(s, s[:, 0], rcond=None)[3], S),
    "linalg_pinv": (lambda s: LA.pinv(s), S), "linalg_matrix_power": (lambda s: LA.matrix_power(s / 10, 3), S),
    "linalg_matrix_rank": (lambda s: LA.matrix_rank(s), S),
    "linalg_multi_dot": (lambda s: LA.multi_dot([s, s.T, s[:, :2]]), S),
    "kron": (lambda s: np.kron(s[:2, :2], s[:1]), S), "tensordot": (lambda m: np.tensordot(m, m, axes=([0], [0])), M),
    "inner": (lambda v: np.inner(v, v[::-1]), V), "vdot": (lambda v: np.vdot(v, v), V),
    "einsum": (lambda m: np.einsum("ij,jk,kl->il", m, m.T, m, optimize=True), M),
    "einsum_view": (lambda s: np.einsum("ii->i", s) + 0, S), "cross": (lambda s: np.cross(s[:, :3], s[:, 1:4]), S),
    "digitize": (lambda v: np.digitize(v, [-1.0, 0.0, 2.0]), V),
    "argpartition": (lambda v: np.sort(v[np.argpartition(v, 0)][:1]), V),
    "cumulative_sum": (lambda v: np.cumulative_sum(v, include_initial=True), V),
    "cumulative_prod": (lambda v: np.cumulative_prod(v), V),
    "polyval": (lambda v: np.polyval([1.0, -2.0, 0.5], v), V),
    "polyfit": (lambda s: np.polyfit(s[:, 0], s[:, 1], 1), S),
    "vander": (lambda v: np.vander(v, 3), V), "diagflat": (lambda v: np.diagflat(v, 1), V),
    "linalg_vector_norm": (lambda v: LA.vector_norm(v), V), "linalg_matrix_norm": (lambda m: LA.matrix_norm(m), M),
    "linalg_svdvals": (lambda s: LA.svdvals(s), S), "linalg_cond": (lambda s: LA.cond(s), S),
    "linalg_diagonal": (lambda m: LA.diagonal(m, offset=1) + 0, M), "linalg_trace": (lambda m: LA.trace(m), M),
    "vecdot": (lambda m: np.vecdot(m, m), M),
    # reduce with initial= / where=: NumPy's fold (the plain forms are the reduction ops)
    "add_reduce": (lambda m: np.add.reduce(m, axis=1, initial=1.5), M),
    "multiply_reduce": (lambda m: np.multiply.reduce(m, axis=0, initial=2.0), M),
    "maximum_reduce": (lambda m: np.maximum.reduce(m, axis=1, initial=-1.0, where=m < 1), M),
    "minimum_reduce": (lambda m: np.minimum.reduce(m, axis=None, initial=0.5), M),
    "logical_and_reduce": (lambda m: np.logical_and.reduce(m > 0, axis=1, initial=True), M),
    "logical_or_reduce": (lambda m: np.logical_or.reduce(m > 0, axis=0, where=m < 2), M),
}

# Python's own scalar functions of graph values (ir/numpy_api/python_scalars.py): NaN, inf and
# out-of-domain elements raise in both, as in Python
_MATH1 = ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
          "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "fabs", "degrees", "radians", "erf", "erfc",
          "gamma", "lgamma", "ulp", "cbrt", "ceil", "floor", "trunc", "isnan", "isinf", "isfinite")
_MATH2 = ("atan2", "copysign", "fmod", "remainder", "pow", "hypot", "nextafter", "isclose")
HAND.update({f"math_{n}": ((lambda f: lambda v: v * 2 + f(v[0]))(getattr(math, n)), V) for n in _MATH1})
HAND.update({f"math_{n}": ((lambda f: lambda v: v * 2 + f(v[0], v[-1]))(getattr(math, n)), V) for n in _MATH2})
HAND.update({f"math_{n}": ((lambda f: lambda i: i * 2 + f(i[0]))(getattr(math, n)), VI)
             for n in ("isqrt", "factorial")})
HAND.update({f"math_{n}": ((lambda f: lambda i: i * 2 + f(i[0], i[-1]))(getattr(math, n)), VI)
             for n in ("gcd", "lcm", "comb", "perm")})
HAND.update({"math_ldexp": (lambda v: v * 2 + math.ldexp(v[0], 3), V),
             "py_int": (lambda v: v * int(v[0]), V),
             **{f"fft_{n}": ((lambda f: lambda v: np.abs(f(v)) * 2)(getattr(np.fft, n)), V)
                for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
             **{f"unravel_index_{k}": ((lambda d: lambda i: np.unravel_index(np.abs(i) % 4, (4,) * (d + 1))[d] * 2)(k),
                                         VI) for k in range(8)},
             "py_round_float": (lambda v: v * round(float(v[0]), 2), V),
             "py_round_int": (lambda i: i * round(int(i[0]), -1), VI),
             "slice_by_values": (lambda i: i[np.abs(i[0]):].sum() + i[-3:i[-1]] * 2, VI)})

_INT_ONLY = ("bitwise", "shift", "gcd", "lcm", "invert", "bitwise_count")
_BOOL_ONLY = ("logical", "equal", "less", "greater")


def _dtype_for(name: str) -> str:
    if any(k in name for k in _INT_ONLY):
        return "i8"
    if any(k in name for k in _BOOL_ONLY):
        return "?"
    return "f8"


def _auto(name: str, op):
    """Programs for the families the registry describes uniformly."""
    if op.kind == "elementwise" and op.ufunc is not None:
        u, dt = op.ufunc, _dtype_for(name)
        inputs = (lambda: vectors(dt)) if u.nin == 1 else (lambda: pairs(dt))
        if "shift" in name:
            inputs = lambda: [(a, np.abs(b) % 8) for a, b in pairs("i8")]
        return (lambda *xs: u(*xs)), inputs
    if op.kind == "reduction":
        f = getattr(np, name)
        return (lambda m: (f(m, axis=1), f(m[:, :1], axis=0), f(m))), M
    if op.kind == "scan":
        f = getattr(np, name)
        return (lambda m: f(m, axis=1)), M
    if name.endswith("_accumulate"):
        u = getattr(np, name[: -len("_accumulate")])
        dt = _dtype_for(name)
        if "shift" in name:
            return (lambda v: u.accumulate(np.abs(v) % 3)), VI
        return (lambda m: u.accumulate(m, axis=1)), (lambda: matrices(dt))
    if name.endswith("_reduce"):              # NumPy's fold for the ufuncs without a reduction op
        u = getattr(np, name[: -len("_reduce")])
        dt = _dtype_for(name)
        if "shift" in name:
            return (lambda v: u.reduce(np.abs(v) % 3)), VI
        return (lambda m: (u.reduce(m, axis=1), u.reduce(m[:, :2], axis=0, keepdims=True))), (lambda: matrices(dt))
    if name.startswith("ufunc_"):
        base, _, k = name[len("ufunc_"):].rpartition("_")
        if not k.isdigit():
            base, k = name[len("ufunc_"):], None
        u = getattr(np, base)
        dt = _dtype_for(base)
        if base == "ldexp":
            return (lambda v: u(v, np.arange(v.shape[0]) % 4)), V
        if k is not None:
            return (lambda *xs: u(*xs)[int(k)]), ((lambda: vectors(dt)) if u.nin == 1 else (lambda: pairs(dt)))
        return (lambda *xs: u(*xs)), ((lambda: vectors(dt)) if u.nin == 1 else (lambda: pairs(dt)))
    return None


def case(name: str):
    if name in HAND:
        return HAND[name]
    return _auto(name, OPS[name])


# ---- the tests ------------------------------------------------------------------------------

def test_every_registered_op_has_a_case():
    missing = sorted(n for n in OPS if case(n) is None)
    assert missing == [], f"ops no test exercises: {missing}"


_KIND_DTYPE = {"f": "float64", "i": "int64", "u": "uint32", "b": "bool"}
_SPECIAL = {"affine", "cast", "where", "segment", "mask_nan", "keep_bits"}    # emitted by emit.py itself


def _ops_without_rules(expr) -> set:
    return {(e.op, T.kind(e.args[0].dtype if e.args else e.dtype)) for e in walk_exprs(expr)
            if isinstance(e, LOp) and e.op not in _SPECIAL
            and e.op not in RULES[T.kind(e.args[0].dtype if e.args else e.dtype)]}


def test_every_declared_loop_body_has_a_code_generator_rule():
    """Each (ufunc, operand kind) a Loop declares lowers (pointwise.py, with its rewrites:
    square is a multiply) to loop-IR ops that all have a code generator rule."""
    missing = {}
    for name, op in OPS.items():
        if not isinstance(op.lowering, Loop) or op.ufunc is None or op.lowering.body is not None:
            continue
        for k in op.lowering.kinds:
            b = GraphBuilder()
            xs = [b.input_array(f"L['a{i}']", (3,), np.dtype(_KIND_DTYPE[k])) for i in range(op.ufunc.nin)]
            try:
                node = b.emit(name, *xs).node
            except NumpyError:
                continue                                 # NumPy has no loop for this kind
            try:
                expr = lower_elementwise(node, [Var(f"x{i}", x.dtype.name) for i, x in enumerate(xs)])
            except NotLowerable:
                continue                                 # runs as a NumPy call: nothing to generate
            if bad := _ops_without_rules(expr):
                missing[(name, k)] = bad
    assert missing == {}, f"loop bodies without a code generator rule: {missing}"
    internal = {n for (n, _), c in LOOP_OPS.items() if c == 0} - _SPECIAL
    assert all(any(n in RULES[k] for k in RULES) for n in internal), internal
    for name, op in OPS.items():                      # combiners name loop-IR ops
        lw = op.lowering
        if isinstance(lw, (Reduction, Scan)):
            for c in (lw.combiner, getattr(lw, "rmw", None), getattr(lw, "rmw_bool", None)):
                assert c is None or any(n == c for n, _ in LOOP_OPS), (name, c)


@pytest.fixture
def emitted(monkeypatch):
    seen = set()
    original = GraphBuilder.emit

    def emit(self, op, *args, **attrs):
        seen.add(op)
        return original(self, op, *args, **attrs)
    monkeypatch.setattr(GraphBuilder, "emit", emit)
    return seen


@pytest.mark.parametrize("name", sorted(OPS))
def test_op(name, backend, emitted):
    fn, inputs = case(name)
    ft.reset()
    compiled = ft.compile(fn, fullgraph=True, backend=FT_BACKEND[backend])
    for args in inputs():
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = fn(*[a.copy() for a in args])
            except Exception as exc:           # NumPy raises: so must the compiled program
                with pytest.raises(type(exc)):
                    compiled(*[a.copy() for a in args])
                continue
            got = compiled(*[a.copy() for a in args])
        assert_same(got, want, 1e-9)
    assert name in emitted, f"the case of {name} does not emit it: {sorted(emitted)}"
    assert ft.stats().graph_breaks == 0
