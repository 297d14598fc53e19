"""How a kernel's loops are compiled, decided from their bodies: which loops are interleaved
(compute-bound on the vectorised math library), which keep a vector epilogue instead of a
masked tail (float32 math), which must be interleaved at every tier (float sums: their order is
the loop's shape), and which kernels are small enough to compile unoptimised.
emit.py writes the metadata these choose (module_context.ModuleContext.interleave_md)."""
from __future__ import annotations

from ...lower.loop_ir import Kernel, Op, Update, walk_exprs
from ...lower.peephole import EXPENSIVE

INTERLEAVE = 4          # vectors in flight per iteration of a unit-stride loop calling math
MATH_HEAVY_OPS = 8      # ... or one math call among this many operations (see _calls_math)
TINY_WORK = 256         # kernels with at most this static work compile unoptimised (optnone)


def is_tiny(k: Kernel) -> bool:
    """A kernel whose static work is at most TINY_WORK ("0": unknown): compiled unoptimised."""
    return k.work.isdigit() and 0 < int(k.work) <= TINY_WORK


def calls_math(stmts) -> bool:
    """Is a loop body compute-bound on the vectorised math library: two math calls or more
    (a chain), or one among at least MATH_HEAVY_OPS operations (GELU)? A lone `exp` over a
    large array is near memory-bound, and there interleaving + masking measured ~10% slower."""
    math, ops = 0, 0
    for s in stmts:
        for attr in ("value", "init"):
            e = getattr(s, attr, None)
            for x in (walk_exprs(e) if e is not None else ()):
                if isinstance(x, Op):
                    ops += 1
                    math += x.op in EXPENSIVE
    return math >= 2 or (math == 1 and ops >= MATH_HEAVY_OPS)


_REASSOCIATED = frozenset({"red_add", "red_mul", "red_muladd"})


def reassociates(stmts) -> bool:
    """Does the loop update a float sum or product, whose order is the vectorised loop's shape
    (vector width, interleave, masked tail)? Such a loop is interleaved at every tier: a quick
    kernel and its full tier must give the same bits, since which one runs is a matter of timing
    (the full tier is built in the background, tiers.py)."""
    return any(isinstance(x, Op) and x.op in _REASSOCIATED
               for s in stmts if isinstance(s, Update) for x in walk_exprs(s.value))


def f32_math(stmts) -> bool:
    """Does a loop body call the vectorised math library in float32? Its loop then keeps a
    vector epilogue instead of a masked tail: the whole loop predicated ran float32 GELU, a
    Gaussian and sin*cos 2.3-2.5x slower (4.7 -> 2.0 ms at 2e6 elements, one thread); float64
    math measured the same either way, and keeps the cheaper-to-compile masked tail
    (benchmarks/README.md, "Early calls and tiers")."""
    return any(isinstance(x, Op) and x.op in EXPENSIVE and x.dtype == "float32"
               for s in stmts for attr in ("value", "init")
               for x in (walk_exprs(getattr(s, attr)) if getattr(s, attr, None) is not None else ()))
