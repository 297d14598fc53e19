"""Native element loops: a loop node (ir/ops/loops.py) whose body works on elements becomes
one kernel with the loop inside it (called from the wrapper by loop_call.py).

A body qualifies when every value in it is a scalar: element reads `x[i - 1, j]` and writes
`d[i, j] = v` of arrays the loop captures (indices affine in the loop indices and sizes, or
values read in the body: `back[t, path[t]]`, `x[idx[i]] = v`), NumPy and Python scalar
arithmetic with a native loop body, `select` (if-converted branches, `min`/`max`), nested
loops of the same kind, and carried scalars; small arrays (slices moving with the loop indices,
their arithmetic, dot products and sums, writes into slices) as inner loops (loop_arrays.py).
Python ints add, subtract, multiply, floor-divide, take remainders and shift as *checked* int64
ops (codegen/llvm_kernels/checked.py), and mask and compare exactly; NumPy integers keep
NumPy's rules (loop_ints.py). Python floats add, subtract and multiply (IEEE, as Python).
Anything else keeps the generic path: the wrapper runs the loop, calling the body's own
compiled graph each iteration.

The kernel (loop IR, lower/loop_ir.py):

    acc c_k = arg (initial carried values)          for each carried value
    status[()] = -1                                 (a body with checked ops)
    for k in [0, trip):   i = start + step * k      (step a constant; inner loops +1 or -1)
        let t_n = <node n>                          every body node, in program order (lets
                                                    no write changes first, with checked ops)
        b[idx] = ...                                element writes
        c_k := t_out_k                              after all outputs are computed
        (a `for_break` loop: leave here once its `go` output is False)
    out_k[()] = c_k                                 final values, read back by the wrapper

A checked op (Python int overflow or zero divisor; a data index out of bounds after NumPy's
one negative wrap) leaves the loop with status = k, before any write of iteration k: checked
ops must come before the iteration's first write, or read nothing it writes (then their lets
move before it: _hoist), and sit in inner loops only when the loop writes no array. The wrapper then runs iterations
k.. on the generic path, where Python ints grow and Python / NumPy raise their own errors
after the earlier iterations' writes, as the Python loop leaves them.

Affine bounds were proved by the tracer over the whole range (shapes/loop_index.py), so
there are no checks for them. Buffers are `noalias` (LLVM then keeps `out[i - 1]` in a
register from the previous iteration's store, and vectorises loops without a carried
dependence): a call whose arrays share memory runs the generic path instead (loop_call.py).
Only pairs with a written array are checked, and not those the graph proves apart (one of
them a new array: np.zeros, an elementwise result). FP exception flags go to the wrapper's
word like any kernel's.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import sympy

from ...codegen.llvm_kernels import complex_ops
from ...config import config
from ...ir.graph import Node
from ...ir.ops.advanced_index import ArrayRef
from ...ir.registry import get_op, may_raise
from ...lower.loop_ir import (Acc, Affine, Arg, Buffer, Const, Kernel, Let, Load, Loop, Op, Slot, Store,
                              Update, Var, cast, walk_exprs)
from ...lower.pointwise import LOOP_DTYPES, NotLowerable, lower_elementwise, weak_node
from .loop_arrays import ArrayBody, ArrayVal
from .loop_jam import unroll_and_jam
from .loop_ints import _COMPARE, _PY_INT_EXACT, _PY_INT_OPS, IntBody, _constant, _nep50_only, _py_int
from .loop_elements import ElementBody
from .loop_call import NativeLoop, NotNative, runs  # noqa: F401  (runs: the call counters, for tests)
from .loop_data_slices import DataBody
from .loop_reductions import MaskedVal, ReductionBody

_PY_FLOAT_OPS = frozenset({"add", "subtract", "multiply", "negative", "positive", "absolute"})
_PY_COMPLEX_OPS = frozenset({"add", "subtract", "multiply", "negative", "positive"})   # Python's own formulas
_RELATIONS = {sympy.Eq: "equal", sympy.Ne: "not_equal", sympy.StrictLessThan: "less", sympy.LessThan: "less_equal",
              sympy.StrictGreaterThan: "greater", sympy.GreaterThan: "greater_equal"}


def native_loop(node: Node, name: str, object_abi: bool) -> NativeLoop:
    """The native kernel of loop `node`, or NotNative."""
    return _Builder(node, name).build(object_abi)


class _Builder(ArrayBody, ReductionBody, DataBody, IntBody, ElementBody):
    NotNative = NotNative

    def __init__(self, node: Node, name: str):
        self.node, self.name = node, name
        self.buffers: list = []
        self.slots: list = []
        self.plan: list = []          # per buffer, then per slot: ("buf"|"out", arg index, dtype) / ("slot", ...)
        self.slot_plan: list = []
        self.sym: dict = {}           # size / index symbol -> Affine
        self.sources: dict = {}       # captured array input -> its loop-node argument index
        self.env: dict = {}           # body node -> expression (Var of its let) or ("buf", index)
        self.lets = 0
        self.loops = 0
        self.depth = 0                # inner loops around the node being lowered
        self.stored = False           # a write precedes it in the iteration
        self.checks = 0               # checked ops (Python int arithmetic, data indices)
        self.inner_checks = 0         # ... of them in inner loops
        self.pre: list = []           # lets of checked ops for the statement being built
        self.free: set = set()        # top-level lets and carried values no write changes (_free)
        self.store_log: list = []     # buffers of the array writes so far, in order (loop_arrays)
        self.scratches: dict = {}     # buffer -> its scratch buffer (loop_arrays.assign_array)
        self.data_sizes: dict = {}    # unbacked size of a data-bounded slice -> its length (loop_data_slices)
        self.prechecks: dict = {}     # gather node -> the loop checking its indices first (loop_data_slices)
        self.float_products = False   # a float/complex product: summed in another order than NumPy's BLAS

    # -- arguments --------------------------------------------------------------------------------
    def slot(self, source_index, dtype: str, kind: str = "slot"):
        if dtype.startswith("complex"):           # two float64 slots: the parts
            if kind != "slot":
                raise NotNative(f"a complex {kind}")
            parts = []
            for part in ("re", "im"):
                self.slots.append(Slot(f"arg{len(self.slots)}", "float64"))
                self.slot_plan.append((kind, source_index, part))
                parts.append(cast(Arg(len(self.slots) - 1, "float64"), complex_ops.part(dtype)))
            return Op("make_complex", dtype, tuple(parts))
        slot_dt = "float64" if dtype.startswith("float") else ("uint64" if dtype == "uint64" else "int64")
        self.slots.append(Slot(f"arg{len(self.slots)}", slot_dt))
        self.slot_plan.append((kind, source_index, "f" if slot_dt == "float64" else "i"))
        return cast(Arg(len(self.slots) - 1, slot_dt), dtype)

    def buffer(self, source_index, dtype, ndim, written, kind="buf"):
        self.buffers.append(Buffer(f"b{len(self.buffers)}", dtype, ndim, written))
        self.plan.append((kind, source_index, dtype))
        return len(self.buffers) - 1

    # -- the kernel -------------------------------------------------------------------------------
    def build(self, object_abi: bool) -> NativeLoop:
        node, body = self.node, self.node.attr("body")
        # a `while` runs like a `for_break` over an unbounded range: its body's last output is
        # `go`, and the trip count is 0 when the entry test fails (loop_call.py: "go" slot)
        is_while = body.kind == "while"
        nhead = 1 if is_while else 3
        head, carried, captured, sizes = body.split_args(node.args)
        step = 1 if is_while else head[2]
        if not isinstance(step, int) or isinstance(step, bool) or step == 0:
            raise NotNative("a step that is not a constant int")       # (the trip count is len(range))
        for k, s in enumerate(sizes):
            self.sym[s] = Affine(syms=((self._size_slot(nhead + len(carried) + len(captured) + k), 1),))
        start = None if is_while else self._int_arg(head[0], 0)
        trip_slot = len(self.slots)
        self.slots.append(Slot("trip", "int64"))
        self.slot_plan.append(("go" if is_while else "trip", None, "i"))
        stmts = []
        carried_exprs = []
        for k, value in enumerate(carried):
            dt = _dtype_of(body.graph.inputs[k])
            acc = f"c{k}"
            init = self._value_arg(value, nhead + k, dt)
            stmts.append(Acc(acc, dt, init))
            carried_exprs.append(Var(acc, dt))
        cap_inputs = body.graph.inputs[len(carried):]
        for k, (value, inp) in enumerate(zip(captured, cap_inputs)):
            self._bind_input(inp, value, nhead + len(carried) + k, k in body.writes)
        for k, inp in enumerate(body.graph.inputs[:len(carried)]):
            self.env[inp] = carried_exprs[k]
        var = self._loop_var()
        if not is_while:
            self.sym[body.index] = Affine(((var, step),)) + start
        self.free.update(f"c{k}" for k in range(len(carried)))
        inner, until = self._body(body.graph, [f"c{k}" for k in range(len(carried))])
        if self.checks:
            inner = _hoist(inner, self.free, list(self.prechecks.values()))
        bail = None
        if self.checks:                           # where a checked op left: -1 when none did
            status = self.buffer(None, "int64", 0, True, kind="stat")
            stmts.append(Store(status, (), Const(-1, "int64")))
            bail = (status, var)
        outer = Loop(var, Arg(trip_slot, "int64"), inner, until=until)
        jammed = None if self.checks else self._jammed(outer)
        stmts.extend(jammed or [outer])
        out_types = []
        for k, inp in enumerate(body.graph.inputs[:len(carried)]):
            dt = _dtype_of(inp)
            b = self.buffer(None, dt, 0, True, kind="out")
            stmts.append(Store(b, (), Var(f"c{k}", dt)))
            out_types.append(_python_type(inp))
        kernel = Kernel(self.name, stmts, self.buffers, self.slots, work=str(2 ** 40),   # never "tiny" (optnone)
                        note=f"loop at {body.location}", bail=bail, wide=jammed is not None)
        _complex_ok(kernel)
        nl = NativeLoop(node, kernel, self.plan + self.slot_plan, out_types, object_abi)
        nl.jammed = config.loop_jam if jammed else 0
        nl.float_products = self.float_products
        return nl

    def _jammed(self, outer: Loop) -> list | None:
        """The outer loop unrolled and jammed (loop_jam.py), or None."""
        scratch = {b for b, (kind, _, _) in enumerate(self.plan) if kind == "scratch"}

        def new_scratch(b):
            return self.buffer(self.plan[b][1], self.plan[b][2], 1, True, kind="scratch")
        return unroll_and_jam(outer, scratch, new_scratch)

    def _size_slot(self, index):
        self.slots.append(Slot(f"size{len(self.slots)}", "int64"))
        self.slot_plan.append(("slot", index, "i"))
        return Arg(len(self.slots) - 1, "int64")

    def _int_arg(self, value, index) -> Affine:
        if isinstance(value, int):
            return Affine(const=value)
        if isinstance(value, sympy.Basic):
            try:
                return self.affine(value)
            except NotNative:
                if index is None:
                    raise
            # a size the body does not mention (`while i >= 0` from i = n - 2): passed in
            return Affine(syms=((self._size_slot(index), 1),))
        if isinstance(value, Node) and index is not None and value.shape == () and value.dtype.kind in "iu" \
                and value.dtype.name != "uint64":       # a bound read from an array: passed in
            return Affine(syms=((self._size_slot(index), 1),))
        raise NotNative(f"a loop bound {value!r}")

    def _value_arg(self, value, index, dt):
        """The expression of a loop-node argument that is a scalar value."""
        if isinstance(value, (bool, int, float, np.generic)) and not isinstance(value, Node):
            try:
                return Const(np.dtype(dt).type(value).item(), dt)
            except (OverflowError, ValueError) as exc:
                raise NotNative(str(exc)) from None
        if isinstance(value, sympy.Basic):
            try:
                return cast(Op("affine", "int64", (self.affine(value),)), dt)
            except NotNative:         # an int argument the body uses as a value: passed in
                return self.slot(index, dt)
        if isinstance(value, Node):
            return self.slot(index, dt)
        raise NotNative(f"argument {value!r}")

    def _bind_input(self, inp: Node, value, index, written):
        dt = _dtype_of(inp)
        if inp.attr("kind") == "scalar" or (inp.scalar and inp.shape == ()):
            if written:
                raise NotNative("a write into a scalar")
            self.env[inp] = self._value_arg(value, index, dt)
        else:
            self.env[inp] = ("buf", self.buffer(index, dt, inp.ndim, written), inp)
            self.sources[inp] = index

    def scratch(self, key, buf: int, dt: str) -> int:
        """A 1-d buffer (one per `key`) as large as buffer `buf`'s array, allocated once per call."""
        if key not in self.scratches:
            self.scratches[key] = self.buffer(self.plan[buf][1], dt, 1, True, kind="scratch")
        return self.scratches[key]

    def _dim_slot(self, src, d):
        """The run-time extent of dim `d` of loop-node argument `src` (an array)."""
        self.slots.append(Slot(f"dim{len(self.slots)}", "int64"))
        self.slot_plan.append(("dim", (src, d), "i"))
        return Arg(len(self.slots) - 1, "int64")

    def checked(self, op: str, args) -> Op:
        """A checked int64 op: it may leave the kernel, so only where no write of this
        iteration precedes it (the generic path redoes the whole iteration)."""
        if self.depth:                    # leaving redoes the outer iteration: no write may precede it
            if self.stored:
                raise NotNative(f"{op} in an inner loop after a write in the same iteration")
            self.inner_checks += 1
        elif self.stored and not all(self._free(a) for a in args):
            raise NotNative(f"{op} after a write in the same iteration, of a value that depends on it")
        self.checks += 1
        return Op(op, "int64", tuple(args))

    def _free(self, e) -> bool:
        """Does `e` read nothing a write of the iteration may change (written arrays, inner
        loops' values)? Then its let may move before the iteration's first write (_hoist)."""
        return not any(isinstance(x, Load) and self.buffers[x.buf].written or
                       isinstance(x, Var) and x.name not in self.free for x in walk_exprs(e))

    def _loop_var(self):
        self.loops += 1
        return f"k{self.loops}"

    # -- sizes and indices ------------------------------------------------------------------------
    def affine(self, expr) -> Affine:
        expr = sympy.sympify(expr)
        if not isinstance(expr, sympy.Expr):
            raise NotNative(f"a condition on the loop index ({expr})")
        expr = sympy.expand(expr)
        out = Affine()
        for term in sympy.Add.make_args(expr):
            coef, rest = term.as_coeff_Mul()
            if not coef.is_Integer:
                raise NotNative(f"a non-integer index {expr}")
            if rest == 1:
                out = out + Affine(const=int(coef))
            elif rest in self.sym:
                out = out + self.sym[rest].scale(int(coef))
            else:
                raise NotNative(f"index {expr} is not affine in the loop indices and sizes")
        return out

    # -- the body ---------------------------------------------------------------------------------
    def _body(self, graph, accs):
        """(statements, `until`): a `for_break` body's last output is `go`; the loop ends
        once it is False, after this iteration's carried values are updated."""
        stmts = []
        for n in graph.nodes:
            stmts.extend(self._node(n))
        values = []
        for k, out in enumerate(graph.outputs):
            name = f"o{self.lets}_{k}"
            dt = _dtype_of(out)
            stmts.append(Let(name, cast(self.expr(out), dt)))
            values.append(Var(name, dt))
        for acc, v in zip(accs, values):
            stmts.append(Update(acc, v))
        until = Op("logical_not", "bool", (cast(values[-1], "bool"),)) if len(values) > len(accs) else None
        return stmts, until

    def expr(self, a):
        if isinstance(a, Node):
            e = self.env.get(a)
            if isinstance(e, tuple) and e[0] == "view":       # a one-element view read as a value
                return self._element(a, a.args[0], a.attr("index"), store=True)
            if e is None or isinstance(e, (tuple, MaskedVal, ArrayVal)):
                raise NotNative(f"value {a!r} is an array")
            return e
        if isinstance(a, sympy.Basic) and not isinstance(a, sympy.Expr):
            return self.condition(a)
        if isinstance(a, sympy.Basic):
            data = self.data_extent(a)          # `row.size`, `max(row.size, 1)` of a data-bounded slice
            return data if data is not None else Op("affine", "int64", (self.affine(a),))
        return None

    def condition(self, expr):
        """A condition on the loop indices and sizes (`if j != i:`) as a bool expression."""
        if expr is sympy.true or expr is sympy.false:
            return Const(bool(expr), "bool")
        if isinstance(expr, sympy.Not):
            return Op("logical_not", "bool", (self.condition(expr.args[0]),))
        if isinstance(expr, (sympy.And, sympy.Or)):
            op = "logical_and" if isinstance(expr, sympy.And) else "logical_or"
            out = self.condition(expr.args[0])
            for a in expr.args[1:]:
                out = Op(op, "bool", (out, self.condition(a)))
            return out
        rel = _RELATIONS.get(type(expr))
        if rel is None:
            raise NotNative(f"a condition {expr} on the loop index")
        lhs, rhs = (Op("affine", "int64", (self.affine(e),)) for e in expr.args)
        return Op(rel, "bool", (lhs, rhs))

    def _let(self, n: Node, value) -> list:
        name = f"t{self.lets}"
        self.lets += 1
        dt = _dtype_of(n)
        self.env[n] = Var(name, dt)
        if not self.depth and self._free(value):
            self.free.add(name)
        return [Let(name, cast(value, dt))]

    def _node(self, n: Node) -> list:
        op = get_op(n.op)
        if n.op == "getitem":
            base = self.env.get(n.args[0])
            if not (isinstance(base, tuple) and base[0] == "buf"):
                arr = self._getitem_array(n)          # of an array value (a view of a view, ...)
                if n.shape != ():
                    self.env[n] = arr
                    return []
                # (in bounds: the tracer proved the index over the loop's range, as for `_element`)
                return self._let(n, self.element(arr, ()))
            if n.shape != ():
                if all(isinstance(d, int) and d == 1 for d in n.shape):
                    self.env[n] = ("view", n)  # one element: an element write's destination, or a value
                else:
                    self.env[n] = self._getitem_array(n)
                return []
            return self._let(n, self._element(n, n.args[0], n.attr("index")))
        if n.op == "transpose" and self.array_of(n.args[0]) is not None:
            self.env[n] = self._transpose_array(n)
            return []
        if n.op == "copy" and self.array_of(n.args[0]) is not None:
            self.copy_array(n)
            return []
        if n.op in ("dot", "matmul"):
            return self._take_checks() + self.dot_array(n)
        if n.op in ("real", "imag") and n.scalar and isinstance(n.args[0], Node) and n.args[0].dtype.kind == "c" \
                and self.array_of(n.args[0]) is None and n.dtype.name in LOOP_DTYPES:
            # `z.real` of a complex element or scalar: its part (NumPy's view of it holds those bits)
            return self._let(n, Op(n.op, n.dtype.name, (self.expr(n.args[0]),)))
        if n.op == "mask_select":
            self.masked_array(n)
            return []
        if n.op == "slice_by_values":
            return self.data_slice_array(n)
        if n.op == "take" and n.shape != () and self.array_of(n.args[1]) is not None:
            self.gather_array(n)
            return []
        if n.op in ("sum", "prod", "mean", "max", "min") and (self.array_of(n.args[0]) is not None or
                                                 isinstance(self.env.get(n.args[0]), MaskedVal)):
            return self.reduce_array(n)
        if n.op == "assign" and isinstance(self.env.get(n.args[0]), ArrayVal):
            dst, src = n.args
            value = None
            if self.array_of(src) is None:
                value = self._stored_value(src, self.env[dst].dtype)
            stmts = self.assign_array(self.env[dst], src, value)
            return self._take_checks() + stmts
        if n.op == "assign":
            dst, src = n.args
            if not (isinstance(dst, Node) and dst.op == "getitem"):
                raise NotNative("a write that is not to one element")
            if self.array_of(src) is not None:
                stmts = self.assign_array(self._getitem_array(dst), src, None)
                return self._take_checks() + stmts
            load = self._element(dst, dst.args[0], dst.attr("index"), store=True)
            _, buf, _inp = self.env[dst.args[0]]
            if not self.buffers[buf].written:
                raise NotNative("a write into an array the loop does not declare written")
            value = self._stored_value(src, load.dtype)
            self.stored = True
            self.store_log.append(buf)
            return self._take_checks() + [Store(buf, load.index, value)]
        if n.op == "index":
            if n.shape != ():
                self.env[n] = self.data_array(n)
                return self._take_checks()
            load = self._data_element(n.args[0], n.args[1:], n.attr("entries"))
            return self._take_checks() + self._let(n, load)
        if n.op == "take" and n.shape != () and len(n.args) == 2 and isinstance(n.args[1], Node) and \
                n.args[1].shape == ():                                                  # X[idx[i]]: a row
            self.env[n] = self.data_array(n)
            return self._take_checks()
        if n.op == "take" and n.shape == () and isinstance(n.args[0], Node) and n.args[0].ndim == 1:   # x[idx[i]]
            load = self._data_element(n.args[0], n.args[1:], (ArrayRef(0),))
            return self._take_checks() + self._let(n, load)
        if n.op == "index_put":
            return self._data_store(n)
        if n.op == "loop":
            return self._inner_loop(n)
        if n.op == "loop_out":
            state, k = n.args[0], n.args[1]
            self.env[n] = self.env[state][k]
            return []
        if n.op == "py_scalar":
            value = n.args[0]
            e = self.expr(value)
            return self._let(n, e if e is not None else _constant(value, _dtype_of(n)))
        if n.op == "select" and any(self.array_of(x) is not None for x in n.args[1:]):
            # an array a data-dependent `if` chose (trace/branches.select_arrays): elementwise
            self.elementwise_array(n, [None if self.array_of(x) is not None else self.expr(x) for x in n.args])
            return self._take_checks()
        if n.op == "select":
            c, a, b = (self.expr(x) if self.expr(x) is not None else _constant(x, _dtype_of(n)) for x in n.args)
            dt = _dtype_of(n)
            return self._let(n, Op("where", dt, (cast(c, "bool"), cast(a, dt), cast(b, dt))))
        if (n.op in _PY_INT_OPS and n.dtype is not None and n.dtype.kind in "iu" or n.op in _COMPARE) \
                and all(_py_int(a) for a in n.args):
            args = [cast(self.expr(a) if self.expr(a) is not None else _constant(a, "int64"), "int64")
                    for a in n.args]
            if n.op in _COMPARE:                  # Python ints compare exactly as int64s
                return self._let(n, Op(n.op, "bool", tuple(args)))
            return self._let(n, self.checked(_PY_INT_OPS[n.op], args))
        if n.op in _PY_INT_EXACT and n.dtype is not None and n.dtype.kind in "iu" and all(_py_int(a) for a in n.args):
            args = [cast(self.expr(a) if self.expr(a) is not None else _constant(a, "int64"), "int64")
                    for a in n.args]
            return self._let(n, args[0] if n.op == "positive" else Op(n.op, "int64", tuple(args)))
        if op.kind != "elementwise" or may_raise(n) and not _nep50_only(n):
            raise NotNative(f"{n.op} in the body")
        if n.dtype is None or n.dtype.name not in LOOP_DTYPES:
            raise NotNative(f"dtype {n.dtype}")
        if weak_node(n) and n.dtype.kind in "iu" and n.op not in _COMPARE:
            raise NotNative(f"Python int arithmetic ({n.op})")
        if weak_node(n) and n.dtype.kind == "f" and n.op not in _PY_FLOAT_OPS:
            raise NotNative(f"Python float {n.op}")
        if weak_node(n) and n.dtype.kind == "c" and n.op not in _PY_COMPLEX_OPS:
            raise NotNative(f"Python complex {n.op}")
        exact = self._weak_int_compare(n)
        if exact is not None:
            return self._let(n, exact)
        scalars = self._weak_operands(n)
        if any(self.array_of(a) is not None for a in n.args):
            if n.op in _COMPARE and any(_py_int(a) and not isinstance(a, (bool, int)) for a in n.args) and \
                    any(isinstance(a, Node) and a.dtype.kind in "iu" and not _py_int(a) for a in n.args):
                raise NotNative("an integer array compared with a Python int value")   # NumPy 2: exact
            self.elementwise_array(n, scalars)
            return self._take_checks()
        try:
            value = lower_elementwise(n, scalars, LOOP_DTYPES)
        except (NotLowerable, KeyError, TypeError) as exc:
            raise NotNative(f"{n.op}: {exc}") from None
        return self._take_checks() + self._let(n, value)

    def _inner_loop(self, n: Node) -> list:
        body = n.attr("body")
        if body.kind not in ("for", "for_break"):
            raise NotNative("a while loop inside")
        head, carried, captured, sizes = body.split_args(n.args)
        start, stop, step = head
        if not isinstance(step, int) or step not in (1, -1):
            raise NotNative("an inner step other than 1 or -1")
        for s in sizes:
            if s not in self.sym:
                raise NotNative(f"inner loop size {s}")
        stmts, accs = [], []
        data_lo = None
        if isinstance(start, Node) or isinstance(stop, Node):      # range(p[i], p[i + 1]): loop_data_slices
            data_lo, trip = self.data_range(stmts, start, stop, step)
        else:
            lo = self._int_arg(start, None)
            trip = self._trip(lo, stop) if step == 1 else \
                Op("affine", "int64", (lo + self._int_arg(stop, None).scale(-1),))
        for k, (value, inp) in enumerate(zip(carried, body.graph.inputs)):
            dt = _dtype_of(inp)
            acc = f"c{self.lets}_{k}"
            self.lets += 1
            init = self.expr(value)
            stmts.append(Acc(acc, dt, cast(init, dt) if init is not None else _constant(value, dt)))
            self.env[inp] = Var(acc, dt)
            accs.append(acc)
        for value, inp in zip(captured, body.graph.inputs[len(carried):]):
            outer = self.env.get(value) if isinstance(value, Node) else None
            if outer is None:
                e = self.expr(value)
                if e is None:
                    e = _constant(value, _dtype_of(inp))
                self.env[inp] = e
            else:
                self.env[inp] = outer
        for k in body.writes:
            entry = self.env[body.graph.inputs[len(carried) + k]]
            if isinstance(entry, ArrayVal) and entry.view is not None:
                entry = ("buf", entry.view[0])
            if not (isinstance(entry, tuple) and self.buffers[entry[1]].written):
                raise NotNative("an inner loop writes an array the outer loop does not")
        var = self._loop_var()
        if data_lo is not None:              # the index is a value of the body: lo + step * k
            moved = Op("affine", "int64", (Affine(((var, step),)),))
            self.data_sizes[body.index] = Op("add", "int64", (data_lo, moved))
        else:
            self.sym[body.index] = Affine(((var, step),)) + lo
        self.depth += 1
        before, checks_before, stored_before = len(self.store_log), self.inner_checks, self.stored
        inner, until = self._body(body.graph, accs)
        self.depth -= 1
        if self.inner_checks > checks_before and self.stored and not stored_before:
            # a later inner iteration's check would leave after an earlier one's write
            raise NotNative("a checked op in an inner loop that writes arrays")
        self.captured_unchanged(captured, set(self.store_log[before:]))
        stmts.append(Loop(var, trip, inner, until=until))
        self.env[n] = [Var(a, _dtype_of(inp)) for a, inp in zip(accs, body.graph.inputs)]
        return stmts

    def _trip(self, lo: Affine, stop):
        """The trip count of an inner range(start, stop) (step 1) as an int64 expression: a
        stop that is a Min/Max of affine bounds (a loop split at an index condition runs over
        range(0, Min(n, i + 1)), trace/loop_split.py) is the Min/Max of their trip counts."""
        if isinstance(stop, sympy.Basic) and isinstance(stop, (sympy.Min, sympy.Max)):
            op = "minimum" if isinstance(stop, sympy.Min) else "maximum"
            out = self._trip(lo, stop.args[0])
            for a in stop.args[1:]:
                out = Op(op, "int64", (out, self._trip(lo, a)))
            return out
        return Op("affine", "int64", (self._int_arg(stop, None) + lo.scale(-1),))


def _hoist(stmts, free, prechecks=()) -> list:
    """The free lets first (they read nothing the iteration writes), then the loops checking
    the indices of gathers read after a write: a checked op then leaves the kernel before the
    iteration's first write, however the body orders them."""
    first = [s for s in stmts if isinstance(s, Let) and s.name in free]
    return first + list(prechecks) + [s for s in stmts if not (isinstance(s, Let) and s.name in free)]


def _dtype_of(n: Node) -> str:
    name = n.dtype.name
    if name not in LOOP_DTYPES:
        raise NotNative(f"dtype {name}")
    return name


def _complex_ok(kernel) -> None:
    """Complex values only where the kernel computes NumPy's values: the running NumPy's
    multiply / abs loops are the ones complex_ops.py builds, and no complex value is cast to
    a real type (NumPy warns, ComplexWarning, and drops the imaginary part)."""
    dts = {b.dtype for b in kernel.buffers}
    exprs = [x for e in _kernel_exprs(kernel.body) for x in walk_exprs(e)]
    dts |= {x.dtype for x in exprs if hasattr(x, "dtype")}
    for dt in dts:
        if dt.startswith("complex") and not complex_ops.numpy_loops_known(dt):
            raise NotNative(f"NumPy's {dt} loops are not the ones native loops compute")
    for x in exprs:
        if isinstance(x, Op) and x.op == "scalar_absolute" and x.args[0].dtype.startswith("complex") and \
                not complex_ops.HYPOT:
            raise NotNative("abs of a complex scalar: the C library's hypot was not found")
        if isinstance(x, Op) and x.op == "cast" and x.args[0].dtype.startswith("complex") and \
                not (x.dtype.startswith("complex") or x.dtype == "bool"):
            raise NotNative(f"a complex value cast to {x.dtype} (NumPy warns: ComplexWarning)")


def _kernel_exprs(stmts):
    for s in stmts:
        for f in dataclasses.fields(s):
            v = getattr(s, f.name)
            if f.name in ("body", "orelse") and isinstance(v, list):
                yield from _kernel_exprs(v)
            elif isinstance(v, (Op, Load, Var, Const)):
                yield v
            elif isinstance(v, tuple):
                yield from (x for x in v if isinstance(x, (Op, Load, Var, Const)))


def _python_type(inp: Node):
    """How a final carried value is handed back: a Python scalar type, or None (NumPy scalar)."""
    if inp.attr("kind") == "scalar":
        return {"b": bool, "i": int, "f": float, "c": complex}.get(inp.dtype.kind)
    return None
