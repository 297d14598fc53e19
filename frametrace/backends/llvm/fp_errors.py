"""Where compiled code must hand a call to NumPy: floating-point errors, self-overlapping writes.

Floating-point errors. Kernels OR the exception flags they saw into one word
(codegen/llvm_kernels/fpflags.py). After its kernels the wrapper looks at the word (one
ctypes read). Set, and NumPy's error mode for a flagged kind is not "ignore": the graph is
evaluated again by NumPy eagerly (the NumPy backend), which raises FloatingPointError, warns
("divide by zero encountered in log") or calls the handler exactly as plain NumPy code would,
with NumPy's own messages and warning filters; its results are returned. The flag is only a
"maybe" (vector tails, signalling compares on NaN), so NumPy also gets the last word on
whether anything is reported at all. When the word is looked at, and how a redo keeps the
order of the other warnings of the call (NumPy steps of the wrapper, NumPy's own Python
warnings, a warning before an exception): reports.py.

Re-evaluating is only faithful when the first evaluation had no visible effect. What the
kernels may report is known per kernel (fpflags.kinds: `x * 0.995` can only underflow, `x + y`
overflow or be invalid, a comparison nothing NumPy reports): when the error state ignores every
such kind, nothing needs saving (`M *= 0.995` under the default state), and flags of other kinds
(a signalling compare's "invalid") are dropped. Otherwise a graph that writes into an input:
  * that is one ufunc NumPy computes straight into its destination (`x += y`, `x /= y`,
    `np.multiply(x, y, out=x)`, float32 / float64, no operand overlapping the destination but
    itself) needs nothing before it writes, in any error state: NumPy itself writes the whole
    output and only then reports, so the kernel writes and NumPy then reports what it flagged
    (fp_probes.py; flag_checks.py decides);
  * runs the flag check of its writing kernel first (backends/llvm/flag_checks.py: one writing
    step, no reporting kernel after it): flagged, NumPy redoes the call with nothing written;
    clean, the kernel writes and the results stand;
  * else copies what it writes before its kernels and puts it back before NumPy runs the
    graph: the written view when it is a chain of basic slices of the input (`cache[:, pos] =
    k` copies one column, not the cache: wrapper.written_regions, native_fp.written_regions),
    else the whole input (the native entry copies regions up to 4 KiB to its stack whatever
    the mode: cheaper than asking NumPy).
The NumPy redo runs `x += y` as NumPy does, `np.add(x, y, out=x)` (numpy_backend.py): under
"raise" x is written and then the error raised.

Signed zeros. A float max / min reduction whose result is a zero of both signs (a row holding
0.0 and -0.0 and nothing larger; fpflags.ZERO_SIGNS) returns the zero NumPy's SIMD order would
pick only by chance: those bits make NumPy redo the call whatever the error mode, and such
graphs save what they write whatever the mode.

Known difference: under "raise" an in-place graph re-evaluated by the NumPy backend stops
before its first write (the NumPy backend computes `x /= y` into a temporary), where NumPy
eager writes x and then raises. One-ufunc graphs (above) are not re-evaluated: they write and
raise as NumPy does.

When a pre-pass (flag check) or a saved copy is needed at all, per error-state mode: "ignore"
for every kind the kernels may report: never. Any other mode ("warn", "raise", "call",
"print", "log", and whatever a warnings filter does with the warning): not for one ufunc
written straight into its destination (NumPy reports after its write in every mode, so a
report after ours is the same, a raise included); yes for a chain (`x += y * z`: NumPy
reports the multiply before writing x, and under "raise", a filter "error" or a raising
handler x stays as it was) and for a ufunc whose operand overlaps its destination (NumPy
writes a temporary and reports before copying it back). Not yet written first, though NumPy
does: a result cast into a narrower destination (`x += y`, x float32, y float64: NumPy reports
the cast's overflow as the add's; the probes do not model casts) and float16 / complex / integer
ufuncs: they keep the check (or NumPy's own call, native_fp.numpy_or_check).

Self-overlapping destinations. NumPy buffers an in-place update whose destination overlaps
itself (`as_strided(x, (4, 3), (8, 8)) += 1` adds 1 once to each memory location); a fused
kernel would read what it already wrote. A destination input that may overlap itself
(`self_overlapping`: not contiguous and its strides cannot be ordered into disjoint blocks)
makes the wrapper run the call with NumPy instead.
"""
from __future__ import annotations

import numpy as np

from ...codegen.llvm_kernels import fpflags
from ...ir.graph import ERRSTATE, SCALAR_MATH, Node
from ...ir.ops.loops import written_values
from ...ir.registry import get_op
from ..numpy_backend import compile_graph as numpy_compile

WORD = fpflags.WORD


def mutated_inputs(graph) -> list:
    """Indices of graph inputs that a mutation writes into (directly or through views)."""
    index = {n: i for i, n in enumerate(graph.inputs)}
    out = []
    for n in graph.nodes:
        for d in written_values(n):
            _add_input(d, index, out)
    return out


def _add_input(d, index, out):
    if True:
        while d not in index and get_op(d.op).kind == "view" and d.args and isinstance(d.args[0], Node):
            d = d.args[0]
        if d in index and index[d] not in out:
            out.append(index[d])


try:        # NumPy's error state: one capsule per np.errstate/np.seterr, in a ContextVar
    from numpy._core.umath import _extobj_contextvar as _ERRSTATE
except ImportError:                           # another NumPy layout: ask np.geterr() each time
    _ERRSTATE = None
_QUIET_CACHE: dict = {}                       # capsule -> {flags: quiet}; capsules kept alive


def quiet(flags: int = fpflags.REPORTED) -> bool:
    """Is NumPy's error mode "ignore" for every kind flagged in `flags`? (~80 ns when the
    error state was seen before: np.geterr() alone costs ~600 ns)"""
    if _ERRSTATE is None:
        return _quiet(flags)
    state = _ERRSTATE.get()
    known = _QUIET_CACHE.get(state)
    if known is None:
        if len(_QUIET_CACHE) > 64:
            _QUIET_CACHE.clear()
        known = _QUIET_CACHE[state] = {}
    if flags not in known:
        known[flags] = _quiet(flags)
    return known[flags]


def _quiet(flags: int) -> bool:
    if flags & fpflags.ZERO_SIGNS == fpflags.ZERO_SIGNS:    # a max / min NumPy must redo
        return False
    err = np.geterr()
    return all(err[name] == "ignore" for bit, name in fpflags.KINDS.items() if flags & bit)


class ErrorModes:
    """The error modes a graph with traced `with np.errstate` blocks (trace/errstate.py) runs
    its nodes under: each block's, and the caller's (NumPy's state at the call) for nodes outside.
    The word says which kinds some kernel flagged, not which node: a kind is quiet when every
    mode a node that may report runs under ignores it."""

    def __init__(self, contexts):
        self.contexts = tuple(contexts)         # dict of modes, or None: the caller's

    @classmethod
    def of(cls, graph) -> "ErrorModes | None":
        """None when no node of the graph (or of its loop bodies) is in a traced block."""
        contexts, blocks = set(), False
        for n in _nodes(graph):
            if get_op(n.op).fp_errors != "none" or n.attr(SCALAR_MATH):
                modes = n.attr(ERRSTATE)
                blocks |= bool(modes)
                contexts.add(modes or None)
        return cls(dict(c) if c else None for c in contexts) if blocks else None

    def quiet(self, flags: int = fpflags.REPORTED) -> bool:
        if flags & fpflags.ZERO_SIGNS == fpflags.ZERO_SIGNS:
            return False
        callers = 0                              # kinds some node reports under the caller's mode
        for bit, name in fpflags.KINDS.items():
            if flags & bit:
                for modes in self.contexts:
                    mode = None if modes is None else modes.get(name)
                    if mode is None:
                        callers |= bit
                    elif mode != "ignore":
                        return False
        return not callers or quiet(callers)


def _nodes(graph):
    for n in graph.nodes:
        yield n
        body = n.attr("body") if n.op == "loop" else None
        if body is not None:
            yield from _nodes(body.graph)


def self_overlapping(a) -> bool:
    """May two indices of `a` address the same memory? False is exact; True may be
    conservative (NumPy's own check solves it exactly; a False here never is wrong)."""
    if a.flags.c_contiguous or a.flags.f_contiguous or a.size <= 1:
        return False
    dims = sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n > 1)
    reach = a.itemsize                         # bytes spanned by the smaller dims, plus one item
    for stride, n in dims:
        if stride < reach:
            return True
        reach += stride * (n - 1)
    return False


class GraphFlags:
    """The native entry's questions about one graph (native_fp.py), answered for the flag kinds
    its kernels may report (`kinds`: fpflags.kinds of each kernel, ORed): a graph that can only
    underflow (`M *= 0.995`) needs no saved copy under the default error state."""

    def __init__(self, kinds: int):
        self.kinds = kinds
        self._state, self._wanted = self, False   # the error state last asked about (kept alive)

    def snapshot_wanted(self) -> bool:
        """Must the entry save what the graph writes (a mode of its kinds is not "ignore", or
        its max / min may need NumPy whatever the mode)? The answer for the error state of the
        last call is kept (asked on every call of an in-place graph: 0.19 -> 0.09 us)."""
        if _ERRSTATE is None:
            return not quiet(self.kinds)
        state = _ERRSTATE.get()
        if state is not self._state:
            self._state, self._wanted = state, not quiet(self.kinds)
        return self._wanted

    def redo(self) -> bool:
        """The kernels set a flag: True when NumPy must redo the call (the entry then puts back
        the regions it saved, if it saved them, and misses). Flags of kinds NumPy cannot report
        for this graph (a signalling compare's "invalid") are dropped."""
        flags = fpflags.take() & self.kinds
        return bool(flags) and not quiet(flags)


class Fallback:
    """NumPy evaluation of the graph, built on first use (most graphs never need it)."""

    def __init__(self, graph, mutated, always: bool = False, kinds: int = fpflags.REPORTED | fpflags.ZERO_SIGNS,
                 checked: bool = False):
        self.graph, self.mutated, self._run = graph, tuple(mutated), None
        self.always = always          # the kernels track zero signs: snapshot whatever the mode
        self.kinds = kinds            # what the kernels may report (fpflags.kinds, ORed)
        self.checked = checked        # its writing kernel runs a flag check first (flag_checks.py)
        modes = ErrorModes.of(graph)
        self.quiet = quiet if modes is None else modes.quiet

    def run(self, inputs, symbol_values):
        if self._run is None:
            self._run = numpy_compile(self.graph)
        return self._run(inputs, symbol_values)

    def snapshot(self, regions):
        """Copies of the regions of inputs the graph writes (views of them: wrapper.py),
        when NumPy may have to redo the call: a mode of a kind the kernels may report is not
        "ignore", or their max / min may need NumPy whatever the mode (ZERO_SIGNS)."""
        if self.quiet(self.kinds) and not self.always:
            return None
        return [(r, r.copy(order="K")) for r in regions]     # K: an F-ordered region copies fast

    def check_wanted(self) -> bool:
        """Must the writing kernel's flag check run (flag_checks.py): may NumPy have to redo the
        call in the current error state?"""
        return not self.quiet(self.kinds)

    def flagged(self) -> bool:
        """After the check (nothing written yet): must NumPy redo the call? Takes the word."""
        flags = fpflags.take() & self.kinds
        return bool(flags) and not self.quiet(flags)

    def restore(self, saved) -> bool:
        """Put back what the call wrote into its inputs, for NumPy to redo it (the kernels set
        an FP flag: reports.Reports.redo decides); False when that cannot be done (nothing was
        saved: every mode was "ignore" when the call began, a handler changed it meanwhile)."""
        if self.mutated:
            if saved is None:
                return False
            for dst, old in saved:
                np.copyto(dst, old)
        return True


__all__ = ["ErrorModes", "Fallback", "GraphFlags", "mutated_inputs", "quiet", "self_overlapping", "WORD"]
