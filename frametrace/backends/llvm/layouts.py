"""Memory layout of the arrays the LLVM wrapper allocates: NumPy's, not always C order.

NumPy allocates ufunc, reduction, scan and copy results in "K" order (the operands' memory
order: an F-ordered input gives an F-ordered `x + 1`), so the strides of a returned array,
and whether a later reshape/ravel of it is a view, depend on the inputs' layouts. Kernels
take strides as arguments, so any layout works; this module decides which one, at run time:

    lay = Layouts(plan, steps)          # compile time: which allocations may not be C order
    L = lay(inputs, symbol_values)      # run time: None (all C order: the fast path), or
                                        # (strides or None per allocation) from ir/numpy_api/layout.py
    v = alloc(shape, dtype, strides)    # np.empty with those (dense) strides

The fast path: every array input of 2+ dims is C-contiguous and no value between the inputs
and an allocation changes the axis order (a transpose, a NumPy fallback): then NumPy's K
order is C order. Otherwise NumPy's layout model (numpy_api/layout.py, the one the tracer
uses for ravel/reshape decisions) decides, evaluated on traced ints (traced_ints.py): once per
*size class* it runs on the call's symbol values and input strides, recording every comparison
it makes; the class becomes two generated functions (is a call in the class; its strides), so
a call with new sizes in a known class costs a few integer comparisons, and a call with the
sizes of an earlier call a dict lookup. The native entry (native_entry.py) only serves the
fast path.
"""
from __future__ import annotations

import numpy as np
import sympy

from ...ir.graph import Node
from ...ir.numpy_api import layout as np_layout
from ...ir.registry import get_op
from ...lower.fusion import KernelStep
from ...shapes import pycode
from .traced_ints import Trace, TracedInt, source

# views that keep a C-contiguous operand's axis order (K order of the result stays C)
_ORDER_KEEPING_VIEWS = ("getitem", "expand_dims", "squeeze", "broadcast_to", "reshape")
_COMPUTED = ("pw", "red", "scan")            # values the kernels compute (allocated here)
_WRAPPER_VALUES = ("fallback", "matmul")      # values the wrapper computes with NumPy (real strides)
_CACHE_LIMIT = 64                            # calls' exact (sizes, strides) remembered
_CLASS_LIMIT = 16                            # size classes remembered
# what the layout rule raises where it cannot decide (an unbacked size, an unsupported form,
# a deep graph's RecursionError): that allocation is C order, in every call of the class
_UNDECIDED = (TypeError, ValueError, ArithmeticError, RuntimeError)


class _TracingBuilder:
    """What layout.strides_of asks of a builder, answered with traced ints: graph sizes are
    expressions of the symbol leaves, input strides are leaves of their own."""

    def __init__(self, layouts: "Layouts", trace: Trace, key: tuple):
        self._lay, self._key, self._trace = layouts, key, trace
        self._strides = {n: tuple(trace.leaf(key[j], j) for j in cols)
                         for n, cols in layouts.stride_leaves.items()}
        # values the wrapper computed (a loop's result, an opaque call): their strides are leaves
        self._layout_cache = {n: self._strides[n] for n in layouts.value_leaves}

    def input_layout(self, node, shape):
        return self._strides.get(node)

    def size_of(self, e):
        """A graph size as an int or a TracedInt; TypeError when not a function of the leaves."""
        src, fn = self._lay.size_code(e)
        if fn is None:
            return src                           # a constant
        value = fn(*self._key)
        if type(value) is not int:
            raise TypeError(f"size {e} is not an integer expression")
        return TracedInt(value, src, self._trace)


class Layouts:
    """Run-time layouts of a graph's allocated values (see module doc)."""

    def __init__(self, plan, steps, only=None, value_leaves=()):
        g = plan.graph
        self.plan = plan
        self.value_leaves = list(value_leaves)   # wrapper values whose strides are read at run time
        self.late = {}                           # allocation -> (Layouts of its own, its value leaves)
        if only is None:
            self.nodes = []                      # allocated values that may not be C order
            for s in steps:
                if isinstance(s, KernelStep):
                    self.nodes += [n for n in s.allocs if n.ndim >= 2]
                    self.nodes += [n for n, _ in s.reuse if n.ndim >= 2]
            for n in self.nodes:                 # after a wrapper value: laid out once it exists
                leaves = self._value_leaves_of(n)
                if leaves:
                    self.late[n] = (Layouts(plan, steps, [n], leaves), leaves)
            self.nodes = [n for n in self.nodes if n not in self.late]
        else:
            self.nodes = list(only)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.array_inputs = [(i, n) for i, n in enumerate(g.inputs)
                             if n.attr("kind") != "scalar" and not (n.scalar and n.shape == ())]
        self.c_inputs = [i for i, n in self.array_inputs if n.ndim >= 2]
        self.symbols = list(g.symbols)
        seen: set = set()
        self.order_keeping = not self.value_leaves and all(self._keeps_c_order(n, seen) for n in self.nodes)
        # the leaves of a call: symbol values, then the strides of the inputs the rule may read,
        # then those of the wrapper values
        read = self._inputs_read()
        self.stride_inputs = [i for i, n in self.array_inputs if n in read and n.ndim]
        self.stride_leaves, j = {}, len(self.symbols)
        for n in [g.inputs[i] for i in self.stride_inputs] + self.value_leaves:
            self.stride_leaves[n] = range(j, j + n.ndim)
            j += n.ndim
        self.leaf_names = [f"v{k}" for k in range(j)]
        # the call's leaves as one tuple (the exact-size cache key), read in generated code
        self._key = eval("lambda inputs, symbol_values, values=(): (*symbol_values, "
                         + "".join(f"*inputs[{i}].strides, " for i in self.stride_inputs)
                         + "".join(f"*values[{k}].strides, " for k in range(len(self.value_leaves))) + ")", {})
        self._sym_names = {s: self.leaf_names[k] for k, s in enumerate(self.symbols)}
        self._sizes: dict = {}                   # graph size expr -> (source, function)
        self._classes: list = []                 # (check, result) per size class seen
        self._cache: dict = {}                   # exact leaves -> layouts

    def __bool__(self):
        return bool(self.nodes or self.late)

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
            elif cat not in _COMPUTED and not _allocated_c_order(n):
                return False                     # NumPy's result (e.g. argwhere: F order)
            elif n.op == "copy" and n.attr("order", "K") not in ("K", "A", "C"):
                return False
            stack += [a for a in n.args if isinstance(a, Node)]
        return True

    def _inputs_read(self) -> set:
        """Graph inputs whose strides the layout rule may read for self.nodes: every input
        above them, except behind a value NumPy always allocates in C order."""
        out, seen, stack = set(), set(), list(self.nodes)
        while stack:
            n = stack.pop()
            if n in seen or not isinstance(n, Node):
                continue
            seen.add(n)
            if n.op == "input":
                out.add(n)
            elif n in self.value_leaves:
                continue
            elif not _allocated_c_order(n) or get_op(n.op).kind == "view":
                stack += [a for a in n.args if isinstance(a, Node)]
        return out

    def fast(self, inputs) -> bool:
        return self.order_keeping and all(inputs[i].flags.c_contiguous for i in self.c_inputs)

    def _value_leaves_of(self, root) -> list:
        """Arrays of 2+ dims above `root` that the wrapper computes and whose layout NumPy's rule
        cannot derive (a loop's result, an opaque call): their strides are known at run time."""
        out, seen, stack = [], set(), [root]
        while stack:
            n = stack.pop()
            if n in seen or not isinstance(n, Node):
                continue
            seen.add(n)
            cat = self.plan.cat[n]
            if cat == "input" or n.ndim <= 1 and n is not root:
                continue
            if n is not root and cat in _WRAPPER_VALUES and not _allocated_c_order(n):
                out.append(n)
                continue
            stack += [a for a in n.args if isinstance(a, Node)]
        return out

    def __call__(self, inputs, symbol_values, values=()):
        """None when every allocation is C order, else (strides or None) per allocation;
        `values`: the arrays of `value_leaves` (a late allocation's Layouts)."""
        if self.order_keeping and self.fast(inputs):
            return None
        key = self._key(inputs, symbol_values, values)
        got = self._cache.get(key)
        if got is None:
            for check, result in self._classes:
                if check(*key):
                    got = result(*key)
                    break
            else:
                got = self._new_class(key)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = got
        return got

    def size_code(self, e):
        """(source, function of the leaves) of a graph size, or (int, None) for a constant;
        built with sympy once per expression."""
        got = self._sizes.get(e)
        if got is None:
            e = sympy.sympify(e)
            if e.is_Integer:
                got = (int(e), None)
            elif not e.free_symbols <= set(self.symbols):
                got = (None, _not_known)         # data-dependent: not a function of the leaves
            else:
                try:
                    src = pycode(e, self._sym_names)
                except NotImplementedError:      # a function pycode cannot print: not known
                    src = None
                if src is None:
                    got = (None, _not_known)
                else:
                    src = src if src.isidentifier() else f"({src})"
                    got = (src, eval(f"lambda {', '.join(self.leaf_names)}: {src}", {}))
            self._sizes[e] = got
        return got

    def _new_class(self, key):
        """Run the layout rule on traced ints for this call; remember its size class."""
        trace = Trace(self.leaf_names)
        b = _TracingBuilder(self, trace, key)
        out = []
        for n in self.nodes:
            try:
                st = np_layout.strides_of(b, n)
                if st is not None:
                    st = tuple(st)
                    shape = [np_layout._size(b, d) for d in n.shape]
                    if st == np_layout.c_strides(shape, n.dtype.itemsize):
                        st = None
                    else:
                        st = tuple(source(s) for s in st)
            except _UNDECIDED:
                st = None
            out.append(st)
        if all(st is None for st in out):
            result = "None"                      # all C order: the wrapper's fast lines
        else:
            result = "(" + "".join("None, " if st is None else f"({''.join(s + ', ' for s in st)}), "
                                   for st in out) + ")"
        check, fn = trace.compile(result)
        if len(self._classes) >= _CLASS_LIMIT:
            self._classes.clear()
        self._classes.append((check, fn))
        return fn(*key)


def _not_known(*leaves):
    raise TypeError("a data-dependent size: the layout is not known")


def alloc(shape, dtype, strides, zero=False):
    """np.empty(shape, dtype) (np.zeros: `zero`) with NumPy's strides (dense, in some axis order)."""
    new = np.zeros if zero else np.empty
    if strides is None:
        return new(shape, dtype)
    size = 1
    for d in shape:
        size *= d
    try:
        return np.ndarray(shape, dtype, buffer=new(size, dtype), strides=strides)
    except (ValueError, TypeError):             # not a dense layout: C order
        return new(shape, dtype)


def relayout(a, strides):
    """`a` (a kernel's in-place result) in the given layout: itself, or a copy."""
    if strides is None or a.strides == tuple(strides):
        return a
    out = alloc(a.shape, a.dtype, strides)
    out[...] = a
    return out


def _allocated_c_order(n) -> bool:
    """NumPy allocates n in C order whatever its operands' layouts: a C-order op, or a take
    layout.always_c_order proves C order. Not every value of at most one dim (always_c_order's
    other case): a 1-d value (an einsum diagonal of a (1, 1) operand) says nothing of the order
    of the results built from it, which NumPy decides at run time
    (np.einsum('ab,cc->bac', x, y) with y of shape (1, 1) is not C order)."""
    return n.op in np_layout._C_ORDER or (n.ndim >= 2 and np_layout.always_c_order(n))

