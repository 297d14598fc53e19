"""Matrix products (np.matmul, np.dot, `@`): our loop nests, fused with their neighbours, or BLAS.

Where a product runs (`choice`, from the operands' dtypes and the sizes):

  kernel  our loop nest inside a kernel (a "mm" job, fusion.py): integer products (NumPy has
          no BLAS for them: 350 ms at 512^3 int64 where ours takes 13 ms), products whose
          operands' dtypes differ (NumPy casts the whole of one operand on every call: a
          float64 1x288 row times a float32 288x768 weight is 80% cast), and small float
          products (NumPy's call costs more than the arithmetic). The nest reads each operand
          in its own dtype and accumulates in the result dtype. Elementwise work on the
          product (a bias, an activation, a scaling, another product) joins the same kernel
          and reads each row of the product while it is in cache (the "epilogue"); written
          over the product's own array where it is the same shape and dtype.
  blas    np.matmul / np.dot called by the wrapper (OpenBLAS): large float products. With
          operands of different dtypes, the one to convert is cast into a buffer kept across
          calls (runtime.matmul_cast), so no allocation and page faults per call. The
          epilogue kernel then runs in place over BLAS's result.
  auto    the sizes decide at run time (symbolic sizes): the kernel holds the nest under
          `If(use)`, the wrapper computes `use` from the sizes and, when it is 0, calls BLAS
          into the product's array before the kernel (whose epilogue then reads it).

The nest, per row of the result (the kernel's outer loops: batch dims and the rows of `a`;
split across threads):

  rows form (b moves by one element along its columns, b's usual C order):
      out[i, :] = 0
      for each block of four k: out[i, :] = fma(a3, b[k+3, :], fma(a2, b[k+2, :], ...(out[i, :])))
      (the a's are loaded once per block, the row of b and out are vectors: what gemv does)
  dots form (b moves by one element along k: a transposed C array, `x @ w.T`, `q @ k.T`):
      out[i, j] = sum_k a[i, k] * b[k, j]     (a vectorised, reassociated dot product per j)
  b 1-d (`M @ v`): the dot product form.

Vectors: a kernel holding a nest is compiled for the host's widest vectors (Kernel.wide: LLVM's
"prefer-vector-width"="512"; by default it stops at 256 bits on AVX-512 hosts). A one-row product
streams its weight from L2/L3: a float32 weight is widened (vcvtps2pd) and multiplied-added in
float64, and 512-bit vectors halve the instructions per element (in-process A/B, Llama decode
step: 4-10% faster). The width is the same at both tiers, so a product's bits do not depend on
which tier ran; the dots form's reassociated order depends on it (within the bound below).

Products with a float32 result always run on BLAS: in single precision another summation
order differs from NumPy's by more than one rounding (our nests serve float64 and integer
results, and float64 x float32 mixes). The form is picked per call from b's strides (an `If`
in the kernel). Float sums are
reassociated and fused (`red_muladd`, one rounding per multiply-add): results differ from
NumPy's (BLAS's blocked order) by the order of the additions only (README: "What 'same
result as NumPy' means"); integer products wrap in the result dtype exactly as NumPy's loop.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy

from ..ir import ops as _registered  # noqa: F401  (registers every op the table below reads)
from ..config import config
from ..ir.graph import Node
from ..ir.registry import Matmul, lowered_as
from ..shapes.functions import FloorDiv
from .loop_ir import Acc, Affine, Arg, Const, If, Let, Load, Loop, Op, Store, Stride, Update, Var, cast
from .pointwise import SUPPORTED_DTYPES
from .views import broadcast_index, broadcast_ok

MATMULS = frozenset(lowered_as(Matmul))       # registry: np.matmul, np.dot (ir/ops/linalg.py)

# When our nest computes a float product (benchmarks/bench_matmul.py, one thread; see
# benchmarks/README.md "Matrix products"). Same dtypes: NumPy's call and BLAS's set-up cost
# ~1-2 us, which a nest of up to ~32^3 multiply-adds beats; a product of a few rows (gemv)
# is bound by reading b, where BLAS is no faster. Mixed dtypes: NumPy casts b (k x m) on
# every call, so our nest wins while the rows it computes cost less than that cast.
SAME_DTYPE_MAX_WORK = 48 ** 3
SAME_DTYPE_MAX_ROWS = 4
MIXED_MAX_ROWS = 64
UNROLL_K = 4                                  # k steps per block of the rows form


@dataclass(frozen=True)
class Product:
    """A product in the form the nests compute: result = batch dims + (n if a has rows) +
    (m if b has columns); k is contracted."""
    node: Node
    a: Node
    b: Node
    batch: tuple
    rows: bool
    cols: bool

    @property
    def L(self) -> int:
        """The result dims the kernel's outer loops walk (all but the columns)."""
        return len(self.batch) + self.rows

    @property
    def k(self):
        return self.a.shape[-1]

    @property
    def n(self):
        return self.a.shape[-2] if self.rows else 1

    @property
    def m(self):
        return self.b.shape[-1] if self.cols else 1

    @property
    def mixed(self) -> bool:
        return self.a.dtype != self.b.dtype


def product_of(node: Node) -> Product | None:
    """The product in normal form, or None when our nests do not compute it (NumPy does)."""
    if node.op not in MATMULS or len(node.args) != 2 or node.dtype is None or node.call_attrs:
        return None
    a, b = node.args
    if not (isinstance(a, Node) and isinstance(b, Node)) or a.dtype is None or b.dtype is None:
        return None
    if node.dtype.kind not in "iuf" or not all(
            x.dtype.name in SUPPORTED_DTYPES for x in (node, a, b)):
        return None                           # bool (or of ands), complex, float16: NumPy
    if a.ndim == 0 or b.ndim == 0 or (node.op == "dot" and max(a.ndim, b.ndim) > 2):
        return None                           # a scalar factor; np.dot's N-d sum-product
    rows, cols = a.ndim >= 2, b.ndim >= 2
    batch = tuple(node.shape[:node.ndim - rows - cols])
    if not (broadcast_ok(a.shape[:-2], batch) and broadcast_ok(b.shape[:-2], batch)):
        return None                           # a batch size only guarded to be 1: NumPy broadcasts
    return Product(node, a, b, batch, rows, cols)


def kernel_when(p: Product):
    """When our nest computes `p` (a sympy boolean over the sizes; True / False when known)."""
    if p.node.dtype.kind in "iu":
        return sympy.true
    if p.node.dtype.itemsize < 8:
        # a single-precision result summed in another order than BLAS's differs from NumPy by
        # more than float32's rounding (lenet's layers: 8e-8 relative, past rtol=1e-7): BLAS
        return sympy.false
    if config.exact_float_products and not p.mixed:
        return sympy.false
    n = sympy.sympify(p.n) * sympy.Mul(*map(sympy.sympify, p.batch))
    if p.mixed:
        return sympy.Le(n, MIXED_MAX_ROWS)
    work = n * sympy.sympify(p.k) * sympy.sympify(p.m)
    return sympy.Or(sympy.Le(n, SAME_DTYPE_MAX_ROWS), sympy.Le(work, SAME_DTYPE_MAX_WORK))


def choice(node: Node) -> str:
    """"kernel", "blas" or "auto" (module doc)."""
    p = product_of(node)
    if p is None:
        return "blas"
    when = kernel_when(p)
    if when is sympy.true:
        return "kernel"
    if when is sympy.false:
        return "blas"
    return "auto"


def kernel_product(node: Node) -> bool:
    """Is `node` a product a kernel computes (always, or when the sizes say so)?"""
    return node.op in MATMULS and choice(node) != "blas"


# ----------------------------------------------------------------------------- the nest


def add_product(bld, node: Node, use: Arg | None = None) -> list:
    """The statements computing product `node` for the current outer index of kernel builder
    `bld` (inside its outer loops); with `use`, only when that run-time flag is nonzero."""
    p = product_of(node)
    if bld.L != p.L:
        raise ValueError(f"product {node} in a kernel with {bld.L} outer loops (wants {p.L})")
    dt = node.dtype.name
    outer = bld.outer_index(())
    batch, row = outer[:len(p.batch)], outer[len(p.batch):]
    out = bld.buffer(node, written=True)

    def a_at(k: Affine):
        idx = broadcast_index(p.a.shape[:-2], batch) + tuple(row) + (k,)
        return cast(_operand(bld, p.a, idx), dt)

    def b_at(k: Affine, j: Affine | None):
        idx = broadcast_index(p.b.shape[:-2], batch) + (k,) + ((j,) if p.cols else ())
        return cast(bld.value(p.b, idx), dt)

    def res(j: Affine | None):
        return tuple(outer) + ((j,) if p.cols else ())

    dots = _dots(bld, p, dt, a_at, b_at, res, out)
    stmts = dots
    if p.cols:
        rows = _rows(bld, p, dt, a_at, b_at, res, out)
        by_k = _moves_by_one_along_k(p, b_at)
        stmts = rows if by_k is None else [If(by_k, dots, rows)]
    if use is not None:
        stmts = [If(Op("not_equal", "bool", (use, Const(0, "int64"))), stmts, [])]
    return stmts


def _moves_by_one_along_k(p: Product, b_at):
    """A bool expression: b's element moves by one element along k and not along j (the dots
    form then reads both operands contiguously), from the strides of the array b is read
    from (through views: `w.T`); None when b is not read from one array (a lazy value)."""
    probe = b_at(Affine.var("_k"), Affine.var("_j"))
    while isinstance(probe, Op) and probe.op == "cast":
        probe = probe.args[0]
    if type(probe) is not Load:
        return None
    size = Const(np.dtype(probe.dtype).itemsize, "int64")

    def step(var):
        total = None
        for d, a in enumerate(probe.index):
            c = a.coef(var)
            if c:
                term = Stride(probe.buf, d) if c == 1 else \
                    Op("multiply", "int64", (Stride(probe.buf, d), Const(c, "int64")))
                total = term if total is None else Op("add", "int64", (total, term))
        return Const(0, "int64") if total is None else total
    return Op("logical_and", "bool", (Op("equal", "bool", (step("_k"), size)),
                                      Op("not_equal", "bool", (step("_j"), size))))


def _operand(bld, x: Node, idx: tuple):
    """a's element: from its array where this kernel stored it for the current row (a
    normalised row feeding a product is stored once, not recomputed per column)."""
    if x in bld.in_group and bld.plan.need.get(x) and bld.plan.cat[x] == "pw":
        return Load(bld.buffer(x), idx, x.dtype.name)
    return bld.value(x, idx)


def _muladd(dt: str, acc, x, y):
    if np.dtype(dt).kind == "f":              # reassociable, one rounding (codegen ops.py)
        return Op("red_muladd", dt, (acc, x, y))
    return Op("add", dt, (acc, Op("multiply", dt, (x, y))))   # wraps as NumPy's integer loop


def _zero(dt: str):
    return Const(0.0, dt) if np.dtype(dt).kind == "f" else Const(0, dt)


def _dots(bld, p: Product, dt, a_at, b_at, res, out) -> list:
    """out[i, j] = sum_k a[i, k] b[k, j], one accumulator per j."""
    acc, kv = bld.fresh("dot"), bld.fresh("mk")
    k = Affine.var(kv)
    if not p.cols:
        body = [Update(acc, _muladd(dt, Var(acc, dt), a_at(k), b_at(k, None)))]
        return [Acc(acc, dt, _zero(dt)), Loop(kv, bld.size(p.k), body), Store(out, res(None), Var(acc, dt))]
    jv = bld.fresh("mj")
    j = Affine.var(jv)
    body = [Update(acc, _muladd(dt, Var(acc, dt), a_at(k), b_at(k, j)))]
    return [Loop(jv, bld.size(p.m), [Acc(acc, dt, _zero(dt)), Loop(kv, bld.size(p.k), body),
                                     Store(out, res(j), Var(acc, dt))])]


def _rows(bld, p: Product, dt, a_at, b_at, res, out) -> list:
    """out[i, :] = 0, then out[i, :] += a[i, k] * b[k, :] for each k, UNROLL_K k's at a time."""
    m = bld.size(p.m)
    jv = bld.fresh("mj")
    j = Affine.var(jv)
    here = Load(out, res(j), dt)
    stmts = [Loop(jv, m, [Store(out, res(j), _zero(dt))])]
    blocks = FloorDiv(sympy.sympify(p.k), UNROLL_K) if not isinstance(p.k, int) else p.k // UNROLL_K
    kb = bld.fresh("mkb")
    lets, value = [], here
    for c in range(UNROLL_K):
        name = bld.fresh("ak")
        lets.append(Let(name, a_at(Affine.var(kb, UNROLL_K) + Affine(const=c))))
        value = _muladd(dt, value, Var(name, dt), b_at(Affine.var(kb, UNROLL_K) + Affine(const=c), j))
    stmts.append(Loop(kb, bld.size(blocks), lets + [Loop(jv, m, [Store(out, res(j), value)])]))
    start = _scaled(bld, blocks, UNROLL_K)
    kr, name = bld.fresh("mkr"), bld.fresh("ak")
    k = start + Affine.var(kr)
    tail = [Let(name, a_at(k)), Loop(jv, m, [Store(out, res(j), _muladd(dt, here, Var(name, dt), b_at(k, j)))])]
    left = sympy.sympify(p.k) - UNROLL_K * sympy.sympify(blocks)
    stmts.append(Loop(kr, bld.size(left), tail))
    return stmts


def _scaled(bld, size, coef: int) -> Affine:
    """coef * size as an index offset (a constant, or a run-time argument times coef)."""
    size = sympy.sympify(size)
    if size.is_Integer:
        return Affine(const=coef * int(size))
    return Affine(syms=((bld.size_arg(size), coef),))


def product_work(node: Node):
    """Multiply-adds of product `node` (sympy), for the kernel's threading decision."""
    p = product_of(node)
    n = sympy.Mul(*map(sympy.sympify, p.batch)) * sympy.sympify(p.n)
    return n * sympy.sympify(p.k) * sympy.sympify(p.m)
