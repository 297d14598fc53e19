"""If-conversion inside a loop body: a data-dependent branch is traced both ways and merged.

While a loop body (or the peeled first iteration) is traced once (trace/loops.py), an `if` on
array data cannot pick a side. Both sides are traced under their condition (writes predicated:
GraphBuilder.push_predicate), then every local and stack value they leave different is merged
with `select`. A side that ends the iteration (`continue`) while the other joins the code after
the `if` runs that rest of the iteration too, under its own condition. A side that `break`s
out of a `for` (it pops the loop's iterator, then runs what follows the loop) ends the loop:
the other side runs the rest of the iteration under its condition, the values are merged as
for `continue`, and the loop context records the break condition (a `for_break` loop node).
"""
from __future__ import annotations

import numpy as np
import sympy

from .. import pyversion
from ..errors import Unsupported
from ..ir.builder import to_expr
from ..ir.fake import FakeArray, FakeScalar
from ..ir.registry import get_op, may_raise, reports_fp
from ..shapes import statically_known_true
from .loop_values import PoisonVariable, type_key, variable
from .signals import ReturnSignal
from .variables.array import ArrayVariable
from .variables.constant import SymNumberVariable


def if_convert(tx, ins, cond) -> None:
    """A data-dependent conditional jump inside a loop body: trace both branches and merge."""
    jump_if = pyversion.POP_JUMPS[ins.opname]
    target = tx.offset_to_index[ins.argval]
    fall = tx.ip
    ctx = tx.output.loop_stack[-1]
    ctx.converted = True                                 # unrolled, this `if` would break the graph
    # the loop's header and exit are positions in the loop's own frame, not in an inlined callee's
    header = ctx.header if ctx.tx is tx else -1
    exit_ip = ctx.exit_ip if ctx.tx is tx else len(tx.instructions) + 1
    if target <= fall:
        raise Unsupported("a backward conditional jump inside a loop body", kind="loop")
    taken = truth_value(tx, cond, jump_if)               # the jump is taken when this holds
    bb = tx.output.builder
    _pull(tx)                                            # state the loops carry goes along with the locals
    saved_locals, saved_stack = dict(tx.locals), list(tx.stack)
    mark = len(bb.graph.nodes)                           # the nodes after it are the branches'
    lazy_before = set(tx.lazy)                           # arguments not read yet
    not_taken = bb.emit("logical_not", taken)
    outer = bool(bb.predicates)
    end = _run_branch(tx, bb, not_taken, stop=lambda ip: ip >= target or ip == header or at_break(tx, ctx),
                      ctx=ctx)
    locals_f, stack_f = tx.locals, tx.stack
    ret_f = _returned(tx, ctx)                           # an inlined helper's `if v < lo: return lo`
    tx.locals, tx.stack, tx.ip = dict(saved_locals), list(saved_stack), target
    for name in lazy_before - set(tx.lazy):              # arguments the first side read first: inputs
        if name in locals_f and name not in tx.locals:   # of the graph, the same on the other side
            tx.locals[name] = locals_f[name]
    if ret_f is not None:
        ret_t = _run_to_return(tx, bb, taken, ctx)
        _both_returned(tx, bb, taken, ret_t, tx.locals, ret_f, locals_f)
    if at_break(tx, ctx, end):                           # the fall-through side breaks
        _run_branch(tx, bb, taken, stop=lambda ip: ip == header, ctx=ctx)
        _broke(tx, bb, ctx, not_taken, (locals_f, stack_f), outer)
        return
    if end != target:
        end2 = _run_branch(tx, bb, taken, stop=lambda ip: ip == end or ip >= exit_ip or
                           ip == header or at_break(tx, ctx), ctx=ctx)
        ret_t = _returned(tx, ctx)
        if ret_t is not None:                            # the jump-taken side returns: the other runs on
            locals_t = tx.locals
            tx.locals, tx.stack, tx.ip = locals_f, stack_f, end
            ret_f = _run_to_return(tx, bb, not_taken, ctx)
            _both_returned(tx, bb, taken, ret_t, locals_t, ret_f, tx.locals)
        if at_break(tx, ctx):                            # the jump-taken side breaks
            broken = (tx.locals, tx.stack)
            tx.locals, tx.stack, tx.ip = locals_f, stack_f, end
            _run_branch(tx, bb, not_taken, stop=lambda ip: ip == header, ctx=ctx)
            _broke(tx, bb, ctx, taken, broken, outer)
            return
        if end2 != end and header in (end, end2):
            # one branch ends the iteration (`continue`), the other joins the code after the `if`:
            # that one runs the rest of the iteration too, under its own condition
            rest = (locals_f, stack_f, end, not_taken) if end2 == header else \
                (tx.locals, tx.stack, end2, taken)
            other = (tx.locals, tx.stack) if end2 == header else (locals_f, stack_f)
            tx.locals, tx.stack, tx.ip = rest[0], rest[1], rest[2]
            _run_branch(tx, bb, rest[3], stop=lambda ip: ip == header, ctx=ctx)
            if end2 == header:
                locals_f, stack_f = tx.locals, tx.stack
                tx.locals, tx.stack = other
            else:
                locals_f, stack_f = other
            end = end2 = header
        if end2 != end:
            raise Unsupported("the branches of an `if` in a loop body do not meet", kind="loop")
    locals_t, stack_t = tx.locals, tx.stack
    if len(stack_t) != len(stack_f):
        raise Unsupported("the branches of an `if` in a loop body leave different stacks", kind="loop")
    merged_locals = {}
    branch_nodes = set(bb.graph.nodes[mark:])
    for name in set(locals_t) | set(locals_f):
        a, b = locals_t.get(name), locals_f.get(name)
        if a is b:
            merged_locals[name] = a
        elif (a is None or b is None) and name in lazy_before and name not in tx.lazy:
            merged_locals[name] = a if b is None else b    # an argument first read in one branch
        elif a is None or b is None or isinstance(a, PoisonVariable) or isinstance(b, PoisonVariable):
            merged_locals[name] = PoisonVariable(name)     # assigned in one branch only
        else:
            merged_locals[name] = merge_values(tx, bb, taken, a, b, name, branch_nodes)
    tx.locals = merged_locals
    tx.stack = [a if a is b else merge_values(tx, bb, taken, a, b, "a value", branch_nodes)
                for a, b in zip(stack_t, stack_f)]
    tx.ip = end
    _push(tx, strip=True)


# State a loop body carries besides its locals (trace/loop_state.py: cells, attributes, entries)
# goes through both branches like a local: while an `if` is converted it also lives in tx.locals
# under keys no name can have, taken from its targets when a branch ends (_pull) and put back
# when one starts (_push); after the merge, the merged values are put back and the keys dropped.

def _state_targets(tx):
    return [t for ctx in tx.output.loop_stack if getattr(ctx, "state", None) is not None for t in ctx.state.targets]


def _pull(tx) -> None:
    for k, t in enumerate(_state_targets(tx)):
        tx.locals[("loop state", k)] = t.get()


def _push(tx, strip=False) -> None:
    for k, t in enumerate(_state_targets(tx)):
        t.put(tx.locals[("loop state", k)])
        if strip:
            del tx.locals[("loop state", k)]


def at_break(tx, ctx, ip=None) -> bool:
    """At `ip` (default: the next instruction) a `break` leaves the `for` loop of `ctx`: the
    loop's iterator is popped and what follows is the code after the loop."""
    ip = tx.ip if ip is None else ip
    iterator = getattr(ctx, "iterator", None)
    if iterator is None or ctx.tx is not tx or ip >= len(tx.instructions) or \
            tx.instructions[ip].opname != "POP_TOP" or not tx.stack or tx.stack[-1] is not iterator:
        return False
    return _same_code(tx, ip + 1, ctx.exit_ip)


def _same_code(tx, a, b, limit=64) -> bool:
    """The code at instruction `a` does what the code at `b` does: `a` jumps to `b`, or it is a
    copy of it up to a return (CPython 3.12+ copies a short exit block into each `break`)."""
    ins = tx.instructions
    if a == b or (ins[a].opname in pyversion.UNCONDITIONAL_JUMPS and tx.offset_to_index.get(ins[a].argval) == b):
        return True
    for (x, xv), (y, yv) in zip(_reads(ins, a, limit), _reads(ins, b, limit)):
        if x.opname in pyversion.UNCONDITIONAL_JUMPS and x.opname == y.opname and \
                tx.offset_to_index.get(x.argval) == tx.offset_to_index.get(y.argval):
            return True                                 # both go on at the same place (an enclosing loop's header)
        if xv != yv or x.opname in pyversion.UNCONDITIONAL_JUMPS or x.opname in pyversion.POP_JUMPS or \
                x.opname.startswith(("FOR_ITER", "JUMP", "SEND")):
            return False
        if x.opname in ("RETURN_VALUE", "RETURN_CONST"):
            return True
    return False


def _reads(ins, start, limit):
    """(instruction, what it does) from `start`: the copy of an exit block in a `break` reads
    locals with LOAD_FAST / LOAD_FAST_LOAD_FAST (3.13), the block itself with LOAD_FAST_CHECK
    (3.12+: they may be unbound after the loop); these compare as one read per local."""
    for i in range(start, min(len(ins), start + limit)):
        x = ins[i]
        if x.opname == "LOAD_FAST_LOAD_FAST":
            for name in x.argval:
                yield x, ("LOAD_FAST", name)
        elif x.opname == "LOAD_FAST_CHECK":
            yield x, ("LOAD_FAST", x.argval)
        else:
            yield x, (x.opname, x.argval)


def _broke(tx, bb, ctx, brk, broken, outer) -> None:
    """One side of an `if` broke out of the loop (`broken`: its locals and stack) when `brk`
    holds; the other ran the rest of the iteration (tx.locals, tx.stack). Merge; end the iteration."""
    if outer or ctx.kind != "for" or ctx.brk is not None:
        raise Unsupported("a `break` under a data-dependent condition inside another `if`, a second "
                          "`break`, or a `break` out of a peeled iteration", kind="loop")
    locals_b, stack_b = broken
    if len(stack_b) != len(tx.stack):
        raise Unsupported("a `break` leaves a different stack", kind="loop")
    if _break_keeps_firsts(tx, ctx, locals_b, stack_b):
        ctx.brk = brk
        tx.ip = ctx.header
        _push(tx, strip=True)
        return
    merged = {}
    for name in set(locals_b) | set(tx.locals):
        a, b = locals_b.get(name), tx.locals.get(name)
        merged[name] = a if a is b else PoisonVariable(name) if a is None or b is None else \
            merge_values(tx, bb, brk, a, b, name)
    tx.stack = [a if a is b else merge_values(tx, bb, brk, a, b, "a value") for a, b in zip(stack_b, tx.stack)]
    tx.locals = merged
    ctx.brk = brk
    tx.ip = ctx.header
    _push(tx, strip=True)


def _break_keeps_firsts(tx, ctx, locals_b, stack_b) -> bool:
    """A `break` in a body with carried sizes whose side changed no carried value (`if not
    len(z): break` first thing in the body), where merging is not possible (the rest of the
    iteration leaves arrays of other sizes): the loop leaves with the values the breaking
    iteration started with (LoopBody.firsts_at_break). The other names that differ are the
    body's own temporaries, unbound after the loop."""
    firsts = ctx.firsts
    if not firsts or any(a is not b for a, b in zip(stack_b, tx.stack)):
        return False
    kept = []
    for name in set(locals_b) | set(tx.locals):
        a, b = locals_b.get(name), tx.locals.get(name)
        if a is b:
            continue
        if isinstance(name, tuple) or (name in firsts and a is not firsts[name]):
            return False
        if name in firsts:
            kept.append(name)
        elif a is not None and b is not None:
            tx.locals[name] = PoisonVariable(name)
    ctx.firsts_at_break = tuple(sorted(kept))
    return True


RETURNED = -2      # where a side of an `if` in an inlined callee stops once it returned (value on the stack)


def _run_branch(tx, bb, predicate, stop, ctx) -> int:
    """Trace one side of an `if` under `predicate` until `stop(ip)`. In an inlined callee a
    side may also end at a `return` (the ip is left there, or at RETURNED with the value on
    the stack when an `if` nested in this side returned on both of its sides)."""
    _push(tx)                                           # this side's values of the loops' state
    bb.push_predicate(predicate.proxy if isinstance(predicate, ArrayVariable) else predicate)
    tx.output.side_effects.frozen += 1                  # a Python side effect would happen either way
    try:
        first = True
        while first or not stop(tx.ip):
            first = False
            if stop(tx.ip):
                break
            if returns(tx) and ctx.tx is not tx:
                break                                   # the helper returns here: the caller merges
            if tx.ip in tx.region_starts or (ctx.tx is tx and tx.ip >= ctx.exit_ip) or returns(tx):
                raise Unsupported("a branch of a data-dependent `if` leaves the loop body", kind="loop")
            try:
                tx.step()
            except ReturnSignal as ret:                 # a nested `if` returned on both sides
                tx.stack.append(ret.value)
                tx.ip = RETURNED
                break
    finally:
        bb.pop_predicate()
        tx.output.side_effects.frozen -= 1
    _pull(tx)
    return tx.ip


def _returned(tx, ctx):
    """The value a side of an `if` in an inlined callee returned, or None if it did not."""
    if ctx.tx is tx:
        return None
    if tx.ip == RETURNED:
        return tx.stack[-1]
    ins = tx.instructions[tx.ip]
    if ins.opname == "RETURN_VALUE":
        return tx.stack[-1]
    if ins.opname == "RETURN_CONST":
        from .variables.constant import ConstantVariable
        return ConstantVariable(ins.argval)
    return None


def _both_returned(tx, bb, taken, ret_t, locals_t, ret_f, locals_f):
    """Both sides of an `if` in an inlined callee returned: the callee returns the merged value
    (the state the loops carry merged too)."""
    value = ret_t if ret_t is ret_f else merge_values(tx, bb, taken, ret_t, ret_f, "the value returned")
    for key in [k for k in locals_t if isinstance(k, tuple)]:
        a, b = locals_t[key], locals_f[key]
        tx.locals[key] = a if a is b else merge_values(tx, bb, taken, a, b, "a value the loop carries")
    _push(tx, strip=True)
    raise ReturnSignal(value)


def _run_to_return(tx, bb, predicate, ctx):
    """The side that did not return runs the rest of the callee, under its condition, to a return."""
    _run_branch(tx, bb, predicate, stop=lambda ip: False, ctx=ctx)
    value = _returned(tx, ctx)
    if value is None:
        raise Unsupported("a branch of a data-dependent `if` in a helper does not return", kind="loop")
    return value


def merge_values(tx, bb, taken, a, b, name, branch_nodes=None):
    """The value that is `a` where `taken` holds, else `b` (the two sides of an `if`); arrays
    only where the caller names the nodes its branches computed (`branch_nodes`)."""
    for v in (a, b):
        if type_key(v) is None:
            raise Unsupported(f"{name} is {v.describe()} after a data-dependent `if`", kind="loop")
    if isinstance(a, ArrayVariable) and isinstance(b, ArrayVariable) and not isinstance(a.proxy.fake, FakeScalar) \
            and a.proxy.ndim > 0:
        if branch_nodes is None:             # (a `while`'s paths, a `break`, a helper's returns)
            raise Unsupported(f"{name}: an array chosen by a data-dependent `if`", kind="loop",
                              hints=("use np.where",))
        return variable(select_arrays(bb, taken, a.proxy, b.proxy, name, branch_nodes), a)
    result = bb.emit("select", taken, _raw(a), _raw(b))
    return variable(result, a)


def select_arrays(bb, taken, a, b, name, branch_nodes):
    """An array rebound by a data-dependent `if` (`X = solve(T, Y); if abs(z) < 1: X = -X`): the
    loop stays one node, the array is `select(taken, a, b)` computed where the sides meet. Both
    sides were computed (if-conversion), so each is refused unless it behaves as if only the
    taken side ran: the sides are new arrays of one shape and dtype (no input, view or alias:
    their contents change only through them), what a side computed in its branch neither
    raises nor warns nor calls NumPy (cheap elementwise work: `-X`, `abs(X)`, a copy), and no
    later write goes into either side or the selection (the builder refuses it: Python would
    see it in the array the name is bound to)."""
    hint = ("compute both values and choose with np.where(cond, a, b)",)
    if a.dtype != b.dtype or len(a.shape) != len(b.shape) or \
            not all(statically_known_true(sympy.Eq(to_expr(x), to_expr(y))) for x, y in zip(a.shape, b.shape)):
        raise Unsupported(f"{name}: arrays of different shapes or dtypes chosen by a data-dependent `if`",
                          kind="loop", hints=hint)
    for p in (a, b):
        if not _fresh(p.node):
            raise Unsupported(f"{name}: an array chosen by a data-dependent `if` is an input or a view",
                              kind="loop", hints=hint)
        bad = _loud_in_branch(p.node, branch_nodes)
        if bad is not None:
            raise Unsupported(f"{name}: an array chosen by a data-dependent `if` is computed by {bad.op}, "
                              "which may raise or warn where Python would not run it", kind="loop", hints=hint)
    out = bb.emit("select", taken, a, b)
    bb.chosen_arrays = getattr(bb, "chosen_arrays", frozenset()) | {a.node, b.node, out.node}
    return out


def _fresh(node) -> bool:
    op = get_op(node.op) if node.op != "input" else None
    return op is not None and op.kind not in ("view", "mutation") and not op.aliases and node.op != "loop_out"


def _loud_in_branch(node, branch_nodes):
    """A node computed in a branch for `node` that may raise, warn or run NumPy; else None."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n in seen or n not in branch_nodes:
            continue
        seen.add(n)
        op = get_op(n.op)
        if op.kind not in ("elementwise", "view", "copy") or may_raise(n) or \
                (op.kind == "elementwise" and n.op != "select" and reports_fp(n)):
            return n
        stack.extend(n.inputs())
    return None


def _raw(v):
    if isinstance(v, ArrayVariable):
        return v.proxy
    if isinstance(v, SymNumberVariable):
        return v.value
    return v.value


def truth_value(tx, cond, when):
    """The bool value (Proxy) that is True when `bool(cond) == when`."""
    if not isinstance(cond, ArrayVariable):
        raise Unsupported(f"branching on {cond.describe()}", kind="loop")
    p = cond.proxy
    if isinstance(p.fake, FakeArray) and p.fake.ndim != 0:
        from ..shapes import statically_known_true
        if not all(statically_known_true(d == 1) for d in p.fake.shape):
            raise Unsupported("the truth value of an array with more than one element", kind="loop")
    builder = tx.output.builder
    b = p if (isinstance(p.fake, FakeArray) and p.dtype == np.bool_ and p.ndim == 0) else \
        builder.emit("not_equal", p, 0) if not (isinstance(p.fake, FakeScalar) and p.fake.pytype is bool) else p
    if isinstance(b.fake, FakeArray) and b.ndim:
        b = builder.emit("reshape", b, shape=())
    if isinstance(b.fake, FakeScalar):                  # a Python bool: the same test on np.bool_
        b = builder.emit("astype", b, dtype=np.dtype(np.bool_))
    return b if when else builder.emit("logical_not", b)


def index_condition(tx, cond):
    """A size condition that depends on a loop index (`if i % 2 == 0:` in a body) or on a
    carried size (`if not len(z): break` where `z = z[keep]` shrinks every iteration) as a bool
    value of the graph; None when the shape environment decides it (a guard at most)."""
    env = tx.output.shape_env
    expr = getattr(cond.value, "expr", None)
    if expr is not None and tx.output.loop_stack and expr.free_symbols & tx.output.carried_sizes \
            and env.maybe_evaluate_static(expr) is None:
        return ArrayVariable(tx.output.builder.emit("py_scalar", expr))
    if expr is None or not tx.output.loop_stack or not any(env.is_loop_index(s) for s in expr.free_symbols):
        return None
    if env.maybe_evaluate_static(expr) is not None:
        return None
    try:
        decided = env.decide_over_loop_indices(expr, static=True)   # no guard on a condition left undecided
    except Unsupported:
        decided = None
    if decided is not None:
        return None                                     # the same for every index in range
    from .loop_split import request
    request(tx, expr)                                   # split the loop where it changes (a restart)
    return ArrayVariable(tx.output.builder.emit("py_scalar", expr))


def and_(tx, a, b):
    return b if a is None else tx.output.builder.emit("logical_and", a, b)




def returns(tx) -> bool:
    """The next instruction returns from the frame."""
    return tx.instructions[tx.ip].opname in ("RETURN_VALUE", "RETURN_CONST")
