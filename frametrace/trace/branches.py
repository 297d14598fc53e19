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

from .. import pyversion
from ..errors import Unsupported
from ..ir.fake import FakeArray, FakeScalar
from .loop_values import PoisonVariable, type_key, variable
from .variables.array import ArrayVariable
from .variables.base import cell_mark
from .variables.constant import SymNumberVariable


def if_convert(tx, ins, cond) -> None:
    """A data-dependent conditional jump inside a loop body: trace both branches and merge."""
    jump_if = pyversion.POP_JUMPS[ins.opname]
    target = tx.offset_to_index[ins.argval]
    fall = tx.ip
    ctx = tx.output.loop_stack[-1]
    if target <= fall:
        raise Unsupported("a backward conditional jump inside a loop body", kind="loop")
    taken = truth_value(tx, cond, jump_if)               # the jump is taken when this holds
    bb = tx.output.builder
    saved_locals, saved_stack = dict(tx.locals), list(tx.stack)
    lazy_before = set(tx.lazy)                           # arguments not read yet
    not_taken = bb.emit("logical_not", taken)
    outer = bool(bb.predicates)
    end = _run_branch(tx, bb, not_taken, stop=lambda ip: ip >= target or ip == ctx.header or at_break(tx, ctx),
                      ctx=ctx)
    locals_f, stack_f = tx.locals, tx.stack
    tx.locals, tx.stack, tx.ip = dict(saved_locals), list(saved_stack), target
    if at_break(tx, ctx, end):                           # the fall-through side breaks
        _run_branch(tx, bb, taken, stop=lambda ip: ip == ctx.header, ctx=ctx)
        _broke(tx, bb, ctx, not_taken, (locals_f, stack_f), outer)
        return
    if end != target:
        end2 = _run_branch(tx, bb, taken, stop=lambda ip: ip == end or ip >= ctx.exit_ip or
                           (ip == ctx.header and ctx.tx is tx) or at_break(tx, ctx), ctx=ctx)
        if at_break(tx, ctx):                            # the jump-taken side breaks
            broken = (tx.locals, tx.stack)
            tx.locals, tx.stack, tx.ip = locals_f, stack_f, end
            _run_branch(tx, bb, not_taken, stop=lambda ip: ip == ctx.header, ctx=ctx)
            _broke(tx, bb, ctx, taken, broken, outer)
            return
        if end2 != end and ctx.header in (end, end2):
            # one branch ends the iteration (`continue`), the other joins the code after the `if`:
            # that one runs the rest of the iteration too, under its own condition
            rest = (locals_f, stack_f, end, not_taken) if end2 == ctx.header else \
                (tx.locals, tx.stack, end2, taken)
            other = (tx.locals, tx.stack) if end2 == ctx.header else (locals_f, stack_f)
            tx.locals, tx.stack, tx.ip = rest[0], rest[1], rest[2]
            _run_branch(tx, bb, rest[3], stop=lambda ip: ip == ctx.header, ctx=ctx)
            if end2 == ctx.header:
                locals_f, stack_f = tx.locals, tx.stack
                tx.locals, tx.stack = other
            else:
                locals_f, stack_f = other
            end = end2 = ctx.header
        if end2 != end:
            raise Unsupported("the branches of an `if` in a loop body do not meet", kind="loop")
    locals_t, stack_t = tx.locals, tx.stack
    if len(stack_t) != len(stack_f):
        raise Unsupported("the branches of an `if` in a loop body leave different stacks", kind="loop")
    merged_locals = {}
    for name in set(locals_t) | set(locals_f):
        a, b = locals_t.get(name), locals_f.get(name)
        if a is b:
            merged_locals[name] = a
        elif (a is None or b is None) and name in lazy_before and name not in tx.lazy:
            merged_locals[name] = a if b is None else b    # an argument first read in one branch
        elif a is None or b is None or isinstance(a, PoisonVariable) or isinstance(b, PoisonVariable):
            merged_locals[name] = PoisonVariable(name)     # assigned in one branch only
        else:
            merged_locals[name] = _merge(tx, bb, taken, a, b, name)
    tx.locals = merged_locals
    tx.stack = [a if a is b else _merge(tx, bb, taken, a, b, "a value") for a, b in zip(stack_t, stack_f)]
    tx.ip = end


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
    for k in range(min(limit, len(ins) - max(a, b))):
        x, y = ins[a + k], ins[b + k]
        if x.opname != y.opname or x.argval != y.argval or x.opname in pyversion.UNCONDITIONAL_JUMPS or \
                x.opname in pyversion.POP_JUMPS or x.opname.startswith(("FOR_ITER", "JUMP", "SEND")):
            return False
        if x.opname in ("RETURN_VALUE", "RETURN_CONST"):
            return True
    return False


def _broke(tx, bb, ctx, brk, broken, outer) -> None:
    """One side of an `if` broke out of the loop (`broken`: its locals and stack) when `brk`
    holds; the other ran the rest of the iteration (tx.locals, tx.stack). Merge; end the iteration."""
    if outer or ctx.kind != "for" or ctx.brk is not None:
        raise Unsupported("a `break` under a data-dependent condition inside another `if`, a second "
                          "`break`, or a `break` out of a peeled iteration", kind="loop")
    locals_b, stack_b = broken
    if len(stack_b) != len(tx.stack):
        raise Unsupported("a `break` leaves a different stack", kind="loop")
    merged = {}
    for name in set(locals_b) | set(tx.locals):
        a, b = locals_b.get(name), tx.locals.get(name)
        merged[name] = a if a is b else PoisonVariable(name) if a is None or b is None else \
            _merge(tx, bb, brk, a, b, name)
    tx.stack = [a if a is b else _merge(tx, bb, brk, a, b, "a value") for a, b in zip(stack_b, tx.stack)]
    tx.locals = merged
    ctx.brk = brk
    tx.ip = ctx.header


def _run_branch(tx, bb, predicate, stop, ctx) -> int:
    bb.push_predicate(predicate.proxy if isinstance(predicate, ArrayVariable) else predicate)
    tx.output.side_effects.frozen += 1                  # a Python side effect would happen either way
    tx.output.cell_scopes.append((cell_mark(), None))   # ... and so would a closure variable's store
    try:
        first = True
        while first or not stop(tx.ip):
            first = False
            if stop(tx.ip):
                break
            if tx.ip in tx.region_starts or (ctx.tx is tx and tx.ip >= ctx.exit_ip) or returns(tx):
                raise Unsupported("a branch of a data-dependent `if` leaves the loop body", kind="loop")
            tx.step()
    finally:
        bb.pop_predicate()
        tx.output.side_effects.frozen -= 1
        tx.output.cell_scopes.pop()
    return tx.ip


def _merge(tx, bb, taken, a, b, name):
    for v in (a, b):
        if type_key(v) is None:
            raise Unsupported(f"{name} is {v.describe()} after a data-dependent `if`", kind="loop")
    if isinstance(a, ArrayVariable) and isinstance(b, ArrayVariable) and not isinstance(a.proxy.fake, FakeScalar) \
            and a.proxy.ndim > 0:
        raise Unsupported(f"{name}: an array chosen by a data-dependent `if`", kind="loop",
                          hints=("use np.where",))
    result = bb.emit("select", taken, _raw(a), _raw(b))
    return variable(result, a)


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
    """A size condition that depends on a loop index (`if i % 2 == 0:` in a body) as a bool
    value of the graph; None when the shape environment decides it (a guard at most)."""
    env = tx.output.shape_env
    expr = getattr(cond.value, "expr", None)
    if expr is None or not tx.output.loop_stack or not any(env.is_loop_index(s) for s in expr.free_symbols):
        return None
    if env.maybe_evaluate_static(expr) is not None:
        return None
    try:
        env.decide_over_loop_indices(expr)
    except Unsupported:
        pass
    return ArrayVariable(tx.output.builder.emit("py_scalar", expr))


def and_(tx, a, b):
    return b if a is None else tx.output.builder.emit("logical_and", a, b)




def returns(tx) -> bool:
    """The next instruction returns from the frame."""
    return tx.instructions[tx.ip].opname in ("RETURN_VALUE", "RETURN_CONST")
