"""Python loops traced once into a structured loop node (ir/ops/loops.py), not unrolled.

What becomes a loop node:
  * `for i in range(start, stop, step)` whose trip count is symbolic (a size, an int
    argument) or at least `config.loop_unroll_limit`; other loops (over tuples, lists, a
    small constant range: layer stacks) are unrolled as before;
  * `while cond:` whose condition depends on array data (the entry test is traced before the
    loop, the test at the bottom inside it: `go` is carried).

How: the body is traced once with the loop index as a symbol `i<N>` known to lie in the
range (shapes/loop_index.py: bounds checks over the range, no guard on the index) and every
local the body rebinds (`carried`) as an input of the body graph. After one pass the new
values must have the types they came in with (Python scalar type; dtype, rank and sizes of
arrays); else the trace restarts with the loop peeled once (a Python float that becomes a
np.float64 on the first iteration) or unrolled. A data-dependent `if` inside the body is
if-converted: both branches are traced, locals merged with `select`, writes predicated.
Anything the body cannot do as a loop node (a graph break, a Python side effect, `break`,
`return`, an unstable type) restarts the trace with this loop unrolled, and the logs say why
(FRAMETRACE_LOGS=loops, or `+dynamo`-style `ft.set_logs(loops=logging.DEBUG)`).

A restart is `LoopRestart`: trace/compile.py re-runs the trace with the new decision in
`output.loop_plan`, keyed by (code object, offset of the loop header).
"""
from __future__ import annotations

import numpy as np
import sympy

from .. import pyversion
from ..config import config
from ..errors import NumpyError, Unsupported
from ..ir.builder import Proxy, to_expr
from ..ir.fake import FakeArray, FakeScalar
from ..ir.graph import Node
from ..ir.ops.loops import LoopBody, written_values
from ..ir.registry import get_op
from ..ir.subgraph import SubgraphBuilder
from ..logs import get_logger
from .variables.array import ArrayVariable
from .variables.base import VariableTracker
from .variables.constant import ConstantVariable, SymNumberVariable, wrap_number
from .variables.containers import ListIteratorVariable, RangeVariable

log = get_logger("loops")

NEXT_DECISION = {"loop": "peel", "peel": "unroll"}


class LoopRestart(Exception):
    """Trace again with `decision` ("peel" | "unroll") for the loop at `key`."""

    def __init__(self, key, decision: str, reason: str):
        self.key, self.decision, self.reason = key, decision, reason
        super().__init__(f"{decision}: {reason}")


class NotLoopable(Exception):
    """This loop cannot be a loop node as it stands (the message says why)."""


class RangeLoopIterator(VariableTracker):
    """GET_ITER of a range that FOR_ITER turns into a loop node (see the module doc)."""

    def __init__(self, rng: RangeVariable, key):
        self.range, self.key, self.peeled = rng, key, False

    def python_type(self):
        return type(iter(range(0)))

    def describe(self):
        return "range iterator"


class PoisonVariable(VariableTracker):
    """A local whose value after a loop node is not known to the trace (the loop index, a
    temporary of the body): any use of it is unsupported."""

    def __init__(self, name):
        self.name = name

    def describe(self):
        return f"{self.name!r} after a compiled loop"

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        raise Unsupported(f"using {self.name!r} after the loop that assigned it", kind="loop",
                          hints=("keep the value in a variable assigned before the loop",))


# ----------------------------------------------------------------------------- decisions

def loop_key(tx, index):
    return (tx.code, tx.instructions[index].offset)


def want_range_loop(tx, rng: RangeVariable) -> RangeLoopIterator | None:
    """At GET_ITER of a range: a loop-node iterator when the next FOR_ITER should be one."""
    nxt = tx.ip
    if nxt >= len(tx.instructions) or tx.instructions[nxt].opname != "FOR_ITER" or not config.loop_nodes:
        return None
    key = loop_key(tx, nxt)
    if tx.output.loop_plan.get(key, "loop") == "unroll":
        return None
    if any(isinstance(p, SymNumberVariable) for p in rng.parts):
        if not all(isinstance(p, SymNumberVariable) or (p.is_python_constant() and
                                                          type(p.as_python_constant()) is int)
                   for p in rng.parts):
            return None
        return RangeLoopIterator(rng, key)
    try:
        trips = len(rng.as_python_constant())
    except Exception:
        return None
    return RangeLoopIterator(rng, key) if trips >= config.loop_unroll_limit else None


# ----------------------------------------------------------------------------- for loops

def trace_for(tx, ins, it: RangeLoopIterator) -> None:
    """FOR_ITER on a RangeLoopIterator: the whole loop as one node; `tx.ip` ends after it."""
    decision = tx.output.loop_plan.get(it.key, "loop")
    stack = tx.output.loop_stack
    if stack and stack[-1].kind == "peel" and stack[-1].tx is tx and stack[-1].header == tx.ip - 1:
        stack.pop()                                     # the peeled iteration is over
    start, stop, step = (tx.unwrap(p) for p in it.range.parts)
    if step == 0:
        raise NumpyError(ValueError("range() arg 3 must not be zero"), context="range")
    positive = bool(step > 0)                           # a guard when the step is a symbol
    exit_ip = tx.offset_to_index[ins.argval] + pyversion.FOR_ITER_SKIP
    if decision == "peel" and not it.peeled:
        it.peeled = True                                # the first iteration, as Python runs it
        if not (bool(stop > start) if positive else bool(stop < start)):
            tx.pop()
            tx.ip = exit_ip
            return
        it.range = RangeVariable(*(wrap_number(v) for v in (start + step, stop, step)))
        tx.push(wrap_number(start))
        stack.append(_LoopContext(tx, "peel", tx.ip - 1, exit_ip))   # its `if`s are if-converted
        return
    env = tx.output.shape_env
    lo, hi = (start, stop - 1) if positive else (stop + 1, start)
    index = env.enter_loop_index(to_expr(lo), to_expr(hi))
    try:
        _build(tx, it.key, header=tx.ip - 1, exit_ip=exit_ip, kind="for",
               head=(start, stop, step), index=index)
    finally:
        env.exit_loop_index(index)


# ----------------------------------------------------------------------------- while loops

def while_exit(tx, ins):
    """For a conditional jump at `ins`: (header, exit index) if it is the entry test of a while
    loop (the jump leaves to just after a back edge to a header after it), else None."""
    target = tx.offset_to_index.get(ins.argval)
    here = tx.ip - 1
    if target is None or target <= here:
        return None
    back = tx.instructions[target - 1]
    back_target = tx.offset_to_index.get(back.argval) if isinstance(back.argval, int) else None
    if back.opname not in pyversion.UNCONDITIONAL_JUMPS and back.opname not in pyversion.POP_JUMPS:
        return None
    if back_target is None or not (here < back_target <= target - 1):
        return None
    return back_target, target


def trace_while(tx, ins, cond, header: int, exit_ip: int) -> None:
    """A data-dependent entry test of a while loop: the loop as one node carrying `go`."""
    key = loop_key(tx, header)
    if tx.output.loop_plan.get(key, "loop") == "unroll":
        raise Unsupported("a while loop on array data that cannot be a loop node", kind="data_dependent",
                          context=f"bool({cond.describe()})")
    entry = _LoopContext(tx, "while", header, exit_ip, entry=True)
    entry.go = _truth_value(tx, cond, not pyversion.POP_JUMPS[ins.opname])
    tx.output.loop_stack.append(entry)
    try:
        _run_to(tx, header, stop_at_exit=exit_ip)        # the rest of the entry test
    finally:
        tx.output.loop_stack.pop()
    if tx.ip >= exit_ip:
        return                                           # a constant part of the test is false
    _build(tx, key, header=header, exit_ip=exit_ip, kind="while", head=(entry.go,), index=None)


def handles_jump(tx, ins, cond) -> bool:
    """A conditional jump on array data: a while loop's test, a while loop, or an `if` inside a
    loop body (if-converted). False: not ours (the caller asks for its truth: a graph break)."""
    if not config.loop_nodes:
        return False
    if isinstance(cond, SymNumberVariable):
        cond = _index_condition(tx, cond)
        if cond is None:
            return False
    if not isinstance(cond, ArrayVariable):
        return False
    jump_if = pyversion.POP_JUMPS[ins.opname]
    target = tx.offset_to_index.get(ins.argval)
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    if ctx is not None and ctx.tx is tx and ctx.kind == "while":
        if target == ctx.exit_ip:                        # leave when the jump is taken
            ctx.go = _and(tx, ctx.go, _truth_value(tx, cond, not jump_if))
            ctx.in_test = True
            return True
        if target == ctx.header and not ctx.entry:       # 3.11: the bottom test jumps back
            ctx.go = _and(tx, ctx.go, _truth_value(tx, cond, jump_if))
            tx.ip = ctx.header
            return True
    found = while_exit(tx, ins)
    if found is not None:
        trace_while(tx, ins, cond, *found)
        return True
    if ctx is not None and not ctx.entry:
        if_convert(tx, ins, cond)
        return True
    return False


# ----------------------------------------------------------------------------- the body

class _LoopContext:
    def __init__(self, tx, kind, header, exit_ip, entry=False):
        self.tx, self.kind, self.header, self.exit_ip = tx, kind, header, exit_ip
        self.entry = entry              # while: the entry test before the loop, not the body
        self.go = None                  # while: the bool deciding the next iteration
        self.in_test = False            # while: past a data-dependent exit test (only tests follow)


def _build(tx, key, *, header, exit_ip, kind, head, index):
    body_start = header + 1
    back = max((i for i in range(body_start, exit_ip) if _jumps_to(tx, i, header)), default=None)
    if back is None:
        raise Unsupported("a loop without a back edge", kind="loop")
    stored = _stored_names(tx, body_start if kind == "for" else header, back + 1)
    loop_var = None
    if kind == "for":
        first = tx.instructions[body_start]
        if first.opname != "STORE_FAST":
            _restart(tx, key, "unroll", "the loop target is not a plain local name")
        loop_var = first.argval
    for name in stored:                                 # arguments rebound in the loop: wrap them now
        if name not in tx.locals and name in tx.lazy:
            tx.locals[name] = tx.wrap_value(*tx.lazy.pop(name))
    carried = sorted(n for n in stored if n != loop_var and n in tx.locals
                     and not isinstance(tx.locals[n], PoisonVariable))
    lazy_before = set(tx.lazy)
    saved_locals, saved_stack = dict(tx.locals), list(tx.stack)
    outer = tx.output.builder
    body_builder = SubgraphBuilder(outer, f"loop{len(tx.output.loop_stack)}")
    placeholders, inits = {}, []
    for name in carried:
        vt = tx.locals[name]
        fake, init = _carried_type(vt)
        if fake is None:
            _restart(tx, key, "unroll", f"{name!r} ({vt.describe()}) is rebound in the loop; it is not a "
                                        "number or an array")
        node = body_builder.body_input(f"carried_{name}", fake)
        placeholders[name] = _variable(Proxy(node, fake), vt)
        inits.append(init)
    ctx = _LoopContext(tx, kind, header, exit_ip)
    tx.output.builder = body_builder
    tx.output.loop_stack.append(ctx)
    tx.output.side_effects.frozen += 1
    tx.locals.update(placeholders)
    try:
        if kind == "for":
            tx.stack.append(wrap_number(_symint(tx, index)))
            tx.ip = body_start
        else:
            tx.ip = header
        _run_to(tx, header, stop_at_exit=None, first=True)
        if kind == "while" and ctx.go is None:
            raise Unsupported("a while loop whose condition is not data-dependent inside it", kind="loop")
        outputs = []
        for name in carried:
            new = tx.locals.get(name)
            outputs.append(_output_node(tx, body_builder, name, placeholders[name], new, key))
        if kind == "while":
            outputs.append(_bool_node(tx, ctx.go))
    except (Unsupported, NotLoopable) as exc:
        if isinstance(exc, NotLoopable):
            raise
        _restart(tx, key, NEXT_DECISION.get(tx.output.loop_plan.get(key, "loop"), "unroll")
                 if getattr(exc, "kind", "") == "loop_type" else "unroll", _why(exc))
    finally:
        tx.output.side_effects.frozen -= 1
        tx.output.loop_stack.pop()
        tx.output.builder = outer
    graph = body_builder.graph
    graph.outputs = tuple(outputs)
    body = _finish_body(tx, key, body_builder, kind, carried, index, exit_ip)
    args = list(head) + inits + list(body_builder.captured) + list(body.sizes)
    state = outer.emit("loop", *args, body=body)
    wrapped = {n: v for n, v in tx.locals.items() if n in lazy_before and n not in tx.lazy}
    tx.locals = saved_locals
    tx.locals.update(wrapped)                           # arguments first read inside the body
    tx.stack = saved_stack[:-1] if kind == "for" else saved_stack
    for k, name in enumerate(carried):
        out = outer.emit("loop_out", state, k, body=body)
        tx.locals[name] = _variable(Proxy(out.node, placeholders[name].proxy.fake), saved_locals[name])
    for name in stored - set(carried):
        tx.locals[name] = PoisonVariable(name)
    tx.ip = exit_ip
    log.info("loop at %s: one %s-loop node, %d carried (%s), %d captured, body of %d nodes",
             body.location, kind, len(carried), ", ".join(carried), len(body_builder.captured), len(graph.nodes))


def _run_to(tx, header, stop_at_exit, first=False):
    """Step until control comes back to `header` (the end of an iteration)."""
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    while first or tx.ip != header:
        first = False
        if stop_at_exit is not None and tx.ip >= stop_at_exit:
            return
        if tx.ip in tx.region_starts:
            raise Unsupported("a try/with block inside a loop body", kind="loop")
        if _returns(tx) and (ctx is None or not ctx.entry):
            raise Unsupported("`return` inside a loop body", kind="loop")
        if ctx is not None and ctx.tx is tx and not ctx.entry and (tx.ip >= ctx.exit_ip or tx.ip < ctx.header):
            raise Unsupported("`break`, `return` or a jump out of the loop body", kind="loop")
        if ctx is not None and ctx.tx is tx and ctx.in_test and \
                tx.instructions[tx.ip].opname.startswith(("STORE_", "DELETE_")):
            raise Unsupported("code after a data-dependent exit test of a while loop", kind="loop",
                              hints=("compute the loop condition at the top of the loop body",))
        tx.step()


def _returns(tx) -> bool:
    return tx.instructions[tx.ip].opname in ("RETURN_VALUE", "RETURN_CONST")


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


def _carried_type(vt):
    """(abstract value of the body input, value the loop node passes in) or (None, None)."""
    if isinstance(vt, ArrayVariable):
        return vt.proxy.fake, vt.proxy
    if isinstance(vt, SymNumberVariable) and vt.python_type() is int:
        return FakeScalar(int), vt.value
    if isinstance(vt, ConstantVariable):
        v = vt.value
        if type(v) in (bool, int, float) and not (type(v) is int and not -2 ** 63 <= v < 2 ** 63):
            return FakeScalar(type(v)), v
        if isinstance(v, np.generic) and v.dtype.kind in "biuf":
            return FakeArray((), v.dtype, True), v
    return None, None


def _variable(proxy, like):
    vt = ArrayVariable(proxy)
    if getattr(like, "derived_python_scalar", False):
        vt.derived_python_scalar = True
    return vt


def _type_key(vt):
    if isinstance(vt, ArrayVariable):
        fake = vt.proxy.fake
        if isinstance(fake, FakeScalar):
            return ("py", fake.pytype, vt.derived_python_scalar)
        return ("np", fake.dtype, fake.scalar, fake.ndim, False)
    fake, _ = _carried_type(vt) if vt is not None else (None, None)
    if isinstance(fake, FakeScalar):
        return ("py", fake.pytype, False)
    if isinstance(fake, FakeArray):
        return ("np", fake.dtype, True, 0, False)
    return None


def _output_node(tx, bb, name, placeholder, new, key) -> Node:
    before, after = _type_key(placeholder), _type_key(new)
    if after is None:
        raise Unsupported(f"{name!r} becomes {new.describe() if new is not None else 'undefined'} in the "
                          "loop body", kind="loop")
    if before != after:
        raise Unsupported(f"{name!r} changes type in the loop body ({_kind_text(before)} -> "
                          f"{_kind_text(after)})", kind="loop_type")
    if isinstance(new, ArrayVariable):
        if not isinstance(new.proxy.fake, FakeScalar) and not _same_shape(tx, placeholder.proxy.shape,
                                                                          new.proxy.shape):
            raise Unsupported(f"{name!r} changes shape in the loop body ({placeholder.proxy.shape} -> "
                              f"{new.proxy.shape})", kind="loop")
        return bb.lift(new.proxy.node)
    _, value = _carried_type(new)
    return bb.emit("py_scalar", value).node


def _same_shape(tx, a, b) -> bool:
    if len(a) != len(b):
        return False
    env = tx.output.shape_env
    return all(env.simplify(sympy.sympify(to_expr(x)) - sympy.sympify(to_expr(y))) == 0 for x, y in zip(a, b))


def _kind_text(key):
    if key is None:
        return "?"
    if key[0] == "py":
        return key[1].__name__
    return f"{'scalar ' if key[2] else ''}{key[1]}[{key[3]}d]"


def _finish_body(tx, key, bb, kind, carried, index, exit_ip) -> LoopBody:
    from ..ir.verify import used_symbols
    graph = bb.graph
    syms: set = set()
    for n in list(graph.inputs) + list(graph.nodes):
        syms |= used_symbols(n)
    env = tx.output.shape_env
    for n in graph.nodes:
        size = n.attr("size")
        if isinstance(size, sympy.Symbol) and size in syms:
            _restart(tx, key, "unroll", "a size that depends on data inside the loop body")
    for a in env.runtime_asserts:
        if index is not None and index in getattr(a.expr, "free_symbols", ()):
            _restart(tx, key, "unroll", "a runtime check on the loop index")
    sizes = tuple(sorted(syms - {index}, key=str))
    graph.symbols = ({index: "loop index"} if index is not None else {})
    graph.symbols.update({s: str(s) for s in sizes})
    captured = list(bb.captured.values())
    writes = []
    carried_inputs = set(graph.inputs[:len(carried)])
    for n in graph.nodes:
        for base in _written_bases(n):
            if base in carried_inputs:
                _restart(tx, key, "unroll", "an array rebound in the loop is also written in place")
            if base in captured and captured.index(base) not in writes:
                writes.append(captured.index(base))
    loc = tx.location()
    return LoopBody(graph, kind, len(carried), len(captured), sizes, index, tuple(sorted(writes)),
                    f"{loc.filename.rsplit('/', 1)[-1]}:{loc.lineno}")


def _written_bases(n: Node) -> list:
    out = []
    for t in written_values(n):
        while isinstance(t, Node) and t.op != "input" and get_op(t.op).kind == "view":
            t = t.args[0]
        if isinstance(t, Node):
            out.append(t)
    return out


# ----------------------------------------------------------------------------- if-conversion

def if_convert(tx, ins, cond) -> None:
    """A data-dependent conditional jump inside a loop body: trace both branches and merge."""
    jump_if = pyversion.POP_JUMPS[ins.opname]
    target = tx.offset_to_index[ins.argval]
    fall = tx.ip
    ctx = tx.output.loop_stack[-1]
    if target <= fall:
        raise Unsupported("a backward conditional jump inside a loop body", kind="loop")
    taken = _truth_value(tx, cond, jump_if)               # the jump is taken when this holds
    bb = tx.output.builder
    saved_locals, saved_stack = dict(tx.locals), list(tx.stack)
    not_taken = bb.emit("logical_not", taken)
    end = _run_branch(tx, bb, not_taken, stop=lambda ip: ip >= target or ip == ctx.header, ctx=ctx)
    locals_f, stack_f = tx.locals, tx.stack
    tx.locals, tx.stack, tx.ip = dict(saved_locals), list(saved_stack), target
    if end != target:
        end2 = _run_branch(tx, bb, taken, stop=lambda ip: ip == end or ip >= ctx.exit_ip or
                           (ip == ctx.header and ctx.tx is tx), ctx=ctx)
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
        elif a is None or b is None:
            merged_locals[name] = PoisonVariable(name)     # assigned in one branch only
        else:
            merged_locals[name] = _merge(tx, bb, taken, a, b, name)
    tx.locals = merged_locals
    tx.stack = [a if a is b else _merge(tx, bb, taken, a, b, "a value") for a, b in zip(stack_t, stack_f)]
    tx.ip = end


def _run_branch(tx, bb, predicate, stop, ctx) -> int:
    bb.push_predicate(predicate.proxy if isinstance(predicate, ArrayVariable) else predicate)
    tx.output.side_effects.frozen += 1                  # a Python side effect would happen either way
    try:
        first = True
        while first or not stop(tx.ip):
            first = False
            if stop(tx.ip):
                break
            if tx.ip in tx.region_starts or (ctx.tx is tx and tx.ip >= ctx.exit_ip) or _returns(tx):
                raise Unsupported("a branch of a data-dependent `if` leaves the loop body", kind="loop")
            tx.step()
    finally:
        bb.pop_predicate()
        tx.output.side_effects.frozen -= 1
    return tx.ip


def _merge(tx, bb, taken, a, b, name):
    for v in (a, b):
        if _type_key(v) is None:
            raise Unsupported(f"{name} is {v.describe()} after a data-dependent `if`", kind="loop")
    if isinstance(a, ArrayVariable) and isinstance(b, ArrayVariable) and not isinstance(a.proxy.fake, FakeScalar) \
            and a.proxy.ndim > 0:
        raise Unsupported(f"{name}: an array chosen by a data-dependent `if`", kind="loop",
                          hints=("use np.where",))
    result = bb.emit("select", taken, _raw(a), _raw(b))
    return _variable(result, a)


def _raw(v):
    if isinstance(v, ArrayVariable):
        return v.proxy
    if isinstance(v, SymNumberVariable):
        return v.value
    return v.value


# ----------------------------------------------------------------------------- helpers

def _truth_value(tx, cond, when):
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


def _index_condition(tx, cond):
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


def _and(tx, a, b):
    return b if a is None else tx.output.builder.emit("logical_and", a, b)


def _bool_node(tx, go) -> Node:
    return go.node


def _symint(tx, index):
    from ..shapes.symint import wrap
    return wrap(index, "int", tx.output.shape_env)


def _why(exc) -> str:
    text = getattr(exc, "explanation", None) or str(exc)
    loc = getattr(exc, "location", "")
    return f"{text}{' at ' + loc if loc else ''}"


def _restart(tx, key, decision, reason):
    log.info("loop %s: %s (%s)", _where(key), "unrolled" if decision == "unroll" else decision, reason)
    tx.output.loop_notes.append((key, decision, reason))
    raise LoopRestart(key, decision, reason)


def _where(key):
    code, offset = key
    return f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]}, offset {offset})"


_ = ListIteratorVariable
