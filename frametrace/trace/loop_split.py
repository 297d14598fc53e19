"""A loop split where a condition on its index changes value (index-set splitting).

A body that branches on loop indices (`if E - w >= 0:`, `if k < i:`, `if i == j:`, Python
ints) would otherwise be if-converted (trace/branches.py): both sides computed in every
iteration, the untaken one on indices that may be out of range (`G[E - w]` where `E < w`),
which the trace cannot prove in bounds and so unrolls. When the condition is linear in one
loop's index with slope +-1, it holds on one side of a point `p` of that loop's range and not
on the other (an equality on the single index `p`): the loop becomes consecutive loop nodes
over `range(start, Min(stop, p))` and `range(Max(start, p), stop)` (three for `==` / `!=`),
in order, each with its body traced once for its own range, where the condition is decided
(shapes/loop_index.py: an end that is a Min/Max is split into comparisons of its arguments).
What is compiled stays the size of the source: the body twice (three times), never per trip.

The request is a restart (`("split", key)` in the loop plan) naming the split points, with the
indices of the enclosing loops as placeholders (`__loop<depth>`, the depth in the loop stack)
and sizes or ints by their source (`__src<k>`: `L['m']`), since the retrace makes new symbols;
an argument first read in the body is wrapped before the loop so that its symbol exists there.
One split per loop: a second condition on the same index, a condition with another slope or not
linear (`(i + j) % 2`), a loop with a step other than 1, a split point read first from an
attribute inside the body, or a body that `break`s stays if-converted as before.
"""
from __future__ import annotations

import sympy

from ..errors import Unsupported
from ..logs import get_logger
from .loop_plan import restart

log = get_logger("loops")

_FLIP = {sympy.StrictLessThan: sympy.StrictGreaterThan, sympy.LessThan: sympy.GreaterThan,
         sympy.StrictGreaterThan: sympy.StrictLessThan, sympy.GreaterThan: sympy.LessThan,
         sympy.Eq: sympy.Eq, sympy.Ne: sympy.Ne}


def request(tx, expr) -> None:
    """`expr`, a comparison on loop indices the trace cannot decide, is met in a body: restart
    with the innermost loop whose index it mentions split at the point where it changes, if
    that loop can be split (else return: the caller if-converts)."""
    if type(expr) not in _FLIP:
        return
    env = tx.output.shape_env
    stack = tx.output.loop_stack
    depth = {c.index: d for d, c in enumerate(stack) if getattr(c, "index", None) is not None}
    found = [depth[s] for s in expr.free_symbols if s in depth]
    if not found:
        return
    d = max(found)
    ctx = stack[d]
    key = getattr(ctx, "key", None)
    head = getattr(ctx, "head", None)
    if ctx.kind != "for" or key is None or head is None or not (type(head[2]) is int and head[2] == 1) \
            or ("split", key) in tx.output.loop_plan:
        return
    i = ctx.index
    diff = sympy.expand(expr.lhs - expr.rhs)
    c = sympy.diff(diff, i)
    rel = type(expr)
    if c not in (1, -1):
        return
    rest = sympy.expand(diff - c * i)
    if c == -1:
        rest, rel = -rest, _FLIP[rel]                   # -i + r REL 0  <=>  i - r FLIP(REL) 0
    # i + rest REL 0: the truth changes at p (i < p on one side, i >= p on the other)
    for s in rest.free_symbols:
        if s in depth:
            if depth[s] >= d:
                return
        elif env.is_unbacked(s):                        # a size the body computed from data
            return
    if rel in (sympy.Eq, sympy.Ne):
        points = (-rest, 1 - rest)
    else:
        points = (-rest,) if rel in (sympy.StrictLessThan, sympy.GreaterThan) else (1 - rest,)
    names = {s: sympy.Symbol(f"__loop{depth[s]}", integer=True) for s in rest.free_symbols if s in depth}
    sources = []
    for s in sorted(rest.free_symbols - set(depth), key=str):      # sizes and ints: by their source
        where = env.symbol_sources.get(s)
        if not where:
            return
        names[s] = sympy.Symbol(f"__src{len(sources)}", integer=True)
        sources.append(where[0])
    portable = tuple(p.xreplace(names) for p in points)
    restart(tx, ("split", key), (portable, tuple(sources)), f"`{expr}` on the index changes value inside its range")


def pieces(tx, key, head):
    """The (start, stop) ranges the loop at `key` runs as, in order, or None (not split)."""
    plan = tx.output.loop_plan.get(("split", key))
    if not isinstance(plan, tuple):
        return None
    points, sources = plan
    start, stop, step = head
    if not (type(step) is int and step == 1):
        return None
    env = tx.output.shape_env
    stack = tx.output.loop_stack
    names = {}
    for p in points:
        for s in p.free_symbols:
            if s.name.startswith("__loop"):
                d = int(s.name[len("__loop"):])
                index = getattr(stack[d], "index", None) if d < len(stack) else None
                if index is None:
                    return None
                names[s] = index
            elif s.name.startswith("__src"):
                sym = _symbol_of(tx, sources[int(s.name[len("__src"):])])
                if sym is None:
                    return None
                names[s] = sym
            else:
                return None
    from ..ir.builder import to_expr
    lo, hi = to_expr(start), to_expr(stop)
    cuts = [sympy.sympify(p.xreplace(names)) for p in points]
    # range(lo, Min(hi, p1)), range(Max(lo, p1), Min(hi, p2)), ..., range(Max(lo, pk), hi): in
    # order, disjoint and covering range(lo, hi) since p1 < p2 (a piece is empty where its stop
    # is not above its start, as range() is); each body runs only where its range is not empty
    starts = [lo] + [_pick(env, sympy.Max, lo, p) for p in cuts]
    stops = [_pick(env, sympy.Min, hi, p) for p in cuts] + [hi]
    return [(_value(tx, a), _value(tx, b)) for a, b in zip(starts, stops)]


def _symbol_of(tx, source):
    """The symbol of `source` in this trace: an argument the loop's body reads first (`if i < m:`)
    is wrapped now, before the loop (its symbol is made there: the split points need it)."""
    env = tx.output.shape_env
    sym = env._source_to_var.get(source)
    if sym is None:
        name = next((n for n in tx.lazy if source == f"L[{n!r}]"), None)
        if name is not None:
            tx.locals[name] = tx.wrap_value(*tx.lazy.pop(name))
            sym = env._source_to_var.get(source)
    return sym if isinstance(sym, sympy.Symbol) else None


def surely_empty(env, start, stop) -> bool:
    """range(start, stop) is empty for every value the guards and enclosing ranges allow."""
    from ..ir.builder import to_expr
    return _known(env, sympy.Le(sympy.sympify(to_expr(stop)), sympy.sympify(to_expr(start)))) is True


def _known(env, fact):
    from ..errors import DataDependentError
    if fact in (sympy.true, sympy.false):
        return bool(fact)
    try:
        known = env.decide_over_loop_indices(fact, static=True)
        return env.maybe_evaluate_static(fact) if known is None else known
    except (DataDependentError, Unsupported):
        return None


def _pick(env, kind, a, b):
    """Min/Max(a, b), or the one the enclosing loops' ranges prove it is (`k < i` in
    `for i in range(n)`: range(0, i) and range(i, n), no Min(n, i) left for the lowering)."""
    a, b = sympy.sympify(a), sympy.sympify(b)
    rel = sympy.Le if kind is sympy.Min else sympy.Ge
    for x, y in ((a, b), (b, a)):
        if _known(env, rel(x, y)) is True:
            return x
    return kind(a, b)


def _value(tx, expr):
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr)
    from ..shapes.symint import wrap
    return wrap(expr, "int", tx.output.shape_env)
