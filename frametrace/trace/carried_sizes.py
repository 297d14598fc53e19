"""Carried sizes: loops whose carried arrays change length every iteration.
A carried array that the body replaces by a masked subset of itself (`Z = Z[I]`) changes its
length every iteration. The first trace finds which dims change; the loop is traced again
with each such dim a new unbacked size of the body (one per group of dims that start as the
same size and end as the same size: `Z`, `C`, `Xi` selected by one mask), bound from the
carried values at the start of every iteration (LoopBody.carried_sizes). Values the loop
leaves have the body's last sizes, bound in the outer graph from those values.
"""
from __future__ import annotations

import sympy

from .. import pyversion
from ..ir.builder import to_expr
from ..ir.fake import FakeArray
from .loop_plan import restart as _restart
from .variables.array import ArrayVariable


def vary(tx, fake, label, varying, carried_syms):
    """The body input's abstract value for a carried value: its varying dims as carried sizes."""
    dims = {d: group for name, d, group in varying if name == label}
    if not dims or not isinstance(fake, FakeArray) or fake.scalar:
        return fake
    shape = list(fake.shape)
    for d, group in dims.items():
        if group not in carried_syms:
            carried_syms[group] = tx.output.shape_env.create_unbacked_symint(
                lower=0, source=f"{label}.shape[{d}] in the loop")
            tx.output.carried_sizes.add(to_expr(carried_syms[group]))
        shape[d] = carried_syms[group]
    return FakeArray(tuple(shape), fake.dtype, fake.scalar)


def check_varying(tx, key, graph, labels, placeholders, finals, varying) -> None:
    """Restart with the dims whose size the body changes as carried sizes (or unroll when a
    group's members end with different sizes, or a known carried size is not one)."""
    env = tx.output.shape_env
    known = {(name, d): group for name, d, group in varying}
    found, ends = [], {}
    for k, new in enumerate(finals):
        ph = placeholders[k]
        if not (isinstance(new, ArrayVariable) and isinstance(new.proxy.fake, FakeArray)
                and isinstance(ph.proxy.fake, FakeArray) and not new.proxy.fake.scalar
                and new.proxy.fake.ndim == ph.proxy.fake.ndim and new.proxy.fake.dtype == ph.proxy.fake.dtype):
            continue
        for d, (a, b) in enumerate(zip(ph.proxy.shape, new.proxy.shape)):
            a, b = sympy.sympify(to_expr(a)), sympy.sympify(to_expr(b))
            if (labels[k], d) in known:
                ends.setdefault(known[(labels[k], d)], set()).add(env.simplify(b))
            elif env.simplify(a - b) != 0:
                found.append((labels[k], d, (str(a), str(env.simplify(b)))))
    if found:
        _restart(tx, ("vary", key), tuple(varying) + tuple(found),
                 ", ".join(f"{name!r} changes its size along axis {d} ({g[0]} -> {g[1]})" for name, d, g in found))
    from ..ir.verify import unbacked_definitions
    made = set(unbacked_definitions(graph))            # a selection's size, an inner loop's carried one
    for group, exprs in ends.items():
        if len(exprs) > 1:
            _restart(tx, key, "unroll", f"arrays of one carried size end with different sizes ({group[0]} -> "
                                        f"{', '.join(map(str, exprs))})")
        end = next(iter(exprs))
        if end not in made:            # (`v + 1`: no size the outer graph could bind from the value)
            _restart(tx, key, "unroll", f"a carried size ends as {end}, not as the size of a selection")


def size_break(tx, ins, cond, ctx) -> bool:
    """`if not len(z): break` first thing in a body with carried sizes: a test of the carried
    sizes before each iteration (LoopBody.stop_when), not a branch of the body: the rest of the
    body is traced unconditionally (no predicated writes), and a loop that stops leaves with the
    values its last iteration made and the index it stopped at, as Python's."""
    from .branches import at_break
    node = getattr(getattr(cond, "proxy", None), "node", None)
    if ctx.firsts is None or ctx.tx is not tx or ctx.kind != "for" or ctx.stop_when is not None \
            or ctx.brk is not None or node is None or node.op != "py_scalar" \
            or list(tx.output.builder.graph.nodes) != [node] \
            or any(tx.locals.get(name) is not vt for name, vt in ctx.firsts.items()):
        return False
    expr = sympy.sympify(node.args[0])
    jump_if = pyversion.POP_JUMPS[ins.opname]
    target = tx.offset_to_index.get(ins.argval)
    if at_break(tx, ctx, tx.ip):                        # falls through into the `break`
        stop_if, go_on = not jump_if, target
    elif target is not None and at_break(tx, ctx, target):
        stop_if, go_on = jump_if, tx.ip
    else:
        return False
    truth = expr if isinstance(expr, sympy.logic.boolalg.Boolean) else sympy.Ne(expr, 0)
    ctx.stop_when = truth if stop_if else sympy.Not(truth)
    tx.ip = go_on                                       # (the test's node is dead code now)
    return True


def read_at(graph, ncarried, carried_syms) -> tuple:
    """((symbol, carried position, dim), ...): where each carried size is read at run time."""
    out = []
    for sym in map(to_expr, carried_syms.values()):
        for k, inp in enumerate(graph.inputs[:ncarried]):
            dims = [d for d, dim in enumerate(inp.shape) if to_expr(dim) == sym]
            if dims:
                out.append((sym, k, dims[0]))
                break
    return tuple(out)


__all__ = ["check_varying", "read_at", "size_break", "vary"]
