"""Elementwise kernels equal the NumPy reference: every op x dtype, NaN/inf, integer edge
cases (division by zero, negatives, overflow), casts, broadcasting, strides, sizes 0 and 1."""
import numpy as np
import pytest

from tracing import A, S, Traced, kernel_count

rng = np.random.default_rng(0)
FLOATS = ("float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def sample(dtype, shape=(5, 33), special=True):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = (rng.standard_normal(shape) * 3).astype(dt)
        if special and x.size >= 8:
            flat = x.reshape(-1)
            flat[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5]
        return x
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    info = np.iinfo(dt)
    x = rng.integers(max(info.min, -100), min(info.max, 100), size=shape, dtype=dt)
    if special and x.size >= 4:
        flat = x.reshape(-1)
        flat[:4] = [0, info.max, info.min, 1]
    return x


UNARY_F = ["negative", "positive", "absolute", "sqrt", "square", "reciprocal", "exp", "exp2",
           "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos",
           "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt", "floor",
           "ceil", "trunc", "rint", "deg2rad", "rad2deg", "sign", "isnan", "isinf", "isfinite",
           "signbit", "logical_not", "fabs"]
UNARY_I = ["negative", "absolute", "square", "sign", "invert", "logical_not", "isnan",
           "isfinite", "floor"]
BINARY_F = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "fmod",
            "power", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign",
            "logaddexp", "logaddexp2", "heaviside", "equal", "not_equal", "less", "less_equal",
            "greater", "greater_equal", "logical_and", "logical_or", "logical_xor"]
BINARY_I = ["add", "subtract", "multiply", "floor_divide", "remainder", "fmod", "maximum",
            "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
            "equal", "less", "greater_equal", "logical_xor", "true_divide"]


def _ops(names, nargs):
    """One graph computing every op of `names` (one fused kernel, many outputs)."""
    return lambda *xs: tuple(getattr(np, n)(*xs[:nargs]) for n in names)


@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_float(dtype):
    t = Traced(_ops(UNARY_F, 1), A(("n", 33), dtype))
    t.check(sample(dtype), rtol=1e-4 if dtype == "float32" else 1e-10)
    assert kernel_count(t) == 1


def _valid(names, dtype, nargs):
    ok = []
    for n in names:
        try:
            getattr(np, n)(*[np.ones(2, dtype)] * nargs)
            ok.append(n)
        except TypeError:                 # NumPy has no such loop (e.g. negative of bool)
            pass
    return ok


@pytest.mark.parametrize("dtype", ("int8", "int32", "int64", "uint8", "uint64", "bool"))
def test_unary_int(dtype):
    t = Traced(_ops(_valid(UNARY_I, dtype, 1), 1), A(("n", 33), dtype))
    t.check(sample(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_float(dtype):
    x, y = sample(dtype), sample(dtype)
    y.reshape(-1)[8:16] = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, -3.0, 1e-30]
    t = Traced(_ops(BINARY_F, 2), A(("n", 33), dtype), A(("n", 33), dtype))
    t.check(x, y, rtol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("dtype", INTS + ("bool",))
def test_binary_int(dtype):
    x, y = sample(dtype), sample(dtype)
    if np.dtype(dtype).kind in "iu":
        y.reshape(-1)[4:12] = [0, 1, 2, 3, 7, 63, 64, 65] if np.dtype(dtype).itemsize == 8 else [0, 1, 2, 3, 7, 5, 6, 9]
        if np.dtype(dtype).kind == "i":
            y.reshape(-1)[12:16] = [-1, -2, -7, -100]
    t = Traced(_ops(_valid(BINARY_I, dtype, 2), 2), A(("n", 33), dtype), A(("n", 33), dtype))
    t.check(x, y)


def test_integer_division_semantics_exactly():
    a = np.array([7, -7, 7, -7, 0, -2**63, 5, 3, -3], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 0, -1, 0, -1, 1], dtype=np.int64)
    t = Traced(_ops(("floor_divide", "remainder", "fmod"), 2), A(("n",), "i8"), A(("n",), "i8"))
    t.check(a, b)
    t = Traced(_ops(("floor_divide", "remainder", "fmod"), 2), A(("n",), "i4"), A(("n",), "i4"))
    t.check(a[1:].astype(np.int32), b[1:].astype(np.int32))


def test_float_floor_divide_remainder_special_values():
    a = np.array([3.5, -3.5, np.inf, -np.inf, np.nan, 5.0, -5.0, 0.0, -0.0, 7.0, 1e300])
    b = np.array([0.0, 2.0, 2.0, 3.0, 1.0, np.inf, np.inf, -1.0, 2.0, -0.0, 1e-300])
    t = Traced(lambda x, y: (x // y, x % y), A(("n",)), A(("n",)))
    got = t.check(a, b)
    np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(a // b))


def test_casts_like_astype():
    vals = np.array([np.nan, np.inf, -np.inf, 3.7, -3.7, 1e10, -1e10, 0.5, 127.9, 300.2])
    dts = ("int8", "int16", "int32", "int64", "uint8", "uint16", "float32", "bool")
    t = Traced(lambda x: tuple(x.astype(dt) for dt in dts), A(("n",)))
    for dt, got, want in zip(dts, t.llvm(vals), t.ref(vals)):
        assert got.dtype == want.dtype
        finite = np.isfinite(vals) & (np.abs(vals) < 100) if dt != "bool" else np.ones(len(vals), bool)
        np.testing.assert_array_equal(got[finite], want[finite])     # NaN/inf/out of range: UB in NumPy
    dts2 = ("float64", "int32", "uint16", "bool", "int8", "uint64")
    for src in ("int8", "int64", "uint8", "bool", "float32"):
        t = Traced(lambda x: tuple(x.astype(dt) for dt in dts2), A(("n", 33), src))
        t.check(sample(src, special=False))


def test_python_scalars_weak_promotion_and_runtime_scalars():
    t = Traced(lambda x, s: x * 2.5 + s - np.float32(0.25) * x, A(("n",), "f4"), S(float))
    got = t.check(sample("float32", (40,)), 1.25)
    assert got[0].dtype == np.float32
    t = Traced(lambda x, k: (x + k) * 3 < 2.5, A(("n",), "i4"), S(int))
    t.check(sample("int32", (40,)), 7)


def test_power_rewrites():
    t = Traced(lambda x: x ** 2 + x ** 3 - x ** 4, A(("n",)))
    t.check(sample("float64", (50,)), rtol=1e-13)
    assert "pow" not in t.run.llvm_ir
    exps = (0, 1, 5, -1, -2, 0.5, 2.5)
    t = Traced(lambda x: tuple(x ** e for e in exps), A(("n",)))
    t.check(np.abs(sample("float64", (50,))), rtol=1e-13)
    t = Traced(lambda x: x ** 3, A(("n",), "i8"))
    t.check(sample("int64", (50,)))


def test_where_clip():
    t = Traced(lambda x, y: np.where(x > y, np.clip(x, -0.5, 0.5), y * 2), A(("n", 7)), A(("n", 7)))
    t.check(sample("float64", (9, 7)), sample("float64", (9, 7)))
    t = Traced(lambda x: (np.clip(x, None, 0.3), np.clip(x, -0.3, None)), A(("n",), "f4"))
    t.check(sample("float32", (50,)))
    t = Traced(lambda x: np.clip(x, -5, 20), A(("n",), "i2"))
    t.check(sample("int16", (50,)))


def test_broadcasting_rows_columns_scalars():
    t = Traced(lambda x, r, c: x * r - c + x[0:1, :], A(("n", "m")), A((1, "m")), A(("n", 1)))
    for n, m in ((5, 7), (2, 2), (13, 64)):
        t.check(sample("float64", (n, m)), sample("float64", (1, m)), sample("float64", (n, 1)))


@pytest.mark.parametrize("n", [0, 1, 2, 17, 1000])
def test_sizes_one_kernel(n):
    t = TRACED_CHAIN
    t.check(sample("float64", (n, 3), special=False), sample("float64", (n, 3), special=False))
    assert kernel_count(t) == 1


TRACED_CHAIN = Traced(lambda x, y: 0.5 * x * (1 + np.tanh(0.79788456 * (x + 0.044715 * x ** 3))) - y,
                      A(("n", "m")), A(("n", "m")))


def test_strided_inputs():
    base = sample("float64", (40, 60), special=False)
    for x in (base[::2, ::3], base[::-1], base.T, base[:, 5:45][::-1, ::-2]):
        y = np.ones_like(x)
        TRACED_CHAIN.check(x, y)


def test_bool_ops():
    t = Traced(lambda a, b: ((a & b) | ~a, a ^ b, np.logical_and(a, b), a < b, a + b, a * b),
               A(("n",), "bool"), A(("n",), "bool"))
    t.check(sample("bool", (50,)), sample("bool", (50,)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("const", [np.float64(6.928), np.float32(0.5), np.int64(3)])
def test_numpy_scalar_constants_are_strong_and_fused(dtype, const):
    """A NumPy scalar constant (`x / np.sqrt(48)`) is a strong operand (NEP 50: float32 / an
    np.float64 is float64) and is computed inside the kernel, not handed to NumPy."""
    t = Traced(lambda x: x / const + 1, A((None, 5), dtype))
    for n in (3, 8, 1):
        t.check(sample(dtype, (n, 5), special=False))
    divides = [n for n in t.graph.nodes if n.op == "true_divide"]
    assert divides and all(t.run.plan.cat[n] == "pw" for n in divides)
