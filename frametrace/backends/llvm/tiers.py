"""Size-tiered kernels: compile small, tier up when a call is large.

A kernel with symbolic sizes whose work at the sizes of the compiling call (the ShapeEnv hints,
Graph.hints) is below QUICK_WORK (64K) is emitted at the "quick" tier: no loop interleave
(codegen/llvm_kernels/emit.py), which halves its compile time (ten inlined vector `sin`:
~80 ms instead of ~140-190 ms) and runs ~1.7-2x slower. Small calls barely notice; the first
call whose work reaches runtime.PARALLEL_THRESHOLD (the wrapper's threaded path; native entries
miss to it there) asks for the full tier once: the whole module is rebuilt with
every kernel at the full tier, in a background thread (llvmlite releases the GIL inside LLVM),
while calls keep running the quick kernels. Then the wrapper's namespace entries of the kernels
are replaced (one dict store each: atomic for the wrapper, which reads them as globals). The quick
module stays alive with the run object (run.module; native entries call into it), as does the
full one (run.tiers.module). The full-tier object is cached on disk under its own IR key.

    run.tiers.wait()        # the full tier is in place (or failed: run.tiers.error)
    SYNC = True             # tests: tier up on the calling thread, before the large call runs

A failed build keeps the quick tier (correct, only slower) with a warning on the log; under
FRAMETRACE_STRICT_BACKEND=1 (every test run) the error is raised on the calling thread by the
next large call instead, so a backend bug in the full tier cannot hide behind the quick one.

Why in the background, and why quick kernels meanwhile (measured, benchmarks/README.md "Early
calls and tiers"): llvmlite releases the GIL while LLVM works (a Python loop on the main thread
kept its pace during a build), the quick kernels of a large call run 1.0-2.4x slower than the
full tier but faster than NumPy (ten `sin` 45 ms against NumPy's 70 ms per call on one
thread), while running NumPy eagerly meanwhile would be slower still, and a synchronous build
would make one call 0.1-0.3 s slower than NumPy's.

Mid-size calls tier up too (issue 23 part 5): a graph compiled at a small size and then called
many times below the threaded size never made a large call, so it kept the quick kernels for
good (ten `sin` on 3,000 elements 2.4x slower than the full tier). Every small launch of a quick
kernel spends its work from one budget (TIER_UP_WORK, shared by the module's quick kernels), and
the call that exhausts it starts the tier-up. The budget is an int64 cell (`cells[0]`) that the
Python wrapper and the native entry (native_launch.py) both decrement; the native entry misses
when its call would exhaust it, so the Python path starts the build. The native entry calls a
quick kernel through a cell holding its address (`cell(name)`), which the finished build
rewrites: native calls below the threaded size run the full tier too (before, they called the
quick module by a constant address for good).

    run.tiers.reason       # None, "large call" or "accumulated work": what started the tier-up
    run.tiers.spent        # quick-kernel work run so far (until the tier-up started)
"""
from __future__ import annotations

import ctypes
import dataclasses
import logging
import threading

import sympy

# hinted work below which symbolic kernels start quick: the seed loop's sizes (ten sin on <= 99
# elements: 8019), but not a graph compiled for ~1000 elements of ten sin (81000), where the quick
# tier measured 2x slower (22 us vs 12 us) and the call never reaches the tier-up threshold
QUICK_WORK = 1 << 16
# quick-kernel work (Kernel.work units: elements x (1 + 8 per math call)) run by small calls
# before the full tier is built anyway: ~16M is ~0.1-0.3 s of quick-kernel time, the order of
# one background build (measured: benchmarks/README.md "Mid-size calls tier up")
TIER_UP_WORK = 1 << 24
_STARTED = 1 << 62                          # the budget once a tier-up started: never exhausted
SYNC = False                               # True: tier up synchronously (deterministic tests)
_log = logging.getLogger("frametrace.backends.llvm")
_contexts: list = []                       # LLVM contexts of tier-up builds: never disposed


def hinted_work(plan, kernel, hints):
    """The kernel's work at the hinted sizes; None if static or not known from the hints."""
    if kernel.work.isdigit() or not hints:
        return None
    try:
        expr = sympy.sympify(plan.expr_of(kernel.work))
        value = expr.xreplace({s: sympy.Integer(h) for s, h in hints.items() if isinstance(h, int)})
    except Exception:                       # not a size expression: no tier decision, full tier
        return None
    return int(value) if value.is_Integer else None


def assign(plan, kernels, hints) -> list:
    """Mark kernels quick (Kernel.tier) whose hinted work is small; the names of those."""
    quick = []
    for k in kernels:
        work = hinted_work(plan, k, hints)
        if work is not None and work < QUICK_WORK:
            k.tier = "quick"
            quick.append(k.name)
    return quick


class TierUp:
    """Called by the wrapper before a large launch of a quick kernel: builds the full tier
    once (see module doc). `refs`: kernel name -> the wrapper namespace name calling it;
    `build(kernels, context)`: their kernel_cache.GraphKernels."""

    def __init__(self, namespace: dict, refs: dict, kernels, build):
        self.ns, self.refs, self.kernels, self.build = namespace, refs, kernels, build
        self.module = None                  # the full-tier LoadedModule, once built
        self.error = None
        self._surface = None                # strict backend: the error the next large call raises
        self._lock = threading.Lock()
        self._started = False
        self._done = threading.Event()
        self.reason = None                  # what started the tier-up (module doc)
        self._left_at_start = None
        self._index = {k.name: i for i, k in enumerate(kernels)}
        # [0]: the work budget left; [1 + i]: the address native entries call for kernels[i]
        self.cells = (ctypes.c_int64 * (1 + len(kernels)))(TIER_UP_WORK)

    @property
    def spent(self) -> int:
        """Quick-kernel work run by small calls until the tier-up started."""
        left = self.cells[0] if self._left_at_start is None else self._left_at_start
        return TIER_UP_WORK - left

    def spend(self, work: int):
        """A small launch of a quick kernel (the wrapper's path): spend its work; start the tier-up
        when the budget is exhausted."""
        c = self.cells
        c[0] -= work
        if c[0] <= 0:
            self(reason="accumulated work")

    def cell(self, name: str, address: int) -> int:
        """The address of the int64 cell a native entry loads kernel `name`'s address from:
        `address` (the quick kernel) until the full tier is in place, then the full kernel."""
        i = 1 + self._index[name]
        with self._lock:
            if self.cells[i] == 0:
                self.cells[i] = self.module.address(name) if self.module is not None else address
        return ctypes.addressof(self.cells) + 8 * i

    def __call__(self, reason="large call"):
        if self._started:
            if self._surface is not None:    # strict: a failed background build surfaces here
                exc, self._surface = self._surface, None
                raise exc
            return
        with self._lock:
            if self._started:
                return
            self._started = True
            self.reason = reason
            self._left_at_start = self.cells[0]
            self.cells[0] = _STARTED         # no call spends from it any more
        _log.info("frametrace: tiering up %s (%s: %d units of quick-kernel work run)",
                  ", ".join(k.name for k in self.kernels if k.tier == "quick"), reason, self.spent)
        if SYNC:
            self._run()
        else:                               # not a daemon: exit waits rather than kill it inside LLVM
            threading.Thread(target=self._run, name="frametrace-tier-up").start()

    def _run(self):
        try:
            import llvmlite.binding as llvm

            full = [dataclasses.replace(k, tier="full") for k in self.kernels]
            context = llvm.create_context()
            _contexts.append(context)        # outlives every module built in it
            module = self.build(full, context)
            with self._lock:
                self.module = module
                for name, i in self._index.items():
                    if self.cells[1 + i]:        # native entries call it through its cell
                        self.cells[1 + i] = module.address(name)
            for name, ref in self.refs.items():
                self.ns[ref] = module.functions[name]
        except Exception as exc:            # stay on the quick tier: correct, only slower
            self.error = exc
            _log.warning("frametrace: building the full tier of a kernel module failed (%s: %s); "
                         "keeping the quick tier", type(exc).__name__, exc, exc_info=True)
            if SYNC:
                raise
            from . import strict
            if strict():
                self._surface = exc
        finally:
            self._done.set()

    @property
    def started(self) -> bool:
        return self._started

    def wait(self, timeout=None) -> bool:
        """Block until a started tier-up finished (True) or the timeout passed (False)."""
        return self._done.wait(timeout)


def opt_level(kernel) -> tuple:
    """(IR optimisation level, codegen level) of a kernel's module (kernel_cache.py).

    Measured on our kernels (benchmarks/README.md, "Compile time"): O2 runs as fast as O3
    everywhere we looked (0.77-1.09x) and compiles 25-60% faster: O3 mostly adds full unrolling
    of loops with static trip counts, which made unrolled NPBench kernels 2.4x dearer to build.
    Codegen level 0 halves codegen but its fast register allocator costs 1.1-2x at run time:
    only for tiny kernels (static work <= loop_hints.TINY_WORK, whose bodies are `optnone` anyway),
    where the whole module then builds in ~3 ms instead of ~9 ms for at most ~0.3 us per call."""
    from ...codegen.llvm_kernels.loop_hints import is_tiny
    from ...config import config
    forced = config.kernel_opt_level
    if forced >= 0:
        return forced, min(forced, 1)
    return (0, 0) if is_tiny(kernel) else (2, 1)
