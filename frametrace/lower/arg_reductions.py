"""argmax / argmin of numeric data in one pass over blocks, then one block searched.

NumPy's argmax runs one SIMD pass (AVX-512 on this project's machines); our two vectorised
passes over the whole reduced extent (the extreme, then the least index holding it) ran at
0.4-0.75x NumPy. Here, per result element (lower/reductions.py calls `blocked`):

    pass 1: the last reduced axis in blocks of BLOCK elements (the other reduced axes looped
            around it): each block's extreme and "NaN seen" are vector reductions LLVM
            vectorises (the block's trip count is a constant); a block whose extreme beats the
            best so far (strictly: the first block holding the extreme wins, and -0.0 == 0.0)
            or that holds a NaN becomes the winner (its position is recorded). The first block
            holding a NaN ends the pass (NumPy: the first NaN wins). The last partial block is
            a tail loop of the same kind.
    pass 2: the winning block only (<= BLOCK elements): the least flat index whose element
            equals the extreme, or is NaN when a NaN won.

NumPy's rules kept: the first occurrence of the extreme; the first NaN over everything; zeros
of either sign tie (the first zero wins); ints and floats alike (ints have no NaN). The
extreme is a `nnan` max/min that a NaN makes poison: it is only read where no NaN came by.
"""
from __future__ import annotations

import numpy as np

from .loop_ir import Acc, Affine, Const, Let, Loop, Op, Update, Var
from .phase_values import limits as _limits, phase_let as _let
from .pointwise import kind

# elements per block: a power of two, a few vectors of every dtype (64 float64 on AVX-512: 8
# vector loads). Measured 64/128/256 (one thread, rows of 1024: 55/53/66 us per 256 rows, NumPy
# 52; rows of 100: 46/57/57 us per 1024 rows, NumPy 27)
BLOCK = 64


def worth_blocking(extents) -> bool:
    """Blocks, unless one short row of a known length: two whole passes over up to 2 * BLOCK
    elements cost less than a block, a tail and a search (1024 rows of 30: 23 against 35 us)."""
    if not extents:                                   # a 0-d array: nothing to block
        return False
    return len(extents) > 1 or not (isinstance(extents[0], int) and extents[0] < 2 * BLOCK)


def blocked(b, op, xdt, axes, extents, at, phase):
    """Fill `phase` (no loops of its own: its body is the loop nest) with the blocked argmax /
    argmin over the reduced `axes` of sizes `extents`; `at(index)` is the element at the
    reduced index (one Affine per reduced axis). Returns the Var of the flat index."""
    flt = kind(xdt) == "f"
    lo, hi = _limits(xdt)
    ident = Const(float(lo) if flt else int(lo), xdt) if op == "argmax" else \
        Const(float(hi) if flt else int(hi), xdt)
    peak = "red_peak_max" if op == "argmax" else "red_peak_min"
    beats = "greater" if op == "argmax" else "less"
    i64, no = "int64", Const(False, "bool")

    def ivar(name):                                        # a loop variable's value
        return Op("affine", i64, (Affine.var(name),))
    sizes = [b.size(e) for e in extents]
    last = sizes[-1]
    best, nanf = b.fresh("best"), b.fresh("nanf")
    wins = [b.fresh("w") for _ in axes]                   # the winning block: its index per axis
    phase.pre += [Acc(best, xdt, ident), Acc(nanf, "bool", no)] + [Acc(w, i64, Const(0, i64)) for w in wins]
    outer = [b.fresh("r") for _ in axes[:-1]]

    def block_pass(start_of, loops, element):
        """Statements: the extreme and NaN flag of one block (`loops` around `element`), then
        the winner's update; start_of: the block's first index on the last axis."""
        bm, bn = b.fresh("bm"), b.fresh("bn")
        v = element
        inner = [Update(bm, Op(peak, xdt, (Var(bm, xdt), v)))]
        if flt:
            inner.append(Update(bn, Op("logical_or", "bool", (Var(bn, "bool"), Op("isnan", "bool", (v,))))))
        body = inner
        for lp in reversed(loops):
            body = [Loop(lp[0], lp[2], body, lp[1])]
        gt = Op(beats, "bool", (Var(bm, xdt), Var(best, xdt)))
        better = Op("where", "bool", (Var(bn, "bool"), Const(True, "bool"), gt)) if flt else gt
        up = b.fresh("better")
        out = [Acc(bm, xdt, ident), Acc(bn, "bool", no)] + body + [Let(up, better)]
        won = Var(up, "bool")
        new = Op("where", xdt, (won, Var(bm, xdt), Var(best, xdt)))
        if flt:                   # bm is poison when the block held a NaN: best keeps its value
            new = Op("where", xdt, (Var(bn, "bool"), Var(best, xdt), new))
        out.append(Update(best, new))
        for w, r in zip(wins[:-1], outer):
            out.append(Update(w, Op("where", i64, (won, ivar(r), Var(w, i64)))))
        out.append(Update(wins[-1], Op("where", i64, (won, start_of, Var(wins[-1], i64)))))
        if flt:
            out.append(Update(nanf, Op("logical_or", "bool", (Var(nanf, "bool"), Var(bn, "bool")))))
        return out

    shift = int(BLOCK).bit_length() - 1
    nb = Op("right_shift", i64, (last, Const(shift, i64)))
    full = Op("left_shift", i64, (nb, Const(shift, i64)))  # elements in whole blocks
    kb, j, t = b.fresh("kb"), b.fresh("j"), b.fresh("t")
    row = [Affine.var(r) for r in outer]
    kb_start = Op("affine", i64, (Affine.var(kb, BLOCK),))
    blocks = block_pass(kb_start, [(j, Const(0, i64), Const(BLOCK, i64))],
                        at(row + [Affine(((kb, BLOCK), (j, 1)))]))
    tail_stop = Op("where", i64, (Var(nanf, "bool"), full, last)) if flt else last
    tail = block_pass(full, [(t, full, tail_stop)], at(row + [Affine.var(t)]))
    stop_on_nan = Var(nanf, "bool") if flt else None
    nest = [Loop(kb, nb, blocks, until=stop_on_nan)] + tail
    for r, size in reversed(list(zip(outer, sizes[:-1]))):
        nest = [Loop(r, size, nest, until=stop_on_nan)]
    phase.body += nest

    # pass 2: the least flat index in the winning block holding the extreme (or the first NaN)
    m = Var(best, xdt)
    if flt:
        m = _let(b, phase, Op("where", xdt, (Var(nanf, "bool"), Const(float("nan"), xdt), m)), "peak")
    first = b.fresh("first")
    never = int(np.iinfo(np.int64).max)
    s = [b.fresh("s") for _ in axes]
    flat = ivar(s[0])
    for k in range(1, len(axes)):
        flat = Op("add", i64, (Op("multiply", i64, (flat, sizes[k])), ivar(s[k])))
    v = at([Affine.var(x) for x in s])
    hit = Op("equal", "bool", (v, m))
    if flt:
        hit = Op("logical_or", "bool", (hit, Op("isnan", "bool", (v,))))
    body = [Update(first, Op("minimum", i64, (Var(first, i64), Op("where", i64, (hit, flat, Const(never, i64))))))]
    w_last = Var(wins[-1], i64)
    body = [Loop(s[-1], Op("minimum", i64, (Op("add", i64, (w_last, Const(BLOCK, i64))), last)), body, w_last)]
    for sv, w in reversed(list(zip(s[:-1], wins[:-1]))):
        body = [Loop(sv, Op("add", i64, (Var(w, i64), Const(1, i64))), body, Var(w, i64))]
    phase.post += [Acc(first, i64, Const(never, i64))] + body
    return _let(b, phase, Var(first, i64), "arg")
