"""Dropping the wrapper's temporaries after their last use, as eager NumPy code does.

A generated wrapper is one straight-line function: without this, every intermediate array
it computed stays referenced by its local variable until the function returns, and then all
of them are freed at once. Eager NumPy frees each temporary as soon as the expression that
reads it is done (`Z[I] ** 2 + C[I]`: `Z[I]` dies before `C[I]` is allocated), so its next
allocation reuses the memory just freed. Freeing everything together at the return leaves a
large free block at the top of the heap, which glibc gives back to the kernel (heap trim:
top > M_TRIM_THRESHOLD, 2x the largest freed mmap chunk, dynamic); the next call allocates the
same arrays again on fresh pages and pays a page fault per 4 KB. For a body run once per
iteration of a loop node (mandelbrot1 at preset M: 150 iterations of four ~1 MB temporaries)
that was 71,000 page faults per call, the compiled call 2.9x slower than NumPy (benchmarks/
README.md, "Temporaries and the heap"). A plain NumPy helper function holding its temporaries
in locals has the same cost; eager code written in one expression does not.

`releases(plan, steps, layouts)` says, per step, which wrapper variables no later step reads:
the wrapper sets them to None right after that step. Only arrays (ndim > 0) that are neither
inputs nor outputs are released; a name is read by a step when it is a kernel's buffer, a
destination it checks or copies, a donor it reuses, a late layout's leaf, or (for a NumPy
step) an operand anywhere in its arguments. A value some user reads at a step this module
cannot place is kept to the end.
"""
from __future__ import annotations

import sympy

from ...ir.graph import IndexSlice, Node
from ...lower.fusion import KernelStep
from .rest import evaluated_before


def releases(plan, steps, layouts) -> dict:
    """{step index: [wrapper variables to drop after that step]}."""
    last: dict = {}                                  # variable -> last step reading it
    for i, step in enumerate(steps):
        for name in _reads(plan, step, layouts):
            last[name] = i
    before = evaluated_before(plan, steps)
    step_of = {}                                     # node -> the first step evaluating it
    for i in range(len(steps)):
        for n in before[i + 1] - before[i]:
            step_of[n] = i
    keep = {plan.var[n] for n in plan.graph.inputs} | \
        {plan.var[o] for o in plan.graph.outputs if isinstance(o, Node)}
    for expr, _ in getattr(plan.graph, "runtime_asserts", ()):
        keep |= {plan.var[a] for a in _nodes(expr)}
    out: dict = {}
    for n, name in plan.var.items():
        if name in keep or name not in last or n.dtype is None or not n.shape:
            continue
        at = last[name]
        for u in plan.users.get(n, ()):              # a reader this module cannot place: keep
            if u not in step_of:
                break
            at = max(at, step_of[u])
        else:
            out.setdefault(at, []).append(name)
    return out


def _reads(plan, step, layouts) -> set:
    """The wrapper variables a step's lines read or define."""
    var = plan.var
    if not isinstance(step, KernelStep):
        n = step.node
        names = {var[a] for a in _nodes((n.args, tuple(v for _, v in n.call_attrs)))}
        names.add(var[n])
        return names
    names = {b.source for b in step.kernel.buffers}
    names |= {var[j.node] for j in step.jobs if j.node in var}
    names |= {var[n] for n in step.allocs} | {var[n] for n, _ in step.writable}
    names |= set(step.copies) | {base for _, base in step.overlap}
    for n, donor in step.reuse:
        names |= {var[n], var[donor]}
    for n in list(step.allocs) + [n for n, _ in step.reuse]:
        if n in layouts.late:
            names |= {var[v] for v in layouts.late[n][1]}
    for n, _, _ in step.products:
        names |= {var[a] for a in _nodes(n.args)} | {var[n]}
    return names


def _nodes(x):
    """The nodes anywhere in an argument (tuples, slices)."""
    if isinstance(x, Node):
        yield x
    elif isinstance(x, (tuple, list)):
        for a in x:
            yield from _nodes(a)
    elif isinstance(x, IndexSlice):
        yield from _nodes((x.start, x.stop, x.step))
    elif isinstance(x, sympy.Basic) or x is None:
        return
