"""exp where its result rounds to zero: no scaling into underflow, NumPy's values and flags.

Scaling a normal value to a zero or a subnormal takes a microcode assist on x86 (~100+ cycles
per vector instruction): a causal mask of -1e10 in a softmax made every masked element ~6x
dearer than the others. `exp` now computes those lanes from 0.0 and selects +0 (llvm_math
exp_log.zero_below); the kernel's flag accumulator reports the underflow NumPy reports
(codegen/llvm_kernels/ops.py). Checked here: the math function raises no hardware underflow
for such inputs (it did), still does where the result is a subnormal, and compiled programs
give NumPy's values, signs, warnings and exceptions under every `under` error mode.
"""
from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.codegen.llvm_jit import compile_ir
from frametrace.codegen.llvm_math import math_function_ir, symbol_name
from frametrace.codegen.llvm_math.exp_log import EXP_ZERO_BELOW, EXP_ZERO_BELOW_F32

UNDERFLOW = 0x10                                     # MXCSR status bit


def _flags_kernel(ty: str):
    """`flags = k(x, out, n)`: out = exp(x), returning the MXCSR status bits the loop raised."""
    sym = symbol_name("exp", ty)
    ir = math_function_ir("exp", ty) + f"""
declare void @llvm.x86.sse.stmxcsr(ptr)
declare void @llvm.x86.sse.ldmxcsr(ptr)

define i32 @k(ptr noalias %x, ptr noalias %out, i64 %n) {{
entry:
  %m = alloca i32
  call void @llvm.x86.sse.stmxcsr(ptr %m)
  %m0 = load i32, ptr %m
  %clear = and i32 %m0, -64
  store i32 %clear, ptr %m
  call void @llvm.x86.sse.ldmxcsr(ptr %m)
  %nonempty = icmp sgt i64 %n, 0
  br i1 %nonempty, label %loop, label %exit
loop:
  %i = phi i64 [0, %entry], [%i.next, %loop]
  %px = getelementptr inbounds {ty}, ptr %x, i64 %i
  %po = getelementptr inbounds {ty}, ptr %out, i64 %i
  %v = load {ty}, ptr %px
  %r = call {ty} @{sym}({ty} %v)
  store {ty} %r, ptr %po
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  call void @llvm.x86.sse.stmxcsr(ptr %m)
  %m1 = load i32, ptr %m
  %bits = and i32 %m1, 63
  ret i32 %bits
}}
"""
    cm = compile_ir(ir, ["k"])
    fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(cm.address("k"))
    return cm, fn


@pytest.mark.parametrize("ty, dtype, below", [("double", np.float64, EXP_ZERO_BELOW),
                                               ("float", np.float32, EXP_ZERO_BELOW_F32)])
def test_zero_results_raise_no_hardware_underflow(ty, dtype, below):
    cm, fn = _flags_kernel(ty)
    zeros = np.array([-1e10, -1e30, below - 0.01, below * 2, -np.inf] * 7, dtype=dtype)
    out = np.empty_like(zeros)
    bits = fn(zeros.ctypes.data, out.ctypes.data, zeros.size)
    assert not bits & UNDERFLOW                      # no lane scaled into underflow
    assert np.array_equal(out, np.zeros_like(out)) and not np.signbit(out).any()
    subnormal = np.full(37, -740.0 if ty == "double" else -100.0, dtype=dtype)
    out = np.empty_like(subnormal)
    bits = fn(subnormal.ctypes.data, out.ctypes.data, subnormal.size)
    assert bits & UNDERFLOW                          # a subnormal result still scales (and rounds once)
    with np.errstate(under="ignore"):
        want = np.exp(subnormal)
    tiny = np.finfo(dtype).smallest_subnormal
    assert want[0] != 0 and np.all(np.abs(out - want) <= tiny)


def softmax_rows(scores, mask):
    e = np.exp(scores + mask)
    return e / np.sum(e, axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", ["ignore", "warn", "raise"])
def test_compiled_exp_near_zero_matches_numpy(dtype, mode):
    below = EXP_ZERO_BELOW if dtype == np.float64 else EXP_ZERO_BELOW_F32
    x = np.array([-1e10, below - 1e-3, below, below + 1e-3, below / 2, -1.0, 0.0, -0.0, np.nan, -np.inf, 3.0],
                 dtype=dtype)
    f = ft.compile(lambda v: np.exp(v) * 1.0)
    with np.errstate(under=mode), warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        try:
            got = f(x)
        except FloatingPointError as exc:
            got = exc
    with np.errstate(under=mode), warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        try:
            want = np.exp(x) * 1.0
        except FloatingPointError as exc:
            want = exc
    assert type(got) is type(want)
    assert [str(w.message) for w in got_w] == [str(w.message) for w in want_w]
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype
        below_mask = x < below
        assert np.array_equal(got[below_mask], want[below_mask]) and not np.signbit(got[below_mask]).any()
        np.testing.assert_array_max_ulp(got[~below_mask], want[~below_mask], maxulp=2)


def test_masked_softmax_rows_match_numpy():
    """A causal-mask softmax (the rows of attention scores): every masked element's exp is +0."""
    rng = np.random.default_rng(5)
    f = ft.compile(softmax_rows)
    for n in (1, 3, 8, 21):
        scores = rng.standard_normal((n, n))
        mask = (1 - np.tri(n)) * -1e10
        got, want = f(scores, mask), softmax_rows(scores, mask)
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
        assert np.array_equal(got == 0, want == 0)


def attention(q, k, v, mask):
    return softmax_rows(q @ k.T / 4.0, mask) @ v


def test_quiet_underflow_does_not_reach_the_flush(monkeypatch):
    """Under NumPy's default error state (underflow ignored) the flag of a masked softmax is
    taken without calling Reports.flush (whose argument is the wrapper's locals(), ~20-60 us
    for a decoder's graph) on every call; under `under="warn"` flush runs and NumPy's warning
    comes out. (Products keep the graph on the Python wrapper, as in a decoder.)"""
    from frametrace.backends.llvm.reports import Reports
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((3, 6, 16))
    mask = (1 - np.tri(6)) * -1e10
    f = ft.compile(attention)
    f(q, k, v, mask)
    calls = []
    flush = Reports.flush
    monkeypatch.setattr(Reports, "flush", lambda self, *a: calls.append(1) or flush(self, *a))
    np.testing.assert_allclose(f(q, k, v, mask), attention(q, k, v, mask), rtol=1e-12)
    assert calls == []
    with np.errstate(under="warn"), warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = f(q, k, v, mask)
    np.testing.assert_allclose(out, attention(q, k, v, mask), rtol=1e-12)
    assert calls and [str(w.message) for w in got] == ["underflow encountered in exp"]


@pytest.mark.parametrize("fn", [np.logaddexp, np.logaddexp2])
@pytest.mark.parametrize("mode", ["ignore", "warn", "raise"])
def test_logaddexp_reports_the_underflow_of_its_exp(fn, mode):
    """logaddexp's exp(-|a - b|) gives +0 far apart without scaling: NumPy's underflow still comes out."""
    a = np.array([0.0, 1.0, -np.inf, np.inf, 3.0, -2.0])
    b = np.array([-1000.0, -2000.0, 5.0, 1.0, 2.0, -2.0])
    f = ft.compile(lambda x, y: fn(x, y) * 1.0)
    results = []
    for run in (f, lambda x, y: fn(x, y) * 1.0):
        with np.errstate(under=mode), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                out = run(a, b)
            except FloatingPointError as exc:
                out = str(exc)
        results.append((out, [str(x.message) for x in w]))
    (got, got_w), (want, want_w) = results
    assert got_w == want_w
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-15)
