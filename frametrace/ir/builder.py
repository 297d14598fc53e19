"""GraphBuilder: append nodes to a Graph by running each op's meta rule on abstract values."""
from __future__ import annotations

import contextlib

import weakref
from dataclasses import dataclass

import numpy as np

from ..errors import Unsupported
from ..shapes.functions import ToFloat
from .fake import FakeArray, FakeScalar
from .graph import ERRSTATE, OWN_ORDER, SCALAR_MATH, Graph, IndexSlice, Node
from .registry import get_op


def to_expr(x):
    """Graph form of a size: SymInt -> its sympy expression; ints and constants unchanged."""
    expr = getattr(x, "expr", None)
    if expr is not None and not isinstance(x, (Proxy, np.generic, np.ndarray)):
        if any(c.__name__ == "SymFloat" for c in type(x).__mro__):
            return ToFloat(expr)               # a float once the symbols are bound (not an int)
        return expr
    if isinstance(x, tuple):
        return tuple(to_expr(v) for v in x)
    if isinstance(x, IndexSlice):
        return IndexSlice(to_expr(x.start), to_expr(x.stop), to_expr(x.step))
    if isinstance(x, Proxy):
        return x.node
    return x


@dataclass(frozen=True, eq=False)
class Proxy:
    """A graph value during tracing: its node plus the abstract value meta rules see."""
    node: Node
    fake: object                  # FakeArray or FakeScalar

    @property
    def shape(self):
        return self.fake.shape

    @property
    def dtype(self):
        return self.fake.dtype

    @property
    def ndim(self):
        return self.fake.ndim

    @property
    def scalar(self):
        return self.fake.scalar

    @property
    def size(self):
        return self.fake.size


# node -> the abstract value its meta rule gave (FakeArray or FakeScalar): a node alone cannot
# tell a Python scalar result from a 0-d NumPy scalar; the IR verifier needs to (ir/verify.py)
_FAKES: "weakref.WeakKeyDictionary[Node, object]" = weakref.WeakKeyDictionary()


def recorded_fake(node: Node):
    """The abstract value `node` was built with, or None (an input, or a node built by hand)."""
    return _FAKES.get(node)


def record_fake(node: Node, fake) -> None:
    """Remember `fake` as the abstract value of `node` (a pass rebuilding a node keeps it)."""
    _FAKES[node] = fake


_PY_DTYPE = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64),
             complex: np.dtype(np.complex128)}


def _meta_arg(a):
    if isinstance(a, Proxy):
        return a.fake
    if isinstance(a, tuple):
        return tuple(_meta_arg(x) for x in a)
    return a


def _check_write_target(node: Node, op: str, chosen=frozenset()):
    """Refuse a write through an opaque result that is a view in NumPy (see OpDef.aliases), and
    into an array a data-dependent `if` chose (trace/branches.select_arrays: the selection is a
    copy of one side, Python's name is bound to that side itself)."""
    while node.op != "input" and get_op(node.op).kind == "view":
        node = node.args[0]
    _check_chosen(node, op, chosen)
    if node.op != "input" and get_op(node.op).aliases:
        raise Unsupported(f"writing into the result of {node.op} (a view of another array)",
                          kind="mutation", context=op, hints=("write into the base array instead",))


def _check_chosen(node: Node, op: str, chosen) -> None:
    while node.op != "input" and get_op(node.op).kind == "view":
        node = node.args[0]
    if node in chosen:
        raise Unsupported("writing into an array chosen by a data-dependent `if` (or into one of its sides)",
                          kind="loop", context=op, hints=("compute the value with np.where",))


class GraphBuilder:
    def __init__(self, graph: Graph | None = None):
        self.graph = graph if graph is not None else Graph()

    def input_array(self, source: str, shape, dtype, scalar=False) -> Proxy:
        fake = FakeArray(tuple(shape), dtype, scalar)
        node = self.graph.add_input(source=source, kind="array", shape=to_expr(fake.shape),
                                    dtype=fake.dtype, scalar=scalar)
        return Proxy(node, fake)

    def input_scalar(self, source: str, pytype: type) -> Proxy:
        dtype = _PY_DTYPE[pytype]
        node = self.graph.add_input(source=source, kind="scalar", dtype=dtype, scalar=True)
        return Proxy(node, FakeScalar(pytype))

    predicates: tuple = ()      # bool values: the branches of data-dependent `if`s being traced
    errstate: tuple = ()        # ((kind, mode), ...) of the `with np.errstate` blocks being traced
                                # (trace/errstate.py): the `errstate` attribute of nodes that may report

    def emit(self, op: str, *args, **attrs):
        """Run `op`'s meta rule and append its node; returns a Proxy (None for mutations).
        Inside a branch of a data-dependent `if` (if-converted by the tracer: trace/loops.py),
        `dst[...] = src` writes `where(branch taken, src, dst)`: the old contents where the
        branch is not taken; other writes are unsupported there. A scalar operand of an op that
        may report an FP error is `select(branch taken, x, 1)` there: the branch Python does
        not take computes on harmless values (no spurious `1 / 0` warning; its result is
        discarded by the merge)."""
        if self.predicates and get_op(op).kind == "elementwise" and get_op(op).fp_errors != "none" \
                and not _quiet_python(op, args):
            args = tuple(self._harmless(a, op) for a in args)
        if self.predicates and get_op(op).kind == "mutation":
            if op == "index_put" and not attrs.get("masked"):
                return self._predicated_index_put(*args, **attrs)
            if op != "assign":
                raise Unsupported(f"{op} under a data-dependent condition", kind="loop",
                                  hints=("write with `x[...] = value`, or compute the value with np.where",))
            dst, src = args
            if _value_dtype(src) != dst.dtype:
                src = self._emit("astype", src, dtype=dst.dtype)
            src = self._emit("where", self.predicates[-1], src, dst)
            return self._emit("assign", dst, src)
        return self._emit(op, *args, **attrs)

    operator: bool = False      # emitting a Python operator (emit_operator)
    own_order: str = ""         # emitting the lowering of a NumPy function with its own order (graph.OWN_ORDER)
    mutations: int = 0          # mutation nodes emitted so far (a value read before one may differ after it)
    chosen_arrays: frozenset = frozenset()   # arrays a data-dependent `if` chose, and their sides

    def emit_operator(self, op: str, *args):
        """`op` written as a Python operator (`a * b`, `-a`): when the result is a NumPy scalar
        the node is marked SCALAR_MATH (graph.py): eager NumPy runs it with its scalar math."""
        self.operator = True
        try:
            return self.emit(op, *args)
        finally:
            self.operator = False

    @contextlib.contextmanager
    def in_own_order(self, function: str):
        """The nodes emitted inside are marked OWN_ORDER=function (graph.py)."""
        saved, self.own_order = self.own_order, function
        try:
            yield
        finally:
            self.own_order = saved

    def push_predicate(self, cond: Proxy) -> None:
        """Enter a branch taken when `cond` (a bool value) holds, inside the current one."""
        if self.predicates:
            cond = self._emit("logical_and", self.predicates[-1], cond)
        self.predicates = self.predicates + (cond,)

    def pop_predicate(self) -> None:
        self.predicates = self.predicates[:-1]

    def _predicated_index_put(self, x, value, *arrays, entries):
        """`x[idx] = value` inside a branch: `x[idx] = where(taken, value, x[idx])` (the value cast
        to x's dtype first, as the assignment casts it); where the branch is not taken the same
        elements are written back, repeated indices included."""
        old = self._emit("index", x, *arrays, entries=entries)
        if _value_dtype(value) != x.dtype:
            value = self._emit("astype", value, dtype=x.dtype)
        value = self._emit("where", self.predicates[-1], value, old)
        return self._emit("index_put", x, value, *arrays, entries=entries)

    def _harmless(self, a, op: str):
        """`a` where the current branch is taken, a value no op reports an error on elsewhere."""
        if not isinstance(a, Proxy):
            return a
        fake = a.fake
        one = _HARMLESS.get(op, 1)
        if isinstance(fake, FakeScalar) and fake.pytype in (int, float, complex):
            safe = fake.pytype(one)
        elif isinstance(fake, FakeArray) and fake.scalar and fake.shape == () and fake.dtype.kind in "iufc":
            safe = fake.dtype.type(one)
        else:
            return a                                 # arrays and bools: as computed
        return self._emit("select", self.predicates[-1], a, safe)

    def _emit(self, op: str, *args, **attrs):
        opdef = get_op(op)
        if opdef.kind == "mutation":
            self.mutations += 1
            if args and isinstance(args[0], Proxy):
                _check_write_target(args[0].node, op, self.chosen_arrays)
        elif op == "loop" and attrs["body"].writes:      # a loop node writing captured arrays
            self.mutations += 1
            captured = attrs["body"].split_args(args)[2]
            for k in attrs["body"].writes:
                if isinstance(captured[k], Proxy) and self.chosen_arrays:
                    _check_chosen(captured[k].node, op, self.chosen_arrays)
        result = opdef.meta(*_meta_arg(args), **{k: _meta_arg(v) for k, v in attrs.items()})
        node_attrs = tuple(sorted((k, self.lift_args(to_expr(v))) for k, v in attrs.items()))
        scalar_math = self.operator and isinstance(result, FakeArray) and result.scalar
        if scalar_math:
            node_attrs = tuple(sorted(node_attrs + ((SCALAR_MATH, True),)))
        if self.errstate and (opdef.fp_errors != "none" or scalar_math):
            node_attrs = tuple(sorted(node_attrs + ((ERRSTATE, self.errstate),)))
        if self.own_order:
            node_attrs = tuple(sorted(node_attrs + ((OWN_ORDER, self.own_order),)))
        node_args = tuple(self.lift_args(to_expr(a)) for a in args)
        if result is None:
            self.added(self.graph.add(Node(op, node_args, node_attrs)))
            return None
        if isinstance(result, FakeScalar):     # Python scalar arithmetic on run-time scalars
            dtype = _PY_DTYPE[result.pytype]
            node = self.graph.add(Node(op, node_args, node_attrs, (), dtype, True))
        else:
            node = self.graph.add(Node(op, node_args, node_attrs, to_expr(result.shape), result.dtype,
                                       result.scalar))
        _FAKES[node] = result
        self.added(node)
        return Proxy(node, result)

    # hooks of a loop body's builder (ir/subgraph.py): nodes of an enclosing graph become inputs
    def lift_args(self, a):
        return a

    def added(self, node: Node) -> None:
        pass


# the harmless operand value of ops for which 1 is not (arctanh(1) = inf reports "divide"; an
# int cast to an index, x[k] with a run-time k, is in bounds at 0 wherever x has an element)
_HARMLESS = {"arctanh": 0, "astype": 0}
# Python's own arithmetic on Python scalars that never raises (`2.0 * t`, `i + 1`): no harmless
# operands needed (the division family raises ZeroDivisionError, `**` OverflowError)
_QUIET_PYTHON_OPS = frozenset({"add", "subtract", "multiply", "negative", "positive", "absolute", "less",
                               "less_equal", "greater", "greater_equal", "equal", "not_equal"})


def _quiet_python(op: str, args) -> bool:
    return op in _QUIET_PYTHON_OPS and all(
        isinstance(a.fake, FakeScalar) if isinstance(a, Proxy) else type(a) in (bool, int, float) for a in args)


def _value_dtype(x):
    if isinstance(x, Proxy):
        return None if isinstance(x.fake, FakeScalar) else x.dtype
    return x.dtype if isinstance(x, np.generic) else None
