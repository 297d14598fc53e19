"""Loop IR -> LLVM IR text for one kernel.

Every kernel is two functions:

    define void @k(i64 %lo, i64 %hi, ptr %args)     ; the entry point the wrapper calls
    define internal void @k.body(i64 %lo, i64 %hi, ptr noalias %b0, ..., i64 %st0_0, ..., <slots>)

`args` is the packed argument block (8 bytes each; abi.py): buffer data pointers, then every
buffer's byte strides, then the by-value slots (sizes, offsets, scalars). With the object
ABI the block starts with one PyArrayObject* per buffer instead, and the entry reads data
pointer and strides from the array object itself (fields at fixed offsets, verified at
import), which saves ~0.3 us per array in the wrapper. Math definitions and loop metadata
that kernels of one module share live in module_context.py. The entry loads everything and calls
the body, which LLVM inlines (turning `noalias` into alias scopes), except in a kernel that
may raise FP exceptions: its entry clears and reads the status flags around the body, which
stays a call so that no FP operation moves across the reads (fpflags.py). Flags the code
generator forces (integer `// 0`, log(0), the zero signs of max / min) are ORed into an
integer accumulator that the body adds to the flag word at its exit (raise_flag). The split
loop runs over [lo, hi) so the wrapper can hand chunks to threads.

Innermost loops are versioned: when every access that moves with the loop variable moves
by exactly one element (byte stride == itemsize), a copy of the loop with typed, unit-stride
addresses runs (LLVM vectorises it); otherwise a byte-strided copy runs. The unit-stride copy of
a pure map first runs a few scalar iterations until its first store is on a 64-byte line
(loop_peel.py).

Compile-time and speed rules (measured in benchmarks/README.md):
  * a unit-stride loop that is compute-bound on vectorised math (loop_hints.calls_math) is
    interleaved INTERLEAVE times, its tail in masked vectors: a chain
    such as ten nested `sin` is one long dependency chain per vector, and independent
    vectors side by side keep the FP pipes busy (~2x on ten sin, ~1.6x on GELU float32);
  * the byte-strided copy calls math through one noinline wrapper per function instead of
    inlining it again (it is scalar anyway; this keeps the module small to compile);
  * a kernel whose work is a small constant (TINY_WORK: a static graph on a few elements)
    gets an `optnone` body: it compiles in a few ms instead of ~100 ms for vector code that
    such sizes never use;
  * a "quick"-tier kernel (Kernel.tier: symbolic sizes, compiled for a small call) is not
    interleaved: about half the compile time, and the wrapper swaps in the full tier once a
    call is large (backends/llvm/tiers.py).
"""
from __future__ import annotations

import struct

from ...lower.loop_ir import (Acc, Affine, Append, Arg, Const, DataLoad, Gather, If, Kernel, Let, Load, Loop, Op,
                              Store, Stride, Update, Var, nested, walk_exprs)
from ...lower.segments import SEGMENT      # the ops the vectorised math library implements
from . import fpflags, loop_order, pairwise
from . import types as T
from .abi import body_params, entry_function
from .checked import CHECKED
from .chunked import ChunkedLoops, invariant_ops
from .math import math_function
from .loop_peel import aligned_start
from .loop_hints import INTERLEAVE, TINY_WORK, calls_math, f32_math, is_tiny, reassociates  # noqa: F401 (re-exported)
from .module_context import ModuleContext
from .ops import RULES


_SUFFIX = {"double": "f64", "float": "f32", "i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64"}


class FunctionEmitter(ChunkedLoops):
    def __init__(self, kernel: Kernel, mod: ModuleContext):
        self.k, self.mod = kernel, mod
        self.lines: list = []
        self.allocas: list = []
        self._n = 0
        self.env: dict = {}          # loop var -> i64 value
        self.lets: dict = {}
        self.accs: dict = {}         # acc name -> (alloca, dtype)
        self.cse: dict = {}
        self.access: dict | None = None   # innermost loop: (buf, index) -> (base, step|None)
        self.ivar: str | None = None
        self._has_acc: dict = {}
        self.scalar = False          # emitting the byte-strided (never vectorised) loop copy
        self.tiny = is_tiny(kernel)
        self.fp = fpflags.uses_status_register(kernel)   # entry reads the FP status flags (fpflags.py)
        self.flags = None            # the integer flag accumulator (an alloca), once raise_flag used
        self.opaque = None           # the entry's load of fpflags' opaque zero, once opaque_const used
        self.bail_to = None          # inside the kernel's bail loop: (status pointer, its var, its exit)
        self.routed: dict = {}       # op -> (chunk buffer, chunk start, type): NumPy's loop computed it (chunked.py)
        self._routed_plans: dict = {}
        self._np_in: dict = {}
        self._chunk_inner = False
        self.once: set = set()       # function ops NumPy's loop computes on one element (chunked.invariant_ops)
        self.extents: dict = {}      # loop var -> (start, stop) of its whole range, as emitted
        self.called_numpy = False

    # -- basic emission ----------------------------------------------------------------
    def emit(self, rhs: str, ty: str) -> str:
        self._n += 1
        name = f"%t{self._n}"
        self.lines.append(f"  {name} = {rhs}")
        return name

    def line(self, text: str):
        self.lines.append(f"  {text}")

    def new_label(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def label(self, name: str):
        self.lines.append(f"{name}:")
        self.block = name

    def raise_flag(self, cond: str, kind: str):
        """OR the flag bit of error kind `kind` into the kernel's accumulator where the i1 `cond`
        holds; the function's exit adds the accumulator to the process-wide word (fpflags.py).
        Integer ops only: the optimiser cannot fold them away (a flag raised by an FP operation
        can be, once it knows the sizes), and in a loop they are an OR reduction it vectorises."""
        self.raise_bits(self.emit(f"select i1 {cond}, i32 {fpflags.BIT[kind]}, i32 0", "i32"))

    def raise_bits(self, bit: str):
        """OR the i32 value `bit` (flag bits, fpflags.BIT) into the kernel's accumulator."""
        if self.flags is None:
            self.flags = "%flags.acc"
            self.allocas += [f"  {self.flags} = alloca i32", f"  store i32 0, ptr {self.flags}"]
            self.mod.decls.add(fpflags.WORD_DECL)
        old = self.emit(f"load i32, ptr {self.flags}", "i32")
        self.line(f"store i32 {self.emit(f'or i32 {old}, {bit}', 'i32')}, ptr {self.flags}")

    def opaque_const(self, value, dt: str) -> str:
        """The float constant `value` of dtype `dt` built from a zero loaded at the body's entry
        (fpflags.OPAQUE_SYMBOL), in a kernel whose flags come from the status register: a value
        the optimiser knows to be one of a few constants lets it fold the FP operations on it
        (without their flags); this one it cannot. One load per body call; the OR per constant
        is loop-invariant (hoisted by the optimiser)."""
        if self.opaque is None:
            self.opaque = "%opaque.zero"
            self.allocas.append(f"  {self.opaque} = load i64, ptr @{fpflags.OPAQUE_SYMBOL}")
            self.mod.decls.add(fpflags.OPAQUE_DECL)
        it = "i64" if dt == "float64" else "i32"
        as_int = struct.unpack("<q", struct.pack("<d", value))[0] if it == "i64" else \
            struct.unpack("<i", struct.pack("<f", value))[0]
        key = ("opaque", it, as_int)              # by bits: -0.0 is not 0.0, NaN is NaN
        if key not in self.cse:
            zero = self.opaque if it == "i64" else "%opaque.zero.i32"
            narrow = f"  %opaque.zero.i32 = trunc i64 {self.opaque} to i32"
            if it == "i32" and narrow not in self.allocas:
                self.allocas.append(narrow)
            self.cse[key] = self.emit(f"bitcast {it} {self.emit(f'or {it} {zero}, {as_int}', it)} to {T.reg(dt)}",
                                      T.reg(dt))
        return self.cse[key]

    def bail_if(self, cond: str):
        """Where the i1 `cond` holds, leave the kernel's bail loop (Kernel.bail) before the rest
        of this iteration, storing the iteration's number into the status buffer."""
        if self.bail_to is None:
            raise ValueError(f"kernel {self.k.name}: a checked op outside its bail loop")
        ptr, var, exit_ = self.bail_to
        out, go = self.new_label("bail"), self.new_label("ok")
        self.line(f"br i1 {cond}, label %{out}, label %{go}")
        self.label(out)
        self.line(f"store i64 {self.env[var]}, ptr {ptr}")
        self.line(f"br label %{exit_}")
        self.label(go)

    def intrinsic(self, name: str, dt: str, *xs) -> str:
        ty = T.reg(dt)
        args = ", ".join(f"{ty} {x}" for x in xs)
        return self.emit(f"call {ty} @llvm.{name}.{_SUFFIX[ty]}({args})", ty)

    def math(self, name: str, dt: str, *xs) -> str:
        sym, text, decl = math_function(name, dt, len(xs))
        if text is not None:
            self.mod.defs.setdefault((name, dt), text)
        if decl is not None:
            self.mod.decls.add(decl)
        ty = T.reg(dt)
        if self.scalar and text is not None and not self.tiny:
            sym = self.mod.outlined(sym, ty, len(xs))
        return self.emit(f"call {ty} @{sym}({', '.join(f'{ty} {x}' for x in xs)})", ty)

    # -- expressions -------------------------------------------------------------------
    def has_acc(self, e) -> bool:
        if e not in self._has_acc:
            self._has_acc[e] = any(isinstance(x, Var) and x.name in self.accs for x in walk_exprs(e))
        return self._has_acc[e]

    def ev(self, e) -> str:
        if isinstance(e, Const):
            return T.const(e.value, e.dtype)
        if e in self.cse:
            return self.cse[e]
        if isinstance(e, Arg):
            return f"%a{e.slot}"
        if isinstance(e, Stride):
            return f"%st{e.buf}_{e.dim}"
        if isinstance(e, Var):
            if e.name in self.lets:
                return self.lets[e.name]
            ptr, dt = self.accs[e.name]
            return self.emit(f"load {T.reg(dt)}, ptr {ptr}", T.reg(dt))
        if isinstance(e, Load):
            v = self._load(e)
        elif isinstance(e, Op):
            v = self._op(e)
        else:
            raise TypeError(e)
        if not self.has_acc(e):
            self.cse[e] = v
        return v

    def _load(self, e: Load) -> str:
        ptr = self.address(e.buf, e.index)
        if isinstance(e, Gather):                 # plus pos elements along the gathered axis
            off = self.emit(f"mul i64 {self.ev(e.pos)}, %st{e.buf}_{e.axis}", "i64")
            ptr = self.emit(f"getelementptr i8, ptr {ptr}, i64 {off}", "ptr")
        elif isinstance(e, DataLoad):
            ptr = self.at_positions(ptr, e.buf, e.pos)
        v = self.emit(f"load {T.mem(e.dtype)}, ptr {ptr}", T.mem(e.dtype))
        if e.dtype == "bool":
            v = self.emit(f"icmp ne i8 {v}, 0", "i1")
        return v

    def _op(self, e: Op) -> str:
        if self.routed and e in self.routed:
            return self.routed_value(e)
        if e in self.once:
            return self.routed_once(e)
        if e.op == "affine":
            return self.affine(e.args[0])
        if e.op == "cast":
            if self.fp and e.args[0].dtype == "bool" and T.kind(e.dtype) == "f":      # 0.0 or 1.0
                c = self.ev(e.args[0])
                one, zero = self.opaque_const(1.0, e.dtype), self.opaque_const(0.0, e.dtype)
                return self.emit(f"select i1 {c}, {T.reg(e.dtype)} {one}, {T.reg(e.dtype)} {zero}", T.reg(e.dtype))
            return T.cast(self, self.ev(e.args[0]), e.args[0].dtype, e.dtype)
        if e.op == SEGMENT:
            return self._segment(e)
        if e.op == "mask_nan":
            return self._mask_nan(e)
        if e.op == "keep_bits":                   # acc | the bits of x, zero-extended to i64
            acc, x = self.ev(e.args[0]), self.ev(e.args[1])
            dt = e.args[1].dtype
            if dt != "bool" and T.bits(dt) > 1 and T.kind(dt) == "f":
                x = self.emit(f"bitcast {T.reg(dt)} {x} to i{T.bits(dt)}", f"i{T.bits(dt)}")
            w = 1 if dt == "bool" else T.bits(dt)
            if w < 64:
                x = self.emit(f"zext i{w} {x} to i64", "i64")
            return self.emit(f"or i64 {acc}, {x}", "i64")
        if e.op == "where":
            c = self.ev(e.args[0])
            a, b = (self.opaque_const(x.value, e.dtype)      # (opaque_const: no flag folded away)
                    if self.fp and isinstance(x, Const) and T.kind(e.dtype) == "f" else self.ev(x)
                    for x in e.args[1:])
            ty = T.reg(e.dtype)
            return self.emit(f"select i1 {c}, {ty} {a}, {ty} {b}", ty)
        t = e.args[0].dtype
        if e.op in CHECKED:
            return CHECKED[e.op](self, t, *(self.ev(x) for x in e.args))
        rule = RULES[T.kind(t)][e.op]
        return rule(self, t, *(self.ev(x) for x in e.args))

    def _mask_nan(self, e: Op) -> str:
        """mask_nan(x, fill): x with NaN replaced by the constant `fill` (the identity of a float
        max / min reduction, lower/reductions.py), a value the optimiser cannot see through:
        with a visible -inf, InstCombine folds `maxnum(acc, select(nan, -inf, x))` into
        `select(nan, acc, maxnum(acc, x))`, which no longer is a max reduction, and the loop
        stays scalar (~15x slower)."""
        x, ty = self.ev(e.args[0]), T.reg(e.dtype)
        nan = self.emit(f"fcmp uno {ty} {x}, {x}", "i1")
        return self.emit(f"select i1 {nan}, {ty} {self.opaque_float(e.args[1])}, {ty} {x}", ty)

    def opaque_float(self, c: Const) -> str:
        """A float constant defined once in the entry block through an empty inline asm: the
        same bits, but no optimisation can rely on its value."""
        key = ("opaque", c)
        if key not in self.cse:
            it = f"i{T.bits(c.dtype)}"
            fmt = "<f" if c.dtype == "float32" else "<d"
            word = int.from_bytes(struct.pack(fmt, c.value), "little", signed=True)
            name = f"%opaque{len(self.allocas)}"
            self.allocas += [f'  {name}.bits = call {it} asm "", "=r,0"({it} {word})',
                             f"  {name} = bitcast {it} {name}.bits to {T.reg(c.dtype)}"]
            self.cse[key] = name
        return self.cse[key]

    def _segment(self, e: Op) -> str:
        """a if index < bound else b, evaluating only the chosen branch (lower/segments.py):
        the other may load out of bounds. Values computed in a branch stay in it."""
        index, bound, a, b = e.args
        c = self.emit(f"icmp slt i64 {self.ev(index)}, {self.ev(bound)}", "i1")
        yes, no, join = self.new_label("seg"), self.new_label("seg"), self.new_label("segjoin")
        self.line(f"br i1 {c}, label %{yes}, label %{no}")
        incoming = []
        for lbl, x in ((yes, a), (no, b)):
            saved = dict(self.cse)
            self.label(lbl)
            v = self.ev(x)
            incoming.append(f"[{v}, %{self.block}]")
            self.line(f"br label %{join}")
            self.cse = saved
        self.label(join)
        ty = T.reg(e.dtype)
        return self.emit(f"phi {ty} {', '.join(incoming)}", ty)

    def affine(self, a: Affine) -> str:
        if a in self.cse:
            return self.cse[a]
        acc = None
        for var, c in a.terms:
            v = self.env[var]
            term = v if c == 1 else self.emit(f"mul i64 {v}, {c}", "i64")
            acc = term if acc is None else self.emit(f"add i64 {acc}, {term}", "i64")
        for s, c in a.syms:
            term = f"%a{s.slot}" if c == 1 else self.emit(f"mul i64 %a{s.slot}, {c}", "i64")
            acc = term if acc is None else self.emit(f"add i64 {acc}, {term}", "i64")
        if a.const or acc is None:
            acc = str(a.const) if acc is None else self.emit(f"add i64 {acc}, {a.const}", "i64")
        self.cse[a] = acc
        return acc

    def offset(self, buf: int, index: tuple, known: dict | None = None) -> str | None:
        """Byte offset sum(index_d * stride_d), or None for offset 0; `known`: dim -> its
        stride as a constant (the fast copy of a loop, where it was tested)."""
        off = None
        for d, a in enumerate(index):
            if not a.terms and not a.syms and a.const == 0:
                continue
            stride = known[d] if known and d in known else f"%st{buf}_{d}"
            term = self.emit(f"mul i64 {self.affine(a)}, {stride}", "i64")
            off = term if off is None else self.emit(f"add i64 {off}, {term}", "i64")
        return off

    def at_positions(self, ptr: str, buf: int, pos: tuple) -> str:
        """`ptr` moved by data-dependent positions ((axis, int64 expression), ...)."""
        for axis, x in pos:
            off = self.emit(f"mul i64 {self.ev(x)}, %st{buf}_{axis}", "i64")
            ptr = self.emit(f"getelementptr i8, ptr {ptr}, i64 {off}", "ptr")
        return ptr

    def address(self, buf: int, index: tuple) -> str:
        key = ("addr", buf, index)
        if key in self.cse:
            return self.cse[key]
        if self.access is not None and (buf, index) in self.access:
            base, step, fast = self.access[(buf, index)]
            i = self.env[self.ivar]
            if step is None:
                p = base
            elif fast:                          # +1 or -1: the element index moves by i or -i
                j = i if fast == 1 else self.emit(f"sub nsw i64 0, {i}", "i64")
                p = self.emit(f"getelementptr inbounds {T.mem(self.k.buffers[buf].dtype)}, ptr {base}, i64 {j}", "ptr")
            else:
                p = self.emit(f"getelementptr i8, ptr {base}, i64 {self.emit(f'mul i64 {i}, {step}', 'i64')}", "ptr")
        else:
            off = self.offset(buf, index)
            p = f"%b{buf}" if off is None else self.emit(f"getelementptr i8, ptr %b{buf}, i64 {off}", "ptr")
        self.cse[key] = p
        return p

    # -- statements --------------------------------------------------------------------
    def body(self, stmts):
        for s in stmts:
            if isinstance(s, Loop):
                self.loop(s)
            elif isinstance(s, Acc):
                ptr = f"%acc.{s.name}"
                if s.name not in self.accs:
                    self.allocas.append(f"  {ptr} = alloca {T.reg(s.dtype)}")
                    self.accs[s.name] = (ptr, s.dtype)
                self.line(f"store {T.reg(s.dtype)} {self.ev(s.init)}, ptr {ptr}")
            elif isinstance(s, Update):
                ptr, dt = self.accs[s.name]
                self.line(f"store {T.reg(dt)} {self.ev(s.value)}, ptr {ptr}")
            elif isinstance(s, Let):
                self.lets[s.name] = self.ev(s.value)
            elif isinstance(s, Store):
                v = self.ev(s.value)
                dt = self.k.buffers[s.buf].dtype
                if dt == "bool":
                    v = self.emit(f"zext i1 {v} to i8", "i8")
                ptr = self.address(s.buf, s.index)
                if s.pos:
                    ptr = self.at_positions(ptr, s.buf, s.pos)
                self.line(f"store {T.mem(dt)} {v}, ptr {ptr}")
                for e in [e for e in self.cse if isinstance(e, Load) and e.buf == s.buf]:
                    del self.cse[e]                  # later loads see the stored value
            elif isinstance(s, Append):
                self.append(s)
            elif isinstance(s, If):
                self.branch(s)
            else:
                raise TypeError(s)

    def branch(self, s: If):
        """if cond: body else: orelse. Values computed in a branch stay in it; loads of
        buffers either branch stores are not reused after the join."""
        c = self.ev(s.cond)
        yes, no, join = self.new_label("then"), self.new_label("else"), self.new_label("endif")
        self.line(f"br i1 {c}, label %{yes}, label %{no}")
        saved, lets = dict(self.cse), dict(self.lets)
        for lbl, stmts in ((yes, s.body), (no, s.orelse)):
            self.label(lbl)
            self.body(stmts)
            self.line(f"br label %{join}")
            self.cse, self.lets = dict(saved), dict(lets)
        self.label(join)
        written = _stored_buffers(s.body) | _stored_buffers(s.orelse)
        self.cse = {e: v for e, v in saved.items() if not (isinstance(e, Load) and e.buf in written)}

    def append(self, s: Append):
        """Branch-free in the mask: out[j] = value whenever j < cap (a later selected element
        overwrites an unselected one), then j += cond. The j < cap test only fails once every
        selected element is written, so it predicts well whatever the mask."""
        c, v = self.ev(s.cond), self.ev(s.value)
        dt = self.k.buffers[s.buf].dtype
        if dt == "bool":
            v = self.emit(f"zext i1 {v} to i8", "i8")
        ptr, _ = self.accs[s.counter]
        j = self.emit(f"load i64, ptr {ptr}", "i64")
        ok = self.emit(f"icmp slt i64 {j}, {self.ev(s.cap)}", "i1")
        st, cont = self.new_label("app"), self.new_label("appdone")
        self.line(f"br i1 {ok}, label %{st}, label %{cont}")
        self.label(st)
        off = self.emit(f"mul i64 {j}, %st{s.buf}_0", "i64")
        p = self.emit(f"getelementptr i8, ptr %b{s.buf}, i64 {off}", "ptr")
        self.line(f"store {T.mem(dt)} {v}, ptr {p}")
        self.line(f"br label %{cont}")
        self.label(cont)
        inc = self.emit(f"zext i1 {c} to i64", "i64")
        self.line(f"store i64 {self.emit(f'add i64 {j}, {inc}', 'i64')}, ptr {ptr}")

    def loop(self, lp: Loop):
        nest = None if self.tiny else loop_order.reorderable(lp, self.k.buffers)
        if nest is not None:                    # in the operands' memory order (loop_order.py)
            loop_order.emit_nest(self, nest)
            written = _stored_buffers(lp.body)
            self.cse = {e: v for e, v in self.cse.items() if not (isinstance(e, Load) and e.buf in written)}
        else:
            self.loop_in(lp, *self.bounds(lp))

    def bounds(self, lp: Loop) -> tuple:
        """(start, stop) of a loop; the split loop runs its share [lo, hi) of them."""
        start, stop = self.ev(lp.start), self.ev(lp.stop)
        self.extents[lp.var] = (start, stop)       # the whole range (pairwise.numpy_sums_in_order)
        if lp.split:
            start = "%lo" if lp.start == Const(0, "int64") else \
                self.emit(f"call i64 @llvm.smax.i64(i64 %lo, i64 {start})", "i64")
            stop = self.emit(f"call i64 @llvm.smin.i64(i64 %hi, i64 {stop})", "i64")
        return start, stop

    def loop_in(self, lp: Loop, start: str, stop: str):
        """Loop `lp` over [start, stop); an innermost loop in two versions (module doc)."""
        inner = not any(isinstance(s, (Loop, If)) for s in lp.body)
        hoisted = self.hoist(lp, start, stop) if inner else []
        self._loop_in(lp, start, stop, inner)
        for e in hoisted:                        # defined where the loop runs only
            self.cse.pop(e, None)

    def _loop_in(self, lp: Loop, start: str, stop: str, inner: bool):
        versions = self._prepare_versions(lp) if inner and not lp.short else None
        sums = pairwise.pairwise_sums(lp) if inner and (self.k.bail is None or self.k.bail[1] != lp.var) else None
        if sums:                                 # float sums in NumPy's order (pairwise.py)
            return pairwise.emit(self, lp, start, stop, versions, sums)
        exit_ = self.new_label("exit")
        saved_bail = self.bail_to
        if self.k.bail is not None and self.k.bail[1] == lp.var:
            self.bail_to = (self.address(self.k.bail[0], ()), lp.var, exit_)
        cond, access = versions if versions else (None, None)
        if cond is None:
            self.counted(lp, start, stop, exit_, None if access is None else
                          {k: (b, s, 0) for k, (b, s, _, _) in access.items()}, scalar=lp.short)
        else:
            fast, slow = self.new_label("fast"), self.new_label("slow")
            self.line(f"br i1 {cond}, label %{fast}, label %{slow}")
            for lbl, is_fast in ((fast, True), (slow, False)):
                self.label(lbl)
                acc = {k: (fb if is_fast else b, s, sign if is_fast else 0) for k, (b, s, fb, sign) in access.items()}
                first = aligned_start(self, lp, start, stop, acc) if is_fast else start
                self.counted(lp, first, stop, exit_, acc, scalar=not is_fast)
        self.label(exit_)
        self.bail_to = saved_bail

    def counted(self, lp, start, stop, exit_, access, scalar=False, md=None, on_iter=None):
        """`lp`'s body for each index in [start, stop); `md`: its !llvm.loop metadata instead of
        the usual; `on_iter(i)`: called at the top of the body with the index's value."""
        if access is not None and not self._chunk_inner and self.routed_plan(lp):
            return self._chunked(lp, start, stop, exit_, access, scalar, self.routed_plan(lp), md, on_iter)
        saved_cse, saved_access, saved_ivar = dict(self.cse), self.access, self.ivar
        self.scalar = scalar
        head, body = self.new_label("head"), self.new_label("body")
        self.line(f"br label %{head}")
        self.label(head)
        self.line(f"br i1 {self.emit(f'icmp slt i64 {start}, {stop}', 'i1')}, label %{body}, label %{exit_}")
        self.label(body)
        i = f"%{lp.var}.{self._n}"
        phi_at = len(self.lines)
        self.lines.append(None)
        self.env[lp.var] = i
        if access is not None:
            self.access, self.ivar = access, lp.var
        if on_iter is not None:
            on_iter(i)
        self.body(lp.body)
        nxt = self.emit(f"add nuw nsw i64 {i}, 1", "i64")
        more = self.emit(f"icmp slt i64 {nxt}, {stop}", "i1")
        if lp.until is not None:                 # a `break`: leave once it holds
            stay = self.emit(f"xor i1 {self.ev(lp.until)}, true", "i1")
            more = self.emit(f"and i1 {more}, {stay}", "i1")
        if md is not None:
            md = f", !llvm.loop {md}"
        elif scalar:
            md = f", !llvm.loop {self.mod.scalar_loop_md()}"
        elif (access is not None and not self.tiny and calls_math(lp.body)
              and (self.k.tier != "quick" or reassociates(lp.body))):
            md = f", !llvm.loop {self.mod.interleave_md(INTERLEAVE, not f32_math(lp.body))}"
        else:
            md = ""
        self.line(f"br i1 {more}, label %{body}, label %{exit_}{md}")
        self.lines[phi_at] = f"  {i} = phi i64 [{start}, %{head}], [{nxt}, %{self.block}]"
        written = _stored_buffers(lp.body)        # loads made before the loop are stale after it
        self.cse = {e: v for e, v in saved_cse.items() if not (isinstance(e, Load) and e.buf in written)}
        self.access, self.ivar = saved_access, saved_ivar
        self.scalar = False

    def _prepare_versions(self, lp: Loop):
        """Per-access base pointers and steps for the innermost loop, and the fast-path test."""
        accesses = []
        for s in lp.body:
            for e in [getattr(s, a) for a in ("value", "cond") if getattr(s, a, None) is not None]:
                accesses += [(x.buf, x.index) for x in walk_exprs(e) if isinstance(x, Load)]
            if isinstance(s, Store):
                accesses.append((s.buf, s.index))
                accesses += [(x.buf, x.index) for _, p in s.pos for x in walk_exprs(p) if isinstance(x, Load)]
        access, conds = {}, []
        for buf, index in dict.fromkeys(accesses):
            rest = tuple(a.without(lp.var) for a in index)
            off = self.offset(buf, rest)
            base = f"%b{buf}" if off is None else self.emit(f"getelementptr i8, ptr %b{buf}, i64 {off}", "ptr")
            # the fast copy knows the stride of the one dim moving by one element: its offset is in
            # elements there, so LLVM sees how far apart `x[i + 1]` and `x[i]` are (store-to-load
            # forwarding of a recurrence, exact dependence distances for the vectoriser)
            moving = [d for d, a in enumerate(index) if a.coef(lp.var)]
            fast_base = base
            # one dim moving by +1 or -1 (a flip read through a view: `x[n - 1 - i]`): the fast
            # copy indexes elements by i or -i (LLVM vectorises both: reversed loads), when
            # that dim's stride is one element
            sign = index[moving[0]].coef(lp.var) if len(moving) == 1 else 1
            sign = sign if sign in (1, -1) else 1
            if len(moving) == 1 and index[moving[0]].coef(lp.var) in (1, -1) and off is not None:
                size = T.itemsize(self.k.buffers[buf].dtype)
                off = self.offset(buf, rest, {moving[0]: size})
                fast_base = f"%b{buf}" if off is None else \
                    self.emit(f"getelementptr i8, ptr %b{buf}, i64 {off}", "ptr")
            step = None
            for d, a in enumerate(index):
                c = a.coef(lp.var)
                if c:
                    term = f"%st{buf}_{d}" if c == 1 else self.emit(f"mul i64 %st{buf}_{d}, {c}", "i64")
                    step = term if step is None else self.emit(f"add i64 {step}, {term}", "i64")
            if step is not None:
                size = T.itemsize(self.k.buffers[buf].dtype)
                unit = f"%st{buf}_{moving[0]}" if sign == -1 else step
                conds.append(self.emit(f"icmp eq i64 {unit}, {size}", "i1"))
            access[(buf, index)] = (base, step, fast_base, sign)
        return (self._all(conds) if conds else None), access

    def _all(self, conds) -> str:
        c = conds[0]
        for x in conds[1:]:
            c = self.emit(f"and i1 {c}, {x}", "i1")
        return c

    # -- whole function ----------------------------------------------------------------
    def function(self) -> str:
        k = self.k
        self.label("entry")
        self.once = invariant_ops(k)
        self.body(k.body)
        if k.keep is not None:                   # consumed: what feeds it stays (flag_check.py)
            self.line(f'call void asm sideeffect "", "r"(i64 {self.ev(Var(k.keep, "int64"))})')
        if self.flags is not None:
            self.lines += fpflags.exit_ir(self.flags)
        self.line("ret void")
        params = body_params(k)
        body = [self.lines[0]] + self.allocas + self.lines[1:]
        # a body between the entry's flag reads stays a call: no FP op moves across them
        attrs = ("noinline optnone nounwind" if self.tiny else "noinline nounwind" if self.fp
                 else "alwaysinline nounwind")
        if k.wide:                               # LLVM otherwise stops at 256-bit vectors on AVX-512 hosts
            attrs += ' "prefer-vector-width"="512"'
        if self.fp:
            self.mod.decls.update(fpflags.DECLS)
        text = [f"define internal void @{k.name}.body({', '.join(params)}) {attrs} {{"]
        calls_numpy = self.called_numpy or any(plan for _, plan in self._routed_plans.values())
        text += body + ["}", "", entry_function(k, self.mod.object_abi, self.fp, calls_numpy)]
        return "\n".join(text)

def _stored_buffers(stmts) -> set:
    """Buffers that statements (and the loops among them) store into."""
    out = set()
    for s in stmts:
        if isinstance(s, (Store, Append)):
            out.add(s.buf)
        for inner in nested(s):
            out |= _stored_buffers(inner)
    return out


def pack_format(k: Kernel, object_abi: bool = False) -> str:
    """struct format of the packed argument block of kernel k (see module doc)."""
    fmt = "q" * (len(k.buffers) + (0 if object_abi else sum(b.ndim for b in k.buffers)))
    for s in k.slots:
        fmt += "d" if T.kind(s.dtype) == "f" else ("Q" if s.dtype == "uint64" else "q")
    return "=" + fmt
