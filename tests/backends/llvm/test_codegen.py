"""Machine code: vectorised hot loops, one kernel for many sizes, threads, the disk cache."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import jit, runtime
from frametrace.codegen.llvm_kernels import module_ir
from frametrace.lower.loop_ir import format_kernel
from tracing import A, Traced

rng = np.random.default_rng(3)


def packed_ops(asm: str, reg: str) -> int:
    return len(re.findall(rf"\bv\w+p[sd]\b[^\n]*%{reg}", asm))


def test_elementwise_hot_loop_is_vectorised():
    t = Traced(lambda a, b, c: np.maximum(a * b + c, 0.0), A(("n",)), A(("n",)), A(("n",)))
    asm = t.run.module.asm
    assert packed_ops(asm, "zmm") + packed_ops(asm, "ymm") >= 4, asm[:2000]


def test_float_row_reduction_is_vectorised():
    # in NumPy's pairwise order (codegen/llvm_kernels/pairwise.py): its 8 lanes one vector add
    t = Traced(lambda x: x.sum(axis=1), A(("n", "m"), "f4"))
    assert re.search(r"fadd <8 x float>", t.run.llvm_ir)
    asm = t.run.module.asm
    assert packed_ops(asm, "zmm") + packed_ops(asm, "ymm") >= 2


def test_static_sizes_are_constants_and_symbolic_sizes_arguments():
    t = Traced(lambda x: x * 2.0, A(("n", 8)))
    text = format_kernel(t.run.kernels[0])
    assert "8:int64" in text and "arg0" in text
    for n in (0, 1, 3, 1000):                  # the same machine code serves every size
        t.check(rng.standard_normal((n, 8)))


def test_threaded_chunks_match_single_thread(monkeypatch):
    monkeypatch.setattr(runtime, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(runtime, "MIN_CHUNK_WORK", 1)
    monkeypatch.setattr(runtime, "num_threads", lambda: 3)
    t = Traced(lambda x, y: (np.exp(x) * y, (x * y).sum(axis=1), np.sin(x[0])), A(("n", "m")), A(("n", "m")))
    for shape in ((7, 5), (2, 3), (1, 4), (100, 33)):
        t.check(rng.standard_normal(shape), rng.standard_normal(shape))


def test_num_threads_setting():
    with ft.config.patch(num_threads=3):
        assert runtime.num_threads() == 3
    with ft.config.patch(num_threads=0):
        assert runtime.num_threads() == (os.cpu_count() or 1)


def test_disk_cache_corrupt_file_is_rebuilt(tmp_path):
    with ft.config.patch(cache_dir=str(tmp_path)):
        t = Traced(lambda x: x + 3.0, A(("n",)))
        (path,) = t.run.module.paths.values()
        assert os.path.exists(path) and not t.run.module.cache_hit
        with open(path, "r+b") as f:           # flip a byte of the object code
            f.seek(-5, 2)
            f.write(b"\xff")
        ft.reset()                             # a fresh process's view: the kernel is not in memory
        with pytest.warns(UserWarning, match="corrupt"):
            t2 = Traced(lambda x: x + 3.0, A(("n",)))
        assert not t2.run.module.cache_hit
        t2.check(np.arange(5.0))
        ft.reset()
        t3 = Traced(lambda x: x + 3.0, A(("n",)))
        assert t3.run.module.cache_hit and t3.run.module.how == {"k0": "disk"}
        t4 = Traced(lambda y: y + 3.0, A(("n",)))   # the same kernel, already in the process
        assert t4.run.module.how == {"k0": "shared"} and t4.run.module.functions["k0"] is t3.run.module.functions["k0"]


def test_disk_cache_hit_in_a_new_process(tmp_path):
    script = textwrap.dedent("""
        import sys, numpy as np
        sys.path.insert(0, %r)
        import frametrace as ft
        from tracing import Traced, A
        with ft.config.patch(cache_dir=%r):
            t = Traced(lambda x, y: np.exp(x) * y - x.sum(), A(("n", 3)), A(("n", 3)))
            x, y = np.arange(12.0).reshape(4, 3), np.ones((4, 3))
            t.check(x, y)
            print("HIT" if t.run.module.cache_hit else "MISS")
    """) % (os.path.dirname(__file__), str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-3000:]
    assert runs[0].stdout.split()[-1] == "MISS"
    assert runs[1].stdout.split()[-1] == "HIT"


def test_cache_key_covers_ir_and_host(monkeypatch):
    assert jit.cache_key("a") != jit.cache_key("b")
    here = jit.cache_key("a")
    monkeypatch.setattr(jit, "host_cpu", lambda: ("other-cpu", "+sse2"))
    assert jit.cache_key("a") != here                     # an object built for another CPU is not ours
    ir = module_ir([])
    assert "ptrtoint" not in ir and "inttoptr" not in ir   # nothing process-specific baked in


SOFTMAX_LOOP_IR = """\
kernel k0(b0: float64[2d] = in0, b1: float64[2d] out = v4); arg0: int64 = s1, arg1: int64 = s0:
  for o0 in [0:int64, arg1) split:
    acc max1: float64 = -inf:float64
    acc nan2: bool = False:bool
    for i0 in [0:int64, arg0):
      max1 := red_max_nonan(max1, b0[o0, i0]):float64
      nan2 := red_or(nan2, isnan(b0[o0, i0]):bool):bool
    let m3 = max1
    acc zneg4: bool = False:bool
    acc zpos5: bool = False:bool
    for i0 in [0:int64, where(where(logical_not(nan2):bool, logical_not(m3):bool, False:bool):bool, arg0, 0:int64):int64):
      zneg4 := red_or(zneg4, logical_and(logical_not(b0[o0, i0]):bool, signbit(b0[o0, i0]):bool):bool):bool
      zpos5 := red_or(zpos5, logical_and(logical_not(b0[o0, i0]):bool, logical_not(signbit(b0[o0, i0]):bool):bool):bool):bool
    let r6 = where(nan2, nan:float64, fix_zero_sign(m3, zneg4, zpos5):float64):float64
    acc sum7: float64 = 0.0:float64
    for i0 in [0:int64, arg0):
      sum7 := red_add(sum7, exp(subtract(b0[o0, i0], r6):float64):float64):float64
      b1[o0, i0] = exp(subtract(b0[o0, i0], r6):float64):float64
    let r8 = sum7
    for i0 in [0:int64, arg0):
      b1[o0, i0] = true_divide(b1[o0, i0], r8):float64"""  # noqa: E501


def test_softmax_loop_ir_golden():
    """One kernel, rows split across threads, three passes per row, exp computed once
    (the output row doubles as scratch), nothing else allocated."""
    t = Traced(lambda x: (lambda e: e / e.sum(axis=1, keepdims=True))(np.exp(x - x.max(axis=1, keepdims=True))),
               A(("n", "m")))
    assert t.run.loop_ir == SOFTMAX_LOOP_IR
