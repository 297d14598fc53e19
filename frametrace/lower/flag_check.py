"""Flag-check kernels: an in-place kernel's work without its writes into the caller's arrays.

NumPy reports floating-point errors of `x += y` (overflow, invalid) as its error state says;
a kernel only knows whether a flag was raised after its loop, when x is already overwritten,
and the flag is only a "maybe" (codegen/llvm_kernels/fpflags.py), so NumPy must redo the call
on the old x to decide and report. Saving a copy of x before every call (fp_errors.py) costs a
read and a write of x, plus a buffer; the check kernel detects the flag *before* anything is
written instead, for a read of the operands:

    check(k): k with every store into the caller's memory replaced by `keep := keep_bits(keep,
    value)` (an OR of the value's bits into an accumulator the body consumes at its exit:
    Kernel.keep), so that every value is still computed, and sets the same flags.

The wrapper (backends/llvm/flag_checks.py) runs it before the writing kernel when the error
state does not ignore every kind the graph may report; a flagged check hands the call to
NumPy with nothing written, a clean one lets the writing kernel run without a saved copy.
"""
from __future__ import annotations

import dataclasses

from .loop_ir import Acc, Const, Kernel, Load, Loop, Op, Store, Update, Var, walk_exprs

KEEP = "keep"


def check_kernel(k: Kernel, written: set) -> Kernel | None:
    """The check variant of kernel `k` whose stores into buffers `written` (indices) are the
    caller's memory, or None when dropping them could change what the kernel computes (a
    written buffer read at another element than the one stored in the same iteration, or
    after a loop that stores it)."""
    if not written or k.bail is not None or k.keep is not None or not _reads_only_in_place(k.body, written):
        return None
    body = [Acc(KEEP, "int64", Const(0, "int64"))] + [_strip(s, written) for s in k.body]
    return dataclasses.replace(k, name=f"{k.name}_check", body=body, keep=KEEP,
                               buffers=[dataclasses.replace(b, written=b.written and i not in written)
                                        for i, b in enumerate(k.buffers)])


def _strip(s, written):
    if isinstance(s, Loop):
        return dataclasses.replace(s, body=[_strip(x, written) for x in s.body])
    if isinstance(s, Store) and s.buf in written:
        return Update(KEEP, Op("keep_bits", "int64", (Var(KEEP, "int64"), s.value)))
    return s


def _reads_only_in_place(body, written) -> bool:
    """Every load of a written buffer is at an index the same loop body stores it at, before
    that store (x[i] = x[i] + y[i]), and no store goes to a data-dependent position: the values
    computed do not depend on whether the stores were made."""
    for block in _blocks(body):
        stored_here = {(s.buf, s.index) for s in block if isinstance(s, Store) and s.buf in written}
        done = set()
        for s in block:
            if isinstance(s, Loop):
                continue
            for attr in ("value", "cond", "init"):
                e = getattr(s, attr, None)
                for x in (walk_exprs(e) if e is not None else ()):
                    if isinstance(x, Load) and x.buf in written and (
                            (x.buf, x.index) not in stored_here or (x.buf, x.index) in done):
                        return False
            if isinstance(s, Store) and s.buf in written:
                if s.pos:
                    return False
                done.add((s.buf, s.index))
    return True


def _blocks(body):
    """Each statement list of the nest (the body and every loop's body)."""
    yield body
    for s in body:
        if isinstance(s, Loop):
            yield from _blocks(s.body)


__all__ = ["check_kernel", "KEEP"]
