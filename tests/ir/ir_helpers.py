"""Trace a small program with the NumPy API layer, run it with the reference interpreter or
the LLVM backend (BACKEND, set per test by conftest.py: every op test runs on both), and
compare with NumPy eager: result type (NumPy scalar / array / Python scalar), dtype, shape,
values; the traced Proxy's abstract value must agree with the eager result too."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import frametrace.backends.llvm as llvm_backend
from frametrace.errors import NumpyError
from frametrace.ir.builder import GraphBuilder, Proxy
from frametrace.ir.fake import FakeScalar
from frametrace.ir.interpret import interpret


BACKEND = "interpret"        # or "llvm": graphs are compiled with the LLVM backend (STRICT)


def execute(graph, inputs: dict) -> list:
    """The graph's outputs on `inputs` (source -> value) with the chosen backend."""
    if BACKEND == "interpret":
        return interpret(graph, inputs)
    strict, llvm_backend.STRICT = llvm_backend.STRICT, True     # a backend bug must surface here
    try:
        run = llvm_backend.compile_graph(graph)
    finally:
        llvm_backend.STRICT = strict
    return run([inputs[n.attr("source")] for n in graph.inputs], [])


class Rt:
    """Marks a Python scalar argument as a run-time input (a FakeScalar), not a constant."""

    def __init__(self, value):
        self.value = value


def _unwrap(a):
    return a.value if isinstance(a, Rt) else a


def trace(build, *args):
    """Build a graph: arrays / NumPy scalars / Rt(...) become inputs; returns (b, result, inputs)."""
    b = GraphBuilder()
    proxies, inputs, layouts = [], {}, {}
    b.input_layout = lambda node, shape: layouts.get(node)    # the inputs' own strides (the tracer guards them)
    for i, a in enumerate(args):
        src = f"L['a{i}']"
        if isinstance(a, np.ndarray):
            proxies.append(b.input_array(src, a.shape, a.dtype))
            layouts[proxies[-1].node] = tuple(a.strides)
        elif isinstance(a, np.generic):
            proxies.append(b.input_array(src, (), a.dtype, scalar=True))
        elif isinstance(a, Rt):
            proxies.append(b.input_scalar(src, type(a.value)))
        else:
            proxies.append(a)
            continue
        inputs[src] = _unwrap(a)
    return b, build(b, *proxies), inputs


def run(build, *args):
    """Trace then interpret; returns (result proxy or value, the interpreted value)."""
    b, result, inputs = trace(build, *args)
    if isinstance(result, Proxy):
        b.graph.outputs = (result.node,)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return result, execute(b.graph, inputs)[0]
    return result, result


def assert_values_equal(got, want):
    """Equal values; on the LLVM backend floats within its documented tolerance (reassociated
    sums, math functions within a few ulp), NaNs in the same places."""
    if BACKEND == "llvm" and np.asarray(want).dtype.kind in "fc":
        tol = 2e-5 if np.asarray(want).dtype in (np.float32, np.complex64) else 1e-11
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    else:
        np.testing.assert_array_equal(got, want)


def assert_same_value(got, want):
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), (type(got), type(want))
    elif isinstance(want, np.generic):
        assert isinstance(got, np.generic) and not isinstance(got, np.ndarray), (type(got), type(want))
    else:
        assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert got.shape == want.shape, (got.shape, want.shape)
        assert_values_equal(got, want)
    else:
        assert got == want or (got != got and want != want), (got, want)


def assert_meta_matches(proxy, want):
    """The abstract value of the traced result equals what NumPy produced."""
    if not isinstance(proxy, Proxy):
        return
    if isinstance(proxy.fake, FakeScalar):
        assert type(want) is proxy.fake.pytype, (proxy.fake, type(want))
        return
    assert tuple(int(d) for d in proxy.shape) == np.shape(want), (proxy.shape, np.shape(want))
    assert proxy.dtype == want.dtype, (proxy.dtype, want.dtype)
    assert proxy.scalar == isinstance(want, np.generic), (proxy.scalar, type(want))


def check(build, eager, *args, values=True):
    """Eager and traced agree: same value, or NumPy's exception type as NumpyError."""
    eager_args = [_unwrap(a) for a in args]       # not copied: keep strides as given
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = eager(*eager_args)
            err = None
        except Exception as exc:     # NumPy refuses: tracing must refuse the same way
            err = exc
    traced_args = list(args)
    if err is not None:
        with pytest.raises(NumpyError) as info:
            run(build, *traced_args)
        assert isinstance(info.value.error, type(err)), (info.value.error, err)
        return None
    proxy, got = run(build, *traced_args)
    assert_meta_matches(proxy, want)
    if values:
        assert_same_value(got, want)
    else:                                  # np.empty: only type, dtype and shape are defined
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    return got


def check_mutation(build, eager, *args):
    """For programs that write into their arguments: compare the arguments afterwards too."""
    eager_args = [copy.deepcopy(_unwrap(a)) for a in args]
    want = eager(*eager_args)
    b, result, inputs = trace(build, *[copy.deepcopy(a) for a in args])
    outs = [result.node] if isinstance(result, Proxy) else []
    b.graph.outputs = tuple(outs)
    got = execute(b.graph, inputs)
    if outs:
        assert_same_value(got[0], want)
    for i, a in enumerate(eager_args):
        if isinstance(a, np.ndarray):
            assert_values_equal(inputs[f"L['a{i}']"], a)
    return b


def views(base):
    """Contiguous, strided, reversed and transposed views of `base` (same values as NumPy sees)."""
    out = [base]
    if base.ndim >= 1 and base.shape[0] > 0:
        out.append(base[::-1])
    if base.ndim >= 2:
        out.append(np.ascontiguousarray(base.T).T)
        big = np.repeat(np.repeat(base, 2, axis=0), 2, axis=1)
        out.append(big[::2, ::-2][:, ::-1])
    return out
