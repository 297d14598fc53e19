"""Innermost loops that call NumPy's own ufunc loops (numpy_loops.py) on chunks.

An innermost loop whose body computes a transcendental function that numpy_loops routes runs
in chunks of CHUNK iterations:

    for c in [start, stop) by CHUNK:                 cend = min(c + CHUNK, stop)
        for j in [c, cend): in0[j - c] = <the function's argument at j>      (a stage loop)
        loop(context, {in0, out0}, cend - c, {itemsize, itemsize}, auxdata) (NumPy's loop)
        ... one stage loop and call per routed function, inner functions first ...
        for j in [c, cend): <the body>, each routed function read from out_k[j - c]

The buffers are stack arrays of CHUNK elements (in L1). An argument that does not move with
the loop (a scalar: `x ** -1.5`) is passed once with stride 0, as NumPy passes a 0-d operand.

Which strides NumPy's loop would see matters: its SIMD loops fall back to a scalar path (other
roundings) when a stride is negative, and NumPy passes a negative stride exactly when a 1-d
operand is a reversed view (`np.exp(x[::-1])`); an N-d operand goes through NumPy's iterator,
which flips negative axes. So in a kernel of 1-d buffers, a function whose argument is a plain
load moving backwards in memory at run time gets its chunk passed with negative strides (the
buffers walked from their end), and NumPy's scalar path computes it as for NumPy's own call.
What kernels cannot know (`routed_exact`): the argument of a function that NumPy computed into
a temporary and then viewed reversed (`np.exp((a * b)[::-1])`, fused here into one expression),
and N-d operands whose signs mix along the innermost axis; their results are the SIMD path's.

A function of values that move with no loop (`np.log(np.exp(x) + 1.0)` on an array of one
element, `np.tanh(x.sum()) + y`, the argument of a routed function passed with stride 0) is
computed by
NumPy's loop on one element (`invariant_ops`, `routed_once`; in a loop, once before it and only
when the loop runs: `hoisted_ops`): NumPy's call on a one-element array runs the same loop.

A function whose argument reads a value made before its loop (a Let, an accumulator that the
loop does not update: softmax's `np.exp(x - m)` with m the row's max) is routed like any other:
the value is one for the whole chunk. Pairwise row loops (pairwise.py) route their functions
too: the group's elements, the tail's and those of a short row run through `_chunked`, each
chunk's values then go into the lanes in order. The statements of an outer loop between its
inner loops (`np.log(x.sum(axis=1))`: the log of each row's sum) compute their functions by
NumPy's loop on one element, as above.

Some of NumPy's loops clear the FP status flags (np.tanh's): in a kernel that reads them, the
flags raised before each call of a loop are set again after it (`_call_loop`).

Not routed (our own math stays): functions whose argument reads an accumulator or a Let the
loop binds or updates, reads a buffer the loop stores elsewhere than at the same index, or
that sit in a branch evaluated for some elements only (a `segment`); loops with a `break` and
kernels that bail (checked ops).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...lower.loop_ir import (Acc, Affine, Append, DataLoad, Gather, If, Let, Load, Loop, Op, Store, Update, Var,
                              nested, walk_exprs)
from ...lower.segments import SEGMENT
from . import numpy_loops
from . import types as T

MAX_ROUTED = 16          # routed functions per loop (each keeps an output buffer on the stack)


@dataclass(frozen=True)
class Routed:
    op: Op
    loop: object                 # numpy_loops.NumpyLoop
    modes: tuple                 # per argument: "scalar" (stride 0), "direct" (a plain moving load), "buffer"


def _moves(e, var: str) -> bool:
    for x in walk_exprs(e):
        if isinstance(x, Load) and any(a.coef(var) for a in x.index):
            return True
        if isinstance(x, Op) and x.op == "affine" and isinstance(x.args[0], Affine) and x.args[0].coef(var):
            return True
    return False


def _unconditional(e, out: list, seen: set):
    """Post-order walk of `e` that does not enter the branches of a segment."""
    if not isinstance(e, Op) or e in seen:
        return
    seen.add(e)
    for a in (e.args[:2] if e.op == SEGMENT else e.args):
        _unconditional(a, out, seen)
    out.append(e)


def numpy_loop_of(e):
    """NumPy's own loop for function op `e` (float, every argument of its dtype), or None."""
    if not isinstance(e, Op) or not e.dtype.startswith("float") or \
            any(getattr(a, "dtype", None) != e.dtype for a in e.args):
        return None
    loop = numpy_loops.loop_for(e.op, e.dtype)
    return loop if loop is not None and loop.nin == len(e.args) else None


def routed_ops(kernel, lp: Loop) -> list:
    """The Routed functions of innermost loop `lp`, inner ones first ([]: none, or unsafe)."""
    if kernel.bail is not None or lp.until is not None or any(isinstance(s, (Loop, If)) for s in lp.body):
        return []
    if not numpy_loops.enabled():
        return []
    stored: dict = {}
    for s in lp.body:
        if isinstance(s, Store):
            stored.setdefault(s.buf, set()).add(None if s.pos else s.index)
        elif isinstance(s, Append):
            stored.setdefault(s.buf, set()).add(None)
    order, seen, before = [], set(), set()
    for s in lp.body:                  # candidates in statement order, with the buffers stored before
        for attr in ("value", "cond"):
            e = getattr(s, attr, None)
            if e is not None:
                found = []
                _unconditional(e, found, seen)
                order += [(x, frozenset(before)) for x in found]
        if isinstance(s, (Store, Append)):
            before.add(s.buf)
    bound = _bound(lp)
    out = []
    for e, stored_before in order:
        if len(out) >= MAX_ROUTED:
            continue
        loop = numpy_loop_of(e)
        if loop is None or not _safe_args(e, stored, stored_before, bound):
            continue
        modes = tuple("scalar" if not _moves(a, lp.var) else
                      "direct" if type(a) is Load else "buffer" for a in e.args)
        if all(m == "scalar" for m in modes) and any(isinstance(x, Var) for x in walk_exprs(e)):
            continue                   # invariant: computed once, before the loop (hoisted_ops)
        out.append(Routed(e, loop, modes))
    return out


def hoisted_ops(kernel, lp: Loop) -> list:
    """The function ops of innermost loop `lp` that every iteration evaluates on the same values
    (they read nothing the loop moves, stores or binds): NumPy's loop computes each once, before
    the loop (`ChunkedLoops.hoist`), inner ones first."""
    if kernel.bail is not None or lp.until is not None or not numpy_loops.enabled():
        return []
    bound = _bound(lp)
    stored = {s.buf for s in lp.body if isinstance(s, (Store, Append))}
    found, seen = [], set()
    for s in lp.body:
        for attr in ("value", "cond"):
            e = getattr(s, attr, None)
            if e is not None:
                _unconditional(e, found, seen)
    return [e for e in found if numpy_loop_of(e) is not None and _invariant(e, lp.var, bound, stored)]


def _bound(lp: Loop) -> set:
    """The names `lp`'s iterations bind or change (a Var of any other name is one value for
    the whole loop: a Let made before it, an accumulator already final)."""
    return {s.name for s in lp.body if isinstance(s, (Let, Update, Acc))} | {lp.var}


def _invariant(e, var: str, bound: set, stored: set) -> bool:
    for x in walk_exprs(e):
        if isinstance(x, Var) and x.name in bound or \
                isinstance(x, Load) and (x.buf in stored or any(a.coef(var) for a in x.index)) or \
                isinstance(x, Op) and x.op == "affine" and isinstance(x.args[0], Affine) and x.args[0].coef(var):
            return False
    return True


def invariant_ops(kernel) -> set:
    """The function ops of `kernel` evaluated where no loop moves them (module doc): those of its
    top-level statements outside loops, of the statements of outer loops between their inner
    loops (`np.log(x.sum(axis=1))`: the log of each row's sum, once per row), and each
    innermost loop's hoisted_ops."""
    if kernel.bail is not None or not numpy_loops.enabled():
        return set()
    exprs = [getattr(s, a) for s in _outside_innermost(kernel.body)
             for a in ("value", "cond", "init") if isinstance(getattr(s, a, None), Op)]
    out = {x for e in exprs for x in walk_exprs(e) if numpy_loop_of(x) is not None}
    for lp in innermost_loops(kernel.body):
        out.update(hoisted_ops(kernel, lp))
    return out


def _outside_innermost(body):
    """The statements of `body` and of its loops that hold loops, other than loops and branches
    (and what branches hold)."""
    for s in body:
        if isinstance(s, Loop):
            if any(isinstance(x, (Loop, If)) for x in s.body):
                yield from _outside_innermost(s.body)
        elif not isinstance(s, If):
            yield s


def innermost_loops(body):
    """The innermost loops of a statement list (loops holding no loop or branch)."""
    for s in body:
        if isinstance(s, Loop) and not any(isinstance(x, (Loop, If)) for x in s.body):
            yield s
        else:
            for inner in nested(s):
                yield from innermost_loops(inner)


def _safe_args(e: Op, stored: dict, stored_before: frozenset, bound: set) -> bool:
    """The stage loop reads the arguments of a whole chunk before the loop's statements: no
    accumulator or Let the loop binds or changes (one made before the loop, `x - m` with m a
    row's max, is one value for the chunk), and a buffer the loop stores only at the same
    index, by this statement or a later one (`x = exp(x)`; a value an earlier statement
    stored would be read stale)."""
    for a in e.args:
        for x in walk_exprs(a):
            if isinstance(x, Var) and x.name in bound:
                return False
            if isinstance(x, Load) and x.buf in stored and \
                    (isinstance(x, (Gather, DataLoad)) or stored[x.buf] != {x.index} or x.buf in stored_before):
                return False
    return True


def _direct_store(lp: Loop, op: Op, kernel, access):
    """The Store of `lp` that writes `op` and nothing else uses `op` (NumPy's loop may then
    write the destination itself), when its step is one element forward (the fast copy of the
    loop: a reversed or strided destination would change NumPy's loop's path), else None."""
    found = None
    for s in lp.body:
        if isinstance(s, Store) and s.value is op and not s.pos and found is None:
            found = s
            continue
        for attr in ("value", "cond"):
            e = getattr(s, attr, None)
            if e is not None and any(x is op or x == op for x in walk_exprs(e)):
                return None
    if found is None or kernel.buffers[found.buf].dtype != op.dtype or not kernel.buffers[found.buf].noalias \
            or access[(found.buf, found.index)][2] != 1:
        return None
    for s in lp.body:                  # the loop reads the destination nowhere (it is written early)
        for attr in ("value", "cond"):
            e = getattr(s, attr, None)
            if e is not None and any(isinstance(x, Load) and x.buf == found.buf for x in walk_exprs(e)):
                return None
    return found


def routed_exact(kernel, lp: Loop, r: Routed) -> bool:
    """Does routed function `r` give NumPy's bits for every input layout (module doc)?"""
    if any(isinstance(x, Load) and any(a.coef(lp.var) < 0 for a in x.index)
           for a, m in zip(r.op.args, r.modes) if m == "buffer" for x in walk_exprs(a)):
        return False                  # maybe a reversed view of a temporary NumPy made
    if all(b.ndim <= 1 for b in kernel.buffers):
        return True
    arrays = [a for a in r.op.args if any(isinstance(x, Load) and x.index for x in walk_exprs(a))]
    return len(arrays) <= 1           # one array operand: NumPy's iterator makes its strides positive


class ChunkedLoops:
    """FunctionEmitter mixin: `_chunked` emits an innermost loop as in the module doc."""

    def routed_plan(self, lp: Loop) -> list:
        key = id(lp)
        if key not in self._routed_plans:
            self._routed_plans[key] = (lp, routed_ops(self.k, lp))
        return self._routed_plans[key][1]

    def routed_value(self, e: Op) -> str:
        buf, c, ty = self.routed[e]
        j = self.env[self.ivar]
        p = self.emit(f"getelementptr inbounds {ty}, ptr {buf}, i64 {self.emit(f'sub i64 {j}, {c}', 'i64')}", "ptr")
        return self.emit(f"load {ty}, ptr {p}", ty)

    def hoist(self, lp: Loop, start: str, stop: str) -> list:
        """Compute `lp`'s hoisted_ops (NumPy's loop on one element each) once, before the loop and
        only when it runs (a Python loop of no iteration computes nothing, warns of nothing): a
        phi per value, for the body's cse."""
        ops = [e for e in hoisted_ops(self.k, lp) if e not in self.cse]
        if not ops:
            return []
        saved = dict(self.cse)
        pre, run, done = self.block, self.new_label("hoist"), self.new_label("hoisted")
        self.line(f"br i1 {self.emit(f'icmp slt i64 {start}, {stop}', 'i1')}, label %{run}, label %{done}")
        self.label(run)
        values = [self.ev(e) for e in ops]
        end = self.block
        self.line(f"br label %{done}")
        self.label(done)
        self.cse = saved
        for e, v in zip(ops, values):
            ty = T.reg(e.dtype)
            self.cse[e] = self.emit(f"phi {ty} [{v}, %{end}], [{T.const(0, e.dtype)}, %{pre}]", ty)
        return ops

    def routed_once(self, e: Op) -> str:
        """`e` computed by NumPy's loop on one element: its arguments' values in stack slots."""
        loop, ty = numpy_loop_of(e), T.reg(e.dtype)
        slots = []
        for a in e.args:
            slots.append(self._scratch(ty, 1))
            self.line(f"store {ty} {self.ev(a)}, ptr {slots[-1]}")
        slots.append(self._scratch(ty, 1))
        self._call_loop(loop, [(p, str(T.itemsize(e.dtype))) for p in slots], "1")
        self.called_numpy = True
        return self.emit(f"load {ty}, ptr {slots[-1]}", ty)

    def _call_loop(self, loop, operands, n: str):
        """Call NumPy's strided loop `loop` on `n` elements; `operands`: (pointer, step) per
        argument and the output."""
        ptrs, strides = self._scratch("ptr", len(operands)), self._scratch("i64", len(operands))
        dims = self._scratch("i64", 1)
        for k, (p, st) in enumerate(operands):
            self.line(f"store ptr {p}, ptr {self.emit(f'getelementptr ptr, ptr {ptrs}, i64 {k}', 'ptr')}")
            self.line(f"store i64 {st}, ptr {self.emit(f'getelementptr i64, ptr {strides}, i64 {k}', 'ptr')}")
        self.line(f"store i64 {n}, ptr {dims}")
        sym = f"@{loop.symbol}"
        self.mod.decls.add(loop.decl)
        fn = self.emit(f"load ptr, ptr {sym}", "ptr")
        ctx = self.emit(f"load ptr, ptr {self.emit(f'getelementptr ptr, ptr {sym}, i64 1', 'ptr')}", "ptr")
        aux = self.emit(f"load ptr, ptr {self.emit(f'getelementptr ptr, ptr {sym}, i64 2', 'ptr')}", "ptr")
        saved = self._status() if self.fp else None
        self.emit(f"call i32 {fn}(ptr {ctx}, ptr {ptrs}, ptr {dims}, ptr {strides}, ptr {aux})", "i32")
        if saved is not None:           # some of NumPy's loops clear the status (np.tanh): the flags
            mx = self._scratch("i32", 1)          # raised before the call are set again
            self.line(f"call void @llvm.x86.sse.stmxcsr(ptr {mx})")
            now = self.emit(f"load i32, ptr {mx}", "i32")
            self.line(f"store i32 {self.emit(f'or i32 {now}, {saved}', 'i32')}, ptr {mx}")
            self.line(f"call void @llvm.x86.sse.ldmxcsr(ptr {mx})")

    def _status(self) -> str:
        """The status flags raised so far in this call: MXCSR's and the x87 word's (glibc's
        feraiseexcept sets flags there: fpflags.entry_ir), as MXCSR flag bits."""
        mx = self._scratch("i32", 1)
        self.line(f"call void @llvm.x86.sse.stmxcsr(ptr {mx})")
        x87 = self.emit('call i16 asm sideeffect "fnstsw $0", "={ax},~{dirflag}"()', "i16")
        both = self.emit(f"or i32 {self.emit(f'load i32, ptr {mx}', 'i32')}, "
                         f"{self.emit(f'zext i16 {x87} to i32', 'i32')}", "i32")
        return self.emit(f"and i32 {both}, 63", "i32")

    def _scratch(self, ty: str, n: int) -> str:
        self._n += 1
        name = f"%npbuf{self._n}"
        self.allocas.append(f"  {name} = alloca [{n} x {ty}], align 64")
        return name

    def _chunked(self, lp, start, stop, exit_, access, scalar, plan, md=None, on_iter=None):
        C = numpy_loops.CHUNK
        saved_cse, saved_access, saved_ivar = dict(self.cse), self.access, self.ivar
        one_d = all(b.ndim <= 1 for b in self.k.buffers)
        calls, skip = [], []
        for r in plan:                      # scalar operands: stored once, before the chunk loop
            ty = T.reg(r.op.dtype)
            args = []
            for k, (a, m) in enumerate(zip(r.op.args, r.modes)):
                if m == "scalar":
                    slot = self._scratch(ty, 1)
                    self.line(f"store {ty} {self.ev(a)}, ptr {slot}")
                    args.append((a, "scalar", slot))
                elif m == "direct" and (one_d or access[(a.buf, a.index)][2] == 1):
                    args.append((a, "direct", None))      # NumPy's loop reads the operand in place
                else:
                    key = ("np_in", ty, k)
                    if key not in self._np_in:
                        self._np_in[key] = self._scratch(ty, C)
                    args.append((a, "buffer", self._np_in[key]))
            store = _direct_store(lp, r.op, self.k, access)
            if store is not None:
                skip.append(store)
            calls.append((r, ty, T.itemsize(r.op.dtype), args, store or self._scratch(ty, C)))
        self.access, self.ivar, self.scalar = access, lp.var, scalar
        pre = self.block
        head, body, latch = self.new_label("chunk"), self.new_label("chunkbody"), self.new_label("chunknext")
        self.line(f"br label %{head}")
        self.label(head)
        c = f"%chunk.{self._n}"
        phi_at = len(self.lines)
        self.lines.append(None)
        self.line(f"br i1 {self.emit(f'icmp slt i64 {c}, {stop}', 'i1')}, label %{body}, label %{exit_}")
        self.label(body)
        cend = self.emit(f"call i64 @llvm.smin.i64(i64 {self.emit(f'add i64 {c}, {C}', 'i64')}, i64 {stop})", "i64")
        n = self.emit(f"sub i64 {cend}, {c}", "i64")
        self.routed = {}
        for r, ty, it, args, out in calls:
            copied = [(a, buf) for a, m, buf in args if m == "buffer"]
            if copied:
                self._stage(lp.var, c, cend, copied, ty)
            operands = [(m, buf, a) for a, m, buf in args]
            operands.append(("direct", None, out) if isinstance(out, Store) else ("buffer", out, None))
            pointers = []
            for m, buf, a in operands:
                if m == "direct":                  # the element at the chunk's start, the step in bytes
                    self.env[lp.var] = c
                    self.cse.pop(("addr", a.buf, a.index), None)
                    p = self.address(a.buf, a.index)
                    del self.cse[("addr", a.buf, a.index)]
                    st = access[(a.buf, a.index)][1]
                else:
                    p, st = buf, "0" if m == "scalar" else str(it)
                pointers.append((p, st))
            self._call_loop(r.loop, pointers, n)
            if not isinstance(out, Store):
                self.routed[r.op] = (out, c, ty)
        rest = [s for s in lp.body if not any(s is x for x in skip)]
        if rest:
            self._chunk_inner = True
            self.counted(Loop(lp.var, lp.stop, rest, lp.start, lp.split, lp.until), c, cend, latch, access, scalar,
                         md, on_iter)
            self._chunk_inner = False
        else:
            self.line(f"br label %{latch}")
        self.routed = {}
        self.label(latch)
        self.line(f"br label %{head}")
        self.lines[phi_at] = f"  {c} = phi i64 [{start}, %{pre}], [{cend}, %{latch}]"
        written = {s.buf for s in lp.body if isinstance(s, (Store, Append))}
        self.cse = {e: v for e, v in saved_cse.items() if not (isinstance(e, Load) and e.buf in written)}
        self.access, self.ivar, self.scalar = saved_access, saved_ivar, False

    def _stage(self, var: str, c: str, cend: str, moving: list, ty: str):
        """for j in [c, cend): buf[j - c] = arg at j, for each (arg, buf)."""
        pre = self.block
        body, done = self.new_label("stage"), self.new_label("staged")
        self.line(f"br label %{body}")
        self.label(body)
        j = f"%{var}.s{self._n}"
        phi_at = len(self.lines)
        self.lines.append(None)
        saved = dict(self.cse)
        self.env[var] = j
        rel = self.emit(f"sub i64 {j}, {c}", "i64")
        for a, buf in moving:
            v = self.ev(a)
            self.line(f"store {ty} {v}, ptr {self.emit(f'getelementptr inbounds {ty}, ptr {buf}, i64 {rel}', 'ptr')}")
        nxt = self.emit(f"add nuw nsw i64 {j}, 1", "i64")
        more = self.emit(f"icmp slt i64 {nxt}, {cend}", "i1")
        md = f", !llvm.loop {self.mod.scalar_loop_md()}" if self.scalar else ""
        self.line(f"br i1 {more}, label %{body}, label %{done}{md}")
        self.lines[phi_at] = f"  {j} = phi i64 [{c}, %{pre}], [{nxt}, %{self.block}]"
        self.label(done)
        self.cse = saved


__all__ = ["ChunkedLoops", "MAX_ROUTED", "Routed", "hoisted_ops", "innermost_loops", "invariant_ops", "numpy_loop_of",
           "routed_exact", "routed_ops"]
