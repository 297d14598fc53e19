"""Where the wrapper drops its temporaries: after the last step that reads them.

The generated wrapper (wrapper.py) is one straight-line function, so every array it binds
stays alive until the call returns, where NumPy's own evaluation frees each temporary once
its statement is done. In a long graph of NumPy calls (an unrolled FFT: 15 stages of 512 KB
complex temporaries) that difference is the whole cost: every stage writes fresh, cache-cold
pages instead of reusing memory the previous stage just freed (npbench stockham_fft: 21.5 ms
against NumPy's 6.8 ms of CPU time, 6.2 ms once the dead temporaries are dropped).

    last_uses(plan, steps) -> {step index: [variable names to drop after that step]}

A value is read by a step when a node that step evaluates (its own node, its kernel's jobs
and the fused nodes inside them: rest.evaluated_before) takes it as an operand, or when a
kernel step writes in place into it (a donor). Graph inputs and outputs and names two nodes
share are never dropped; scalars are left alone (nothing to gain).
"""
from __future__ import annotations

from ...ir.graph import Node
from ...lower.fusion import KernelStep
from .rest import evaluated_before


def last_uses(plan, steps) -> dict:
    g = plan.graph
    before = evaluated_before(plan, steps)
    keep = set(g.inputs) | {o for o in g.outputs if isinstance(o, Node)}
    names: dict = {}
    for n, v in plan.var.items():
        names.setdefault(v, []).append(n)
    last, made = {}, {}
    for i, step in enumerate(steps):
        for x in before[i + 1] - before[i]:
            made.setdefault(x, i)
            for a in x.inputs():
                last[a] = i
        if isinstance(step, KernelStep):
            for _n, donor in step.reuse:
                last[donor] = i
    out: dict = {}
    for n, i in last.items():
        v = plan.var.get(n)
        if v is None or n in keep or len(names[v]) > 1 or n.dtype is None or n.shape == () or \
                n not in made or made[n] > i:
            continue
        out.setdefault(i, []).append(v)
    return {i: sorted(vs) for i, vs in out.items()}
