"""Where the wrapper drops its temporaries: after the last step that reads them.

The generated wrapper (wrapper.py) is one straight-line function, so every array it binds
stays alive until the call returns, where NumPy's own evaluation frees each temporary once
its statement is done. In a long graph of NumPy calls (an unrolled FFT: 15 stages of 512 KB
complex temporaries) that difference is the whole cost: every stage writes fresh, cache-cold
pages instead of reusing memory the previous stage just freed (npbench stockham_fft: 21.5 ms
against NumPy's 6.8 ms of CPU time, 6.2 ms once the dead temporaries are dropped).

    last_uses(plan, steps) -> {step index: [variable names to drop after that step]}

A value is read by a step when a node that step evaluates (its own node, its kernel's jobs
and the fused nodes inside them, each time a step computes them) takes it as an operand, when
a kernel step writes in place into it (a donor), or when it is one of the arrays a kernel is
passed. Graph inputs and outputs, names two nodes
share and the values in `redo_reads` (what a NumPy redo of the call may still read from the
wrapper's locals: reports.py) are never dropped; scalars are left alone (nothing to gain). A read of a view is a read
of every value down its chain of views: a kernel may address the base's buffer by the base's
name (an assign into `x.flatten()` reshaped to a view writes through the 2-d buffer), and a live
view keeps its base's memory anyway, so dropping the base's name earlier would free nothing.
"""
from __future__ import annotations

from ...ir.graph import Node
from ...lower.fusion import KernelStep, evaluated_by


def last_uses(plan, steps, redo_reads=()) -> dict:
    g = plan.graph
    keep = set(g.inputs) | {o for o in g.outputs if isinstance(o, Node)} | set(redo_reads)
    names: dict = {}
    for n, v in plan.var.items():
        names.setdefault(v, []).append(n)
    last, made = {}, {}
    for i, step in enumerate(steps):
        for x in evaluated_by(plan, step):
            made.setdefault(x, i)
            for a in x.inputs():
                _read(plan, a, i, last)
        if isinstance(step, KernelStep):
            for _n, donor in step.reuse:
                _read(plan, donor, i, last)
            for buf in step.kernel.buffers:   # every array the kernel is passed, by its name
                for n in names.get(buf.source, ()):
                    _read(plan, n, i, last)
    out: dict = {}
    for n, i in last.items():
        v = plan.var.get(n)
        if v is None or n in keep or len(names[v]) > 1 or n.dtype is None or n.shape == () or \
                n not in made or made[n] > i:
            continue
        out.setdefault(i, []).append(v)
    return {i: sorted(vs) for i, vs in out.items()}


def _read(plan, n, i: int, last: dict) -> None:
    """`n` is read at step i, and so is each value down its chain of views."""
    while True:
        last[n] = i
        if plan.cat.get(n) != "view" or not n.args or not isinstance(n.args[0], Node):
            return
        n = n.args[0]


def ufunc_donor(plan, n: Node, dying) -> Node | None:
    """An operand of wrapper ufunc step `n` that the ufunc may write its result into (`out=`),
    as NumPy's temporary elision does for `a * b + c`: a fresh array the wrapper made (a ufunc's
    or np.matmul's result, or a kernel's allocation), dying at this step (`dying`: the variable
    names last_uses drops after it), of `n`'s dtype and shape, 1-d (a fresh 1-d result is always
    contiguous: the layout NumPy gives `n`), and never seen through a view. Without it a chain
    of NumPy calls allocates a new result per call: ~7x NumPy's time on 640 KB complex arrays,
    where a second live allocation of that size comes back from the kernel page by page."""
    from ...ir.registry import get_op
    for d in n.args:
        if not isinstance(d, Node) or d.ndim != 1 or n.ndim != 1 or d.scalar or d.dtype != n.dtype \
                or d.shape[0] != n.shape[0] or plan.var.get(d) not in dying or d in plan.output_set:
            continue
        made = d in plan.stored or plan.cat.get(d) == "matmul" or (
            plan.cat.get(d) == "fallback" and get_op(d.op).kind == "elementwise" and get_op(d.op).ufunc is not None)
        if made and not any(get_op(u.op).kind == "view" or get_op(u.op).aliases for u in plan.users[d]):
            return d
    return None
