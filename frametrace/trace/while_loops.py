"""`while` loops on array data: one loop node (ir/ops/loops.py, kind "while"), bounded in any case.

A `while` loop whose test or body branches on array data becomes `loop(go, *carried, ...)`, whose
body is ONE iteration traced once, from the loop's header (resume/code_loops.py: the first
instruction of its body) until control comes back to the header or leaves the loop. Inside it
every branch on data forks the trace into predicated paths that merge where their code meets
(trace/paths.py): `if`/`elif`, `and`/`or` in tests, `continue` and `break` need no special form.
The body returns the carried values where its paths ended, merged, and `go` (a path came back to
the header).

Where the loop node starts:
  * a test on data before the loop (`while err > tol:` with `err` computed from arrays): the rest
    of the test runs as paths; `go` is the test;
  * otherwise the first iteration is traced as straight code (a test the trace decided, `err =
    1.0; while err > tol:`, or a resume function that starts inside the loop), and at its first
    branch on data the rest of that iteration runs as paths in the enclosing graph: this peeled
    iteration is where values settle their types (`udiff = 1.0` becomes a np.float64, `t = 0.0`
    becomes `t + dt`), so the loop node after it carries the types they keep;
  * a test the trace decides true, and a first iteration (traced from there as above) that
    keeps the types of the values the loop carries: the trace restarts with the plan
    "do_while", and the node starts at the decided test with `go` true (the loop runs at least
    once), its body in the graph once instead of a peeled copy and the node.

The loop's plan (output.loop_plan, keyed by its header) after a failed attempt ("do_while" that
fails falls back to the peel):
  "peel"   the node's values change type in its first iteration and its test is on data: the
           frame breaks at that test, and the resume function that enters the loop peels it;
  any other decision (a graph break or anything the node cannot trace): the frame splits before
           the loop and it runs in Python with its callees compiled (trace/graph_break.py).
Neither makes what is compiled grow with the trip count.
"""
from __future__ import annotations

import numpy as np

from .. import pyversion
from ..config import config
from ..errors import Unsupported
from ..resume import code_loops
from ..resume.liveness import live_before
from . import loops
from .branches import index_condition
from .loop_values import PoisonVariable, type_key
from .paths import FunctionRest, LoopIteration, Path, Paths
from .signals import ReturnSignal
from .variables.array import ArrayVariable
from .variables.constant import SymNumberVariable


def handles_jump(tx, ins, cond) -> bool:
    """A conditional jump (the value popped): True when a loop took it over (a loop test, a
    loop node, a branch of a loop body); False: the caller asks for its truth (a guard, or a
    graph break on data)."""
    if not config.loop_nodes:
        return False
    if loops.counted_test(tx, ins, cond):
        return True
    data = _data_condition(tx, cond)
    if data is None:
        return _decided_entry(tx, ins, cond)
    here = tx.ip - 1
    ctx = tx.output.loop_stack[-1] if tx.output.loop_stack else None
    own = ctx is not None and ctx.tx is tx
    if own and getattr(ctx, "paths", None) is not None and ctx.paths.region.loop.contains(here):
        inner = _innermost(tx, here)
        if inner is None or inner.header == ctx.header or inner.kind == "for":
            ctx.paths.fork(ins, data)                   # a branch of the iteration being traced
            return True
    loop = _innermost(tx, here)
    if loop is not None and loop.kind == "while" and not (own and ctx.header == loop.header):
        _trace_while(tx, ins, data, loop)
        return True
    if loop is None and getattr(tx, "function_paths", None) is not None:
        tx.function_paths.fork(ins, data)               # a branch of the callee's paths
        return True
    if loop is None and tx.parent is not None and tx.yielded is None and _called_in_a_while(tx):
        _rest_of_callee(tx, ins, data)                  # returns from the callee (ReturnSignal)
    return loops.handles_jump(tx, ins, data)


def _called_in_a_while(tx) -> bool:
    """An inlined function called (maybe through others) from inside a `while` loop."""
    caller = tx.parent
    while caller is not None:
        if any(lp.kind == "while" for lp in code_loops.enclosing(caller.code, caller.ip - 1)):
            return True
        caller = caller.parent
    return False


def _rest_of_callee(tx, ins, cond):
    """A branch on data in a function a `while` loop calls (`def sign(v): if v > 0: return 1.0`):
    the rest of the function runs as paths, and it returns what they return, merged."""
    paths = tx.function_paths = Paths(tx, FunctionRest())
    try:
        paths.current = Path(tx.ip, None, tx.locals, tx.stack)
        paths.fork(ins, cond)
        paths.run()
    finally:
        tx.function_paths = None
    raise ReturnSignal(paths.returned())


def _data_condition(tx, cond):
    """The condition as a value of the graph (an array, a NumPy or run-time Python scalar), or
    None when the trace decides it (a constant, a size: a guard at most)."""
    if isinstance(cond, SymNumberVariable):
        return index_condition(tx, cond)
    return cond if isinstance(cond, ArrayVariable) else None


def _innermost(tx, index):
    found = code_loops.enclosing(tx.code, index)
    return found[-1] if found else None


# ----------------------------------------------------------------------------- the loop node

def _trace_while(tx, ins, cond, loop) -> None:
    """A branch on data in `loop`'s test before it runs, or in its first iteration traced as
    straight code: the rest of that runs as paths, then the loop node (or the plan's fallback)."""
    key = loops.loop_key(tx, loop.header)
    plan = tx.output.loop_plan.get(key, "loop")
    here = tx.ip - 1
    entry = here not in loop.body                       # the first copy of the test, before the loop
    what = f"the `while` loop at line {_line(tx, loop)}"
    if plan == "peel" and entry:
        exc = Unsupported(f"{what} changes the type of a value in its first iteration: the frame breaks at "
                          "its test", kind="loop", context=f"bool({cond.describe()})")
        exc.split_at_test = True                        # trace/graph_break.py: not before the loop
        raise exc
    if plan not in ("loop", "peel", "do_while"):
        raise Unsupported(f"{what} cannot be a loop node: {_reason(tx, key)}", kind="loop",
                          context=f"bool({cond.describe()})")
    _wrap_arguments(tx, loop)
    paths = Paths(tx, LoopIteration(loop))
    ctx = loops.LoopContext(tx, "while_peel", loop.header, loop.exit)
    ctx.paths = paths
    tx.output.loop_stack.append(ctx)
    try:
        paths.current = Path(here + 1, None, tx.locals, tx.stack)
        paths.fork(ins, cond)
        paths.run()
        go, _ = paths.iteration()
    except Unsupported as exc:
        loops.restart(tx, key, "unroll", loops.why(exc))
    finally:
        tx.output.loop_stack.pop()
    if go is False:
        tx.ip = loop.exit                               # no path comes back: the loop is over
        return
    if go is True:
        loops.restart(tx, key, "unroll", "the loop never ends (no path leaves it)")
    _drop_temporaries(tx, loop)
    if plan == "loop" and not entry and _keeps_types(tx, loop, key):
        loops.restart(tx, key, "do_while", "the first iteration keeps the types of the values the loop carries: "
                                           "the node starts at the loop's header, the body is traced once")
    _build_node(tx, loop, key, go)


def _decided_entry(tx, ins, cond) -> bool:
    """The test before a `while` loop when the trace decides it (`udiff = 1.0; while udiff > tol:`,
    a size, a Python int): entering the loop, the types of the locals are noted; with the plan
    "do_while" (the first iteration, traced as straight code, showed the values the loop carries
    keep their types) the loop node starts right here with `go` true, so the graph holds its body
    once, not a peeled copy of it too. False: not such a test (the caller asks for its truth)."""
    here = tx.ip - 1
    loop = _innermost(tx, here)
    jump_if = pyversion.POP_JUMPS.get(ins.opname)
    if loop is None or loop.kind != "while" or not loop.start <= here < loop.header or jump_if is None:
        return False                                    # not the first copy of the test
    key = loops.loop_key(tx, loop.header)
    plan = tx.output.loop_plan.get(key, "loop")
    if plan not in ("loop", "do_while") or any(c.tx is tx and c.header == loop.header for c in tx.output.loop_stack):
        return False                                    # a `continue` of a body being traced reached the test
    if cond.truth(tx) == jump_if:
        tx.jump(ins.argval)
    if tx.ip != loop.header:
        return True                                     # more of the test to run, or the loop does not run
    _wrap_arguments(tx, loop)
    if plan == "loop":
        tx.output.while_entry.setdefault(key, {name: type_key(v) for name, v in tx.locals.items()})
        return True
    bb = tx.output.builder
    _drop_temporaries(tx, loop)
    _build_node(tx, loop, key, bb.emit("py_scalar", np.bool_(True)))
    return True


def _keeps_types(tx, loop, key) -> bool:
    """At the end of the first iteration traced from the loop's entry: every local the loop
    reads or carries has the type it had where the loop was entered."""
    entry = tx.output.while_entry.get(key)
    if entry is None:
        return False
    for name in _locals_of(tx, loop):
        vt = tx.locals.get(name)
        if vt is None or isinstance(vt, PoisonVariable):
            continue                                    # a temporary, not carried
        before = entry.get(name)
        if before is None or before != type_key(vt):
            return False
    return True


def _build_node(tx, loop, key, go) -> None:
    bb = tx.output.builder
    if bb.predicates:                                   # a loop inside a branch of an enclosing body
        go = bb.emit("logical_and", bb.predicates[-1], go)
    loops.build(tx, key, header=loop.header, exit_ip=loop.exit, kind="while", head=(go,), index=None,
                iterate=lambda tx_, ctx_: _iterate(tx_, ctx_, loop), back=loop.back)


def _iterate(tx, ctx, loop) -> None:
    """The body of the loop node: one iteration from the header (loops.build calls this)."""
    if ctx.state is not None and ctx.state.targets:
        # attributes, entries and cells a body carries (trace/loop_state.py) live in one place,
        # not in each path's locals: such a loop runs in Python
        raise Unsupported("a `while` loop body that writes attributes, dict entries or closure cells",
                          kind="loop")
    paths = Paths(tx, LoopIteration(loop))
    ctx.paths = paths
    paths.run(Path(loop.header, None, tx.locals, tx.stack))
    go, _ = paths.iteration()
    if go is True:
        raise Unsupported("the loop never ends (no path leaves it)", kind="loop")
    ctx.go = go if go is not False else tx.output.builder.emit("py_scalar", np.bool_(False))


def _drop_temporaries(tx, loop) -> None:
    """Locals the loop writes that are dead where its body starts and where it ends (a value the
    body computes and only its test reads): not carried by the node (resume/liveness.py)."""
    at_header, at_exit = live_before(tx.code, loop.header), live_before(tx.code, loop.exit)
    for i in loop.body:
        ins = tx.instructions[i]
        if ins.opname in pyversion.LOCAL_NAME_OPS or ins.opname in pyversion.LOCAL_PAIR_OPS:
            for name in (ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)):
                if name in tx.locals and name not in at_header and name not in at_exit:
                    tx.locals[name] = PoisonVariable(name)


def _locals_of(tx, loop) -> set:
    """The local names the loop's body reads or writes."""
    names = set()
    for i in loop.body:
        ins = tx.instructions[i]
        if ins.opname in pyversion.LOCAL_NAME_OPS or ins.opname in pyversion.LOCAL_PAIR_OPS:
            names.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
    return names


def _wrap_arguments(tx, loop) -> None:
    """Arguments the loop reads or writes are wrapped now: each path has its own locals, and
    an argument wrapped on one path only would be unbound on the others."""
    names = set()
    for i in loop.body | set(range(loop.start, loop.header)):
        ins = tx.instructions[i]
        if ins.opname in pyversion.LOCAL_NAME_OPS:
            names.add(ins.argval)
        elif ins.opname in pyversion.LOCAL_PAIR_OPS:
            names.update(ins.argval)
    for name in sorted(names):
        if name not in tx.locals and name in tx.lazy:
            tx.locals[name] = tx.wrap_value(*tx.lazy.pop(name))


def _line(tx, loop) -> int:
    return tx.instructions[loop.start].positions.lineno or tx.code.co_firstlineno


def _reason(tx, key) -> str:
    return tx.output.loop_plan.get(("why", key)) or "see FRAMETRACE_LOGS=loops"
