"""Build graphs for backend tests by running NumPy-style code on traced stand-ins.

    g, run_ref, run_llvm = graph_of(lambda x, y: np.exp(x) + y, A((None, 8), "f8"), A((None, 8), "f8"))

`A(shape, dtype)`: an array input; `None` entries are symbolic sizes (one symbol per
distinct name "n", "m", ... given as strings; None means a fresh symbol), ints are static.
`S(pytype)`: a run-time Python scalar input. The stand-ins forward operators, ufuncs and
NumPy functions to `frametrace.ir.numpy_api`, the layer the tracer itself uses.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import sympy

from frametrace.backends.llvm import compile_graph
from frametrace.ir import numpy_api as api
from frametrace.ir.builder import GraphBuilder, Proxy
from frametrace.ir.interpret import interpret
from frametrace.shapes import ShapeEnv


class A:
    def __init__(self, shape, dtype="f8"):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


class S:
    def __init__(self, pytype):
        self.pytype = pytype


def _unwrap(x):
    if isinstance(x, T):
        return x.p
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    return x


def _wrap(b, x):
    if isinstance(x, Proxy):
        return T(b, x)
    if isinstance(x, tuple):
        return tuple(_wrap(b, v) for v in x)
    return x


class T:
    """A traced value: NumPy syntax in, graph nodes out."""
    __array_priority__ = 1000

    def __init__(self, b, p):
        self.b, self.p = b, p

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        assert method == "__call__", method
        return _wrap(self.b, api.lookup_function(ufunc)(self.b, *_unwrap(inputs), **_unwrap(kw)))

    def __array_function__(self, func, types, args, kwargs):
        impl = api.lookup_function(func)
        if impl is None:
            raise NotImplementedError(func)
        return _wrap(self.b, impl(self.b, *_unwrap(args), **_unwrap(kwargs)))

    def __getattr__(self, name):
        if name in ("shape", "T", "ndim", "dtype", "size", "mT"):
            return _wrap(self.b, api.array_attribute(self.b, self.p, name))
        impl = api.lookup_method(name)
        if impl is None:
            raise AttributeError(name)
        return lambda *a, **k: _wrap(self.b, impl(self.b, self.p, *_unwrap(a), **_unwrap(k)))

    def __getitem__(self, idx):
        return _wrap(self.b, api.getitem(self.b, self.p, _unwrap(idx if isinstance(idx, tuple) else (idx,))))

    def __setitem__(self, idx, value):
        api.setitem(self.b, self.p, _unwrap(idx if isinstance(idx, tuple) else (idx,)), _unwrap(value))


def _binop(op, swap=False):
    def f(self, other):
        a, b = (other, self) if swap else (self, other)
        fn = api.compare_op if op in ("<", "<=", "==", "!=", ">", ">=") else api.binary_op
        return _wrap(self.b, fn(self.b, op, _unwrap(a), _unwrap(b)))
    return f


def _inplace(op):
    def f(self, other):
        r = api.inplace_op(self.b, op, self.p, _unwrap(other))
        return _wrap(self.b, r) if isinstance(r, Proxy) else self
    return f


for _op, _name in [("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "truediv"), ("//", "floordiv"),
                   ("%", "mod"), ("**", "pow"), ("@", "matmul"), ("&", "and"), ("|", "or"),
                   ("^", "xor"), ("<<", "lshift"), (">>", "rshift")]:
    setattr(T, f"__{_name}__", _binop(_op))
    setattr(T, f"__r{_name}__", _binop(_op, True))
    setattr(T, f"__i{_name}__", _inplace(_op))
for _op, _name in [("<", "lt"), ("<=", "le"), ("==", "eq"), ("!=", "ne"), (">", "gt"), (">=", "ge")]:
    setattr(T, f"__{_name}__", _binop(_op))
T.__neg__ = lambda self: _wrap(self.b, api.unary_op(self.b, "-", self.p))
T.__invert__ = lambda self: _wrap(self.b, api.unary_op(self.b, "~", self.p))
T.__abs__ = lambda self: _wrap(self.b, api.unary_op(self.b, "abs", self.p))
T.__hash__ = object.__hash__


class Traced:
    """A graph built from `fn` and the specs; `ref(*values)` / `llvm(*values)` run it."""

    def __init__(self, fn, *specs):
        self.env = ShapeEnv()
        b = GraphBuilder()
        self.symbols, self.sources, args = {}, [], []
        for i, spec in enumerate(specs):
            src = f"L['a{i}']"
            if isinstance(spec, A):
                shape = []
                for d, s in enumerate(spec.shape):
                    if isinstance(s, int):
                        shape.append(s)
                        continue
                    name = s or f"{src}.shape[{d}]"
                    if name not in self.symbols:
                        sym = self.env.create_symbol(7 + 4 * len(self.symbols), name, duck=False)
                        self.symbols[name] = (sym, sym.expr)
                    shape.append(self.symbols[name][0])
                args.append(T(b, b.input_array(src, tuple(shape), spec.dtype)))
            elif isinstance(spec, S):
                args.append(T(b, b.input_scalar(src, spec.pytype)))
            elif isinstance(spec, np.generic):         # a NumPy scalar input (its dtype)
                args.append(T(b, b.input_array(src, (), spec.dtype, scalar=True)))
            else:
                args.append(spec)
                continue
            self.sources.append(src)
        out = fn(*args)
        outs = out if isinstance(out, tuple) else (out,)
        b.graph.outputs = tuple(o.p.node for o in outs if isinstance(o, T))
        b.graph.symbols = {expr: name for name, (_, expr) in self.symbols.items()}
        self.graph = b.graph
        self.run = compile_graph(self.graph)

    def _sizes(self, values):
        """Symbol values read off the concrete arguments."""
        env = {}
        for node, v in zip(self.graph.inputs, values):
            for d, e in zip(node.shape, np.shape(v)):
                if isinstance(d, sympy.Symbol):
                    env[d] = e
        return [env[s] for s in self.graph.symbols]

    def ref(self, *values):
        binding = dict(zip(self.graph.symbols, self._sizes(values)))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return interpret(self.graph, dict(zip(self.sources, values)), binding)

    def llvm(self, *values):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.run(list(values), self._sizes(values))

    def check(self, *values, rtol=None):
        """Run both on copies; compare results and the inputs afterwards (mutations)."""
        a, b = copy.deepcopy(values), copy.deepcopy(values)
        try:
            want = self.ref(*a)
        except Exception as exc:               # NumPy refuses: so must the kernels
            try:
                self.llvm(*b)
            except type(exc):
                return None
            raise AssertionError(f"NumPy raised {exc!r}, the LLVM backend did not") from None
        got = self.llvm(*b)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol)
        for x, y in zip(a, b):
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(y, x)
        return got


def assert_same(got, want, rtol=None):
    """Same type (array / NumPy scalar / Python scalar), dtype, shape and values."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
        if want.dtype.kind == "f":
            tol = rtol or (2e-5 if want.dtype == np.float32 else 1e-11)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)
    else:
        assert got == want or (got != got and want != want), (got, want)


def kernel_count(traced: Traced) -> int:
    return len(traced.run.kernels)
