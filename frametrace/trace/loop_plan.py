"""Decisions about a loop: a loop node, its first iterations peeled, or unrolled, and the
restarts of the trace that change them (trace/loops.py traces; trace/compile.py restarts).

`output.loop_plan` maps (code object, header offset) to a decision:
  "loop"        a loop node (the default; a constant trip count within the budget is unrolled)
  "peel"/"peel2" a loop node after one / two iterations traced as Python runs them (a carried
                value changes type in the first iterations)
  "small"       unrolled under `config.loop_unroll_budget` (trips x body nodes)
  "node"...     a short loop made a node again because its unrolled body met an `if` on data
  "unroll"      unrolled: what the body does cannot be a loop node (the logs say why)
and ("carry", key) / ("in_place", key) to the state a loop carries / the arrays it updates in place,
("split", key) to the points a loop is split at (trace/loop_split.py; "no": not split).
"""
from __future__ import annotations

from ..config import config
from ..logs import get_logger
from .loop_iter import LoopIterator, loop_iterator
from .loop_values import type_key

log = get_logger("loops")

# after a type change in the body: peel one iteration, then two (a triangular inner loop first
# runs in the second outer iteration), then unroll; "node": a short range made a node by
# _short_loop_as_node, never unrolled under the budget
NEXT_DECISION = {"loop": "peel", "peel": "peel2", "peel2": "unroll", "do_while": "peel",   # trace/while_loops.py
                 "node": "peel_node", "peel_node": "peel2_node", "peel2_node": "unroll"}
PEELED = {"peel": 1, "peel2": 2, "peel_node": 1, "peel2_node": 2}      # decision -> iterations peeled


class LoopRestart(Exception):
    """Trace again with `decision` (see the module doc) for the loop at `key`."""

    def __init__(self, key, decision: str, reason: str):
        self.key, self.decision, self.reason = key, decision, reason
        super().__init__(f"{decision}: {reason}")


# ----------------------------------------------------------------------------- decisions

def loop_key(tx, index):
    return (tx.code, tx.instructions[index].offset)


def want_loop(tx, v) -> LoopIterator | None:
    """At GET_ITER: a loop-node iterator when the next FOR_ITER should be one (a range, an
    array, enumerate / zip / reversed of those: trace/loop_iter.py), else None (unrolled)."""
    nxt = tx.ip
    while nxt < len(tx.instructions) and tx.instructions[nxt].opname == "EXTENDED_ARG":
        nxt += 1                                        # a long body: FOR_ITER's argument prefix
    if nxt >= len(tx.instructions) or tx.instructions[nxt].opname != "FOR_ITER" or not config.loop_nodes:
        return None
    key = loop_key(tx, nxt)
    decision = tx.output.loop_plan.get(key, "loop")
    it = loop_iterator(tx, v, key) if decision not in ("unroll", "small") else None
    if it is not None and decision == "loop" and _surely_small(tx, nxt, it.head):
        decision = tx.output.loop_plan[key] = "small"   # no need to trace it as a node first
    if decision == "small":                             # unrolled under the budget
        tx.output.short_unrolled[key] = tx.offset_to_index[tx.instructions[nxt].argval]    # its exit
        return None
    return it


_STRAIGHT = ("LOAD_", "STORE_FAST", "BINARY_", "UNPACK_SEQUENCE", "COMPARE_OP", "UNARY_", "BUILD_TUPLE",
             "BUILD_SLICE", "POP_TOP", "COPY", "SWAP", "NOP", "RESUME", "CACHE", "EXTENDED_ARG")


def _surely_small(tx, for_iter: int, head) -> bool:
    """Within the budget before any tracing: a constant trip count, a straight body (no call,
    loop or branch: each instruction makes at most one node) and trips x instructions <= the
    budget, outside other loop bodies. Saves tracing such a loop as a node, then again unrolled."""
    if not all(type(v) is int for v in head) or head[2] == 0 or \
            any(getattr(c, "state", None) is not None for c in tx.output.loop_stack):
        return False
    exit_index = tx.offset_to_index[tx.instructions[for_iter].argval]
    body = tx.instructions[for_iter + 1:exit_index]
    if not body or not all(ins.opname.startswith(_STRAIGHT) for ins in body[:-1]):
        return False                                    # (the last one jumps back to the header)
    trips = len(range(*head))
    if trips * len(body) > config.loop_unroll_budget:
        return False
    log.info("loop %s: unrolled under the budget (%d trips x a straight body of %d instructions)",
             _where(loop_key(tx, for_iter)), trips, len(body))
    return True


def within_budget(tx, key, ctx, head, graph, peeled) -> str | None:
    """Why a loop node just built should be unrolled instead (a constant trip count whose
    unrolled size, trips x body nodes, is within config.loop_unroll_budget), else None.
    Only a loop without loops in its body, outside other loop bodies: there the unrolled
    copies fuse with the code around them (three stencil taps, one kernel); a copy of a loop
    nest, or a copy inside a loop body, would be kernels of its own where a loop is one."""
    if tx.output.loop_plan.get(key, "loop") not in ("loop", "peel", "peel2") or ctx.converted or \
            ctx.brk is not None or any(n.op == "loop" for n in graph.nodes):
        return None
    if ctx.firsts is not None:                          # carried sizes: each copy a size of its own
        return None
    if any(getattr(c, "state", None) is not None for c in tx.output.loop_stack):
        return None                                     # inside another loop body
    if not all(type(v) is int for v in head) or head[2] == 0:
        return None
    trips = len(range(*head)) + peeled
    size = max(body_size(graph), 1)                     # an empty body costs its tracing
    if trips * size > config.loop_unroll_budget:
        return None
    return f"{trips} trips x {size} body nodes <= loop_unroll_budget ({config.loop_unroll_budget})"


def body_size(graph) -> int:
    """Nodes of a loop body, those of the loop bodies nested in it included."""
    total = 0
    for n in graph.nodes:
        total += 1
        body = n.attr("body") if n.op == "loop" else None
        if body is not None:
            total += body_size(body.graph)
    return total


def short_loop_as_node(tx) -> None:
    """A data-dependent `if` in the body of a short constant range that was being unrolled
    (a layer stack would be): trace again with that loop as a loop node, where the `if` is
    if-converted, rather than break the graph (the innermost such loop, tried once)."""
    at, best = tx.ip - 1, None
    for key, exit_index in tx.output.short_unrolled.items():
        if key[0] is tx.code and tx.output.loop_plan.get(key) == "small":
            header = tx.offset_to_index[key[1]]
            if header < at < exit_index and (best is None or header > best[0]):
                best = (header, key)
    if best is not None:
        restart(tx, best[1], "node", "a data-dependent `if` in its body")


def record_peel_types(tx, key, types) -> None:
    """Remember why `key` peels: the locals that change type in its body and the (kind, type)
    they had before (a Python float that the first iteration makes a NumPy float). None: a peel
    for another reason (always taken)."""
    plan_key = ("peel_types", key)
    if not types:
        tx.output.loop_plan[plan_key] = ()
    elif tx.output.loop_plan.get(plan_key, None) != ():
        tx.output.loop_plan[plan_key] = tuple(dict.fromkeys(tx.output.loop_plan.get(plan_key, ()) + tuple(types)))


def peel_needed(tx, key) -> bool:
    """Whether a loop decided to peel still needs to here: a loop that peels only because a
    carried local changes type peels while that local still has the type it changes from.
    Inside an enclosing loop whose own peeled iteration made it a NumPy float (a triple
    triangular nest accumulating into `s = 0.0`), the inner loop is a node at once."""
    types = tx.output.loop_plan.get(("peel_types", key))
    if not types:
        return True
    for name, before in types:
        vt = tx.locals.get(name)
        current = type_key(vt) if vt is not None else None
        if current is None or current[:2] == before:
            return True
    return False


# ----------------------------------------------------------------------------- restarts

def why(exc) -> str:
    text = getattr(exc, "explanation", None) or str(exc)
    loc = getattr(exc, "location", "")
    return f"{text}{' at ' + loc if loc else ''}"


def restart(tx, key, decision, reason):
    """Log the new decision for `key` and restart the trace with it (LoopRestart)."""
    if key[0] == "carry":
        log.info("loop %s: carries %s (%s)", _where(key[1]), decision[-1].label(), reason)
    elif key[0] == "split":
        log.info("loop %s: %s (%s)", _where(key[1]), "not split" if decision == "no" else
                 f"split at {', '.join(map(str, decision))}", reason)
    elif key[0] == "vary":
        log.info("loop %s: carried sizes %s (%s)", _where(key[1]),
                 ", ".join(f"{name}.shape[{d}]" for name, d, _ in decision), reason)
    elif key[0] == "in_place":
        log.info("loop %s: captures %r (%s)", _where(key[1]), decision[-1], reason)
    else:
        log.info("loop %s: %s (%s)", _where(key), {"unroll": "unrolled", "small": "unrolled under the budget"}
                 .get(decision, decision), reason)
    tx.output.loop_notes.append((key, decision, reason))
    raise LoopRestart(key, decision, reason)


def _where(key):
    code, offset = key
    return f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]}, offset {offset})"

