"""Rare-input slow paths that do not stop the loop vectoriser.

A call to an ordinary function blocks vectorisation. A call whose call site names vector
variants (`"vector-function-abi-variant"="_ZGV_LLVM_M8v_f(g)"`, the VFABI mangling with
LLVM's own ISA token) is vectorised into a call of `g(<8 x double> %x, <8 x i1> %mask)`
for the lanes where the call was reached. Each `g` here is loop-free: if any mask bit is
set it spills the vector and calls `<f>.lanes`, which runs the scalar routine on the flagged
lanes only; otherwise it returns at once (after inlining: one mask test per vector).
Variants are `weak_odr` so GlobalDCE keeps them until the vectoriser has run
(no `@llvm.compiler.used` to merge when several functions are pasted into one module);
their names end in `.vfabi<N>`, which llvm_jit.optimize uses to inline them into the
vectorised loop and then drop them.
"""
from __future__ import annotations

from ._ir import Fn, Val

VECTOR_WIDTHS = (2, 4, 8, 16, 32)     # every width the vectoriser may pick for f64 or f32 loops


def _lanes_text(scalar: str, ty: str) -> str:
    """`scalar` applied in place to buf[i] for every set bit i of a non-zero mask."""
    return f"""define internal void @{scalar}.lanes(ptr %buf, i64 %mask) noinline optnone nounwind {{
entry:
  br label %lane
lane:
  %m = phi i64 [%mask, %entry], [%m.next, %lane]
  %i = call i64 @llvm.cttz.i64(i64 %m, i1 true)
  %p = getelementptr inbounds {ty}, ptr %buf, i64 %i
  %xi = load {ty}, ptr %p
  %yi = call {ty} @{scalar}({ty} %xi)
  store {ty} %yi, ptr %p
  %m.less = sub i64 %m, 1
  %m.next = and i64 %m, %m.less
  %done = icmp eq i64 %m.next, 0
  br i1 %done, label %exit, label %lane
exit:
  ret void
}}
"""


def _variant_text(scalar: str, ty: str, vf: int) -> str:
    """Masked vector variant: loop-free, so it costs the optimiser almost nothing."""
    v = f"<{vf} x {ty}>"
    m = f"<{vf} x i1>"
    return f"""define weak_odr hidden {v} @{scalar}.vfabi{vf}({v} %x, {m} %m) alwaysinline nounwind {{
entry:
  %buf = alloca {v}
  %bits = bitcast {m} %m to i{vf}
  %any = icmp ne i{vf} %bits, 0
  br i1 %any, label %slow, label %exit
slow:
  store {v} %x, ptr %buf
  %mask = zext i{vf} %bits to i64
  call void @{scalar}.lanes(ptr %buf, i64 %mask)
  %y = load {v}, ptr %buf
  br label %exit
exit:
  %r = phi {v} [%x, %entry], [%y, %slow]
  ret {v} %r
}}
"""


def guarded_call(fn: Fn, rare: Val, fast: Val, x: Val, slow: Fn) -> Val:
    """`rare ? slow(x) : fast` where the slow call happens only for rare lanes.

    Emits the branch in `fn`, and appends `slow` and its vector variants to fn.extra.
    """
    name = slow.name
    variants = ",".join(f"_ZGV_LLVM_M{vf}v_{name}({name}.vfabi{vf})" for vf in VECTOR_WIDTHS)
    fn.extra.append(slow.text())
    fn.extra.append(_lanes_text(name, x.ty))
    fn.extra.extend(_variant_text(name, x.ty, vf) for vf in VECTOR_WIDTHS)
    here = f"b{len(fn.lines)}"
    fn.br(f"{here}.head")
    fn.label(f"{here}.head")
    fn.cbr(rare, f"{here}.slow", f"{here}.join")
    fn.label(f"{here}.slow")
    res = fn.call(x.ty, name, [x],
                  f'nounwind willreturn memory(none) "vector-function-abi-variant"="{variants}"')
    fn.br(f"{here}.join")
    fn.label(f"{here}.join")
    return fn.phi(x.ty, [(fast, f"{here}.head"), (res, f"{here}.slow")])
