"""Constant index offsets become kernel arguments, so kernels that differ only in where they
read and write are one kernel (backends/llvm/kernel_cache.py compiles it once).

An unrolled loop over a constant range (a convolution's `x[:, i:i + k, j:j + k]` for each i, j;
`x[i] = x[i - 1] * 0.5` for each i) makes kernels equal but for the constant offsets of their
loads and stores: 1,924 distinct kernels in one NPBench convolution. Here the smallest constant
offset of each buffer dimension becomes an int64 argument (a slot whose wrapper source is the
literal) and the other offsets of that dimension stay constants relative to it: LLVM still sees
that `x[i + 1]` and `x[i + 3]` are two elements apart (reusing loads, one base register; lifting
every offset made a five-point shift 10% slower), and the kernel's IR no longer holds where the
window is. What stays as it is:

  * a dimension whose smallest offset is 0 (nothing to lift: such kernels differ from the others);
  * offsets into a buffer the kernel both reads and writes (LLVM's dependence analysis);
  * kernels that leave a loop early (`bail`: the native element loops build their own slots).

    kernel = lift_offsets(kernel)       # a new Kernel (the input is not changed)
"""
from __future__ import annotations

import dataclasses

from .loop_ir import (Acc, Affine, Append, Arg, DataLoad, Gather, If, Kernel, Let, Load, Loop, Op, Slot, Store,
                      Update, walk_exprs)


def lift_offsets(k: Kernel) -> Kernel:
    if k.bail is not None:
        return k
    read, written, offsets = set(), set(), {}
    for s in _statements(k.body):
        for e in _exprs(s):
            for x in walk_exprs(e):
                if isinstance(x, Load):
                    read.add(x.buf)
                    _collect(offsets, x.buf, x.index)
        if isinstance(s, (Store, Append)):
            written.add(s.buf)
        if isinstance(s, Store):
            _collect(offsets, s.buf, s.index)
    keep = read & written
    base = {bd: min(cs) for bd, cs in offsets.items() if bd[0] not in keep and min(cs) != 0}
    if not base:
        return k
    lifter = _Lifter(k, base)
    body = lifter.body(k.body)
    return dataclasses.replace(k, body=body, slots=list(k.slots) + lifter.new_slots)


def _collect(offsets: dict, buf: int, index: tuple):
    for d, a in enumerate(index):
        offsets.setdefault((buf, d), set()).add(a.const)


class _Lifter:
    def __init__(self, k: Kernel, base: dict):
        self.k, self.base = k, base    # base: (buf, dim) -> the offset its argument carries
        self.args: dict = {}           # (buf, dim) -> Arg
        self.new_slots: list = []
        self.memo: dict = {}

    def index(self, buf: int, index: tuple) -> tuple:
        out = []
        for d, a in enumerate(index):
            b = self.base.get((buf, d))
            if b is not None:
                arg = self.args.get((buf, d))
                if arg is None:
                    arg = self.args[(buf, d)] = Arg(len(self.k.slots) + len(self.new_slots), "int64")
                    self.new_slots.append(Slot(str(b), "int64"))
                a = Affine(a.terms, a.const - b, a.syms) + Affine(syms=((arg, 1),))
            out.append(a)
        return tuple(out)

    def expr(self, e):
        if not isinstance(e, (Op, Load)):
            return e
        out = self.memo.get(e)
        if out is None:
            if isinstance(e, Op):
                out = Op(e.op, e.dtype, tuple(self.expr(a) for a in e.args))
            elif isinstance(e, Gather):
                out = dataclasses.replace(e, index=self.index(e.buf, e.index), pos=self.expr(e.pos))
            elif isinstance(e, DataLoad):
                out = dataclasses.replace(e, index=self.index(e.buf, e.index),
                                          pos=tuple((axis, self.expr(x)) for axis, x in e.pos))
            else:
                out = dataclasses.replace(e, index=self.index(e.buf, e.index))
            self.memo[e] = out
        return out

    def body(self, stmts) -> list:
        return [self.stmt(s) for s in stmts]

    def stmt(self, s):
        if isinstance(s, Loop):
            return dataclasses.replace(s, body=self.body(s.body), until=self.expr(s.until))
        if isinstance(s, Store):
            return dataclasses.replace(s, index=self.index(s.buf, s.index), value=self.expr(s.value),
                                       pos=tuple((axis, self.expr(x)) for axis, x in s.pos))
        if isinstance(s, Append):
            return dataclasses.replace(s, value=self.expr(s.value), cond=self.expr(s.cond))
        if isinstance(s, Acc):
            return dataclasses.replace(s, init=self.expr(s.init))
        if isinstance(s, (Update, Let)):
            return dataclasses.replace(s, value=self.expr(s.value))
        if isinstance(s, If):
            return dataclasses.replace(s, cond=self.expr(s.cond), body=self.body(s.body), orelse=self.body(s.orelse))
        raise TypeError(f"lift_offsets: unknown statement {type(s).__name__}")


def _statements(body):
    for s in body:
        yield s
        if isinstance(s, Loop):
            yield from _statements(s.body)


def _exprs(s):
    for name in ("value", "cond", "init", "until"):
        e = getattr(s, name, None)
        if e is not None:
            yield e
    for _, x in getattr(s, "pos", ()):
        yield x
