"""Structured loops: a `for` over a symbolic range and a `while` whose condition the body computes.

The tracer turns a Python loop whose trip count is a size or an int argument (or whose
condition depends on array data) into one node holding its body as a sub-graph, in the
spirit of JAX's `fori_loop` / `while_loop` and torch's `while_loop`, but produced from
ordinary Python (trace/loops.py). Canonical forms:

  loop(start, stop, step, *carried, *captured, *sizes; body)          body.kind == "for"
  loop(start, stop, step, *carried, *captured, *sizes; body)          body.kind == "for_break"
  loop(go, *carried, *captured, *sizes; body)                         body.kind == "while"
  loop_out(loop; index)          the final value of carried value `index`

`start`, `stop`, `step`: ints or size expressions (Python's range: any sign of step, zero
trips allowed). `go`: a bool value (the loop's entry test). `carried`: the values the body
rebinds, in the body's order (arrays, NumPy scalars, run-time Python scalars). `captured`:
outer values the body reads, passed by reference: the body writes into the arrays listed in
`body.writes` (indices into `captured`), which every later node sees. `sizes`: the outer
size symbols the body mentions, bound again inside it.

The body graph binds its size symbols from `symbol_values` = (the loop index, for a `for`
loop) + `sizes` + the carried sizes, and takes `inputs` = carried + captured. A carried array
whose length changes from one iteration to the next (`Z = Z[I]`, a mask of the body) has that
dim as a loop-carried size (`body.carried_sizes`: (symbol, carried position, dim)), bound from
the carried value at the start of each iteration; carried arrays that start equal and end
equal share one. It returns the carried values of
the next iteration (+ for a `while`, the bool `go` deciding the next iteration; + for a
`for_break`, a `for` whose body may `break`, the bool `go` that is False once it broke: the
loop ends there, with the carried values the breaking iteration returned). Carried
values keep their type, dtype and rank from one iteration to the next, and their shape except
along carried sizes (the tracer checks it). The loop node's own value is the tuple of the final
carried values (dtype object); nothing but `loop_out` reads it.

Backends run a loop through `run_loop(body, runner, ...)` with their own compiled body, or
lower it to a native loop (backends/llvm/loops.py).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy

from ..fake import FakeArray, FakeScalar
from ..graph import Graph
from ..registry import Loop, NumpyCall, register

STATE = np.dtype(object)      # the loop node's value: the tuple of final carried values


@dataclass(frozen=True, eq=False)
class LoopBody:
    """The body of a loop node (see the module doc). Compared by identity."""
    graph: Graph
    kind: str                 # "for" | "for_break" | "while"
    ncarried: int
    ncaptured: int
    sizes: tuple              # outer size symbols, in the order the loop node passes them
    index: object = None      # "for", "for_break": the body's symbol for the loop index
    writes: tuple = ()        # indices into `captured` of arrays the body writes into
    location: str = ""        # the user's loop (file:line), for logs
    carried_sizes: tuple = () # ((symbol, carried position, dim), ...): sizes a carried array changes
    firsts_at_break: tuple = ()  # for_break with carried sizes: carried positions a `break` leaves
                                 # with the values its iteration started with
    stop_when: object = None     # "for" with carried sizes: a condition on the body's symbols that
                                 # ends the loop before an iteration (`if not len(z): break` first);
                                 # the carried index (last) is then the index it stopped at

    def __repr__(self):
        return f"<{self.kind} body#{id(self):x} at {self.location}>"

    def __str__(self):
        return f"<{self.kind} body: {len(self.graph.nodes)} nodes at {self.location}>"

    def split_args(self, args):
        """(head, carried, captured, sizes) of a loop node's evaluated arguments."""
        head = 1 if self.kind == "while" else 3
        c, k = head + self.ncarried, head + self.ncarried + self.ncaptured
        return tuple(args[:head]), list(args[head:c]), list(args[c:k]), list(args[k:])


def _interpret_runner(body: LoopBody):
    from ..interpret import interpret        # the reference interpreter (a sibling module)
    symbols = list(body.graph.symbols)

    def run(inputs, symbol_values):
        named = {n.attr("source"): v for n, v in zip(body.graph.inputs, inputs)}
        return interpret(body.graph, named, dict(zip(symbols, symbol_values)))
    return run


def run_loop(body: LoopBody, runner, *args):
    """Run the loop with `runner(inputs, symbol_values) -> outputs`, the compiled body."""
    head, carried, captured, sizes = body.split_args(args)
    if body.carried_sizes:
        return _run_varying(body, runner, head, carried, captured, sizes)
    if body.kind == "for":
        for i in range(*head):
            carried = runner(carried + captured, [i] + sizes)
        return tuple(carried)
    if body.kind == "for_break":
        for i in range(*head):
            out = runner(carried + captured, [i] + sizes)
            carried = list(out[:-1])
            if not out[-1]:
                break
        return tuple(carried)
    go = head[0]
    while go:
        out = runner(carried + captured, sizes)
        carried, go = list(out[:-1]), out[-1]
    return tuple(carried)


def _run_varying(body, runner, head, carried, captured, sizes):
    """run_loop of a body with carried sizes: each iteration binds them from the carried values."""
    where = [(k, d) for _, k, d in body.carried_sizes]
    if body.kind == "while":
        go = head[0]
        while go:
            out = runner(carried + captured, sizes + [carried[k].shape[d] for k, d in where])
            carried, go = list(out[:-1]), out[-1]
        return tuple(carried)
    stop = _stop_test(body) if body.stop_when is not None else None
    for i in range(*head):
        values = [i] + sizes + [carried[k].shape[d] for k, d in where]
        if stop is not None and stop(*values):
            carried[-1] = i
            break
        out = runner(carried + captured, values)
        if body.kind == "for":
            carried = out
            continue
        if not out[-1]:
            firsts = set(body.firsts_at_break)
            return tuple(c if k in firsts else o for k, (c, o) in enumerate(zip(carried, out[:-1])))
        carried = list(out[:-1])
    return tuple(carried)


@functools.cache
def _stop_test(body: LoopBody):
    """body.stop_when as a function of the body's symbol values (Python ints)."""
    return sympy.lambdify(list(body.graph.symbols), body.stop_when, modules=[{}, "math"])


def loop_ref(*args, body: LoopBody, runner=None):
    return run_loop(body, runner if runner is not None else _interpret_runner(body), *args)


@register("loop", kind="other", ref=loop_ref, may_raise=lambda n: True,
          lowering=NumpyCall("a structured loop: its body is compiled as a graph of its own"))
def loop_meta(*args, body: LoopBody, runner=None):
    """A structured loop (see the module doc); its value is the tuple of final carried values."""
    return FakeArray((), STATE, True)


def loop_out_ref(state, index: int, body=None):
    return state[index]


@register("loop_out", kind="other", ref=loop_out_ref,
          lowering=NumpyCall("picks a final carried value out of the loop's state"))
def loop_out_meta(state, index: int, body: LoopBody):
    """The final value of carried value `index` of the loop whose body is `body` (its shape
    in the outer graph's size expressions: the body binds the same symbols; along a carried
    size, the body's data-dependent size of the last value, bound in the outer graph from
    this value, as any unbacked size)."""
    return carried_fake(body.graph.outputs[index])


def carried_fake(node) -> FakeArray | FakeScalar:
    """The abstract value of a body output / carried node (a Python scalar or an array)."""
    from ..builder import recorded_fake
    fake = recorded_fake(node)
    if isinstance(fake, FakeScalar):
        return fake
    if node.op == "input" and node.attr("kind") == "scalar":
        return FakeScalar({"b": bool, "i": int, "f": float, "c": complex}[node.dtype.kind])
    return FakeArray(node.shape, node.dtype, node.scalar)


# ----------------------------------------------------------------------------- values in bodies

def _kind_of(x):
    """('py', type) for a Python scalar (abstract or constant), ('np', dtype, shape) otherwise."""
    if isinstance(x, FakeScalar):
        return ("py", x.pytype)
    if isinstance(x, FakeArray):
        return ("np", x.dtype, x.scalar, len(x.shape))
    if isinstance(x, np.generic):
        return ("np", x.dtype, True, 0)
    if isinstance(x, (bool, int, float, complex)):
        return ("py", type(x))
    expr = getattr(x, "expr", x)                     # a size (SymInt) or a size expression
    if getattr(expr, "is_integer", False):           # first: a bare Symbol is a sympy Boolean too
        return ("py", int)
    if isinstance(expr, sympy.logic.boolalg.Boolean):
        return ("py", bool)
    raise TypeError(f"not a value: {x!r}")


def select_ref(cond, a, b):
    return a if cond else b


@register("select", kind="elementwise", ref=select_ref, lowering=Loop("fiub", body="where"))
def select_meta(cond, a, b):
    """`a if cond else b` on scalars of one type (both branches of a data-dependent `if` in a
    loop body, `min(a, b)`): the result has that type, a Python scalar stays one."""
    from ...errors import Unsupported
    ka, kb = _kind_of(a), _kind_of(b)
    if ka != kb or (ka[0] == "np" and ka[3] != 0 and getattr(a, "shape", None) != getattr(b, "shape", None)):
        raise Unsupported("the two branches give values of different types", kind="loop_type",
                          hints=("give the variable the same type (and dtype) on both branches",))
    if isinstance(a, (FakeArray, FakeScalar)):
        return a
    if isinstance(b, (FakeArray, FakeScalar)):
        return b
    return FakeScalar(ka[1]) if ka[0] == "py" else FakeArray((), ka[1], True)


def py_scalar_ref(value):
    return value


@register("py_scalar", kind="elementwise", ref=py_scalar_ref, lowering=NumpyCall("a constant"))
def py_scalar_meta(value):
    """A constant or a size as a value of the graph (a carried value rebound to a constant)."""
    kind = _kind_of(value)
    return FakeScalar(kind[1]) if kind[0] == "py" else FakeArray((), kind[1], True)


def written_values(node) -> list:
    """The values whose memory `node` writes into: a mutation's destination, the captured
    arrays a loop node writes (`body.writes`); [] for a node that writes nothing."""
    from ..graph import Node
    from ..registry import get_op
    if node.op == "loop":
        body = node.attr("body")
        captured = body.split_args(node.args)[2]
        return [captured[i] for i in body.writes if isinstance(captured[i], Node)]
    if get_op(node.op).kind == "mutation" and node.args and isinstance(node.args[0], Node):
        return [node.args[0]]
    return []
