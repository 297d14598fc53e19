"""`with np.errstate(...):` traced into the graph instead of splitting the frame at the block.

NumPy reports floating-point errors as its error state says (ignore, warn, raise, call, print,
log), and users change the state for a few lines: `with np.errstate(divide="ignore"):
logp = np.log(p)`. As TorchDynamo traces `torch.no_grad()` blocks (a context-manager variable
whose enter and exit change the state the graph's nodes are recorded under), the tracer traces
the `with`: entering sets the graph builder's `errstate` (the modes the block sets, over those
of any enclosing traced block), and every node recorded inside whose op may report an FP error
carries them as its `errstate` attribute (ir/builder.py). The backends then run such nodes
under those modes: the NumPy backend evaluates them inside `np.errstate`, the LLVM wrapper
decides from them whether a flag its kernels set must be reported (backends/llvm/fp_errors.py
ErrorModes), and NumPy reports it with its own messages.

Only an errstate made by the traced code (`np.errstate(divide="ignore")` with constant modes)
is traced. An errstate object that comes from outside (a global, or the stack of a resume
function) keeps the region split of resume/region.py (NumPy refuses to enter one object twice,
and a traced block would never enter it). A graph break inside a traced block restarts the trace
with that block split (BlockRestart): a resume function must not start inside a block whose
state it would not restore.
"""
from __future__ import annotations

import numpy as np

from .. import pyversion
from ..errors import Unsupported
from ..logs import get_logger
from .variables.base import VariableTracker
from .variables.constant import ConstantVariable

log = get_logger("graph_breaks")

KINDS = ("divide", "over", "under", "invalid")
MODES = frozenset({"ignore", "warn", "raise", "call", "print", "log"})


class BlockRestart(Exception):
    """Trace again with the `with` block at `key` split out (run by Python), not traced
    (trace/compile.py keeps `decision` "split" in the plan it keeps for loops)."""

    def __init__(self, key, decision: str, reason: str):
        self.key, self.decision, self.reason = key, decision, reason
        super().__init__(f"{decision}: {reason}")


class ErrstateClassVariable(VariableTracker):
    """np.errstate itself: calling it with constant modes makes an ErrstateVariable."""

    def python_type(self):
        return type

    def as_python_constant(self):
        return np.errstate

    def call_function(self, tx, args, kwargs):
        if args:
            raise Unsupported("np.errstate with positional arguments", kind="call", context="np.errstate")
        if "call" in kwargs:
            raise Unsupported("np.errstate(call=...)", kind="call", context="np.errstate",
                              hints=("set the handler with np.seterrcall outside the compiled function",))
        modes = {}
        for key in ("all",) + KINDS:               # `all` first: the named kinds override it
            v = kwargs.pop(key, None)
            if v is None:
                continue
            if not v.is_python_constant() or v.as_python_constant() not in MODES | {None}:
                raise Unsupported(f"np.errstate({key}={v.describe()})", kind="call", context="np.errstate",
                                  hints=(f"pass one of {sorted(MODES)} as a constant",))
            mode = v.as_python_constant()
            if mode is not None:
                modes.update(dict.fromkeys(KINDS, mode) if key == "all" else {key: mode})
        if kwargs:
            raise Unsupported(f"np.errstate({', '.join(kwargs)}=...)", kind="call", context="np.errstate")
        return ErrstateVariable(modes)

    def describe(self):
        return "np.errstate"


class ErrstateVariable(VariableTracker):
    """An np.errstate(...) made by the traced code, not entered yet."""

    def __init__(self, modes: dict):
        self.modes = modes
        self.entered = False

    def python_type(self):
        return np.errstate

    def describe(self):
        return f"np.errstate({', '.join(f'{k}={v!r}' for k, v in sorted(self.modes.items()))})"

    def enter(self, tx, key) -> "ErrstateExitVariable":
        if self.entered:                     # NumPy: TypeError("Cannot enter `np.errstate` twice.")
            raise Unsupported("one np.errstate object entered twice", kind="call", context="np.errstate")
        self.entered = True
        builder = tx.output.builder
        prev = builder.errstate
        builder.errstate = tuple(sorted({**dict(prev), **self.modes}.items()))
        tx.output.open_blocks.append(key)
        return ErrstateExitVariable(prev, key)


class ErrstateExitVariable(VariableTracker):
    """The `__exit__` BEFORE_WITH pushed: calling it (the block's normal exit) restores the modes."""

    def __init__(self, prev: tuple, key):
        self.prev, self.key = prev, key

    def call_function(self, tx, args, kwargs):
        if len(args) != 3 or not all(a.is_python_constant() and a.as_python_constant() is None for a in args):
            raise Unsupported("np.errstate.__exit__ with an exception", kind="call")
        tx.output.builder.errstate = self.prev
        open_blocks = tx.output.open_blocks
        if open_blocks and open_blocks[-1] == self.key:
            open_blocks.pop()
        return ConstantVariable(None)

    def describe(self):
        return "np.errstate.__exit__"


def trace_block(tx) -> bool:
    """At a try/with block start (tx.ip): trace it (True) when it is a `with` on an
    ErrstateVariable that no earlier trace split out; its body's instructions then stop being
    block starts for this translator."""
    ins = tx.instructions[tx.ip]
    if ins.opname not in pyversion.WITH_STARTS or not tx.stack or not isinstance(tx.stack[-1], ErrstateVariable):
        return False
    key = (tx.code, ins.offset)
    if tx.output.loop_plan.get(key) == "split":
        return False
    body = tx.instructions[tx.ip + 1].offset
    entries = pyversion.user_exception_entries(tx.code)
    target = next((e.target for e in entries if e.start <= body < e.end), None)
    covered = {off for e in entries if e.target == target for off in range(e.start, e.end, 2)}
    still = {off for e in entries if e.target != target for off in range(e.start, e.end, 2)}   # a nested try
    tx.region_starts = frozenset(i for i in tx.region_starts       # (a nested `with` still starts one)
                                 if tx.instructions[i].offset not in covered or tx.instructions[i].offset in still
                                 or tx.instructions[i].opname in pyversion.WITH_STARTS)
    return True


def before_with(tx, ins):
    """BEFORE_WITH of a traced block (trace_block said so): push `__exit__` and `__enter__`'s None."""
    ctx = tx.pop()
    if not isinstance(ctx, ErrstateVariable):
        raise Unsupported(f"`with` on {ctx.describe()}", kind="exception_table")
    tx.push(ctx.enter(tx, (tx.code, ins.offset)))
    tx.push(ConstantVariable(None))


def restart_split(tx, exc: Unsupported):
    """An Unsupported inside a traced block: trace again with the innermost open block split."""
    key = tx.output.open_blocks[-1]
    log.info("np.errstate block at %s:%s split out: graph break inside it (%s)", key[0].co_filename,
             key[0].co_firstlineno, exc)
    raise BlockRestart(key, "split", f"graph break inside the block: {exc}") from exc
