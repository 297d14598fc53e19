"""The op registry, the broadcasting rule, the reference interpreter and the API surface."""
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.errors import NumpyError, Unsupported
from frametrace.ir.builder import GraphBuilder
from frametrace.ir.graph import Graph
from frametrace.ir.interpret import interpret
from frametrace.ir.numpy_api import (array_attribute, binary_op, is_traceable_function,
                                     lookup_function, lookup_method, unary_op)
from frametrace.ir.ops.broadcast import broadcast_shapes
from frametrace.ir.registry import OPS, get_op
from ir_helpers import Rt, check, run

CATALOG = """negative positive absolute sign exp expm1 exp2 log log1p log2 log10 sqrt square reciprocal
sin cos tan tanh sinh cosh arcsin arccos arctan floor ceil trunc rint isnan isinf isfinite
logical_not invert add subtract multiply true_divide floor_divide remainder power maximum minimum
fmax fmin arctan2 hypot equal not_equal less less_equal greater greater_equal logical_and
logical_or logical_xor bitwise_and bitwise_or bitwise_xor left_shift right_shift where clip
astype sum prod max min mean var std any all argmax argmin cumsum cumprod getitem transpose
reshape expand_dims squeeze broadcast_to concatenate stack copy zeros ones empty full arange
matmul dot assign""".split()


def test_catalog_is_registered():
    missing = [n for n in CATALOG if n not in OPS]
    assert not missing
    for name in CATALOG:
        op = get_op(name)
        assert callable(op.meta) and callable(op.ref)
    assert get_op("assign").kind == "mutation" and get_op("getitem").kind == "view"
    assert get_op("cumsum").kind == "scan" and get_op("matmul").kind == "matmul"


dims = st.integers(0, 4)
shapes = st.lists(dims, max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(st.lists(shapes, min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_broadcast_rule_equals_numpy(shape_list, rnd):
    # make compatible shapes often: replace random dims by 1 or by the first shape's dims
    base = shape_list[0]
    fixed = []
    for s in shape_list:
        s = list(s)
        for i in range(len(s)):
            j = len(base) - len(s) + i
            r = rnd.random()
            if r < 0.3:
                s[i] = 1
            elif r < 0.8 and 0 <= j < len(base):
                s[i] = base[j]
        fixed.append(tuple(s))
    try:
        want = np.broadcast_shapes(*fixed)
    except ValueError:
        with pytest.raises(NumpyError) as info:
            broadcast_shapes(*fixed)
        assert isinstance(info.value.error, ValueError)
        return
    assert broadcast_shapes(*fixed) == want


def test_interpret_binds_inputs_symbols_and_floats():
    n = sympy.Symbol("s0", integer=True, positive=True)
    g = Graph()
    x = g.add_input(source="L['x']", kind="array", shape=(n,), dtype=np.float32)
    f = g.add_input(source="L['f']", kind="scalar", dtype=np.float64, scalar=True)
    from frametrace.ir.graph import Node
    a = g.add(Node("multiply", (x, n), (), (n,), np.dtype(np.float32)))
    c = g.add(Node("multiply", (a, f), (), (n,), np.dtype(np.float32)))
    d = g.add(Node("multiply", (c, sympy.Float(1.0) * n / 2), (), (n,), np.dtype(np.float32)))
    g.outputs = (d,)
    g.symbols = {n: "L['x'].shape[0]"}
    (out,) = interpret(g, {"L['x']": np.ones(4, np.float32), "L['f']": 0.5}, {n: 4})
    np.testing.assert_array_equal(out, np.full(4, 4.0, np.float32))
    assert out.dtype == np.float32
    with pytest.raises(KeyError):
        interpret(g, {"L['x']": np.ones(4, np.float32), "L['f']": 0.5}, {})


def test_printed_graph_is_stable():
    b = GraphBuilder()
    x = b.input_array("L['x']", (3, 4), np.float32)
    y = binary_op(b, "*", x, 2.0)
    s = lookup_method("sum")(b, y, axis=-1)
    b.graph.outputs = (s.node,)
    text = str(b.graph)
    lines = text.splitlines()
    assert lines[0] == "graph(%L_x: f32[3, 4]):"
    assert lines[1].endswith("= multiply(%L_x, 2.0)  : f32[3, 4]")
    assert lines[2].endswith("= sum(" + lines[1].split(" = ")[0].strip()
                             + ", axis=(1,), dtype=None, keepdims=False)  : f32[3]")


def test_lookup_tables():
    for fn in (np.sin, np.sum, np.add, np.where, np.zeros, np.zeros_like, np.concatenate, np.float32,
               np.maximum, np.abs, np.absolute, np.divide, np.mod, np.matmul, np.dot, np.stack,
               np.reshape, np.transpose, np.swapaxes, np.expand_dims, np.squeeze, np.broadcast_to,
               np.mean, np.var, np.std, np.cumsum, np.argmax, np.arange, np.clip, np.full):
        assert is_traceable_function(fn), fn
    for fn in (np.nonzero, np.unique, np.argwhere, np.flatnonzero):     # data-dependent sizes
        assert is_traceable_function(fn), fn
    for fn in (np.linalg.inv, np.sort, np.split, np.triu, np.add.at, np.maximum.accumulate):
        assert is_traceable_function(fn), fn
    for fn in (np.random.rand, print, np.linalg.eig, [].append):
        assert lookup_function(fn) is None
    for name in ("sum", "mean", "max", "min", "prod", "var", "std", "any", "all", "argmax",
                 "argmin", "cumsum", "reshape", "transpose", "swapaxes", "astype", "copy", "clip",
                 "squeeze", "ravel", "flatten", "dot"):
        assert lookup_method(name) is not None, name
    for name in ("nonzero", "item", "tolist", "round"):     # item/tolist: Python scalars (python_scalars.py)
        assert lookup_method(name) is not None, name
    for name in ("tobytes", "resize"):
        assert lookup_method(name) is None


def test_non_proxy_operands_are_plain_python():
    b = GraphBuilder()
    assert binary_op(b, "*", 3, 4) == 12 and unary_op(b, "-", 2) == -2
    assert b.graph.nodes == []


def test_unsupported_messages_name_function_and_argument():
    cases = [
        (lambda b, x: lookup_function(np.sum)(b, x, initial=1.0), "np.sum", "initial"),
        (lambda b, x: lookup_function(np.reshape)(b, x, (3,), order="F"), "np.reshape", "order"),
        (lambda b, x: lookup_function(np.concatenate)(b, [x, x], dtype=np.float32),
         "np.concatenate", "dtype"),
        (lambda b, x: lookup_function(np.add)(b, x, 1, casting="unsafe"), "np.add", "casting"),
        (lambda b, x: lookup_method("astype")(b, x, np.float32, order="F"), "ndarray.astype", "order"),
        (lambda b, x: binary_op(b, "+", x, [1, 2, 3]), "operator +", "list"),
        (lambda b, x: array_attribute(b, x, "flags"), ".flags", "flags"),
        (lambda b, x: lookup_function(np.zeros)(b, 3, dtype=object), "np.zeros", "object"),
    ]
    for build, fname, arg in cases:
        with pytest.raises(Unsupported) as info:
            run(build, np.ones(3))
        assert not isinstance(info.value, NumpyError)
        assert fname in str(info.value) and arg in str(info.value), str(info.value)


def test_bad_calls_raise_numpys_type_error():
    with pytest.raises(NumpyError) as info:
        run(lambda b, x: lookup_function(np.sum)(b, x, 0, None, None, False, 0, True, 7), np.ones(3))
    assert isinstance(info.value.error, TypeError)
    with pytest.raises(NumpyError) as info:
        run(lambda b, x: lookup_function(np.sum)(b, x, bogus=1), np.ones(3))
    assert isinstance(info.value.error, TypeError)


def test_round_and_misc_functions(rng):
    x = rng.standard_normal(6) * 3
    check(lambda b, x: lookup_function(np.round)(b, x), np.round, x)
    check(lambda b, x: lookup_function(np.round)(b, x), np.round, np.arange(3))
    check(lambda b, x: lookup_method("round")(b, x), lambda x: x.round(), np.float32(2.5))
    check(lambda b, x: lookup_function(np.float32)(b, x), np.float32, Rt(2.5))
    check(lambda b, x, y: lookup_method("dot")(b, x, y), lambda x, y: x.dot(y), x, x)


ZERO_D_INPUTS = [np.array(3), np.array(2.5), np.float64(2.5), np.int32(3), np.array(True), np.True_,
                 Rt(2.5), Rt(3), Rt(True)]
ZERO_D_FNS = [np.round, np.copy, np.asarray, np.array, np.ravel, np.squeeze, np.transpose, np.sum,
              np.cumsum, np.argmax, np.sin, np.negative, np.abs, np.float32, np.int8, np.zeros_like,
              np.mean, np.any, np.ndim, np.shape, np.size]


@pytest.mark.parametrize("fn", ZERO_D_FNS, ids=lambda f: f.__name__)
def test_zero_d_arrays_numpy_scalars_and_python_scalars(fn):
    """Where NumPy returns a NumPy scalar vs a 0-d array for 0-d and scalar inputs."""
    for x in ZERO_D_INPUTS:
        check(lambda b, a: lookup_function(fn)(b, a), fn, x)
    check(lambda b, a: lookup_function(np.expand_dims)(b, a, 0), lambda a: np.expand_dims(a, 0), Rt(1.5))
    check(lambda b, a: lookup_function(np.full_like)(b, a, 1.5), lambda a: np.full_like(a, 1.5), Rt(2))
