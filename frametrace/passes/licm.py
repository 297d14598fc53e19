"""Loop-invariant code motion: body nodes of a structured loop (ir/ops/loops.py) whose value is
the same in every iteration move out of the body, into the graph holding the loop node, and
come back in as captured values.

    hoist_loop_invariants(graph) -> number of body nodes moved (loops nested in bodies first)

`out[t] = a * x[t] + (1 - a) * out[t - 1]` computes `1 - a` once per call instead of once per
iteration; more importantly the body no longer runs Python scalar arithmetic between its
kernels, which would keep it off the native loop paths (backends/llvm/array_loops.py).

A body node moves when all of these hold:
  * its operands are loop-invariant: constants, size expressions without the loop index,
    captured Python scalars and NumPy scalars (immutable values), captured arrays when the
    body writes into no captured array (a write could reach any of them through a view),
    and nodes that move themselves; not the index, not carried values;
  * it computes a new value from them (op kinds elementwise, reduction, scan, copy,
    creation; not a view, a mutation, a loop, a data-dependent op), and no mutation of the
    body writes into it (a fresh array per iteration must stay one);
  * running it cannot raise or warn where the loop would not have run it (zero trips):
    `registry.may_raise` says it cannot raise, and either all its operands are Python
    scalars (Python's float arithmetic neither warns nor raises, except / // % ** by zero,
    which `may_raise` covers; `x / 6.0` with a nonzero constant divisor is let through) or
    the op reports no floating-point errors (fp_errors "none"); nodes inside a traced
    `np.errstate` block stay.
"""
from __future__ import annotations

import dataclasses

import sympy

from ..ir.builder import record_fake, recorded_fake
from ..ir.fake import FakeScalar
from ..ir.graph import IndexSlice, Node, flatten_args
from ..ir.ops.loops import carried_fake, written_values
from ..ir.ops.raising import weak_arg
from ..ir.registry import get_op, may_raise

HOISTABLE_KINDS = ("elementwise", "reduction", "scan", "copy", "creation")
_PY_DIVISIONS = ("true_divide", "floor_divide", "remainder")


def hoist_loop_invariants(graph) -> int:
    """Move the invariant nodes of every loop body in `graph` out of it (see module doc), in
    place: the hoisted nodes go just before their loop node, which is rebuilt with them as
    extra captured values (and every later reader of it with it)."""
    moved = 0
    remap: dict = {}                     # old node -> its replacement (loop nodes, their readers)
    bodies: dict = {}                    # old LoopBody -> new LoopBody
    nodes = []
    for n in graph.nodes:
        new = _substituted(n, remap, bodies)
        if new.op == "loop":
            moved += hoist_loop_invariants(new.attr("body").graph)
            hoisted, rebuilt = _hoist(new)
            nodes.extend(hoisted)
            moved += len(hoisted)
            if rebuilt is not new:
                bodies[new.attr("body")] = rebuilt.attr("body")
                new = rebuilt
        if new is not n:
            remap[n] = new
        nodes.append(new)
    graph.nodes[:] = nodes
    graph.outputs = tuple(remap.get(o, o) if isinstance(o, Node) else o for o in graph.outputs)
    return moved


# ----------------------------------------------------------------------------- one loop node

def _hoist(loop: Node):
    """(the outer nodes computing the body's invariants, the rebuilt loop node)."""
    body = loop.attr("body")
    g = body.graph
    head, carried, captured, sizes = body.split_args(loop.args)
    nc = body.ncarried
    outer: dict = {}                     # body node -> the outer value it stands for
    for inp, value in zip(g.inputs[nc:nc + body.ncaptured], captured):
        if inp.attr("kind") == "scalar" or inp.scalar or not body.writes:
            outer[inp] = value
    written = _written_nodes(g)
    # symbols the body binds itself: the index and the carried sizes (`np.zeros(len(Z))` stays)
    bound = {body.index} - {None} | {sym for sym, _, _ in body.carried_sizes}
    hoisted = []
    for n in g.nodes:
        if n not in written and _movable(n, bound, outer):
            node = Node(n.op, _mapped(n.args, outer), n.attrs, n.shape, n.dtype, n.scalar)
            _keep_fake(n, node)
            outer[n] = node
            hoisted.append(n)
    if not hoisted:
        return [], loop
    moved = set(hoisted)
    label = g.inputs[0].attr("source").split(":")[0] if g.inputs else "loop"
    inputs: dict = {}                    # hoisted body node -> the new body input standing for it
    extra = []

    def use(a):
        if a in moved and a not in inputs:
            fake = carried_fake(a)
            kind = "scalar" if isinstance(fake, FakeScalar) else "array"
            inputs[a] = g.add_input(source=f"{label}:hoisted{len(inputs)}", kind=kind,
                                    shape=a.shape if kind == "array" else (), dtype=a.dtype,
                                    scalar=a.scalar)
            extra.append(outer[a])
        return inputs[a]

    rebuilt: dict = {}
    kept = []
    for n in g.nodes:
        if n in moved:
            continue
        args = _mapped(n.args, rebuilt, use, moved)
        if _changed(args, n.args):
            new = Node(n.op, args, n.attrs, n.shape, n.dtype, n.scalar)
            _keep_fake(n, new)
            rebuilt[n] = new
            n = new
        kept.append(n)
    g.nodes[:] = kept
    g.outputs = tuple(use(o) if o in moved else rebuilt.get(o, o) if isinstance(o, Node) else o
                      for o in g.outputs)
    new_body = dataclasses.replace(body, ncaptured=body.ncaptured + len(extra))
    args = tuple(head) + tuple(carried) + tuple(captured) + tuple(extra) + tuple(sizes)
    attrs = tuple((k, new_body if k == "body" else v) for k, v in loop.attrs)
    new_loop = Node(loop.op, args, attrs, loop.shape, loop.dtype, loop.scalar)
    _keep_fake(loop, new_loop)
    return [outer[n] for n in hoisted], new_loop


def _movable(n: Node, bound: set, outer: dict) -> bool:
    op = get_op(n.op)
    if op.kind not in HOISTABLE_KINDS or n.op == "py_scalar" or n.dtype is None or n.attr("errstate"):
        return False
    for leaf in flatten_args(tuple(v for _, v in n.attrs)):
        if isinstance(leaf, Node) or _mentions(leaf, bound):
            return False
    if _mentions(n.shape, bound):
        return False
    for a in flatten_args(n.args):
        if isinstance(a, Node):
            if a not in outer:
                return False
        elif _mentions(a, bound):
            return False
    python = all(weak_arg(a) for a in n.args)
    if may_raise(n) and not (python and _safe_division(n)):
        return False
    return python or op.fp_errors == "none"


def _safe_division(n: Node) -> bool:
    """A Python float `x / c`, or a Python `x // c`, `x % c`, with `c` a nonzero constant:
    these cannot raise (an int divided by a float may be too large for a float: not let through)."""
    if n.op not in _PY_DIVISIONS or len(n.args) != 2:
        return False
    x, c = n.args
    if type(c) not in (int, float) or c == 0 or c != c:
        return False
    if n.op == "true_divide" or type(c) is float:     # an int converted to float may not fit
        return isinstance(x, float) or (isinstance(x, Node) and x.dtype.kind == "f")
    return True


def _written_nodes(g) -> set:
    """Body nodes whose memory a mutation (or a nested loop) of the body writes into, with the
    views on the way to the written base."""
    out = set()
    for n in g.nodes:
        for t in written_values(n):
            while isinstance(t, Node):
                out.add(t)
                if t.op == "input" or get_op(t.op).kind != "view" or not t.args:
                    break
                t = t.args[0]
    return out


# ----------------------------------------------------------------------------- helpers

def _mentions(x, bound: set) -> bool:
    """Does `x` mention a symbol the body binds (its index, its carried sizes)?"""
    if not bound:
        return False
    return any(isinstance(a, sympy.Basic) and bound & a.free_symbols for a in flatten_args(
        x if isinstance(x, tuple) else (x,)))


def _mapped(args, table: dict, use=None, moved=()):
    """`args` with each Node replaced by table[node] (or `use(node)` for a moved one)."""
    def one(a):
        if isinstance(a, Node):
            if use is not None and a in moved:
                return use(a)
            return table.get(a, a)
        if isinstance(a, tuple):
            return tuple(one(x) for x in a)
        if isinstance(a, IndexSlice):
            return IndexSlice(one(a.start), one(a.stop), one(a.step))
        return a
    return tuple(one(a) for a in args)


def _substituted(n: Node, remap: dict, bodies: dict) -> Node:
    """`n` reading the replacements of replaced nodes (and rebuilt loop bodies)."""
    if not remap and not bodies:
        return n
    args = _mapped(n.args, remap)
    attrs = tuple((k, bodies.get(v, v) if k == "body" else v) for k, v in n.attrs)
    if not _changed(args, n.args) and all(a is b for (_, a), (_, b) in zip(attrs, n.attrs)):
        return n
    new = Node(n.op, args, attrs, n.shape, n.dtype, n.scalar)
    _keep_fake(n, new)
    return new


def _changed(new: tuple, old: tuple) -> bool:
    return any(x is not y for x, y in zip(flatten_args(new), flatten_args(old)))


def _keep_fake(old: Node, new: Node) -> None:
    fake = recorded_fake(old)
    if fake is not None:
        record_fake(new, fake)


__all__ = ["hoist_loop_invariants"]
