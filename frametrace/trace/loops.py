"""Python loops traced once into a structured loop node (ir/ops/loops.py), not unrolled.

What becomes a loop node (what is compiled must grow with the source, not with trip counts):
  * `for` over a range (literal, static or symbolic bounds), an array, or enumerate / zip /
    reversed of those (trace/loop_iter.py: the index runs over a range, the item is computed
    from it). A constant trip count whose unrolled size, trips x body nodes, is within
    `config.loop_unroll_budget` is unrolled instead ("small"); loops over lists and tuples
    (heterogeneous Python objects: layer stacks) are unrolled;
  * `while` loops whose test or body branches on array data: trace/while_loops.py decides
    where the node starts and traces its body as predicated paths (trace/paths.py), then
    builds it here (`_build` with the body traced by its `iterate`);
  * `while i < n:` with a Python int counter `i += c` (trace/counted_while.py): the `for` loop
    node of `range(i, n, c)`, the counter being the index.

How: the body is traced once with the loop index as a symbol `i<N>` known to lie in the
range (shapes/loop_index.py: bounds checks over the range, no guard on the index) and every
local the body rebinds (`carried`) as an input of the body graph; state the body writes
besides its locals (closure cells, attributes, dict entries: trace/loop_state.py) is carried
the same way and written back after the node. After one pass the new values must have the
types they came in with (Python scalar type; dtype, rank and sizes of arrays); else the
trace restarts with the loop's first iterations peeled (a Python float that becomes a
np.float64 on the first iteration) or unrolled. A data-dependent `if` inside the body is
if-converted (trace/branches.py); carried-value types are trace/loop_values.py.
Anything the body cannot do as a loop node (a graph break, a Python side effect it cannot
carry, two `break`s, `return`, an unstable type) restarts the trace with this loop unrolled,
and the logs say why (FRAMETRACE_LOGS=loops, or `ft.set_logs(loops=logging.DEBUG)`); a graph
break inside an unrolled loop splits the frame before the loop, which then runs in Python
(trace/graph_break.py).

A restart is `LoopRestart`: trace/compile.py re-runs the trace with the new decision in
`output.loop_plan`, keyed by (code object, offset of the loop header); ("carry", key) holds
the state a loop carries, ("in_place", key) the arrays it updates in place.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import sympy

from .. import pyversion
from ..errors import NumpyError, Unsupported
from ..ir.builder import Proxy, to_expr
from ..ir.fake import FakeScalar
from ..ir.graph import Node
from ..ir.ops.loops import LoopBody, written_values
from ..ir.registry import get_op
from ..ir.subgraph import SubgraphBuilder
from ..logs import get_logger
from ..resume import code_loops
from . import errstate
from .branches import if_convert, returns
from . import carried_sizes, loop_split, loop_state
from .counted_while import recognise, verify_bottom
from .loop_iter import LoopIterator, bind_after, target_names, target_ops
from .loop_plan import NEXT_DECISION, PEELED, LoopRestart, loop_key, want_loop, within_budget  # noqa: F401
from .loop_plan import peel_needed, record_peel_types
from .loop_plan import restart as _restart, short_loop_as_node as _short_loop_as_node, why as _why
from .loop_values import PoisonVariable, carried_type, kind_text, type_key, variable
from .variables.array import ArrayVariable, references
from .variables.constant import ConstantVariable, wrap_number

log = get_logger("loops")

def _runs(tx, start, stop, positive, key) -> bool:
    """The (peeled) range is not empty. Where that depends on an enclosing loop's index (a
    triangular `range(i)`), the enclosing loop peels its first iterations instead."""
    from ..errors import DataDependentError
    try:
        return bool(stop > start) if positive else bool(stop < start)
    except DataDependentError:
        exc = Unsupported("whether a peeled inner loop runs depends on the enclosing loop's index",
                          kind="loop_type")
        exc.peel_types = tx.output.loop_plan.get(("peel_types", key))   # the enclosing loop peels for the same reason
        raise exc from None


def trace_for(tx, ins, it: LoopIterator) -> None:
    """FOR_ITER on a LoopIterator: the whole loop as one node; `tx.ip` ends after it."""
    decision = tx.output.loop_plan.get(it.key, "loop")
    stack = tx.output.loop_stack
    if stack and stack[-1].kind == "peel" and stack[-1].tx is tx and stack[-1].header == tx.ip - 1:
        stack.pop()                                     # the peeled iteration is over
    if it.data:
        _build_data_range(tx, it, exit_ip=tx.offset_to_index[ins.argval] + pyversion.FOR_ITER_SKIP)
        return
    start, stop, step = it.head
    if step == 0:
        raise NumpyError(ValueError("range() arg 3 must not be zero"), context="range")
    positive = bool(step > 0)                           # a guard when the step is a symbol
    exit_ip = tx.offset_to_index[ins.argval] + pyversion.FOR_ITER_SKIP
    if it.peeled < PEELED.get(decision, 0) and peel_needed(tx, it.key):
        it.peeled += 1                                  # the first iterations, as Python runs them
        if not _runs(tx, start, stop, positive, it.key):
            tx.pop()
            tx.ip = exit_ip
            return
        it.head = (start + step, stop, step)
        tx.push(it.item(tx, wrap_number(start)))
        stack.append(_LoopContext(tx, "peel", tx.ip - 1, exit_ip))   # its `if`s are if-converted
        return
    if all(type(v) is int for v in (start, stop, step)) and not range(start, stop, step):
        tx.pop()                                        # a constant range left empty (peeled): no loop
        tx.ip = exit_ip
        return
    env = tx.output.shape_env
    split = loop_split.pieces(tx, it.key, (start, stop, step))
    if split is not None:
        _build_split(tx, it, split, exit_ip, (start, stop, step))
        return
    lo, hi = (start, stop - 1) if positive else (stop + 1, start)
    index = env.enter_loop_index(to_expr(lo), to_expr(hi))
    try:
        _build(tx, it.key, header=tx.ip - 1, exit_ip=exit_ip, kind="for",
               head=(start, stop, step), index=index, peeled=it.peeled)
    finally:
        env.exit_loop_index(index)


def _build_split(tx, it, split, exit_ip, head) -> None:
    """The loop as consecutive loop nodes over the ranges of `split` (trace/loop_split.py), in
    order: what one leaves (carried values, state written back) is what the next starts from;
    the loop target after them is bound from the whole range."""
    env = tx.output.shape_env
    header = tx.ip - 1
    iterator = tx.stack[-1]
    # a piece the guards already prove empty (`m <= 0` decided by a peeled iteration) is left out
    split = [p for p in split if not loop_split.surely_empty(env, *p)] or split[-1:]
    for k, (a, b) in enumerate(split):
        if k:
            tx.stack.append(iterator)
            tx.ip = header + 1
        last = k == len(split) - 1
        index = env.enter_loop_index(to_expr(a), to_expr(b - 1), piece=True)
        try:
            body = _build(tx, it.key, header=header, exit_ip=exit_ip, kind="for", head=(a, b, 1), index=index,
                          peeled=it.peeled, bind_head=head if last else None)
        finally:
            env.exit_loop_index(index)
        if body.kind != "for":
            _restart(tx, ("split", it.key), "no", "a body that breaks out of the loop is not split")
    log.info("loop at %s: split at an index condition into %d loop node(s)", body.location, len(split))


def _build_data_range(tx, it, exit_ip) -> None:
    """`for j in range(p[i], p[i + 1])`: bounds read from arrays. The index is a symbol the body
    sees only as a value, `j` a Python int of the graph (`py_scalar` of it), so `a[j]`,
    `x[c[j]]` are data indices, wrapped and bounds-checked where they are read as NumPy does,
    and nothing is proved or guarded about the range. Whether it runs at all is data: it is
    never peeled. A Python float the first iteration makes a NumPy float64 (`s = 0.0; s +=
    a[j]`, the peel a symbolic range would do) is carried as a float64 from the start and is,
    after the loop, the choice between the two (a LoopChoiceVariable: stored into float64
    arrays as the value, refused where its type would show)."""
    from .variables.scalar_choice import LoopChoiceVariable
    key = it.key
    promoted = []
    if tx.output.loop_plan.get(key, "loop") in PEELED:
        types = tx.output.loop_plan.get(("peel_types", key)) or ()
        for name, before in types:
            vt = tx.locals.get(name)
            if before != ("py", float) or vt is None or type_key(vt)[:2] != before or \
                    tx.output.loop_plan[key] != "peel":
                _restart(tx, key, "unroll", f"{name!r} changes type in a loop over a range bounded by array data")
            promoted.append((name, vt))
        if not types:
            _restart(tx, key, "unroll", "a loop over a range bounded by array data cannot peel its first iteration")
        from ..ir.numpy_api import lookup_function
        for name, vt in promoted:                       # np.float64(s): the same value
            tx.locals[name] = ArrayVariable(lookup_function(np.float64)(tx.output.builder, tx.unwrap(vt)))
    index = tx.output.shape_env.data_loop_index()
    _build(tx, key, header=tx.ip - 1, exit_ip=exit_ip, kind="for", head=it.head, index=index, data=True)
    if promoted:
        start, stop, step = it.head
        b = tx.output.builder
        empty = ArrayVariable(b.emit("less_equal" if step > 0 else "greater_equal", stop, start))
        for name, vt in promoted:
            final = tx.locals[name]
            tx.locals[name] = LoopChoiceVariable(name, empty, vt, final, final)


# ----------------------------------------------------------------------------- branches in bodies

def handles_jump(tx, ins, cond) -> bool:
    """A conditional jump on array data (`cond`) that no `while` loop took over
    (trace/while_loops.py): an `if` inside a `for` loop body (if-converted). False: not ours
    (the caller asks for its truth: a graph break)."""
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    if ctx is not None and carried_sizes.size_break(tx, ins, cond, ctx):
        return True
    if ctx is not None:
        try:
            if_convert(tx, ins, cond)
        except Unsupported as exc:
            if ctx.kind != "peel" or ctx.tx is not tx or isinstance(exc, loop_state.CarryRequest):
                raise
            # the peeled first iteration cannot leave early as a loop node does: unroll instead
            _restart(tx, loop_key(tx, ctx.header), "unroll", _why(exc))
        return True
    _short_loop_as_node(tx)
    return False


# ----------------------------------------------------------------------------- counted while loops

def _counted_test(tx, ins, cond) -> bool:
    """A test of a counted while loop (trace/counted_while.py): the entry test (the loop node,
    or the peeled first iteration), the bottom test of its body traced once (checked), or the
    bottom test that ends the peeled iteration. False: not one of these."""
    jump_if = pyversion.POP_JUMPS.get(ins.opname)
    target = tx.offset_to_index.get(ins.argval)
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    if ctx is not None and ctx.tx is tx and ctx.counter is not None and _is_bottom(tx, ctx, target, jump_if):
        if ctx.kind == "peel":                          # the peeled iteration is over
            tx.output.loop_stack.pop()
            return _counted_entry(tx, ins, cond, ctx.header, ctx.exit_ip, peeled=True)
        if not verify_bottom(tx, ctx.counter, ctx.index, tx.ip - 2):
            raise Unsupported(f"the counter {ctx.counter.name!r} or the bound of a while loop changes in "
                              "its body other than by the step", kind="loop")
        ctx.closed = True
        if target == ctx.header:
            tx.ip = ctx.header
        return True
    if jump_if is not False or isinstance(cond, ArrayVariable):
        return False
    here = tx.ip - 1
    loop = next((lp for lp in reversed(code_loops.enclosing(tx.code, here)) if lp.kind == "while"), None)
    if loop is None or here in loop.body or loop.header != tx.ip or target != loop.exit:
        return False                                    # not the entry test, or one with more parts
    exits = [k for k in range(loop.header) if _jumps_to(tx, k, loop.exit)]
    # no other part of the test enters the loop (`while a.sum() > 1 or k < 3`: not counted)
    entries = [k for k in range(loop.start, here) if _jumps_to(tx, k, loop.header)]
    return exits == [here] and not entries and _counted_entry(tx, ins, cond, loop.header, loop.exit)


def _is_bottom(tx, ctx, target, jump_if) -> bool:
    if target == ctx.header:                            # 3.11: jump back while the test holds
        return jump_if is True
    nxt = tx.instructions[tx.ip] if tx.ip < len(tx.instructions) else None
    return target == ctx.exit_ip and jump_if is False and nxt is not None and _jumps_to(tx, tx.ip, ctx.header)


def _counted_entry(tx, ins, cond, header, exit_ip, peeled=False) -> bool:
    key = loop_key(tx, header)
    plan = tx.output.loop_plan.get(key, "loop")
    if plan in ("unroll", "small") or (isinstance(cond, ConstantVariable) and not cond.value):
        return False                                    # "small": unrolled under the budget
    counter = recognise(tx, tx.ip - 2, header, exit_ip)
    if counter is None:
        return False
    if plan == "peel" and not peeled:                   # the first iteration, as Python runs it
        if not cond.truth(tx):
            tx.ip = exit_ip
            return True
        tx.ip = header
        peel = _LoopContext(tx, "peel", header, exit_ip)
        peel.counter = counter
        tx.output.loop_stack.append(peel)
        return True
    step, start, stop = counter.step, counter.start, counter.stop()
    lo, hi = (start, stop - 1) if step > 0 else (stop + 1, start)
    env = tx.output.shape_env
    index = env.enter_loop_index(to_expr(lo), to_expr(hi))
    tx.ip = header
    try:
        _build(tx, key, header=header, exit_ip=exit_ip, kind="for", head=(start, stop, step), index=index,
               counter=counter)
    finally:
        env.exit_loop_index(index)
    return True


# ----------------------------------------------------------------------------- the body

class _LoopContext:
    def __init__(self, tx, kind, header, exit_ip):
        self.tx, self.kind, self.header, self.exit_ip = tx, kind, header, exit_ip
        self.go = None                  # while: the bool deciding the next iteration
        self.paths = None               # while: the paths of the iteration being traced (trace/paths.py)
        self.counter = None             # a counted while loop: its Counter (trace/counted_while.py)
        self.index = None               # ... and the index symbol standing for the counter
        self.closed = False             # ... its bottom test was reached and checked
        self.iterator = None            # for: the LoopIterator a `break` pops (trace/branches.py)
        self.brk = None                 # for: the bool that holds when the iteration broke out
        self.converted = False          # an `if` on data was if-converted in the body (no unrolling)
        self.state = None               # a body being traced: the LoopState it carries (trace/loop_state.py)
        self.key = self.head = None     # a loop node's plan key and (start, stop, step) (trace/loop_split.py)
        self.firsts = None              # a body with carried sizes: carried name -> its value at the start
        self.firsts_at_break = ()       # ... the names a `break` leaves with those values (trace/branches.py)
        self.stop_when = None           # ... a size test that ends the loop before an iteration (carried_sizes.py)


def _build(tx, key, *, header, exit_ip, kind, head, index, counter=None, peeled=0, iterate=None, back=None,
           bind_head=False, data=False):
    """The loop at `header` as one node; `iterate(tx, ctx)` traces the body of a `while`
    (trace/while_loops.py), which sets ctx.go, and `back` is its last back edge. A piece of a
    split loop (`_build_split`) binds the loop target from `bind_head`, the whole range, when it
    is the last piece (None: an earlier one, the target is left to the next). `data`: a range
    bounded by array data (_build_data_range): the index is a value of the body."""
    body_start = header + 1
    if back is None:
        back = max((i for i in range(body_start, exit_ip) if _jumps_to(tx, i, header)), default=None)
    if back is None:
        raise Unsupported("a loop without a back edge", kind="loop")
    is_for = kind == "for" and counter is None
    # a `for` body runs to its exit: 3.12+ places a `break` block after the back edge
    stored = _stored_names(tx, body_start, exit_ip) if is_for else _stored_names(tx, header, back + 1)
    loop_vars, ops = set(), None
    if counter is not None:
        loop_vars = {counter.name}
    elif is_for:
        ops = target_ops(tx, body_start)
        if ops is None:
            _restart(tx, key, "unroll", "the loop target is not a local name or a tuple of them")
        loop_vars = target_names(ops)
        rebound = loop_vars & _stored_names(tx, body_start + len(ops), exit_ip)
        if rebound - set(tx.locals) - set(tx.lazy):
            _restart(tx, key, "unroll", f"the loop target {', '.join(sorted(rebound))} is assigned in the body")
        loop_vars -= rebound                            # carried: the body's value is the one left
    for name in stored:                                 # arguments rebound in the loop: wrap them now
        if name not in tx.locals and name in tx.lazy:
            tx.locals[name] = tx.wrap_value(*tx.lazy.pop(name))
    # arrays the body updates in place (`acc += row`) and rebinds to themselves: captured, not carried
    in_place = tx.output.loop_plan.get(("in_place", key), ())
    carried = sorted(n for n in stored if n not in loop_vars and n in tx.locals and n not in in_place
                     and not isinstance(tx.locals[n], PoisonVariable))
    # a rebound local that is no number or array (the key of an inner loop over a dict) cannot be
    # carried: the body must assign it before reading it (else the restart unrolls the loop)
    opaque = [n for n in carried if carried_type(tx.locals[n])[0] is None]
    carried = [n for n in carried if n not in opaque]
    slots = tx.output.loop_plan.get(("carry", key), ())
    try:
        targets = loop_state.resolve(tx, slots)
    except Unsupported as exc:
        _restart(tx, key, "unroll", _why(exc))
    carry_index = is_for and not data and any(s.kind == "index" for s in slots)
    lazy_before = set(tx.lazy)
    saved_locals, saved_stack = dict(tx.locals), list(tx.stack)
    outer = tx.output.builder
    body_builder = SubgraphBuilder(outer, f"loop{len(tx.output.loop_stack)}")
    placeholders, inits, labels = {}, [], []
    initial = [(name, tx.locals[name]) for name in carried] + [(t.slot.label(), t.get()) for t in targets]
    if carry_index:
        initial.append(("the loop index", wrap_number(head[0])))
    varying = tx.output.loop_plan.get(("vary", key), ())
    carried_syms: dict = {}                             # group -> the body's size symbol for it
    for label, vt in initial:
        fake, init = carried_type(vt)
        if fake is None:
            _restart(tx, key, "unroll", f"{label!r} ({vt.describe()}) is rebound in the loop; it is not a "
                                        "number or an array")
        fake = carried_sizes.vary(tx, fake, label, varying, carried_syms)
        node = body_builder.body_input(f"carried_{len(labels)}", fake)
        placeholders[len(labels)] = variable(Proxy(node, fake), vt)
        labels.append(label)
        inits.append(init)
    ctx = _LoopContext(tx, "counted" if counter is not None else kind, header, exit_ip)
    ctx.counter, ctx.index = counter, index
    ctx.key, ctx.head = key, head
    ctx.state = loop_state.LoopState(targets, tx)
    if is_for:
        ctx.iterator = saved_stack[-1]
    tx.output.builder = body_builder
    tx.output.loop_stack.append(ctx)
    tx.output.side_effects.frozen += 1
    tx.locals.update({name: placeholders[k] for k, name in enumerate(carried)})
    if carried_syms:                                    # a `break` may keep an iteration's first values
        ctx.firsts = {name: placeholders[k] for k, name in enumerate(carried)}
    tx.locals.update({name: PoisonVariable(name, in_body=True) for name in opaque})
    ctx.state.enter([placeholders[len(carried) + k] for k in range(len(targets))])
    try:
        if counter is not None:
            tx.locals[counter.name] = wrap_number(_symint(tx, index))
            tx.ip = header
        elif is_for and data:                          # j: a Python int of the graph
            tx.stack.append(ArrayVariable(body_builder.emit("py_scalar", index)))
            tx.ip = body_start
        elif is_for:
            tx.stack.append(ctx.iterator.item(tx, wrap_number(_symint(tx, index))))
            tx.ip = body_start
        if iterate is not None:
            iterate(tx, ctx)
        else:
            _run_to(tx, header, first=True)
        if kind == "while" and ctx.go is None:
            raise Unsupported("a while loop whose condition is not data-dependent inside it", kind="loop")
        if counter is not None and not ctx.closed:
            raise Unsupported(f"a while loop on {counter.name!r} whose body does not end at its test", kind="loop")
        if (ctx.brk is not None or ctx.stop_when is not None) and is_for and not carry_index and not data:
            raise loop_state.CarryRequest(loop_state.Slot("index", None, None))   # where it broke
        for name in in_place:
            if tx.locals.get(name) is not saved_locals.get(name):
                raise Unsupported(f"{name!r} is updated in place and rebound in the loop body", kind="loop")
        finals = [tx.locals.get(name) for name in carried] + ctx.state.values()
        carried_sizes.check_varying(tx, key, body_builder.graph, labels, placeholders, finals, varying)
        own = {to_expr(v) for v in carried_syms.values()}
        outputs = [_output_node(tx, body_builder, labels[k], placeholders[k], new, key, own)
                   for k, new in enumerate(finals)]
        if carry_index:
            outputs.append(body_builder.emit("py_scalar", _symint(tx, index)).node)
        if kind == "while":
            outputs.append(ctx.go.node)
        if ctx.brk is not None:                         # a `for` that may break: `go` is carried too
            outputs.append(body_builder.emit("logical_not", ctx.brk).node)
        _chosen_apart(body_builder, outputs)
    except loop_state.CarryRequest as exc:
        if exc.slot in slots:                           # carried, yet not found as the same state
            _restart(tx, key, "unroll", f"{_why(exc)} (not found again)")
        _restart(tx, ("carry", key), tuple(slots) + (exc.slot,), _why(exc))
    except Unsupported as exc:
        if getattr(exc, "kind", "") == "loop_type":
            record_peel_types(tx, key, getattr(exc, "peel_types", None))
        _restart(tx, key, NEXT_DECISION.get(tx.output.loop_plan.get(key, "loop"), "unroll")
                 if getattr(exc, "kind", "") == "loop_type" else "unroll", _why(exc))
    finally:
        ctx.state.exit()
        tx.output.side_effects.frozen -= 1
        tx.output.loop_stack.pop()
        tx.output.builder = outer
    graph = body_builder.graph
    graph.outputs = tuple(outputs)
    # (a piece of a split loop is no loop of its own to unroll: the restart would unroll them all)
    small = within_budget(tx, key, ctx, head, graph, peeled) if kind == "for" and bind_head is False else None
    if small is not None:
        _restart(tx, key, "small", small)
    sizes = carried_sizes.read_at(graph, len(labels), carried_syms)
    # a loop with carried sizes runs its body as Python runs it, each iteration on the arrays the
    # last one made: one of them written in place, then rebound, is Python's own behaviour when
    # nothing else sees its first value
    private = {k for k, name in enumerate(carried)
               if sizes and _private_init(tx, outer, inits[k], name, saved_locals, saved_stack)}
    body = _finish_body(tx, key, body_builder, "for_break" if ctx.brk is not None else kind, carried,
                        len(labels), in_place, index, sizes, private)
    if ctx.firsts_at_break:
        body = dataclasses.replace(body, firsts_at_break=tuple(carried.index(n) for n in ctx.firsts_at_break))
    if ctx.stop_when is not None:
        body = dataclasses.replace(body, stop_when=ctx.stop_when)
    args = list(head) + inits + list(body_builder.captured) + list(body.sizes)
    state = outer.emit("loop", *args, body=body)
    wrapped = {n: v for n, v in tx.locals.items() if n in lazy_before and n not in tx.lazy}
    tx.locals = saved_locals
    tx.locals.update(wrapped)                           # arguments first read inside the body
    tx.stack = saved_stack[:-1] if is_for else saved_stack
    finals = []
    for k in range(len(labels)):
        out = outer.emit("loop_out", state, k, body=body)
        fake = out.fake if labels[k] in {v[0] for v in varying} else placeholders[k].proxy.fake
        finals.append(variable(Proxy(out.node, fake), initial[k][1]))
    for k, name in enumerate(carried):
        tx.locals[name] = finals[k]
    for name in stored - set(carried) - loop_vars - set(in_place):
        tx.locals[name] = PoisonVariable(name)
    if is_for and data:                                 # where it stopped is data: no target after it
        for name in loop_vars:
            tx.locals[name] = PoisonVariable(name)
    elif is_for and bind_head is not None:
        bind_after(tx, ctx.iterator, ops, loop_vars, head if bind_head is False else bind_head,
                   finals[-1] if carry_index else None, saved_locals)
    if counter is not None:
        tx.locals[counter.name] = wrap_number(counter.final(head[1]))
    for k, t in enumerate(targets):                     # state written back, as stores after the loop
        t.write_back(tx, finals[len(carried) + k])
    tx.ip = exit_ip
    log.info("loop at %s: one %s-loop node, %d carried (%s), %d captured, body of %d nodes",
             body.location, "counted while" if counter is not None else body.kind, len(labels), ", ".join(labels),
             len(body_builder.captured), len(graph.nodes))
    return body


def _run_to(tx, header, first=False):
    """Step until control comes back to `header` (the end of an iteration)."""
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    while first or tx.ip != header:
        first = False
        if tx.ip in tx.region_starts and not errstate.trace_block(tx):
            raise Unsupported("a try/with block inside a loop body", kind="loop")
        if returns(tx):
            raise Unsupported("`return` inside a loop body", kind="loop")
        if ctx is not None and ctx.tx is tx and (tx.ip >= ctx.exit_ip or tx.ip < ctx.header):
            raise Unsupported("`break`, `return` or a jump out of the loop body", kind="loop")
        tx.step()


def _jumps_to(tx, i, header) -> bool:
    ins = tx.instructions[i]
    return isinstance(ins.argval, int) and ins.opname in pyversion.UNCONDITIONAL_JUMPS | set(pyversion.POP_JUMPS) \
        and tx.offset_to_index.get(ins.argval) == header


def _stored_names(tx, lo, hi) -> set:
    names = set()
    for ins in tx.instructions[lo:hi]:
        if ins.opname in ("STORE_FAST", "DELETE_FAST"):
            names.add(ins.argval)
        elif ins.opname in ("STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"):
            names.update(ins.argval if ins.opname == "STORE_FAST_STORE_FAST" else ins.argval[:1])
    return names


def _output_node(tx, bb, name, placeholder, new, key, own=frozenset()) -> Node:
    before, after = type_key(placeholder), type_key(new)
    if after is None:
        raise Unsupported(f"{name!r} becomes {new.describe() if new is not None else 'undefined'} in the "
                          "loop body", kind="loop")
    if before != after:
        exc = Unsupported(f"{name!r} changes type in the loop body ({kind_text(before)} -> "
                          f"{kind_text(after)})", kind="loop_type")
        exc.peel_types = ((name, before[:2]),) if name in tx.locals else None
        raise exc
    if isinstance(new, ArrayVariable):
        if not isinstance(new.proxy.fake, FakeScalar) and not _same_shape(tx, placeholder.proxy.shape,
                                                                          new.proxy.shape, own):
            raise Unsupported(f"{name!r} changes shape in the loop body ({placeholder.proxy.shape} -> "
                              f"{new.proxy.shape})", kind="loop")
        return bb.lift(new.proxy.node)
    _, value = carried_type(new)
    return bb.emit("py_scalar", value).node


def _same_shape(tx, a, b, own=frozenset()) -> bool:
    """Equal shapes; a carried size of this loop's body (`own`: a placeholder's symbol that the
    body's value ends with some size in its place) counts as equal: carried_sizes.check_varying checked it."""
    if len(a) != len(b):
        return False
    env = tx.output.shape_env
    return all(env.simplify(sympy.sympify(to_expr(x)) - sympy.sympify(to_expr(y))) == 0
               or to_expr(x) in own for x, y in zip(a, b))


def _private_init(tx, outer, init, name, saved_locals, saved_stack) -> bool:
    """Is the first value of carried `name` a new array that nothing but `name` sees (no other
    local, stack slot, container, caller frame, side effect or graph node), in a loop over a
    range? Then writing into it in the first iteration is invisible, as in Python."""
    node = getattr(init, "node", None)
    if node is None or node.op == "input" or get_op(node.op).kind == "view" or node.scalar:
        return False
    if tx.output.side_effects or not (saved_stack and getattr(saved_stack[-1], "over_range", False) is True):
        return False
    if any(node in n.inputs() for n in outer.graph.nodes):
        return False
    roots, t = [*saved_stack, *saved_locals.values(), *(box.value for box in tx.cells.values())], tx.parent
    while t is not None:
        roots += [*t.stack, *t.locals.values(), *(box.value for box in t.cells.values())]
        t = t.parent
    refs = references(node, roots)
    return refs == [saved_locals[name]]


def _finish_body(tx, key, bb, kind, carried, ncarried, in_place, index, carried_sizes=(), private=()) -> LoopBody:
    from ..ir.verify import unbacked_definitions, used_symbols
    graph = bb.graph
    syms: set = set()
    for n in list(graph.inputs) + list(graph.nodes):
        syms |= used_symbols(n)
    env = tx.output.shape_env
    # sizes that depend on data (`x[mask]`), made by a node of the body: bound by that node in
    # every iteration (as in any graph), so not passed in
    defined = set(unbacked_definitions(graph))
    for a in env.runtime_asserts:
        free = getattr(a.expr, "free_symbols", set())
        if index is not None and index in free:
            _restart(tx, key, "unroll", "a runtime check on the loop index")
        if free & defined:
            _restart(tx, key, "unroll", "a runtime check on a size that depends on data inside the loop body")
    bound = {sym for sym, _, _ in carried_sizes}
    sizes = tuple(sorted(syms - {index} - defined - bound, key=str))
    graph.symbols = ({index: "loop index"} if index is not None else {})
    graph.symbols.update({s: str(s) for s in sizes})
    graph.symbols.update({sym: f"carried size {sym}" for sym, _, _ in carried_sizes})
    captured = list(bb.captured.values())
    writes = []
    carried_inputs = list(graph.inputs[:ncarried])
    for n in graph.nodes:
        for base in _written_bases(n):
            if base in carried_inputs:
                k = carried_inputs.index(base)
                if k < len(carried) and graph.outputs[k] is base:      # `acc += row`: the same array throughout
                    _restart(tx, ("in_place", key), tuple(in_place) + (carried[k],),
                             f"{carried[k]!r} is updated in place")
                if k not in private:
                    _restart(tx, key, "unroll", "an array rebound in the loop is also written in place")
            if base in captured and captured.index(base) not in writes:
                writes.append(captured.index(base))
    loc = tx.location()
    return LoopBody(graph, kind, ncarried, len(captured), sizes, index, tuple(sorted(writes)),
                    f"{loc.filename.rsplit('/', 1)[-1]}:{loc.lineno}", carried_sizes)


def _chosen_apart(bb, outputs) -> None:
    """An array a data-dependent `if` chose (trace/branches.select_arrays) is a copy of one side:
    carried out of the iteration next to that side, or twice, Python's two names would be one
    array after the loop and ours two."""
    chosen = bb.chosen_arrays
    for n in outputs:
        if n in chosen and n.op == "select" and (outputs.count(n) > 1 or
                                                  any(side in outputs for side in n.args[1:])):
            raise Unsupported("an array chosen by a data-dependent `if` is carried next to one of its sides",
                              kind="loop", hints=("copy it (`.copy()`) where it is chosen",))


def _written_bases(n: Node) -> list:
    out = []
    for t in written_values(n):
        while isinstance(t, Node) and t.op != "input" and get_op(t.op).kind == "view":
            t = t.args[0]
        if isinstance(t, Node):
            out.append(t)
    return out


# ----------------------------------------------------------------------------- helpers

def _symint(tx, index):
    from ..shapes.symint import wrap
    return wrap(index, "int", tx.output.shape_env)


# what trace/while_loops.py builds `while` loop nodes with
LoopContext, build, restart, why, counted_test = _LoopContext, _build, _restart, _why, _counted_test
