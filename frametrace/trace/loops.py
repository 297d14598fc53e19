"""Python loops traced once into a structured loop node (ir/ops/loops.py), not unrolled.

What becomes a loop node:
  * `for i in range(start, stop, step)` whose trip count is symbolic (a size, an int
    argument) or at least `config.loop_unroll_limit`; other loops (over tuples, lists, a
    small constant range: layer stacks) are unrolled as before;
  * `while cond:` whose condition depends on array data (the entry test is traced before the
    loop, the test at the bottom inside it: `go` is carried);
  * `while i < n:` with a Python int counter `i += c` (trace/counted_while.py): the `for` loop
    node of `range(i, n, c)`, the counter being the index.

How: the body is traced once with the loop index as a symbol `i<N>` known to lie in the
range (shapes/loop_index.py: bounds checks over the range, no guard on the index) and every
local the body rebinds (`carried`) as an input of the body graph. After one pass the new
values must have the types they came in with (Python scalar type; dtype, rank and sizes of
arrays); else the trace restarts with the loop peeled once (a Python float that becomes a
np.float64 on the first iteration) or unrolled. A data-dependent `if` inside the body is
if-converted (trace/branches.py); carried-value types are trace/loop_values.py.
Anything the body cannot do as a loop node (a graph break, a Python side effect, `break`,
`return`, an unstable type) restarts the trace with this loop unrolled, and the logs say why
(FRAMETRACE_LOGS=loops, or `+dynamo`-style `ft.set_logs(loops=logging.DEBUG)`).

A restart is `LoopRestart`: trace/compile.py re-runs the trace with the new decision in
`output.loop_plan`, keyed by (code object, offset of the loop header).
"""
from __future__ import annotations

import sympy

from .. import pyversion
from ..config import config
from ..errors import NumpyError, Unsupported
from ..ir.builder import Proxy, to_expr
from ..ir.fake import FakeScalar
from ..ir.graph import Node
from ..ir.ops.loops import LoopBody, written_values
from ..ir.registry import get_op
from ..ir.subgraph import SubgraphBuilder
from ..logs import get_logger
from . import errstate
from .branches import and_, if_convert, index_condition, returns, truth_value
from .counted_while import constant_trips, recognise, verify_bottom
from .loop_values import PoisonVariable, carried_type, kind_text, type_key, variable
from .variables.array import ArrayVariable
from .variables.base import VariableTracker, cell_mark
from .variables.constant import ConstantVariable, SymNumberVariable, wrap_number
from .variables.containers import RangeVariable

log = get_logger("loops")

NEXT_DECISION = {"loop": "peel", "peel": "unroll",
                 "node": "peel_node", "peel_node": "unroll"}   # a short range made a node (_short_loop_as_node)
PEELED = ("peel", "peel_node")


class LoopRestart(Exception):
    """Trace again with `decision` ("peel" | "unroll") for the loop at `key`."""

    def __init__(self, key, decision: str, reason: str):
        self.key, self.decision, self.reason = key, decision, reason
        super().__init__(f"{decision}: {reason}")


class RangeLoopIterator(VariableTracker):
    """GET_ITER of a range that FOR_ITER turns into a loop node (see the module doc)."""

    def __init__(self, rng: RangeVariable, key):
        self.range, self.key, self.peeled = rng, key, False

    def python_type(self):
        return type(iter(range(0)))

    def describe(self):
        return "range iterator"


# ----------------------------------------------------------------------------- decisions

def loop_key(tx, index):
    return (tx.code, tx.instructions[index].offset)


def want_range_loop(tx, rng: RangeVariable) -> RangeLoopIterator | None:
    """At GET_ITER of a range: a loop-node iterator when the next FOR_ITER should be one."""
    nxt = tx.ip
    if nxt >= len(tx.instructions) or tx.instructions[nxt].opname != "FOR_ITER" or not config.loop_nodes:
        return None
    key = loop_key(tx, nxt)
    decision = tx.output.loop_plan.get(key, "loop")
    if decision == "unroll":
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
    if trips >= config.loop_unroll_limit or decision in ("node", "peel_node"):
        return RangeLoopIterator(rng, key)
    tx.output.short_unrolled[key] = tx.offset_to_index[tx.instructions[nxt].argval]    # its exit
    return None


def _short_loop_as_node(tx) -> None:
    """A data-dependent `if` in the body of a short constant range that was being unrolled
    (a layer stack would be): trace again with that loop as a loop node, where the `if` is
    if-converted, rather than break the graph (the innermost such loop, tried once)."""
    at, best = tx.ip - 1, None
    for key, exit_index in tx.output.short_unrolled.items():
        if key[0] is tx.code and key not in tx.output.loop_plan:
            header = tx.offset_to_index[key[1]]
            if header < at < exit_index and (best is None or header > best[0]):
                best = (header, key)
    if best is not None:
        _restart(tx, best[1], "node", "a data-dependent `if` in its body")


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
    if decision in PEELED and not it.peeled:
        it.peeled = True                                # the first iteration, as Python runs it
        if not (bool(stop > start) if positive else bool(stop < start)):
            tx.pop()
            tx.ip = exit_ip
            return
        it.range = RangeVariable(*(wrap_number(v) for v in (start + step, stop, step)))
        tx.push(wrap_number(start))
        stack.append(_LoopContext(tx, "peel", tx.ip - 1, exit_ip))   # its `if`s are if-converted
        return
    if all(type(v) is int for v in (start, stop, step)) and not range(start, stop, step):
        tx.pop()                                        # a constant range left empty (peeled): no loop
        tx.ip = exit_ip
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
    entry.go = truth_value(tx, cond, not pyversion.POP_JUMPS[ins.opname])
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
    if _counted_test(tx, ins, cond):
        return True
    if isinstance(cond, SymNumberVariable):
        cond = index_condition(tx, cond)
        if cond is None:
            return False
    if not isinstance(cond, ArrayVariable):
        return False
    jump_if = pyversion.POP_JUMPS[ins.opname]
    target = tx.offset_to_index.get(ins.argval)
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    if ctx is not None and ctx.tx is tx and ctx.kind == "while":
        if target == ctx.exit_ip:                        # leave when the jump is taken
            ctx.go = and_(tx, ctx.go, truth_value(tx, cond, not jump_if))
            ctx.in_test = True
            return True
        if target == ctx.header and not ctx.entry:       # 3.11: the bottom test jumps back
            ctx.go = and_(tx, ctx.go, truth_value(tx, cond, jump_if))
            tx.ip = ctx.header
            return True
    found = while_exit(tx, ins)
    if found is not None:
        trace_while(tx, ins, cond, *found)
        return True
    if ctx is not None and not ctx.entry:
        try:
            if_convert(tx, ins, cond)
        except Unsupported as exc:
            if ctx.kind != "peel" or ctx.tx is not tx:
                raise
            # the peeled first iteration cannot leave early as a loop node does: unroll instead
            _restart(tx, loop_key(tx, ctx.header), "unroll", _why(exc))
        return True
    if ctx is None:
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
    if jump_if is not False or isinstance(cond, ArrayVariable) or (ctx is not None and ctx.entry):
        return False
    found = while_exit(tx, ins)
    if found is None or found[0] != tx.ip:
        return False                                    # a test with more parts (`while i < n and ...`)
    exits = [k for k in range(found[0]) if _jumps_to(tx, k, found[1])]
    return exits == [tx.ip - 1] and _counted_entry(tx, ins, cond, *found)


def _is_bottom(tx, ctx, target, jump_if) -> bool:
    if target == ctx.header:                            # 3.11: jump back while the test holds
        return jump_if is True
    nxt = tx.instructions[tx.ip] if tx.ip < len(tx.instructions) else None
    return target == ctx.exit_ip and jump_if is False and nxt is not None and _jumps_to(tx, tx.ip, ctx.header)


def _counted_entry(tx, ins, cond, header, exit_ip, peeled=False) -> bool:
    key = loop_key(tx, header)
    plan = tx.output.loop_plan.get(key, "loop")
    if plan == "unroll" or (isinstance(cond, ConstantVariable) and not cond.value):
        return False
    counter = recognise(tx, tx.ip - 2, header, exit_ip)
    if counter is None:
        return False
    trips = constant_trips(counter)
    if trips is not None and trips < config.loop_unroll_limit:
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
    def __init__(self, tx, kind, header, exit_ip, entry=False):
        self.tx, self.kind, self.header, self.exit_ip = tx, kind, header, exit_ip
        self.entry = entry              # while: the entry test before the loop, not the body
        self.go = None                  # while: the bool deciding the next iteration
        self.in_test = False            # while: past a data-dependent exit test (only tests follow)
        self.counter = None             # a counted while loop: its Counter (trace/counted_while.py)
        self.index = None               # ... and the index symbol standing for the counter
        self.closed = False             # ... its bottom test was reached and checked
        self.iterator = None            # for: the range iterator a `break` pops (trace/branches.py)
        self.brk = None                 # for: the bool that holds when the iteration broke out


def _build(tx, key, *, header, exit_ip, kind, head, index, counter=None):
    body_start = header + 1
    back = max((i for i in range(body_start, exit_ip) if _jumps_to(tx, i, header)), default=None)
    if back is None:
        raise Unsupported("a loop without a back edge", kind="loop")
    # a `for` body runs to its exit: 3.12+ places a `break` block after the back edge
    stored = _stored_names(tx, body_start, exit_ip) if kind == "for" and counter is None else \
        _stored_names(tx, header, back + 1)
    loop_var = counter.name if counter is not None else None
    if kind == "for" and counter is None:
        first = tx.instructions[body_start]
        if first.opname != "STORE_FAST":
            _restart(tx, key, "unroll", "the loop target is not a plain local name")
        loop_var = first.argval
    for name in stored:                                 # arguments rebound in the loop: wrap them now
        if name not in tx.locals and name in tx.lazy:
            tx.locals[name] = tx.wrap_value(*tx.lazy.pop(name))
    carried = sorted(n for n in stored if n != loop_var and n in tx.locals
                     and not isinstance(tx.locals[n], PoisonVariable))
    cells = _carried_cells(tx, key)                     # closure cells the body rebinds: (name, box)
    lazy_before = set(tx.lazy)
    saved_locals, saved_stack = dict(tx.locals), list(tx.stack)
    outer = tx.output.builder
    body_builder = SubgraphBuilder(outer, f"loop{len(tx.output.loop_stack)}")
    placeholders, inits = {}, []
    for name in carried:
        vt = tx.locals[name]
        fake, init = carried_type(vt)
        if fake is None:
            _restart(tx, key, "unroll", f"{name!r} ({vt.describe()}) is rebound in the loop; it is not a "
                                        "number or an array")
        node = body_builder.body_input(f"carried_{name}", fake)
        placeholders[name] = variable(Proxy(node, fake), vt)
        inits.append(init)
    cell_before, cell_placeholders = {}, {}
    for name, box in cells:
        fake, init = carried_type(box.value) if box.value is not None else (None, None)
        if fake is None:
            _restart(tx, key, "unroll", f"the closure variable {name!r} is rebound in the loop; it is not "
                                        "a number or an array" if box.value is not None else "unbound before it")
        node = body_builder.body_input(f"carried_cell_{name}", fake)
        cell_before[id(box)] = box.value
        box.value = cell_placeholders[id(box)] = variable(Proxy(node, fake), box.value)
        inits.append(init)
    ctx = _LoopContext(tx, "counted" if counter is not None else kind, header, exit_ip)
    ctx.counter, ctx.index = counter, index
    if kind == "for" and counter is None:
        ctx.iterator = saved_stack[-1]
    tx.output.builder = body_builder
    tx.output.loop_stack.append(ctx)
    tx.output.side_effects.frozen += 1
    tx.locals.update(placeholders)
    cell_writes: dict = {}
    tx.output.cell_scopes.append((cell_mark(), cell_writes))
    try:
        if counter is not None:
            tx.locals[counter.name] = wrap_number(_symint(tx, index))
            tx.ip = header
        elif kind == "for":
            tx.stack.append(wrap_number(_symint(tx, index)))
            tx.ip = body_start
        else:
            tx.ip = header
        _run_to(tx, header, stop_at_exit=None, first=True)
        if kind == "while" and ctx.go is None:
            raise Unsupported("a while loop whose condition is not data-dependent inside it", kind="loop")
        if counter is not None and not ctx.closed:
            raise Unsupported(f"a while loop on {counter.name!r} whose body does not end at its test", kind="loop")
        outputs = []
        for name in carried:
            new = tx.locals.get(name)
            outputs.append(_output_node(tx, body_builder, name, placeholders[name], new, key))
        _check_cell_writes(tx, key, cells, cell_writes)
        for name, box in cells:
            outputs.append(_output_node(tx, body_builder, f"closure variable {name}",
                                        cell_placeholders[id(box)], box.value, key))
        if kind == "while":
            outputs.append(ctx.go.node)
        if ctx.brk is not None:                         # a `for` that may break: `go` is carried too
            outputs.append(body_builder.emit("logical_not", ctx.brk).node)
    except Unsupported as exc:
        _restart(tx, key, NEXT_DECISION.get(tx.output.loop_plan.get(key, "loop"), "unroll")
                 if getattr(exc, "kind", "") == "loop_type" else "unroll", _why(exc))
    finally:
        tx.output.side_effects.frozen -= 1
        tx.output.cell_scopes.pop()
        tx.output.loop_stack.pop()
        tx.output.builder = outer
    graph = body_builder.graph
    graph.outputs = tuple(outputs)
    body = _finish_body(tx, key, body_builder, "for_break" if ctx.brk is not None else kind,
                        carried + [name for name, _ in cells], index, exit_ip)
    args = list(head) + inits + list(body_builder.captured) + list(body.sizes)
    state = outer.emit("loop", *args, body=body)
    wrapped = {n: v for n, v in tx.locals.items() if n in lazy_before and n not in tx.lazy}
    tx.locals = saved_locals
    tx.locals.update(wrapped)                           # arguments first read inside the body
    tx.stack = saved_stack[:-1] if kind == "for" and counter is None else saved_stack
    for k, name in enumerate(carried):
        out = outer.emit("loop_out", state, k, body=body)
        tx.locals[name] = variable(Proxy(out.node, placeholders[name].proxy.fake), saved_locals[name])
    for k, (_, box) in enumerate(cells, start=len(carried)):
        out = outer.emit("loop_out", state, k, body=body)
        before = cell_before[id(box)]
        box.value = variable(Proxy(out.node, carried_type(before)[0]), before)
    for name in stored - set(carried):
        tx.locals[name] = PoisonVariable(name)
    if kind == "for" and loop_var is not None:
        last = _last_index(*head)                       # Python leaves the index at its last value
        if last is not None:
            tx.locals[loop_var] = wrap_number(last)
        elif loop_var in saved_locals:                  # the loop did not run: the binding before it
            tx.locals[loop_var] = saved_locals[loop_var]
    if counter is not None:
        tx.locals[counter.name] = wrap_number(counter.final(head[1]))
    tx.ip = exit_ip
    log.info("loop at %s: one %s-loop node, %d carried (%s), %d captured, body of %d nodes",
             body.location, "counted while" if counter is not None else body.kind, len(carried) + len(cells),
             ", ".join(carried + [f"cell {name}" for name, _ in cells]),
             len(body_builder.captured), len(graph.nodes))


# ----------------------------------------------------------------------------- closure cells

def note_cell_write(output, box) -> None:
    """STORE_DEREF of `box` (a `nonlocal` write, or a cell variable of the frame): a loop body
    being traced records each cell made before it that it rebinds (carried on the next try, see
    _carried_cells); a branch of an if-converted `if` cannot rebind one (the loop is unrolled)."""
    for mark, written in output.cell_scopes:
        if box.serial < mark:
            if written is None:
                raise Unsupported(f"the closure variable {box.name!r} is assigned under a data-dependent "
                                  "`if` in a loop body", kind="loop")
            written[id(box)] = box


def _carried_cells(tx, key) -> list:
    """The cells an earlier try of this loop found rebound in its body: [(name, box)]."""
    found = []
    for ck in sorted(tx.output.loop_plan.get(("cells", key), ()), key=repr):
        box = _find_cell(tx, ck)
        if box is None:
            _restart(tx, key, "unroll", f"the closure variable {ck[-1]!r} rebound in the body is not reachable "
                                        "before the loop")
        found.append((box.name or str(ck[-1]), box))
    return found


def _check_cell_writes(tx, key, cells, written) -> None:
    """Every cell the body rebound is carried; else trace the loop again carrying them."""
    carried = {id(box) for _, box in cells}
    new = [box for i, box in written.items() if i not in carried]
    if not new:
        return
    keys = [_cell_key(tx, box) for box in new]
    if any(k is None for k in keys):
        raise Unsupported("a closure variable of an enclosing call is rebound in a loop body", kind="loop")
    plan_key = ("cells", key)
    wanted = frozenset(tx.output.loop_plan.get(plan_key, frozenset())) | frozenset(keys)
    reason = f"closure variables rebound in its body ({', '.join(str(k[-1]) for k in keys)}) are carried"
    log.info("loop %s: traced again (%s)", _where(key), reason)
    tx.output.loop_notes.append((key, "carry cells", reason))
    raise LoopRestart(plan_key, wanted, reason)


def _cell_key(tx, box):
    """A name for `box` that finds it again in a new trace of the frame (_find_cell)."""
    depth, t = 0, tx
    while t is not None:
        for name, b in t.cells.items():
            if b is box:
                return ("cell", depth, name)
        depth, t = depth + 1, t.parent
    for cid, (_, b) in tx.output._cells.items():
        if b is box:
            return ("real", cid, box.name)
    return None


def _find_cell(tx, ck):
    if ck[0] == "real":
        entry = tx.output._cells.get(ck[1])
        return None if entry is None else entry[1]
    t = tx
    for _ in range(ck[1]):
        t = t.parent if t is not None else None
    return None if t is None else t.cells.get(ck[2])


def _run_to(tx, header, stop_at_exit, first=False):
    """Step until control comes back to `header` (the end of an iteration)."""
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    while first or tx.ip != header:
        first = False
        if stop_at_exit is not None and tx.ip >= stop_at_exit:
            return
        if tx.ip in tx.region_starts and not errstate.trace_block(tx):
            raise Unsupported("a try/with block inside a loop body", kind="loop")
        if returns(tx) and (ctx is None or not ctx.entry):
            raise Unsupported("`return` inside a loop body", kind="loop")
        if ctx is not None and ctx.tx is tx and not ctx.entry and (tx.ip >= ctx.exit_ip or tx.ip < ctx.header):
            raise Unsupported("`break`, `return` or a jump out of the loop body", kind="loop")
        if ctx is not None and ctx.tx is tx and ctx.in_test and \
                tx.instructions[tx.ip].opname.startswith(("STORE_", "DELETE_")):
            raise Unsupported("code after a data-dependent exit test of a while loop", kind="loop",
                              hints=("compute the loop condition at the top of the loop body",))
        tx.step()


def _jumps_to(tx, i, header) -> bool:
    ins = tx.instructions[i]
    return isinstance(ins.argval, int) and ins.opname in pyversion.UNCONDITIONAL_JUMPS | set(pyversion.POP_JUMPS) \
        and tx.offset_to_index.get(ins.argval) == header


def _last_index(start, stop, step):
    """The index of the last iteration of range(start, stop, step), or None when the range is
    empty (decided on the hints: a guard on the sizes, as any size comparison)."""
    if not isinstance(step, int) or step == 0:
        return None
    trips = (stop - start + step - 1) // step if step > 0 else (start - stop - step - 1) // (-step)
    if not bool(trips >= 1):
        return None
    return start + step * (trips - 1)


def _stored_names(tx, lo, hi) -> set:
    names = set()
    for ins in tx.instructions[lo:hi]:
        if ins.opname in ("STORE_FAST", "DELETE_FAST"):
            names.add(ins.argval)
        elif ins.opname in ("STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"):
            names.update(ins.argval if ins.opname == "STORE_FAST_STORE_FAST" else ins.argval[:1])
    return names


def _output_node(tx, bb, name, placeholder, new, key) -> Node:
    before, after = type_key(placeholder), type_key(new)
    if after is None:
        raise Unsupported(f"{name!r} becomes {new.describe() if new is not None else 'undefined'} in the "
                          "loop body", kind="loop")
    if before != after:
        raise Unsupported(f"{name!r} changes type in the loop body ({kind_text(before)} -> "
                          f"{kind_text(after)})", kind="loop_type")
    if isinstance(new, ArrayVariable):
        if not isinstance(new.proxy.fake, FakeScalar) and not _same_shape(tx, placeholder.proxy.shape,
                                                                          new.proxy.shape):
            raise Unsupported(f"{name!r} changes shape in the loop body ({placeholder.proxy.shape} -> "
                              f"{new.proxy.shape})", kind="loop")
        return bb.lift(new.proxy.node)
    _, value = carried_type(new)
    return bb.emit("py_scalar", value).node


def _same_shape(tx, a, b) -> bool:
    if len(a) != len(b):
        return False
    env = tx.output.shape_env
    return all(env.simplify(sympy.sympify(to_expr(x)) - sympy.sympify(to_expr(y))) == 0 for x, y in zip(a, b))


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


# ----------------------------------------------------------------------------- helpers

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

