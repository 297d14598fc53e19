"""Where an in-place graph tests its FP flags before it writes the caller's arrays (and runs a
flag check kernel first, lower/flag_check.py), instead of saving a copy of what it writes
(fp_errors.py, native_fp.py).

A redo by NumPy must start from the caller's arrays as they were. A test of the flag word
before the first step that writes them (the inputs and their views) keeps that true when no
step after that point may report a flag (a flag there could only be answered by a redo from
arrays already overwritten), with one exception: the first writer itself, when it is a kernel
whose writes are assignments a check kernel can drop (check_kernel): its check runs first,
with the same work and flags, before the test (choose).

Kernels before that point share the test: their flags are still in the word. The writer's own
flags after a clean check are the check's again (the same operations on the same values) or
spurious lanes of a vector loop: the results stand.

No test before writing at all, in every error state, when the graph is one in-place ufunc that
NumPy reports only after writing its destination (`x += y`, `x[1:] *= c`, `np.add(x, y, out=x)`,
`i //= j` on integers, x float32 += y float64: the only step that may report, one ufunc of loaded
operands, its result in the destination's dtype or narrowed float64 -> float32): its
kernel writes, and then NumPy reports what the kernel flagged (`plan.report_after`,
`step.after_write`: fp_probes.py). That is NumPy's own order for one ufunc call: under
"raise" x is written and then FloatingPointError raised; a warning after the write.
"""
from __future__ import annotations

import numpy as np

from ...codegen.llvm_kernels import fpflags
from ...ir.graph import Node
from ...ir.ops.elementwise import scalar_operator
from ...ir.ops.loops import written_values
from ...ir.registry import get_op
from ...lower.flag_check import check_kernel
from ...lower.fusion import KernelStep
from .fp_probes import Probes, supported


def choose(plan, steps) -> list:
    """Where the graph tests its FP flags before its first write into the caller's memory
    (`plan.flag_test_at`: that step's index, or None: the graph saves copies instead), and the
    check kernel that step runs first when it is itself a kernel that may report (`step.check`);
    returns the check kernels to compile with the others.

      * every step that may report comes before the first write: the flags are tested there,
        nothing to check (`cov[i, :] = data @ x / (n - 1.0)`: the division before the copies);
      * else the first writer is the only one at or after it that may report, a kernel whose
        writes the check can drop: its check kernel runs, then the flags are tested."""
    plan.flag_test_at = plan.report_after = None
    writers = [i for i, s in enumerate(steps) if _writes_inputs(plan, s)]
    if not writers:
        return []
    first = writers[0]
    reporting = [i for i, s in enumerate(steps) if _kinds(plan, s)]
    if not reporting:
        return []
    if all(i < first for i in reporting):
        plan.flag_test_at = first
        return []
    w = steps[first]
    if [i for i in reporting if i >= first] != [first] or not isinstance(w, KernelStep) \
            or any(j.kind != "assign" for j in w.jobs):
        return []
    if reporting == [first]:
        w.after_write = _report_after_write(plan, w)
        if w.after_write is not None:          # NumPy reports after writing: so do we
            plan.report_after = first
            return []
    bases = {plan.var[plan.assign_base(j.node)[0]] for j in w.jobs}
    written = {i for i, b in enumerate(w.kernel.buffers) if b.written and b.source in bases}
    check = check_kernel(w.kernel, written)
    if check is None:
        return []
    w.check = check
    w.numpy_call = _lone_ufunc(plan, steps, w)
    plan.flag_test_at = first
    return [check]


def _lone_ufunc(plan, steps, w):
    """(ufunc, operands, destination, bytes per element) when the whole graph is one in-place ufunc into an input
    (`x += y`, `M *= c`: operands are input nodes or Python constants), else None. Where its
    check must run, the check and the kernel read the operands twice where NumPy's own call
    (`np.add(x, y, x)`, what `x += y` runs eagerly) reads them once: above a size the native
    entry makes that call instead (native_fp.numpy_or_check), NumPy's values and reports by
    construction."""
    if steps != [w] or len(w.jobs) != 1:
        return None
    a = w.jobs[0].node
    if a.op != "assign" or a.attr("writer") != "ufunc" or len(a.args) != 2 or not isinstance(a.args[1], Node):
        return None
    dst, v = a.args
    op = get_op(v.op)
    if op.kind != "elementwise" or op.ufunc is None or v.op == "power" or v.call_attrs or v.errstate \
            or a.errstate or scalar_operator(v) is not None or plan.users.get(v) != [a] \
            or v in plan.output_set or not isinstance(dst, Node) or plan.cat.get(dst) != "input" \
            or tuple(dst.shape) != tuple(v.shape):
        return None
    operands, arrays = [], {dst}
    for x in v.args:
        if isinstance(x, Node) and plan.cat.get(x) == "input":
            operands.append(x)                     # an array, or a Python scalar argument
            if not plan.by_value(x) and x.dtype is not None:
                arrays.add(x)
        elif type(x) in (int, float, bool):
            operands.append(("const", x))
        else:
            return None
    return op.ufunc, operands, dst, sum(np.dtype(x.dtype).itemsize for x in arrays)


def _report_after_write(plan, w):
    """fp_probes.Probes of the kernel step w when it is one in-place ufunc that NumPy reports
    only after writing (module doc): one assign of a ufunc (add, subtract, multiply, divide in
    float32 / float64; floor_divide, remainder, fmod in an integer dtype) into an input or a
    view of one, whose operands are inputs, views of inputs or constants, in the ufunc's dtype
    or widened into it exactly (`_widens`); the result in the destination's dtype or, float64
    into float32, cast by NumPy in its buffers (it reports the cast's overflow / underflow as
    the ufunc's, after writing: fp_probes.NARROWING),
    none overlapping the destination unless it is the destination (else NumPy computes into a
    temporary output and reports before it writes the destination: `x[1:] += x[:-1]` under
    "raise" leaves x as it was; an overlap known only at run time makes the wrapper call NumPy,
    the native entry miss); else None."""
    if len(w.jobs) != 1:
        return None
    a = w.jobs[0].node
    if a.op != "assign" or a.attr("writer") != "ufunc" or len(a.args) != 2 or not isinstance(a.args[1], Node):
        return None
    dst, v = a.args
    op = get_op(v.op)
    if op.kind != "elementwise" or op.ufunc is None or v.call_attrs or v.errstate or a.errstate \
            or scalar_operator(v) is not None or plan.users.get(v) != [a] or v in plan.output_set \
            or not isinstance(dst, Node) or not _input_memory(plan, dst) or tuple(dst.shape) != tuple(v.shape):
        return None
    dtype = np.dtype(v.dtype)
    if not supported(op.ufunc, dtype, dst.dtype):
        return None
    for x in v.args:
        if isinstance(x, Node):
            if x.dtype is None or not (_input_memory(plan, x) or plan.cat.get(x) == "input" and plan.by_value(x)):
                return None
            if np.dtype(x.dtype) != dtype and not (_widens(x.dtype, dtype) and not plan.by_value(x)):
                return None
            if x is not dst and _root(plan, x) is _root(plan, dst):
                return None                    # another view of the destination's input
        elif type(x) not in (int, float) or not _exact(x, dtype):
            return None                        # a constant the kernel would round
    return Probes.build(op.ufunc, dtype, fpflags.kinds(w.kernel), dst.dtype)


def _widens(src, dtype) -> bool:
    """Is an array of dtype `src` read into `dtype` by a cast that reports nothing (bool, an
    integer or float32 into float64, a small integer into float32)? NumPy casts such an input
    in its buffers and still writes the destination directly."""
    src = np.dtype(src)
    return src.kind in "biuf" and src != np.float16 and np.can_cast(src, dtype, "safe")


def _exact(c, dtype) -> bool:
    """Is the Python number c exactly a value of dtype (no rounding, no overflow)?"""
    try:
        with np.errstate(all="ignore"):
            return float(dtype.type(c)) == c
    except OverflowError:
        return False


def _kinds(plan, step) -> int:
    """What NumPy may report for a step's kernels: a kernel's kinds, a loop's kernels' kinds (a
    loop whose body the wrapper runs as a graph of its own: anything)."""
    if isinstance(step, KernelStep):
        return fpflags.kinds(step.kernel)
    n = step.node
    native = getattr(plan, "loop_natives", {}).get(n)
    if native is not None:
        return fpflags.kinds(native.kernel)
    driver = getattr(plan, "array_loops", {}).get(n)
    if driver is not None:
        out = 0
        for k in driver.kernels:
            out |= fpflags.kinds(k)
        return out
    if n in getattr(plan, "loop_runners", {}):
        return fpflags.REPORTED | fpflags.ZERO_SIGNS
    return 0


def _writes_inputs(plan, step) -> bool:
    nodes = [j.node for j in step.jobs] if isinstance(step, KernelStep) else [step.node]
    return any(_input_memory(plan, d) for n in nodes for d in written_values(n))


def _root(plan, d):
    while isinstance(d, Node) and plan.cat.get(d) != "input" and get_op(d.op).kind == "view" and d.args \
            and isinstance(d.args[0], Node):
        d = d.args[0]
    return d


def _input_memory(plan, d) -> bool:
    """Is `d` an input or a view of one (the caller's memory)?"""
    while isinstance(d, Node) and plan.cat.get(d) != "input" and get_op(d.op).kind == "view" and d.args \
            and isinstance(d.args[0], Node):
        d = d.args[0]
    return isinstance(d, Node) and plan.cat.get(d) == "input"


__all__ = ["choose"]
