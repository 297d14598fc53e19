"""The llvm kernels' floating-point error flags (codegen/llvm_kernels/fpflags.py) against NumPy.

Flags forced by the code generator (log's pole and domain, integer `// 0`, MIN // -1) go
through an integer accumulator the optimiser cannot fold; the others through the status
register, underflow included, also where an operand is one of two constants the optimiser
could fold the operation over (a bool as a float, a where of constants: fpflags' opaque
zero). Compared with eager NumPy under raise / warn / ignore, with static and dynamic sizes,
on the vector path (large contiguous), the strided path and in threaded chunks, and with the
compile count.
"""
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import frametrace as ft
from frametrace.backends.llvm import runtime
from frametrace.codegen.llvm_kernels import fpflags
from frametrace.ir.registry import OPS, Loop
from tracing import A, Traced


def outcome(fn, args, mode):
    """(result or exception text, warning texts) of fn(*copies of args) under errstate(mode)."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with np.errstate(all=mode):
                result = fn(*args)
        except FloatingPointError as exc:
            result = f"FloatingPointError: {exc}"
    return result, sorted({f"{w.category.__name__}: {w.message}" for w in caught})


def assert_agree(f, fn, args, modes=("raise", "warn", "ignore")):
    for mode in modes:
        got, got_w = outcome(f, args, mode)
        want, want_w = outcome(fn, args, mode)
        assert got_w == want_w, (mode, got_w, want_w)
        if isinstance(want, str) or isinstance(got, str):
            assert got == want, mode
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-14)
            assert got.dtype == want.dtype


PROGRAMS = {
    "log": lambda x, y: np.log(x) * 2.0,
    "log2": lambda x, y: np.log2(x) + y,
    "log10": lambda x, y: np.log10(x),
    "log1p": lambda x, y: np.log1p(x - 1.0),
    "exp": lambda x, y: np.exp(x * 400.0),
    "int_floor_divide": lambda x, y: x.astype(np.int64) // y,
    "int32_remainder": lambda x, y: x.astype(np.int32) % y.astype(np.int32),
    "uint_fmod": lambda x, y: np.fmod(np.abs(x).astype(np.uint16), np.abs(y).astype(np.uint16)),
    "int_min_div": lambda x, y: (np.where(x == 0, np.iinfo(np.int64).min, x.astype(np.int64))
                                 // np.minimum(y, -1).astype(np.int64)),
    # values the optimiser knows to be one of two constants (a bool as a float, a where of
    # constants): the FP operations on them must not be folded into selects without their flags
    "bool_divisor": lambda x, y: 1.0 / (x != 0.0),
    "bool_minus_half": lambda x, y: np.sqrt((x > 0.0) - 0.5) + (y >= 0.0) * 1e308 * 10.0,
    "where_of_constants": lambda x, y: 1.0 / np.where(x > 0.5, 1.0, 0.0) + np.where(y > 0.0, 2.0, -0.0),
    "where_of_f32_constants": lambda x, y: np.float32(1e30) * np.where(x > 0.5, np.float32(1e30), np.float32(0)),
}
_VALUES = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -2.0, 1e-310, -3.0, 0.5])


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=8, deadline=None)
@given(vals=st.lists(_VALUES, min_size=1, max_size=4), pos=st.integers(0, 2000), big=st.booleans(),
       strided=st.booleans())
def test_forced_flags_match_numpy(name, dynamic, vals, pos, big, strided):
    fn = PROGRAMS[name]
    f = ft.compile(fn, dynamic=dynamic)
    n = 2003 if big else 7
    x = np.full(n * (2 if strided else 1), 3.0)
    y = np.full_like(x, 2.0)
    for i, v in enumerate(vals):                    # the special values somewhere in the array
        k = (pos + 97 * i) % n
        x[k * (2 if strided else 1)] = v
        y[k * (2 if strided else 1)] = v
    if strided:
        x, y = x[::2], y[::2]
    assert_agree(f, fn, [x, y])


@pytest.mark.parametrize("name", ["log", "int_floor_divide", "exp"])
def test_forced_flags_in_threaded_chunks(name, monkeypatch):
    # every chunk's accumulator reaches the word, whichever thread ran it
    monkeypatch.setattr(runtime, "PARALLEL_THRESHOLD", 0)
    monkeypatch.setattr(runtime, "MIN_CHUNK_WORK", 1)
    monkeypatch.setattr(runtime, "num_threads", lambda: 3)
    fn = PROGRAMS[name]
    f = ft.compile(fn, dynamic=True)
    for n, k in ((40, 39), (1000, 0), (999, 500), (64, 63)):
        x, y = np.full((n, 3), 3.0), np.full((n, 3), 2.0)
        x[k, 1] = 0.0 if name != "exp" else -3.0
        y[k, 2] = 0.0
        assert_agree(f, fn, [x, y])
        assert_agree(f, fn, [x[:max(k, 2)], y[:max(k, 2)]])
    assert ft.stats().unique_graphs == 1


def test_one_graph_serves_every_size_and_report():
    f = ft.compile(PROGRAMS["log"], dynamic=True)
    for n in (3, 17, 1000, 4099):
        for at in (0, n // 2, n - 1):
            x = np.linspace(1.0, 2.0, n)
            x[at] = 0.0
            assert_agree(f, PROGRAMS["log"], [x, x])
    assert ft.stats().unique_graphs == 1


@pytest.mark.parametrize("dtype", ["f4", "f8"])
def test_forced_flags_keep_the_hot_loop_vectorised(dtype, monkeypatch):
    """Our own vectorised log (NumPy's loop computes it by default: numpy_loops.py)."""
    from frametrace.codegen.llvm_kernels import numpy_loops
    monkeypatch.setattr(numpy_loops, "ENABLED", False)
    t = Traced(lambda x: np.log(x) * 2.0, A(("n",), dtype))
    assert "%flags.acc" in t.run.llvm_ir
    assert len(re.findall(r"\bv\w+p[sd]\b[^\n]*%[yz]mm", t.run.module.asm)) >= 8


def test_integer_division_flags_need_no_status_register():
    # only the accumulator: the body stays inlined, no MXCSR reads
    t = Traced(lambda x, y: x // y, A(("n",), "i8"), A(("n",), "i8"))
    assert "%flags.acc" in t.run.llvm_ir and "stmxcsr" not in t.run.llvm_ir
    assert re.search(r"define internal void @ftk\.body\(.*\) alwaysinline", t.run.llvm_ir)
    t = Traced(lambda x, y: x / y, A(("n",)), A(("n",)))
    assert "%flags.acc" not in t.run.llvm_ir and "stmxcsr" in t.run.llvm_ir


def test_flag_tables_come_from_the_registry():
    assert {"isnan", "copysign", "where", "floor"} <= fpflags._QUIET
    assert fpflags._INT_DIVIDE == {"floor_divide", "remainder", "fmod"}
    # float max / min run over NaN-masked elements (quiet); the zero-sign fix of their result
    # is what may ask NumPy to redo the call
    assert {"red_max_nonan", "red_min_nonan", "fix_zero_sign"} <= fpflags._QUIET
    assert "fix_zero_sign" in fpflags._ZERO_SIGN_OPS
    for name in fpflags._INT_DIVIDE:                 # an integer loop that can report
        assert isinstance(OPS[name].lowering, Loop) and "i" in OPS[name].lowering.kinds
    assert not {"add", "multiply", "log", "exp", "true_divide"} & fpflags._QUIET
    assert fpflags.KINDS == {1: "invalid", 4: "divide", 8: "over", 16: "under"}
    assert set(fpflags.KINDS.values()) == set(np.geterr())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multiply_by_a_half_underflows_like_numpy(dtype):
    fn = lambda x: x * 0.5           # noqa: E731  (a subnormal halved is inexact)
    f = ft.compile(fn, dynamic=True)
    tiny = np.finfo(dtype).smallest_subnormal
    for vals in ([1.0, 2.0], [1.0, tiny * 3], [tiny * 4, 0.0]):
        assert_agree(f, fn, [np.array(vals, dtype)])


@pytest.mark.parametrize("fn", [lambda x: 1.0 / (x != 0.0),                       # bool divisor
                                lambda x: 1.0 / np.where(x > 0.5, 1.0, 0.0),
                                lambda x: np.sqrt(np.float32(0.5) - (x != 0.0).astype(np.float32))],
                         ids=["bool", "where", "bool_f32"])
def test_operands_of_two_constants_keep_their_flags_at_every_position(fn):
    # vector body and scalar tail alike: 1.0 / select(c, 1.0, 0.0) was folded into
    # select(c, 1.0, inf) in the tail once the size was a run-time value (no divide by zero)
    f = ft.compile(fn, dynamic=True)
    for n in range(1, 12):
        for at in {0, n // 2, n - 1}:
            x = np.ones(n)
            x[at] = 0.0
            assert_agree(f, fn, [x])
    assert ft.stats().unique_graphs == 2          # size 1 and every other size
