"""Each opcode handler, exercised by a small function compiled next to its eager run.

`graphs=1` asserts the frame was traced (not run eagerly after an Unsupported).
"""
import math

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same, check

X = np.arange(12.0).reshape(3, 4)
W = np.linspace(-1, 1, 4)


def test_load_store_fast_and_binary_ops():
    def f(x, y):
        a = x + y
        b = a * 2 - y / 3
        c = b // 2 % 5
        d = c ** 2 @ np.ones(4)
        a += 1
        return a, b, c, d
    check(f, X.copy(), W, graphs=1)


def test_compare_and_bool_ops():
    def f(x):
        return (x > 3) & (x <= 9) | ~(x == 5), (x != 2) ^ (x < 1)
    check(f, X, graphs=1)


def test_unary_ops():
    def f(x):
        return -x, +x, abs(-x), ~(x > 2)
    check(f, X, graphs=1)


def test_load_global_and_attr_and_method():
    def f(x):
        return np.sum(x, axis=0) + x.sum(axis=1).mean() + x.T.shape[0] + x.ndim + x.size
    check(f, X, graphs=1)


def test_tuple_list_dict_building_and_unpacking():
    def f(x):
        n, m = x.shape
        first, *rest = [n, m, 3]
        d = {"a": x, "b": n}
        t = (d["a"] * d["b"], rest)
        lst = [v for v in (1, 2, 3)]
        return t[0] + first + sum(lst), {**d, "c": m}["c"]
    check(f, X, graphs=1)


def test_for_loops_over_range_tuples_lists_enumerate_zip():
    def f(x):
        acc = x * 0
        for i in range(3):
            acc = acc + i
        for i, c in enumerate((1.0, 2.0)):
            acc = acc * c + i
        for a, b in zip([1, 2], [3, 4]):
            acc = acc - a * b
        return acc
    check(f, X, graphs=1)


def test_while_loop_on_a_size():
    def f(x):
        n = x.shape[1]
        steps = 0
        while n > 1:
            n = n // 2
            steps += 1
        return x * steps
    check(f, X, graphs=1, dynamic=True)


def test_if_on_sizes_and_constants():
    def f(x, flag=True):
        if x.shape[0] > 2 and flag:
            y = x * 2
        elif x.ndim == 1:
            y = x
        else:
            y = x - 1
        return y if x.shape[1] == 4 else -y
    check(f, X, graphs=1)


def test_keyword_arguments_and_defaults_and_inlined_calls():
    def helper(a, b=2.0, *, scale=1.0, **extra):
        return (a * b + extra.get("shift", 0.0)) * scale

    def f(x):
        return helper(x, scale=3.0) + helper(x, 1.0, shift=5.0)
    check(f, X, graphs=1)


def test_star_args_call_and_lambda_and_closure():
    k = 3.0

    def g(*args):
        return sum(args)

    def f(x):
        add = lambda a, b=1: a + b + k  # noqa: E731
        parts = (x, x * 2)
        return g(*parts) + add(x)
    check(f, X, graphs=1)


def test_nested_function_with_cell():
    def f(x):
        scale = x.shape[0]

        def inner(y):
            return y * scale
        return inner(x) + inner(1.0)
    check(f, X, graphs=1)


def test_builtins_len_min_max_abs_isinstance_int_float():
    def f(x):
        n = len(x)
        m = max(x.shape[0], 2, x.shape[1])
        lo = min(x.shape)
        flag = isinstance(x, np.ndarray) and not isinstance(n, float)
        return x * n + m - lo + abs(-3) + int(2.7) + float(n) + flag
    check(f, X, graphs=1)


def test_math_module_on_sizes():
    def f(x):
        n = x.shape[0]
        return x * math.prod(x.shape) + math.sqrt(16) + math.ceil(n / 2)
    check(f, X, graphs=1)


def test_subscripts_slices_and_store_subscr():
    def f(x):
        y = x.copy()
        y[0] = -1.0
        y[1:, ::2] = 7.0
        return y[::-1, 1], x[-1], x[1:3, None, :2], x[..., 0]
    check(f, X, graphs=1)


def test_in_place_on_argument_visible():
    def f(x):
        x *= 2
        x[0, 0] = 9.0
        return x.sum()
    a = X.copy()
    check(f, a, graphs=1)


def test_contains_and_is():
    def f(x, y=None):
        if y is None and 2 in (1, 2):
            return x * 2
        return x
    check(f, X, graphs=1)


def test_fstring_and_string_constants():
    def f(x, mode="double"):
        label = f"{mode}-{x.ndim}"
        if label == "double-2":
            return x * 2
        return x
    check(f, X, graphs=1)


def test_unsupported_opcode_falls_back_to_eager_with_same_result():
    def f(x):
        try:
            return x + 1
        except ValueError:
            return x
    f2 = check(f, X)
    assert ft.stats().unique_graphs == 0
    assert_same(f2(X), f(X))


def test_float_argument_is_a_graph_input_not_a_constant():
    def f(x, alpha):
        return x * alpha + alpha
    c = ft.compile(f)
    for a in (0.5, 1.5, -2.25, 3.0):
        assert_same(c(X, a), f(X, a))
    assert ft.stats().unique_graphs == 1


def test_python_scalar_outputs_keep_python_types():
    def f(x, alpha):
        return x.shape[0] * 2, alpha * 2.0, x.sum(), x.shape
    check(f, X, 1.5)


def test_returning_inputs_keeps_identity():
    def f(x, y):
        return x, y, x[1:]
    c = ft.compile(f)
    out = c(X, W)
    assert out[0] is X and out[1] is W and np.shares_memory(out[2], X)


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_recompile_counts(dynamic):
    def f(x):
        return x * x.shape[0]
    c = ft.compile(f, dynamic=dynamic)
    for n in (5, 6, 7):
        x = np.arange(float(n))
        assert_same(c(x), f(x))
    expected = {None: 2, True: 1, False: 3}[dynamic]
    assert ft.stats().unique_graphs == expected
