"""What the kernels of one LLVM module share: math function definitions, declarations and
`!llvm.loop` metadata nodes (emit.py writes kernels into one ModuleContext per graph)."""
from __future__ import annotations


class ModuleContext:
    """What kernels of one module share: math function definitions and declarations."""

    def __init__(self, object_abi: bool = False):
        self.object_abi = object_abi
        self.defs: dict = {}
        self.decls: set = set()
        self.metadata: list = []

    def scalar_loop_md(self) -> str:
        """!llvm.loop metadata: do not vectorise or unroll (strided fallback loops)."""
        n = len(self.metadata)
        self.metadata += [f"!{n} = distinct !{{!{n}, !{n + 1}, !{n + 2}}}",
                          f'!{n + 1} = !{{!"llvm.loop.vectorize.enable", i1 false}}',
                          f'!{n + 2} = !{{!"llvm.loop.unroll.disable"}}']
        return f"!{n}"

    def no_unroll_md(self) -> str:
        """!llvm.loop metadata: do not unroll (outer loops of a reordered nest, loop_order.py)."""
        n = len(self.metadata)
        self.metadata += [f"!{n} = distinct !{{!{n}, !{n + 1}}}", f'!{n + 1} = !{{!"llvm.loop.unroll.disable"}}']
        return f"!{n}"

    def interleave_md(self, count: int, masked_tail: bool = True) -> str:
        """!llvm.loop metadata: vectorise with `count` vectors per iteration, the tail in
        masked vectors (no scalar remainder and no vector epilogue: less code to compile)
        unless `masked_tail` is False (float32 math: see loop_hints.f32_math)."""
        n = len(self.metadata)
        tail = [f'!{n + 2} = !{{!"llvm.loop.vectorize.predicate.enable", i1 true}}'] if masked_tail else []
        self.metadata += [f"!{n} = distinct !{{!{n}, !{n + 1}{', !' + str(n + 2) if tail else ''}}}",
                          f'!{n + 1} = !{{!"llvm.loop.interleave.count", i32 {count}}}'] + tail
        return f"!{n}"

    def outlined(self, sym: str, ty: str, nargs: int) -> str:
        """A noinline wrapper of math function `sym` (called from scalar strided loops)."""
        name = f"{sym}.call"
        if ("call", sym) not in self.defs:
            params = ", ".join(f"{ty} %x{i}" for i in range(nargs))
            self.defs[("call", sym)] = (f"define internal {ty} @{name}({params}) noinline nounwind {{\n"
                                        f"  %r = call {ty} @{sym}({params})\n  ret {ty} %r\n}}")
        return name
