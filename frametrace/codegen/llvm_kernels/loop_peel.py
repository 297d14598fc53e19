"""Where the vector loop of a unit-stride map starts: on a 64-byte line of its destination.

Before the unit-stride copy of an innermost loop (emit.py `loop_in`), a scalar loop runs the
first iterations until the first store's address is on a 64-byte line (at most 64 bytes: 7
doubles); the vector loop LLVM makes of the rest then stores whole lines, and loads of operands
aligned like the destination do too. Misaligned, each 32- or 64-byte access of a loop running
in L1/L2 touches two lines: `x += y` at 4096 doubles 1.19 -> 0.90 us (NumPy, which does not peel:
1.57 us; benchmarks/README.md).

Only a pure map is peeled (stores at the loop's own element and lets, nothing carried from one
iteration to the next): every element is computed by the same operations in either loop, so
values and FP flags do not depend on the array's address; a reduction's order would. Nor a body
calling a transcendental function: its vector and scalar versions need not give the same bits,
and such a loop is bound by its arithmetic, not by the cache. Iterations keep their order, so
a store read back by a later iteration (overlapping views) sees what it did before.
"""
from __future__ import annotations

from ...lower.loop_ir import Let, Loop, Op, Store, walk_exprs
from ...lower.peephole import EXPENSIVE
from . import types as T

LINE = 64


def aligned_start(em, lp: Loop, start: str, stop: str, access: dict) -> str:
    """Emit (into FunctionEmitter `em`) the scalar peel of loop `lp` over [start, mid) and
    return mid, where the vector loop starts; `start` itself when the loop is no pure map."""
    if (em.tiny or lp.until is not None or (em.k.bail is not None and em.k.bail[1] == lp.var)
            or not all(isinstance(s, Let) or (isinstance(s, Store) and not s.pos) for s in lp.body)
            or any(isinstance(x, Op) and x.op in EXPENSIVE for s in lp.body for x in walk_exprs(s.value))):
        return start
    store = next((s for s in lp.body if isinstance(s, Store)), None)
    if store is None or (store.buf, store.index) not in access:
        return start
    base, step, sign = access[(store.buf, store.index)]
    dtype = em.k.buffers[store.buf].dtype
    size = T.itemsize(dtype)
    if step is None or sign != 1 or size not in (1, 2, 4, 8) or dtype == "bool":
        return start
    at = em.emit(f"getelementptr inbounds {T.mem(dtype)}, ptr {base}, i64 {start}", "ptr")
    addr = em.emit(f"ptrtoint ptr {at} to i64", "i64")
    gap = em.emit(f"and i64 {em.emit(f'sub i64 0, {addr}', 'i64')}, {LINE - 1}", "i64")
    count = em.emit(f"lshr i64 {gap}, {size.bit_length() - 1}", "i64")
    mid = em.emit(f"call i64 @llvm.smin.i64(i64 {stop}, i64 {em.emit(f'add i64 {start}, {count}', 'i64')})", "i64")
    done = em.new_label("peeled")
    em.counted(lp, start, mid, done, access, scalar=True)
    em.label(done)
    return mid


__all__ = ["aligned_start", "LINE"]
