"""Guard soundness: after a compile, change each thing the trace may have relied on; the
compiled function must notice (recompile or fall back) and return the eager result.

Every scenario is a sequence of steps; each step may change the environment (globals,
closure cells, attributes, ...) and then calls the function eagerly (on copies of the
arguments) and compiled, comparing results and argument mutations. Run on every backend.
"""
from __future__ import annotations

import copy
import types

import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same


def _backends():
    out = ["numpy"]
    try:
        from frametrace.backends import get_backend
        get_backend("llvm")
        out.append("llvm")
    except Exception:   # noqa: BLE001
        pass
    return out


BACKENDS = _backends()


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def clone(v, memo=None):
    """Deep copy that keeps what deepcopy loses: the read-only flag and the strides
    (a read-only or broadcast view stays read-only; aliasing between arguments is kept)."""
    memo = {} if memo is None else memo
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, np.ndarray):
        flip = tuple(slice(None, None, -1) if st < 0 else slice(None) for st in v.strides)
        out = np.array(v[flip], order="K", copy=True)[flip]    # same order, same signs
        if not v.flags.writeable:
            out.setflags(write=False)
        memo[id(v)] = out
        return out
    if isinstance(v, (list, tuple)):
        out = type(v)(clone(x, memo) for x in v)
    elif isinstance(v, dict):
        out = {k: clone(x, memo) for k, x in v.items()}
    else:
        return copy.deepcopy(v, memo)
    memo[id(v)] = out
    return out


def run(fn, *args, compiled):
    """Eager on copies, compiled on the originals; compare results and mutations.
    Exceptions: same type. Returns the compiled result."""
    eargs = clone(args)
    try:
        want, wexc = fn(*eargs), None
    except Exception as exc:    # noqa: BLE001
        want, wexc = None, exc
    try:
        got, gexc = compiled(*args), None
    except Exception as exc:    # noqa: BLE001
        got, gexc = None, exc
    if wexc is not None or gexc is not None:
        assert type(gexc) is type(wexc), (wexc, gexc)
    else:
        assert_same(got, want)
    for a, b in zip(args, eargs):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
    return got


def compiled_count():
    s = ft.stats()
    return s.frames_compiled + s.eager_fallbacks


# ---- globals ---------------------------------------------------------------------------------

SCALE = 2
WEIGHTS = np.arange(4.0)
FLAG = True


def helper(x):
    return x + 1


def uses_global_number(x):
    return x * SCALE


def uses_global_array(x):
    return x + WEIGHTS


def uses_global_flag(x):
    if FLAG:
        return x + 1
    return x - 1


def uses_global_function(x):
    return helper(x) * 2


def uses_global_module(x):
    return npmod.sin(x)


npmod = np


def test_global_number(backend):
    global SCALE
    c = ft.compile(uses_global_number, backend=backend)
    x = np.arange(4.0)
    try:
        SCALE = 2
        run(uses_global_number, x, compiled=c)
        n = compiled_count()
        SCALE = 3
        run(uses_global_number, x, compiled=c)
        assert compiled_count() > n, "a constant-folded global changed without a recompile"
        SCALE = 2.5                                   # int -> float changes the result dtype
        run(uses_global_number, np.arange(4), compiled=c)
        SCALE = 2
        run(uses_global_number, np.arange(4), compiled=c)
    finally:
        SCALE = 2


def test_global_array_rebound_mutated_reshaped(backend):
    global WEIGHTS
    c = ft.compile(uses_global_array, backend=backend)
    x = np.ones(4)
    try:
        run(uses_global_array, x, compiled=c)
        WEIGHTS = np.full(4, 10.0)                        # rebound, same shape and dtype
        run(uses_global_array, x, compiled=c)
        WEIGHTS[:] = -7.0                                 # mutated in place: data is not a constant
        run(uses_global_array, x, compiled=c)
        WEIGHTS = np.arange(4, dtype=np.int32)            # new dtype
        run(uses_global_array, x, compiled=c)
        WEIGHTS = np.arange(1.0)                          # new shape (broadcasts)
        run(uses_global_array, x, compiled=c)
        WEIGHTS = np.arange(3.0)                          # does not broadcast: NumPy's error
        run(uses_global_array, x, compiled=c)
        WEIGHTS = np.arange(8.0)[::2]                     # non-contiguous
        run(uses_global_array, x, compiled=c)
    finally:
        WEIGHTS = np.arange(4.0)


def test_global_flag(backend):
    global FLAG
    c = ft.compile(uses_global_flag, backend=backend)
    x = np.arange(3.0)
    try:
        FLAG = True
        run(uses_global_flag, x, compiled=c)
        FLAG = False
        run(uses_global_flag, x, compiled=c)
        FLAG = 0                                         # falsy of another type
        run(uses_global_flag, x, compiled=c)
    finally:
        FLAG = True


def test_global_function(backend):
    global helper
    orig = helper
    c = ft.compile(uses_global_function, backend=backend)
    x = np.arange(3.0)
    try:
        run(uses_global_function, x, compiled=c)
        helper = lambda x: x - 5        # noqa: E731
        run(uses_global_function, x, compiled=c)
        helper = np.negative             # a NumPy ufunc
        run(uses_global_function, x, compiled=c)
    finally:
        helper = orig


def test_global_module(backend):
    global npmod
    c = ft.compile(uses_global_module, backend=backend)
    x = np.arange(3.0)
    try:
        run(uses_global_module, x, compiled=c)
        npmod = types.SimpleNamespace(sin=np.cos)
        run(uses_global_module, x, compiled=c)
        npmod = types.ModuleType("fake_np")
        npmod.sin = np.tanh
        run(uses_global_module, x, compiled=c)
    finally:
        npmod = np


def test_global_deleted_raises_name_error(backend):
    global SCALE
    c = ft.compile(uses_global_number, backend=backend)
    try:
        run(uses_global_number, np.arange(3.0), compiled=c)
        del SCALE
        run(uses_global_number, np.arange(3.0), compiled=c)   # NameError both ways
    finally:
        SCALE = 2    # noqa: F841  (restores the module global)


# ---- closures ------------------------------------------------------------------------------

def test_closure_cells(backend):
    k = 2
    w = np.arange(3.0)

    def f(x):
        return x * k + w

    c = ft.compile(f, backend=backend)
    x = np.ones(3)
    run(f, x, compiled=c)
    k = 5
    run(f, x, compiled=c)
    k = 1.5
    run(f, x, compiled=c)
    w = np.full(3, 100.0)
    run(f, x, compiled=c)
    w[:] = 3.0
    run(f, x, compiled=c)
    w = np.arange(3, dtype=np.int32)
    run(f, x, compiled=c)


def test_closures_of_the_same_code_with_different_cells(backend):
    def make(k):
        def inner(x):
            return x * k
        return inner

    def f(x, g):
        return g(x) + 1

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    run(f, x, make(2), compiled=c)
    run(f, x, make(3), compiled=c)        # same code object, other cell contents
    run(f, x, make(2.5), compiled=c)
    run(f, x, lambda x: x - 1, compiled=c)


# ---- attributes of an object argument --------------------------------------------------------

class Model:
    def __init__(self, scale, w):
        self.scale = scale
        self.w = w


def uses_attributes(m, x):
    return x * m.scale + m.w


def test_attributes_of_an_object_argument(backend):
    c = ft.compile(uses_attributes, backend=backend)
    m = Model(2, np.arange(3.0))
    x = np.ones(3)
    run(uses_attributes, m, x, compiled=c)
    m.scale = 3
    run(uses_attributes, m, x, compiled=c)
    m.w = np.full(3, 7.0)
    run(uses_attributes, m, x, compiled=c)
    m.w[:] = -1.0
    run(uses_attributes, m, x, compiled=c)
    m.w = np.arange(3, dtype=np.int8)
    run(uses_attributes, m, x, compiled=c)
    m.w = np.arange(5.0)                          # broadcast error, as NumPy
    run(uses_attributes, m, x, compiled=c)
    run(uses_attributes, Model(0.5, np.zeros(3)), x, compiled=c)   # another instance
    del m.scale
    run(uses_attributes, m, x, compiled=c)        # AttributeError


def test_class_attribute_shadowed_by_instance(backend):
    class C:
        k = 2

    def f(o, x):
        return x * o.k

    c = ft.compile(f, backend=backend)
    o = C()
    x = np.arange(3.0)
    run(f, o, x, compiled=c)
    C.k = 4                                       # the class attribute changes
    run(f, o, x, compiled=c)
    o.k = 10                                      # an instance attribute shadows it
    run(f, o, x, compiled=c)


# ---- default arguments -------------------------------------------------------------------------

def test_default_arguments(backend):
    def f(x, k=2, opts={"add": 1}, w=np.arange(3.0)):    # noqa: B006, B008  (on purpose)
        return x * k + opts["add"] + w

    c = ft.compile(f, backend=backend)
    x = np.ones(3)
    run(f, x, compiled=c)
    f.__defaults__[1]["add"] = 10                 # mutable default mutated
    run(f, x, compiled=c)
    f.__defaults__[2][:] = 5.0                    # default array mutated in place
    run(f, x, compiled=c)
    c.__defaults__ = (3, {"add": 0}, np.zeros(3))  # defaults of the compiled callable replaced
    f.__defaults__ = c.__defaults__
    run(f, x, compiled=c)


# ---- dict and list contents passed in --------------------------------------------------------

def test_dict_and_list_contents(backend):
    def f(x, cfg, ks):
        y = x * cfg["scale"]
        for k in ks:
            y = y + k
        return y

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    cfg, ks = {"scale": 2}, [1, 2]
    run(f, x, cfg, ks, compiled=c)
    cfg["scale"] = 3                        # same dict object, new value
    run(f, x, cfg, ks, compiled=c)
    ks.append(10)                           # same list, new length
    run(f, x, cfg, ks, compiled=c)
    ks[0] = -100                            # same list, new element
    run(f, x, cfg, ks, compiled=c)
    cfg["scale"] = 0.5
    run(f, x, cfg, ks, compiled=c)
    run(f, x, {"scale": 2, "other": 1}, [1, 2], compiled=c)
    run(f, x, {}, [1, 2], compiled=c)      # KeyError as eager


def test_list_element_int_then_array_explainer(backend):
    # trace/compile.py failing_guards (the slow recompile-reason explainer) re-evaluates
    # `L['ks'][0] == 1` alone with an array element: an array (ambiguous truth value) or an
    # exception counts as a failing guard, never escapes to the caller.
    def f(x, ks):
        return x + ks[0]

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    run(f, x, [1], compiled=c)
    run(f, x, [np.arange(3.0)], compiled=c)


def test_list_element_array_mutated_in_place(backend):
    def f(x, ks):
        return x + ks[0] * 2

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    ks = [np.arange(3.0)]
    run(f, x, ks, compiled=c)
    ks[0][:] = 9.0
    run(f, x, ks, compiled=c)
    ks[0] = np.ones(3, np.int32)
    run(f, x, ks, compiled=c)


def test_tuple_of_arrays(backend):
    def f(xs):
        return xs[0] + xs[-1]

    c = ft.compile(f, backend=backend)
    run(f, (np.arange(3.0), np.ones(3)), compiled=c)
    run(f, (np.arange(3.0), np.ones(3), np.full(3, 5.0)), compiled=c)
    run(f, [np.arange(3.0), np.ones(3)], compiled=c)


# ---- arrays: dtype, ndim, strides, read-only, aliasing ------------------------------------------

def add_scaled(x, y):
    return x + 2 * y


LAYOUTS = {
    "C": lambda a: a.copy(),
    "F": lambda a: np.asfortranarray(a),
    "T": lambda a: np.ascontiguousarray(a.T).T,
    "strided": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    "neg": lambda a: np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1],
    "bcast0": lambda a: np.broadcast_to(a[:1], a.shape),
}


def test_dtype_and_ndim_changes(backend):
    c = ft.compile(add_scaled, backend=backend)
    for x, y in [(np.ones((2, 3)), np.ones(3)),
                 (np.ones((2, 3), np.float32), np.ones(3, np.float32)),
                 (np.ones((2, 3), np.int32), np.ones(3, np.int32)),
                 (np.ones((2, 3), bool), np.ones(3, bool)),
                 (np.ones((2, 3), np.int64), np.ones(3, np.int8)),
                 (np.ones((2, 2, 3)), np.ones(3)),
                 (np.ones(3), np.ones(3)),
                 (np.ones(()), np.ones(3)),
                 (np.float64(1.0), np.ones(3)),
                 (np.ones((2, 3)), np.ones(3))]:
        run(add_scaled, x, y, compiled=c)


@pytest.mark.parametrize("first", ["C", "F", "neg"])
def test_strides_and_contiguity(backend, first):
    c = ft.compile(add_scaled, backend=backend)
    base = np.arange(12.0).reshape(3, 4)
    run(add_scaled, LAYOUTS[first](base), base[0].copy(), compiled=c)
    for make in LAYOUTS.values():
        run(add_scaled, make(base * 1.5), make(base)[1], compiled=c)
        run(add_scaled, make(base), make(base), compiled=c)


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_in_place_write_through_views_of_any_layout(backend, dynamic):
    def f(x, y):
        x[1:] += y[:-1]
        return x

    c = ft.compile(f, backend=backend, dynamic=dynamic)
    base = np.arange(20.0).reshape(4, 5)
    for name, make in LAYOUTS.items():
        if name == "bcast0":
            continue                  # read-only view: covered below
        run(f, make(base), make(base * 2), compiled=c)


def test_read_only_flag(backend):
    def f(x):
        x += 1
        return x

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    run(f, x, compiled=c)
    ro = np.arange(3.0)
    ro.setflags(write=False)
    run(f, ro, compiled=c)                      # ValueError as NumPy
    run(f, np.broadcast_to(np.arange(3.0), (2, 3))[0], compiled=c)
    run(f, np.arange(3.0), compiled=c)          # writeable again


def test_read_only_first(backend):
    def f(x):
        x[0] = 5
        return x.sum()

    c = ft.compile(f, backend=backend)
    ro = np.arange(3.0)
    ro.setflags(write=False)
    run(f, ro, compiled=c)
    run(f, np.arange(3.0), compiled=c)
    run(f, ro, compiled=c)


def test_read_only_arguments_that_are_only_read(backend):
    def f(x):
        return x * 2, x[::-1]

    c = ft.compile(f, backend=backend)
    ro = np.arange(3.0)
    ro.setflags(write=False)
    run(f, np.arange(3.0), compiled=c)
    got = run(f, ro, compiled=c)
    assert not got[1].flags.writeable           # a view of a read-only array is read-only
    assert np.shares_memory(got[1], ro)


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_aliasing_arguments(backend, dynamic):
    """x and y the same array (or overlapping views): in-place updates must see it."""
    def f(x, y):
        x += 1
        return y * 2

    c = ft.compile(f, backend=backend, dynamic=dynamic)
    a = np.arange(4.0)
    run(f, np.arange(4.0), np.arange(4.0), compiled=c)
    a = np.arange(4.0)
    b = a.copy()
    assert_same(c(a, a), f(b, b))
    np.testing.assert_array_equal(a, b)
    a = np.arange(5.0)
    b = a.copy()
    assert_same(c(a[1:], a[:-1]), f(b[1:], b[:-1]))   # overlapping views
    np.testing.assert_array_equal(a, b)
    a = np.arange(4.0)
    b = a.copy()
    assert_same(c(a, a[::-1]), f(b, b[::-1]))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dynamic", [None, True, False])
def test_overlapping_in_place_copy(backend, dynamic):
    def f(x, y):
        x[...] = y[::-1]
        return x

    c = ft.compile(f, backend=backend, dynamic=dynamic)
    run(f, np.arange(5.0), np.ones(5), compiled=c)
    a = np.arange(5.0)
    b = a.copy()
    assert_same(c(a, a), f(b, b))                # NumPy buffers the overlapping copy
    np.testing.assert_array_equal(a, b)


# ---- Python scalars ------------------------------------------------------------------------------

def test_int_arguments(backend):
    def f(x, n):
        return x[:n] * n

    c = ft.compile(f, backend=backend)
    x = np.arange(10.0)
    for n in (3, 4, 5, 0, 1, -2, 20, 4):
        run(f, x, n, compiled=c)


def test_float_arguments_do_not_recompile(backend):
    def f(x, a):
        return x * a + a

    c = ft.compile(f, backend=backend)
    x = np.arange(4.0)
    run(f, x, 0.5, compiled=c)
    n = compiled_count()
    for a in (1.5, -2.0, 0.0, 1.0, float("nan"), float("inf"), 1e300):
        run(f, x, a, compiled=c)
    assert compiled_count() == n, ft.stats()
    # a type change is a different program: int32 * 2.0 is float64, int32 * 2 is int32
    xi = np.arange(4, dtype=np.int32)
    run(f, xi, 2.0, compiled=c)
    run(f, xi, 2, compiled=c)
    run(f, xi, True, compiled=c)
    run(f, xi, np.float32(2.0), compiled=c)
    run(f, xi, np.int8(2), compiled=c)
    run(f, xi, 2.5, compiled=c)


def _xfail_llvm(reason):
    return [pytest.param(b, marks=pytest.mark.xfail(strict=True, reason=reason))
            if b == "llvm" else b for b in BACKENDS]


@pytest.mark.parametrize("be", _xfail_llvm("llvm: dynamic int operand out of the array "
                                            "dtype's range wraps instead of OverflowError"))
def test_dynamic_int_argument_out_of_dtype_range_raises(be):
    # NEP 50: int32_array * 2**40 raises OverflowError. Once the int argument is dynamic
    # (automatic dynamic after 2, 3), the llvm kernels take it as a run-time value and
    # truncate it silently ([0 0 0]); the numpy backend raises like NumPy.
    def f(x, n):
        return x * n

    c = ft.compile(f, backend=be)
    xi = np.arange(3, dtype=np.int32)
    for n in (2, 3, 2**40, -2**40, 2**31, 4):
        run(f, xi, n, compiled=c)


def test_float_argument_used_in_control_flow(backend):
    def f(x, a):
        if a > 1.0:
            return x * a
        return x - a

    c = ft.compile(f, backend=backend)
    x = np.arange(3.0)
    for a in (2.0, 0.5, 3.0, 1.0, 0.25):
        run(f, x, a, compiled=c)


def test_bool_arguments(backend):
    def f(x, flag):
        if flag:
            return x + 1
        return x * flag

    c = ft.compile(f, backend=backend)
    x = np.arange(3)
    with ft.config.patch(cache_size_limit=32):
        for flag in (True, False, True, 1, 0, 2, np.True_):
            run(f, x, flag, compiled=c)
        xb = np.array([True, False])
        for flag in (True, 1, False, 0):           # bool * True is bool; bool * 1 is int64
            run(f, xb, flag, compiled=c)
        assert ft.stats().eager_fallbacks == 0


def optional_add(x, y=None):
    if y is None:
        return x * 2
    return x + y


def test_array_then_none(backend):
    c = ft.compile(optional_add, backend=backend)
    x = np.arange(3.0)
    run(optional_add, x, np.ones(3), compiled=c)
    run(optional_add, x, None, compiled=c)
    run(optional_add, x, compiled=c)
    run(optional_add, x, np.ones(1, np.int32), compiled=c)
    run(optional_add, x, 5.5, compiled=c)


def test_none_then_array(backend):
    # The guard on y=None, re-evaluated alone by the slow explainer (trace/compile.py
    # failing_guards) when an array comes in, gives an array: a failing guard, not an error.
    c = ft.compile(optional_add, backend=backend)
    x = np.arange(3.0)
    run(optional_add, x, compiled=c)
    run(optional_add, x, np.ones(3), compiled=c)


def test_int_argument_then_array(backend):
    # After a compile with y=5 (an int guarded by value), calling with an array makes the
    # slow explainer (trace/compile.py failing_guards, via convert_frame.guard_failures)
    # evaluate `array == 5`: a failing guard and a recompile, not a ValueError.
    def g(x, y):
        return x + y

    c = ft.compile(g, backend=backend)
    run(g, np.arange(3.0), 5, compiled=c)
    run(g, np.arange(3.0), np.ones(3), compiled=c)


def test_scalar_array_vs_numpy_scalar_vs_python_scalar(backend):
    def f(x, s):
        return x * s

    c = ft.compile(f, backend=backend)
    x = np.arange(3, dtype=np.float32)
    for s in (2.0, np.float64(2.0), np.array(2.0), np.float32(2.0), 2, np.int64(2),
              np.array([2.0])):
        run(f, x, s, compiled=c)


def test_size_specialisation_and_branch(backend):
    def f(x):
        if x.shape[0] == 4:
            return x * 10
        if x.shape[0] < 3:
            return x - 1
        return x + x.shape[0]

    c = ft.compile(f, backend=backend)
    for n in (4, 5, 6, 2, 4, 0, 1, 3, 7, 4):
        run(f, np.arange(float(n)), compiled=c)


def test_equal_sizes_duck_sizing(backend):
    def f(x, y):
        return x + y

    c = ft.compile(f, backend=backend)
    for n, m in ((3, 3), (4, 4), (5, 5), (5, 1), (1, 5), (5, 6), (6, 6), (0, 0), (0, 1)):
        run(f, np.arange(float(n)), np.arange(float(m)), compiled=c)
