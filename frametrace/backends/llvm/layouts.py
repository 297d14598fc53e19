"""Memory layout of the arrays the LLVM wrapper allocates: NumPy's, not always C order.

NumPy allocates ufunc, reduction, scan and copy results in "K" order (the operands' memory
order: an F-ordered input gives an F-ordered `x + 1`), so the strides of a returned array,
and whether a later reshape/ravel of it is a view, depend on the inputs' layouts. Kernels
take strides as arguments, so any layout works; this module decides which one, at run time:

    lay = Layouts(plan, steps)          # compile time: which allocations may not be C order
    L = lay(inputs, symbol_values)      # run time: None (all C order: the fast path), or
                                        # {node index: strides} from ir/numpy_api/layout.py
    v = alloc(shape, dtype, strides)    # np.empty with those (dense) strides

The fast path: every array input of 2+ dims is C-contiguous and no value between the inputs
and an allocation changes the axis order (a transpose, a NumPy fallback): then NumPy's K
order is C order. Otherwise NumPy's layout model (numpy_api/layout.py, the one the tracer
uses for ravel/reshape decisions) is evaluated on the actual input strides and sizes, cached
per (input strides, sizes). The native entry (native_entry.py) only serves the fast path.
"""
from __future__ import annotations

import numpy as np
import sympy

from ...ir.graph import Node
from ...ir.numpy_api import layout as np_layout
from ...lower.fusion import KernelStep

# views that keep a C-contiguous operand's axis order (K order of the result stays C)
_ORDER_KEEPING_VIEWS = ("getitem", "expand_dims", "squeeze", "broadcast_to", "reshape")
_COMPUTED = ("pw", "red", "scan")            # values the kernels compute (allocated here)
_CACHE_LIMIT = 64


class _ConcreteEnv:
    """The ShapeEnv interface SymInt uses, answering from concrete symbol values (no guards)."""
    replacements_version = 0

    def __init__(self, values: dict):
        self.values = values

    def simplify(self, e):
        return e.xreplace(self.values)

    def _num(self, e):
        e = sympy.sympify(e).xreplace(self.values)
        if not e.is_number and e not in (sympy.true, sympy.false):
            raise TypeError(f"size {e} is not known")      # an unbacked size: layout not known
        return e

    def size_hint(self, e, allow_none=False):
        return int(self._num(e))

    def guard_int(self, e, reason=""):
        return int(self._num(e))

    def guard_float(self, e, reason=""):
        return float(self._num(e))

    def evaluate_expr(self, e):
        return bool(self._num(e))


class _RuntimeBuilder:
    """What layout.strides_of asks of a builder: input strides and a ShapeEnv."""

    def __init__(self, inputs: dict, values: dict):
        self._inputs = inputs
        self.shape_env = _ConcreteEnv(values)

    def input_layout(self, node, shape):
        a = self._inputs.get(node)
        return None if a is None else tuple(a.strides)


class Layouts:
    """Run-time layouts of a graph's allocated values (see module doc)."""

    def __init__(self, plan, steps):
        g = plan.graph
        self.plan = plan
        self.nodes = []                          # allocated values that may not be C order
        for s in steps:
            if isinstance(s, KernelStep):
                self.nodes += [n for n in s.allocs if n.ndim >= 2]
                self.nodes += [n for n, _ in s.reuse if n.ndim >= 2]
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.array_inputs = [(i, n) for i, n in enumerate(g.inputs)
                             if n.attr("kind") != "scalar" and not (n.scalar and n.shape == ())]
        self.c_inputs = [i for i, n in self.array_inputs if n.ndim >= 2]
        self.symbols = list(g.symbols)
        seen: set = set()
        self.order_keeping = all(self._keeps_c_order(n, seen) for n in self.nodes)
        self._cache: dict = {}

    def __bool__(self):
        return bool(self.nodes)

    def _keeps_c_order(self, root, seen) -> bool:
        """C-contiguous inputs give root a C-ordered result (every value on the way keeps the order)."""
        stack = [root]
        while stack:
            n = stack.pop()
            if n in seen or not isinstance(n, Node):
                continue
            seen.add(n)
            cat = self.plan.cat[n]
            if cat == "input" or n.ndim <= 1:
                continue
            if cat == "view":
                if n.op == "transpose" and tuple(n.kwargs["axes"]) != tuple(range(n.ndim)):
                    return False
                if n.op not in _ORDER_KEEPING_VIEWS:
                    return False
            elif cat not in _COMPUTED and n.op not in np_layout._C_ORDER:
                return False                     # NumPy's result (e.g. argwhere: F order)
            elif n.op == "copy" and n.attr("order", "K") not in ("K", "A", "C"):
                return False
            stack += [a for a in n.args if isinstance(a, Node)]
        return True

    def fast(self, inputs) -> bool:
        return self.order_keeping and all(inputs[i].flags.c_contiguous for i in self.c_inputs)

    def __call__(self, inputs, symbol_values):
        """None when every allocation is C order, else {index: strides or None}."""
        if self.fast(inputs):
            return None
        key = tuple(inputs[i].strides for i, _ in self.array_inputs) + tuple(symbol_values)
        got = self._cache.get(key)
        if got is None:
            got = self._compute(inputs, symbol_values)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = got
        return got

    def _compute(self, inputs, symbol_values) -> dict:
        arrays = {n: inputs[i] for i, n in self.array_inputs}
        b = _RuntimeBuilder(arrays, dict(zip(self.symbols, (sympy.Integer(int(v)) for v in symbol_values))))
        out = {}
        for i, n in enumerate(self.nodes):
            try:
                st = np_layout.strides_of(b, n)
                if st is not None:
                    st = tuple(int(s) for s in st)
                    shape = [b.shape_env.guard_int(d) for d in n.shape]
                    if st == np_layout.c_strides(shape, n.dtype.itemsize):
                        st = None
            except (TypeError, ValueError, ArithmeticError, RuntimeError):   # RecursionError too
                st = None
            out[i] = st
        return out


def alloc(shape, dtype, strides):
    """np.empty(shape, dtype) with NumPy's strides (dense, in some axis order)."""
    if strides is None:
        return np.empty(shape, dtype)
    size = 1
    for d in shape:
        size *= d
    try:
        return np.ndarray(shape, dtype, buffer=np.empty(size, dtype), strides=strides)
    except (ValueError, TypeError):             # not a dense layout: C order
        return np.empty(shape, dtype)


def relayout(a, strides):
    """`a` (a kernel's in-place result) in the given layout: itself, or a copy."""
    if strides is None or a.strides == tuple(strides):
        return a
    out = alloc(a.shape, a.dtype, strides)
    out[...] = a
    return out
