"""Code-shape rules of the kernel emitter (codegen/llvm_kernels/emit.py) against NumPy eager:
interleaved, tail-masked loops for vectorised math, outlined math in byte-strided loops, and
unoptimised (optnone) bodies for kernels with little static work. Sizes 0/1/large, float32/64,
int and bool operands, non-contiguous inputs."""
import re

import numpy as np
import pytest

from frametrace.codegen.llvm_kernels import emit
from tracing import A, Traced

rng = np.random.default_rng(11)


def chain(x):
    for _ in range(4):
        x = np.sin(x)
    return np.tanh(x) * 2.0 + np.exp(-x)


def test_math_loops_are_interleaved_and_tail_masked():
    t = Traced(chain, A(("n",)))
    ir = t.run.llvm_ir
    assert f'"llvm.loop.interleave.count", i32 {emit.INTERLEAVE}' in ir
    assert '"llvm.loop.vectorize.predicate.enable", i1 true' in ir
    assert "optnone" not in ir.split("define void @ftk")[0].split("@ftk.body")[-1]


def gelu32(x):
    return 0.5 * x * (1 + np.tanh(np.float32(0.79) * (x + np.float32(0.04) * x ** 3)))


@pytest.mark.parametrize("fn", [chain, gelu32])
def test_float32_math_loops_keep_a_vector_epilogue(fn):
    """Float32 math predicated over the whole loop ran 2.3-2.5x slower: interleaved, no masked tail."""
    t = Traced(fn, A(("n",), "f4"))
    ir = t.run.llvm_ir
    assert f'"llvm.loop.interleave.count", i32 {emit.INTERLEAVE}' in ir
    assert "predicate.enable" not in ir
    for n in (0, 1, 15, 17, 64, 1001):
        t.check((rng.standard_normal(n) * 3).astype(np.float32), rtol=1e-5)


def test_cheap_loops_keep_the_vectoriser_defaults():
    t = Traced(lambda a, b: np.maximum(a * b + 1.0, 0.0), A(("n",)), A(("n",)))
    assert "interleave.count" not in t.run.llvm_ir


def test_strided_copy_calls_outlined_math():
    t = Traced(chain, A(("n",)))
    ir = t.run.llvm_ir
    assert re.search(r"define internal double @ft_sin_f64\.call\(double %x0\) noinline", ir)
    body = ir.split("define internal void @ftk.body")[1].split("\n}\n")[0]
    fast, slow = body.split("\nslow", 1)
    assert "@ft_sin_f64(" in fast and "@ft_sin_f64.call(" in slow


@pytest.mark.parametrize("dtype", ["f8", "f4"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 33, 1000, 100_003])
def test_interleaved_math_matches_numpy(dtype, n):
    t = Traced(chain, A(("n",), dtype))
    x = (rng.standard_normal(n) * 3).astype(dtype)
    t.check(x, rtol=1e-5 if dtype == "f4" else 1e-12)


@pytest.mark.parametrize("n", [0, 1, 5, 64, 1001])
def test_non_contiguous_inputs_take_the_outlined_path(n):
    t = Traced(lambda x, y: np.sin(np.sin(x)) + np.exp(y), A(("n",)), A(("n",)))
    x, y = rng.standard_normal(2 * n)[::2], rng.standard_normal((n, 3))[:, 1]
    t.check(x, y)
    t.check(x[::-1], y)
    t.check(np.ascontiguousarray(x), np.ascontiguousarray(y))


def test_math_on_rows_of_a_transposed_matrix():
    t = Traced(lambda x: np.exp(np.sin(x)).sum(axis=1), A(("n", "m")))
    for shape in ((0, 3), (1, 1), (5, 7), (64, 130)):
        x = rng.standard_normal(shape[::-1]).T
        t.check(x)
        t.check(np.ascontiguousarray(x))


def test_small_static_kernels_compile_unoptimised():
    t = Traced(chain, A((3,)))
    assert re.search(r"define internal void @ftk\.body\([^)]*\) noinline optnone", t.run.llvm_ir)
    assert "interleave.count" not in t.run.llvm_ir
    for x in (rng.standard_normal(3), rng.standard_normal(6)[::2], np.array([np.inf, np.nan, 1e300])):
        t.check(x)


def test_large_static_kernels_are_optimised():
    t = Traced(chain, A((4096,)))
    assert "optnone" not in t.run.llvm_ir.split("define void @ftk")[0].split("@ftk.body")[-1].split("\n")[0]
    t.check(rng.standard_normal(4096))


@pytest.mark.parametrize("shape", [(2,), (4, 4), (1, 3), (0, 5)])
@pytest.mark.parametrize("dtype", ["f8", "f4", "i8", "i4", "u1", "?"])
def test_tiny_static_mixed_dtypes(shape, dtype):
    def fn(x, y):
        z = x + y * 2
        return np.where(x > y, z, x), np.maximum(x, y), (x * y).sum(axis=-1)
    t = Traced(fn, A(shape, dtype), A(shape[-1:], dtype))
    if dtype == "?":
        x, y = rng.random(shape) > 0.5, rng.random(shape[-1:]) > 0.5
    else:
        x, y = (rng.standard_normal(shape) * 10).astype(dtype), (rng.standard_normal(shape[-1:]) * 10).astype(dtype)
    t.check(x, y)


def test_tiny_kernel_huge_arguments_take_the_slow_path():
    t = Traced(lambda x: np.sin(x) + np.cos(x), A((4,)))
    t.check(np.array([1e22, -3e15, np.inf, 0.5]))


def test_interleaved_math_huge_arguments_take_the_slow_path():
    t = Traced(lambda x: np.sin(np.cos(x)), A(("n",)))
    x = rng.standard_normal(1000) * 1e3
    x[::37] = 1e20
    x[5] = np.nan
    t.check(x)
