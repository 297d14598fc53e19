"""Elementwise ops: meta (shape, dtype, scalar-ness) and reference agree with NumPy eager,
including NEP 50 promotion, Python-scalar semantics and the errors NumPy raises."""
import operator

import numpy as np
import pytest

from frametrace.errors import NumpyError, Unsupported
from frametrace.ir.numpy_api import binary_op, compare_op, lookup_function, unary_op
from frametrace.ir.ops.elementwise import BINARY, UNARY
from ir_helpers import Rt, check, run, views

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_]
_NONNEG_RHS = {"power", "left_shift", "right_shift"}


def sample(rng, shape, dtype, *, nonneg=False):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if nonneg else -5
        return rng.integers(lo, 6, shape).astype(dt)
    x = (rng.standard_normal(shape) * 3).astype(dt)
    if x.size >= 3 and not nonneg:
        flat = x.reshape(-1)
        flat[0], flat[1], flat[-1] = np.nan, np.inf, -np.inf
    return x


def fn(name):
    impl = lookup_function(getattr(np, name))
    return lambda b, *xs: impl(b, *xs)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ufuncs(name, rng):
    eager = getattr(np, name)
    for dtype in DTYPES:
        for shape in [(), (0,), (1,), (5,), (3, 4)]:
            for x in views(sample(rng, shape, dtype)):
                check(fn(name), eager, x)
        check(fn(name), eager, np.dtype(dtype).type(1))          # NumPy scalar -> NumPy scalar


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ufuncs(name, rng):
    eager = getattr(np, name)
    nonneg = name in _NONNEG_RHS
    shapes = [((3, 4), (3, 4)), ((2, 3), (3,)), ((0, 3), (1, 3)), ((4, 1), (1, 5)), ((), (2,))]
    for da in DTYPES:
        for db in DTYPES:
            for sa, sb in shapes:
                a, b = sample(rng, sa, da), sample(rng, sb, db, nonneg=nonneg)
                for av in views(a)[:2]:
                    check(fn(name), eager, av, b)
    # mismatched shapes raise ValueError like NumPy
    check(fn(name), eager, np.ones((3,)), np.ones((4,)))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_scalars(name, rng):
    eager = getattr(np, name)
    for dtype in DTYPES:
        x = sample(rng, (2, 3), dtype, nonneg=True)
        consts = [2, 3.5, True, np.float32(0.25), np.int8(3), 300, Rt(2), Rt(1.5), Rt(True)]
        if name not in _NONNEG_RHS:
            consts += [-1, Rt(-2.5)]
        for c in consts:
            check(fn(name), eager, x, c)
            check(lambda b, x, c: lookup_function(eager)(b, c, x), lambda x, c: eager(c, x), x, c)


@pytest.mark.parametrize("op,pyop", [("+", operator.add), ("-", operator.sub),
                                      ("*", operator.mul), ("/", operator.truediv),
                                      ("//", operator.floordiv), ("%", operator.mod),
                                      ("**", operator.pow), ("&", operator.and_),
                                      ("|", operator.or_), ("^", operator.xor),
                                      ("<<", operator.lshift), (">>", operator.rshift)])
def test_binary_operators(op, pyop, rng):
    for da in DTYPES:
        for other in [2, 2.5, np.float32(1.5), Rt(3), Rt(0.5), sample(rng, (3,), np.int64, nonneg=True),
                      sample(rng, (3,), np.float32, nonneg=True)]:
            x = sample(rng, (2, 3), da, nonneg=True)
            if op == "**" and da is np.bool_ and isinstance(other, Rt) and type(other.value) is int:
                with pytest.raises(Unsupported):      # int8 if other == 2 else int64
                    run(lambda b, x, y: binary_op(b, op, x, y), x, other)
                continue
            check(lambda b, x, y: binary_op(b, op, x, y), pyop, x, other)
            check(lambda b, x, y: binary_op(b, op, y, x), lambda x, y: pyop(y, x), x, other)


@pytest.mark.parametrize("op,pyop", [("<", operator.lt), ("<=", operator.le), ("==", operator.eq),
                                      ("!=", operator.ne), (">", operator.gt), (">=", operator.ge)])
def test_compare_operators(op, pyop, rng):
    for da in DTYPES:
        x = sample(rng, (4,), da)
        for other in [0, 0.5, -1, 300, Rt(1), Rt(0.5), np.float32(0.0), sample(rng, (4,), np.float64)]:
            check(lambda b, x, y: compare_op(b, op, x, y), pyop, x, other)
    check(lambda b, x, y: compare_op(b, op, x, y), pyop, np.ones(1, np.uint8), -1)


@pytest.mark.parametrize("op,pyop", [("-", operator.neg), ("+", operator.pos),
                                      ("~", operator.invert), ("abs", abs)])
def test_unary_operators(op, pyop, rng):
    for dtype in DTYPES:
        for x in views(sample(rng, (3, 2), dtype)):
            check(lambda b, x: unary_op(b, op, x), pyop, x)
    check(lambda b, x: unary_op(b, op, x), pyop, np.float64(-2.0))
    check(lambda b, x: unary_op(b, op, x), pyop, Rt(-3))
    check(lambda b, x: unary_op(b, op, x), pyop, Rt(True))


NEP50 = [
    (np.ones(3, np.float32), 2.5, np.float32),
    (np.ones(3, np.float32), np.float64(2.5), np.float64),
    (np.ones(3, np.int32), 2.5, np.float64),
    (np.ones(3, np.int32), Rt(2), np.int32),
    (np.ones(3, np.int8), Rt(2.0), np.float64),
    (np.ones(3, np.float16), Rt(1e5), np.float16),
    (np.float32(1), 1.0, np.float32),
    (np.array(1, np.int16), 1, np.int16),
]


@pytest.mark.parametrize("x,y,want", NEP50)
def test_nep50_promotion(x, y, want):
    got = check(lambda b, x, y: binary_op(b, "+", x, y), operator.add, x, y)
    assert got.dtype == want


def test_true_divide_of_ints_is_float64():
    got = check(fn("true_divide"), np.true_divide, np.arange(4, dtype=np.int8), np.int8(2))
    assert got.dtype == np.float64


@pytest.mark.parametrize("x,c,err", [(np.ones(2, np.int8), 300, OverflowError),
                                     (np.ones(2, np.uint8), -1, OverflowError),
                                     (np.ones(2, np.int64), -1, ValueError),
                                     (np.ones(2, np.bool_), True, TypeError)])
def test_errors_are_numpys(x, c, err):
    op = "**" if err is ValueError else ("-" if err is TypeError else "+")
    with pytest.raises(NumpyError) as info:
        run(lambda b, x: binary_op(b, op, x, c), x)
    assert isinstance(info.value.error, err)


PY_CASES = [("*", Rt(2.5), 2.0), ("/", Rt(3), 2), ("//", Rt(7), 2), ("%", Rt(-7), 3),
            ("+", Rt(True), Rt(True)), ("**", Rt(3), 2), ("**", Rt(3), -1), ("**", Rt(2.5), 2),
            ("-", Rt(1.5), Rt(2)), ("&", Rt(True), 3), ("<<", Rt(1), 4)]


@pytest.mark.parametrize("op,a,b", PY_CASES)
def test_python_scalar_semantics(op, a, b):
    pyop = {"*": operator.mul, "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
            "+": operator.add, "**": operator.pow, "-": operator.sub, "&": operator.and_,
            "<<": operator.lshift}[op]
    got = check(lambda bb, x, y: binary_op(bb, op, x, y), pyop, a, b)
    assert type(got) in (int, float, bool)


def test_python_scalar_value_dependent_types_are_unsupported():
    with pytest.raises(Unsupported):
        run(lambda b, x: binary_op(b, "**", x, 0.5), Rt(2.0))
    with pytest.raises(Unsupported):
        run(lambda b, x, y: binary_op(b, "**", x, y), Rt(2), Rt(3))
    with pytest.raises(NumpyError) as info:
        run(lambda b, x: binary_op(b, "/", x, 0), Rt(2.0))
    assert isinstance(info.value.error, ZeroDivisionError)


@pytest.mark.parametrize("f", [np.add, np.sin, np.maximum, np.negative, np.equal])
def test_numpy_functions_on_python_scalars_give_numpy_scalars(f):
    args = (Rt(3),) * f.nin
    got = check(lambda b, *xs: lookup_function(f)(b, *xs), f, *args)
    assert isinstance(got, np.generic)
    check(lambda b, *xs: lookup_function(f)(b, *xs), f, *(Rt(True),) * f.nin)


def test_where(rng):
    for dc in DTYPES:
        for da in DTYPES:
            c = sample(rng, (3, 1), dc)
            a = sample(rng, (4,), da)
            check(fn("where"), np.where, c, a, 0.5)
            check(fn("where"), np.where, c, 2, a)
    check(fn("where"), np.where, np.bool_(True), np.float32(1), 2.0)
    check(fn("where"), np.where, np.ones(2, bool), np.ones(3), 1)
    with pytest.raises(Unsupported):
        run(fn("where"), np.ones(3, bool))


def test_clip(rng):
    for dtype in DTYPES[:4]:
        for x in views(sample(rng, (3, 4), dtype)):
            check(fn("clip"), np.clip, x, -1, 1)
            check(fn("clip"), np.clip, x, 0.5, None)
            check(fn("clip"), np.clip, x, None, np.float32(1))
            check(fn("clip"), np.clip, x, sample(rng, (4,), np.float64), 2)
    check(fn("clip"), np.clip, np.ones(2, np.int8), 0, 300)
    check(fn("clip"), np.clip, np.float64(3), 0, 2)
    check(lambda b, x: lookup_function(np.clip)(b, x, min=0, max=1), lambda x: np.clip(x, min=0, max=1),
          np.linspace(-2, 2, 5))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES + [np.int8, np.uint8, np.float16, np.complex64])
def test_astype(src, dst, rng):
    from frametrace.ir.numpy_api import lookup_method
    for x in views(sample(rng, (3, 2), src)):
        check(lambda b, x: lookup_method("astype")(b, x, dst), lambda x: x.astype(dst), x)
    check(lambda b, x: lookup_method("astype")(b, x, dst), lambda x: x.astype(dst), np.dtype(src).type(1))
    check(lambda b, x: lookup_function(dst)(b, x), dst, sample(rng, (3,), src))
    check(lambda b, x: lookup_function(dst)(b, x), dst, np.array(np.dtype(src).type(1)))
    check(lambda b, x: lookup_function(dst)(b, x), dst, Rt(True))


def test_astype_copy_false_and_casting():
    from frametrace.ir.numpy_api import lookup_method
    b_x = run(lambda b, x: (x, lookup_method("astype")(b, x, np.float64, copy=False)), np.ones(2))
    assert b_x[0][0] is b_x[0][1]
    check(lambda b, x: lookup_method("astype")(b, x, np.int32, casting="safe"),
          lambda x: x.astype(np.int32, casting="safe"), np.ones(2))


def test_power_operator_shortcuts_match_ndarray_pow(rng):
    check(lambda b, x: binary_op(b, "**", x, 2), lambda x: x ** 2, np.ones(3, bool))
    z = (rng.standard_normal(50) + 1j * rng.standard_normal(50)).astype(np.complex128)
    check(lambda b, x: binary_op(b, "**", x, 0.5), lambda x: x ** 0.5, z)
    check(lambda b, x: binary_op(b, "**", x, 2), lambda x: x ** 2, np.True_)
