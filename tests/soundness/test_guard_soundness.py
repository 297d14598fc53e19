"""Guard soundness: after a compile, change each thing the trace may have relied on; the
compiled function must notice (recompile or fall back) and return the eager result.

Every scenario is a sequence of steps; each step may change the environment (globals,
closure cells, attributes, ...) and then calls the function eagerly (on copies of the
arguments) and compiled, comparing results and argument mutations. Run on every backend.
This file: globals, closures, attributes, defaults, containers; test_guard_soundness_values.py:
array properties and Python scalars.
"""
from __future__ import annotations

import types

import numpy as np

import frametrace as ft
from soundness_helpers import compiled_count, run


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
