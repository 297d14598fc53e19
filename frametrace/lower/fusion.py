"""Scheduling, part 2: group jobs into kernels, in program order, and order the wrapper steps.

A job is a value a kernel must produce: a materialised elementwise value ("store"), a
reduction ("red"), a scan, or a kernel assignment. Jobs join the open kernel when they
pass `JOIN_RULES` (same outer loops, ...) and building them there succeeds (a job that reads
a reduction of this kernel at another index than the current row cannot join). Wrapper
steps (NumPy views, fallbacks, matmul) run before the open kernel unless they read
something it produces; mutations close it (never reorder a read across a write).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy

from ..ir.graph import Node
from ..ir.ops.loops import written_values
from ..ir.ops.mutation import READ_ONLY
from ..ir.registry import Reduction, lowered_as
from . import compact
from .kernels import Conflict, KernelBuilder
from .loop_ir import Kernel, Load, Store, walk_exprs
from .matmul import choice as product_choice, kernel_product, kernel_when, product_of
from .pointwise import NotLowerable
from .reductions import kept_dims, pairwise_axis, red_axes
from .schedule import Plan, kernel_assign, node_args
from .views import view_index
from .weak_ints import range_checks

REDUCTIONS = frozenset(lowered_as(Reduction))             # registry (ir/ops/reductions.py)
NONEMPTY = frozenset(n for n, r in lowered_as(Reduction).items() if r.nonempty)  # no identity


@dataclass
class Job:
    node: Node
    kind: str                     # store | red | red_rmw | scan | assign | mm | compact

    @property
    def standalone(self) -> bool:
        return self.kind in ("scan", "assign", "compact")


@dataclass
class WrapperStep:
    node: Node


@dataclass
class KernelStep:
    kernel: Kernel
    jobs: list
    allocs: list = field(default_factory=list)      # nodes whose output arrays are allocated
    reuse: list = field(default_factory=list)       # (node, donor): node's array is donor's
    writable: list = field(default_factory=list)    # (destination, NumPy's message) refused if read-only
    copies: list = field(default_factory=list)      # vars read through `<var>_before` copies
    scratch: list = field(default_factory=list)     # (name, like node, dtype) temporaries
    overlap: list = field(default_factory=list)     # (buffer index, dst source): copy if overlapping
    empty_checks: list = field(default_factory=list)  # reductions that raise on empty axes
    binds: list = field(default_factory=list)       # (size name, source): read after the kernel
    products: list = field(default_factory=list)    # (node, use var, condition): a matrix product whose
                                                    #   nest runs when the sizes say (lower/matmul.py)
    zero_fill: bool = False                         # it only fills new arrays with zeros: the wrapper
                                                    #   allocates them zeroed (calloc; np.empty: not
                                                    #   at all) and skips it
    check: Kernel | None = None                     # its flag check, run before it writes the
                                                    #   caller's arrays (backends/llvm/flag_checks.py)
    numpy_call: tuple | None = None                 # (ufunc, operands, destination, bytes per element):
                                                    #   the graph is this one in-place ufunc (flag_checks.py)
    after_write: object = None                      # fp_probes.Probes: it reports its flags after
                                                    #   writing, as NumPy's one ufunc call does


def evaluated_by(plan, step) -> set:
    """The nodes `step` evaluates: its own (a kernel's jobs) and the lazy values fused into
    them, each time a step computes them (two kernels may both recompute `np.hypot(gx, gy)`
    from a stored array: that array is read by the second one too)."""
    roots = [j.node for j in step.jobs] if isinstance(step, KernelStep) else [step.node]
    seen, stack = set(), list(roots)
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        stack += [a for a in x.inputs() if plan.cat.get(a) in ("pw", "view") and not plan.need.get(a)]
    return seen


def _same(a, b) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return sympy.sympify(a - b) == 0


def _same_dims(xs, ys) -> bool:
    return len(xs) == len(ys) and all(_same(a, b) for a, b in zip(xs, ys))


def _outer_dims(job: Job):
    """(shape the outer loops walk, fixed L or None when any prefix works)."""
    if job.kind == "red":
        x = job.node.args[0]
        kept = tuple(x.shape[d] for d in kept_dims(job.node))
        return kept, len(kept)
    if job.kind == "mm":                                     # rows of the product
        return job.node.shape, product_of(job.node).L
    return job.node.shape, None


def choose_outer(jobs: list):
    """(L, outer extents) shared by all jobs, or None. Reductions fix L (their kept dims);
    elementwise jobs take any common prefix of their shapes, leaving the last dim inner."""
    dims = [_outer_dims(j) for j in jobs]
    fixed = {L for _, L in dims if L is not None}
    if len(fixed) > 1:
        return None                                          # reductions keep different ranks
    if fixed:
        L = fixed.pop()
        outer = next(s for s, f in dims if f is not None)[:L]
    else:
        m = min(len(s) for s, _ in dims)
        L = max(m - 1, 0)                                    # innermost dim is a phase loop
        first = dims[0][0]
        while L and not all(_same_dims(s[:L], first[:L]) for s, _ in dims):
            L -= 1
        if L == 0 and len(jobs) > 1 and any(len(s) > 1 for s, _ in dims):
            return None                                      # no shared outer loop: split kernels
        outer = first[:L]
    if not all(len(s) >= L and _same_dims(s[:L], outer) for s, _ in dims):
        return None                                          # outer loops differ
    return L, tuple(outer)


def _reusable_buffer(plan: Plan, jobs: list, b: KernelBuilder):
    """A dead temporary the single elementwise job of this kernel can overwrite in place
    (the matmul result under `maximum(x @ w + b, 0)`, or the rows of a product this kernel
    computes before the job: `np.tanh(x @ w + b)` never allocates the product): same shape
    and dtype, owned by us, no views of it, no later reader, and read here only at the
    element being written. Besides the store, the kernel may hold the products and the
    reductions it reads (whose phases run before its store, row by row)."""
    if jobs[-1].kind != "store" or not all(j.kind in ("mm", "red") for j in jobs[:-1]) or \
            (len(jobs) > 1 and not any(j.kind == "mm" for j in jobs)):
        return None
    out = jobs[-1].node
    in_kernel = {j.node for j in jobs if j.kind == "mm"}
    store = next(s for ph in b.phases for s in ph.body if isinstance(s, Store) and s.buf == b.buffer(out, written=True))
    loads = [e for e in walk_exprs(store.value) if isinstance(e, Load)]
    for i, d in enumerate(b.buffer_nodes):
        owned = d in plan.stored or d in in_kernel or (plan.cat[d] == "matmul" and d.ndim >= 1)
        if len(jobs) > 1 and d not in in_kernel:
            continue                          # other phases may read it at other rows
        if not owned or d is out or d in plan.output_set or d.dtype != out.dtype \
                or not _same_dims(d.shape, out.shape) or plan.last_use(d) > plan.pos[out] \
                or any(plan.cat[u] == "view" for u in plan.users[d]):
            continue
        if all(_same_element(ld.index, store.index, out.shape) for ld in loads if ld.buf == i):
            return d
    return None


def _same_element(a: tuple, b: tuple, shape) -> bool:
    """Two indices of one array name the same element: equal along each dim, or the dim has
    one element (a broadcast read of a size-1 dim is at 0, the store at the loop variable)."""
    return len(a) == len(b) and all(x == y or (isinstance(d, int) and d == 1) for x, y, d in zip(a, b, shape))


def use_var(plan: Plan, n: Node):
    """The wrapper variable saying whether a product's nest runs this call (its sizes decide:
    lower/matmul.py "auto"), or None when the nest always runs."""
    return f"{plan.var[n]}_use" if product_choice(n) == "auto" else None


def _standalone_outer(job: Job):
    """(L, outer extents) of a kernel of its own: the dims its loops may share."""
    n = job.node
    if job.kind == "scan":              # dims before the scanned axis (all but it if last)
        L, shape = min(max(n.ndim - 1, 0), n.attr("axis") or 0), n.shape
    elif job.kind == "red_rmw":         # dims before the first reduced one
        axes, shape = red_axes(n), n.args[0].shape
        L = min(axes) if axes else len(shape)
    else:                               # assign
        shape = n.args[0].shape
        L = max(len(shape) - 1, 0)
    return L, tuple(shape[:L])


def _same_rmw(a: Job, b: Job) -> bool:
    """Accumulating reductions over the same axes of same-shaped inputs share one pass."""
    return red_axes(a.node) == red_axes(b.node) and _same_dims(a.node.args[0].shape, b.node.args[0].shape)


def rmw_reduction(n: Node) -> bool:
    """Reductions that keep the innermost dim (x.sum(axis=0)): accumulate into the result,
    vectorised along the kept inner dim, in NumPy's own order (exact for sums). Not when every
    kept dim after the reduced one has static size 1 (an (n, 1) column's sum over axis 0):
    NumPy drops those and sums pairwise, as the register path does (reductions.pairwise_axis)."""
    x = n.args[0]
    axes = red_axes(n)
    ok = n.op in REDUCTIONS and n.attr("axis") is not None   # argmax's axis: an int or None
    return ok and x.ndim >= 2 and bool(axes) and (x.ndim - 1) not in axes and pairwise_axis(n) is None


def _build(plan: Plan, jobs: list, name: str, final: bool, target=None) -> KernelBuilder:
    if jobs[0].standalone or jobs[0].kind == "red_rmw":
        L, outer = _standalone_outer(jobs[0])
    else:
        choice = choose_outer(jobs)
        if choice is None:
            raise Conflict("no common outer loops")
        L, outer = choice
    b = KernelBuilder(plan, jobs, L, outer, name)
    if jobs[0].kind == "assign" and jobs[0].node in plan.read_copies:
        b.read_copies.add(plan.assign_base(jobs[0].node)[0])
    if jobs[0].kind == "red_rmw":
        b.add_reductions_rmw([j.node for j in jobs])
        return b
    for j in jobs:
        if j.kind == "store":
            b.add_store(j.node, target)
        elif j.kind == "red":
            b.add_reduction(j.node, stored=final and plan.red_stored(j.node, jobs))
        elif j.kind == "scan":
            b.add_scan(j.node)
        elif j.kind == "mm":
            b.add_matmul(j.node, use_var(plan, j.node))
        else:
            base, chain = plan.assign_base(j.node)
            dst, src = j.node.args

            def dst_map(idx, chain=chain):
                for v in chain:
                    idx = view_index(v, idx, b.size_arg)
                return idx
            b.add_assign(base, dst_map, dst.shape, src)
    return b


def _make_job(plan: Plan, n: Node):
    c = plan.cat[n]
    if c == "pw" and plan.need.get(n):
        return Job(n, "store")
    if c == "red":
        return Job(n, "red_rmw" if rmw_reduction(n) else "red")
    if c == "scan":
        return Job(n, "scan")
    if c == "assign" and kernel_assign(plan, n):
        return Job(n, "assign")
    if c == "matmul" and kernel_product(n):
        return Job(n, "mm")
    if c == "compact":
        return Job(n, "compact")
    return None


def _reads_dst_elsewhere(plan: Plan, job: Job) -> bool:
    """An assign kernel whose source reads the destination at another element than the
    one it writes (x[1:] = x[:-1] + 1): writing in place would change later reads."""
    b = _build(plan, [job], "dry", final=False)
    stores = [s for ph in b.phases for s in ph.body if isinstance(s, Store)]
    for st in stores:
        shape = b.buffer_nodes[st.buf].shape
        for e in walk_exprs(st.value):
            # (`s /= s.sum(axis=-1, keepdims=True)` on (h, 1, k) scores: the same element)
            if isinstance(e, Load) and e.buf == st.buf and not _same_element(e.index, st.index, shape) \
                    and not _distinct_fixed_index(plan, b, e.index, st.index):
                return True
    return False


def _distinct_fixed_index(plan: Plan, b, load: tuple, store: tuple) -> bool:
    """Do the load and the store stay apart in some dimension where neither moves with the
    kernel's loops and their positions differ by a nonzero constant (`out[t] = f(out[t - 1])`
    reads row t - 1 and writes row t)? Then no element is both read and written (a destination
    with a zero stride, whose rows share memory, takes the wrapper's self-overlap fallback)."""
    for ld, st in zip(load, store):
        if ld.terms or st.terms:
            continue
        diff = sympy.Integer(ld.const - st.const)
        for arg, coef in ld.syms:
            diff += coef * _slot_expr(plan, b, arg)
        for arg, coef in st.syms:
            diff -= coef * _slot_expr(plan, b, arg)
        diff = sympy.expand(diff)
        if diff.is_Integer and diff != 0:
            return True
    return False


def _slot_expr(plan: Plan, b, arg):
    """The size expression behind a by-value int slot of the kernel being built (a fresh
    symbol, equal to nothing else, when it is no size)."""
    source = b.slots[arg.slot].source
    try:
        return sympy.sympify(plan.expr_of(source))
    except (StopIteration, sympy.SympifyError):
        return sympy.Dummy(source)


def _rmw_rule(cur: list, job: Job) -> bool:
    if job.kind != "red_rmw" and cur[0].kind != "red_rmw":
        return True
    return all(j.kind == "red_rmw" for j in cur + [job]) and _same_rmw(cur[0], job)


# jobs (stored values, reductions, assignments) one kernel takes at most: every join rebuilds the
# open kernel (try_join), so an unbounded group costs time quadratic in its jobs; reductions are
# bounded tighter: each recomputes the lazy values it reads (schedule.MAX_LAZY_DEPTH has figures)
MAX_KERNEL_JOBS = 64
MAX_KERNEL_REDUCTIONS = 8


def _bounded(cur: list, job: Job) -> bool:
    reds = sum(j.kind in ("red", "red_rmw") for j in cur)
    return len(cur) < MAX_KERNEL_JOBS and (job.kind not in ("red", "red_rmw") or reds < MAX_KERNEL_REDUCTIONS)


# name -> predicate(open kernel's jobs, new job): may the job join? (then it must also build)
JOIN_RULES = (
    ("bounded", _bounded),              # compile time linear in the graph's size
    ("accumulating", _rmw_rule),        # column reductions share a pass only with their kind
    ("standalone", lambda cur, job: job.kind == "red_rmw" or not (      # scans, assigns,
        job.standalone or any(j.standalone for j in cur))),             #   compactions: alone
    ("outer_loops", lambda cur, job: job.kind == "red_rmw" or choose_outer(cur + [job]) is not None),
)


class _Grouper:
    def __init__(self, plan: Plan):
        self.plan, self.steps, self.cur, self.count = plan, [], None, 0
        self.counted: dict = {}                   # size -> the mask an earlier count kernel counted

    def try_join(self, job: Job) -> bool:
        if self.cur is None or not all(rule(self.cur, job) for _, rule in JOIN_RULES):
            return False
        try:                                      # and it must build: reads at the right rows
            _build(self.plan, self.cur + [job], "dry", final=False)
            return True
        except (Conflict, NotLowerable):
            return False

    def close(self, zero=False):
        if not self.cur:
            return
        jobs, self.cur = self.cur, None
        plan = self.plan
        if jobs[0].kind == "compact":
            return self.compact(jobs)
        b = _build(plan, jobs, f"k{self.count}", final=True)
        donor = _reusable_buffer(plan, jobs, b)
        if donor is not None:                     # write the result over a dead temporary
            b = _build(plan, jobs, f"k{self.count}", final=True, target=donor)
        self.count += 1
        step = KernelStep(b.kernel(), jobs, zero_fill=zero and donor is None)
        step.scratch = list(b.scratch_arrays)
        for j in jobs:
            if j.kind in ("store", "scan", "mm", "red_rmw") or (
                    j.kind == "red" and plan.red_stored(j.node, jobs)):
                plan.stored.add(j.node)
                if donor is None or j.kind != "store":
                    step.allocs.append(j.node)
                else:
                    step.reuse.append((j.node, donor))
            if j.kind == "mm" and use_var(plan, j.node) is not None:
                step.products.append((j.node, use_var(plan, j.node), kernel_when(product_of(j.node))))
            if j.kind in ("red", "red_rmw") and j.node.op in NONEMPTY:   # raises on an empty axis
                step.empty_checks.append(j.node)
            if j.kind == "assign":
                step.overlap = plan.overlap_checks(j.node, b)
                base = plan.assign_base(j.node)[0]
                if plan.alias_class(base) == "in":
                    step.writable.append((base, READ_ONLY[j.node.attr("writer")]))
                if j.node in plan.read_copies:
                    step.copies.append(plan.var[base])
        self.steps.append(step)

    def compact(self, jobs):
        """x[mask]: count kernel, size binding + allocation, compaction kernel (compact.py)."""
        n, plan = jobs[0].node, self.plan
        if self.counted.get(n.shape[0]) is n.args[1]:
            # the same mask, one size (numpy_api/data_dependent.mask_count) and no write since
            # it was counted (add() forgets the counts at a write): its count is the same
            self.steps.append(KernelStep(compact.compaction_kernel(plan, n, f"k{self.count}"), jobs, allocs=[n]))
            self.count += 1
            plan.stored.add(n)
            return
        cnt = compact.count_node(plan, n)
        count = KernelStep(compact.count_kernel(plan, cnt, f"k{self.count}"), [Job(cnt, "red")], allocs=[cnt])
        if n.shape[0] in plan.sym_names:
            count.binds.append((plan.sym_names[n.shape[0]], f"int({plan.var[cnt]})"))
            self.counted[n.shape[0]] = n.args[1]
        fill = KernelStep(compact.compaction_kernel(plan, n, f"k{self.count + 1}"), jobs, allocs=[n])
        self.count += 2
        plan.stored.update((cnt, n))
        self.steps += [count, fill]

    def add(self, n: Node):
        plan = self.plan
        if self.counted and written_values(n):
            self.counted.clear()                  # a mask may have changed: count again
        job = _make_job(plan, n)
        if job is not None and job.standalone:
            self.close()
            if job.kind == "assign" and _reads_dst_elsewhere(plan, job):
                plan.read_copies.add(n)           # NumPy evaluates the source first: the
        if job is not None and job.kind == "store" and zero_fill(n):
            self.close()                          # np.zeros / np.empty / zeros_like: calloc, no kernel
            self.cur = [job]
            self.close(zero=True)
            return
        if job is not None:                       # kernel reads a copy of the destination
            if self.try_join(job):
                self.cur.append(job)
            else:
                self.close()
                self.cur = [job]
                if job.standalone:
                    self.close()
            return
        if plan.cat[n] in ("pw", "red", "input") or (plan.cat[n] == "view" and not plan.need.get(n)):
            return                                           # lazy: computed where it is read
        if self.cur and (plan.is_barrier(n) or any(a in {j.node for j in self.cur}
                                                   for a in node_args(n)) or self._reports_first(n)):
            self.close()
        self.steps.append(WrapperStep(n))

    def _reports_first(self, n: Node) -> bool:
        """A NumPy step that may warn, or a report_if (a warning, a ValueError), waits for the
        open kernel when its jobs, before it in program order, may report (an FP error,
        np.mean over nothing): NumPy's order of reports (backends/llvm/reports.py)."""
        return (self.plan.warns_in_wrapper(n) or n.op == "report_if") and any(
            self.plan.may_report(j.node) for j in self.cur)


def zero_fill(n: Node) -> bool:
    """A new array whose every byte is zero: np.zeros, np.zeros_like in the prototype's order
    (`where(False, proto, 0)`), np.full(..., 0); or np.empty, which the wrapper leaves as
    NumPy does (uninitialised: no pass over the memory)."""
    if n.op in ("zeros", "empty"):
        return True
    fill = n.args[2] if n.op == "where" and len(n.args) == 3 and n.args[0] is False else \
        n.args[0] if n.op == "full" else None
    if isinstance(fill, (bool, int, float, np.generic)) and not isinstance(fill, Node):
        return bool(fill == 0) and not np.signbit(fill)          # -0.0 is not zero bytes
    return False


def group(plan: Plan) -> list:
    """The run order: WrapperStep / KernelStep items."""
    g = _Grouper(plan)
    for n in plan.nodes:
        if n in plan.live:
            g.add(n)
    g.close()
    return g.steps


def check_positions(plan, steps) -> dict:
    """{step index: [(operand, lo, hi, raise_fn)]}: each range check goes just before the first
    step that evaluates its node (NumPy raises there; a dead node: the first later step, or
    the end, index len(steps)), and after the step computing its operand."""
    evaluated, produced = [], {}
    for i, s in enumerate(steps):
        roots = [j.node for j in s.jobs] if isinstance(s, KernelStep) else [s.node]
        evaluated.append(evaluated_by(plan, s))
        for r in roots:
            produced.setdefault(r, i)
    backed = set(plan.graph.symbols)
    out: dict = {}
    for n in plan.nodes:
        checks = range_checks(n) if plan.cat[n] == "pw" else None
        if not checks or checks == "numpy":
            continue
        first = next((i for i, ev in enumerate(evaluated) if n in ev), None)
        if first is None:
            first = next((i for i, ev in enumerate(evaluated)
                          if any(plan.pos.get(x, -1) > plan.pos[n] for x in ev)), len(steps))
        for a, lo, hi, fn in checks:
            at = first
            if isinstance(a, Node) and plan.cat[a] != "input":
                if a not in produced:
                    continue                   # never computed (dead): nothing to check
                at = max(at, produced[a] + 1)
            elif isinstance(a, sympy.Basic) and not a.free_symbols <= backed:
                continue                       # a data-dependent size: bound later
            out.setdefault(at, []).append((a, lo, hi, fn))
    return out
