"""Kernels equal but for constant index offsets are one kernel (lower/lift_offsets.py): the
smallest offset of each buffer dimension is an argument, the others stay relative to it."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import kernel_cache
from frametrace.lower.lift_offsets import lift_offsets
from frametrace.lower.loop_ir import (Affine, Arg, Buffer, Const, Kernel, Load, Loop, Op, Store,
                                      walk_exprs)
from helpers import assert_same

rng = np.random.default_rng(4)


def steps_of(fn):
    run = fn._frametrace_cache.entries[0].info.namespace["___graph"]
    return [s for s in run.steps if hasattr(s, "kernel")]


def conv_rows(x, w):
    """A 1-d convolution written as an unrolled loop over output positions, as users do."""
    k = w.shape[0]
    out = np.empty(x.shape[0] - k + 1)
    for i in range(out.shape[0]):
        out[i] = (x[i:i + k] * w).sum()
    return out


@pytest.mark.parametrize("n", [8, 12])
def test_unrolled_windows_share_one_kernel(n):
    x, w = rng.standard_normal(n), rng.standard_normal(3)
    before = kernel_cache.stats["compiled"]
    f = ft.compile(conv_rows)
    assert_same(f(x, w), conv_rows(x, w))
    built = kernel_cache.stats["compiled"] - before
    assert len(steps_of(f)) >= n - 2 and built <= 3          # window at 0, the others, the store...
    assert_same(f(x, w), conv_rows(x, w))


def smooth_in_place(x):
    for i in range(1, 9):
        x[i] = x[i - 1] * 0.5 + x[i + 1] * 0.25
    return x


def test_element_writes_in_order():
    x = rng.standard_normal(12)
    f = ft.compile(smooth_in_place)
    assert_same(f(x.copy()), smooth_in_place(x.copy()))
    assert_same(f(x[::-1].copy()), smooth_in_place(x[::-1].copy()))


def shifted(x):
    return x[3:-2] + x[5:] * 2.0 - x[4:-1]


def test_offsets_stay_relative_to_the_smallest():
    x = rng.standard_normal(40)
    f = ft.compile(shifted)
    assert_same(f(x), shifted(x))
    (step,) = steps_of(f)
    k = step.kernel
    lifted = [s for s in k.slots if s.source == "3"]
    assert len(lifted) == 1                                   # one argument: offset 3, then +1, +2
    text = "\n".join(u.ir for u in f._frametrace_cache.entries[0].info.namespace["___graph"].module.units.values())
    assert "add i64" in text
    assert lift_offsets(k) is k or len(lift_offsets(k).slots) == len(k.slots)   # idempotent on a lifted kernel


def _kernel(load_buf, store_buf, offsets, store_offset):
    """for o0 in [0, 10): b{store_buf}[o0 + store_offset] = sum of b{load_buf}[o0 + offset]"""
    value = None
    for c in offsets:
        ld = Load(load_buf, (Affine.var("o0") + Affine(const=c),), "float64")
        value = ld if value is None else Op("add", "float64", (value, ld))
    st = Store(store_buf, (Affine.var("o0") + Affine(const=store_offset),), value)
    bufs = [Buffer("v0", "float64", 1, written=True), Buffer("v1", "float64", 1)]
    return Kernel("k0", [Loop("o0", Const(10, "int64"), [st])], bufs, [])


def test_read_and_written_buffer_keeps_its_offsets():
    k = _kernel(0, 0, (1, 3), 2)                              # x[i + 2] = x[i + 1] + x[i + 3]
    assert lift_offsets(k) is k


def test_smallest_offset_per_dimension_is_the_argument():
    k = lift_offsets(_kernel(1, 0, (4, 6, 5), 2))
    assert [s.source for s in k.slots] == ["2", "4"]          # the store's dim, the loads' dim
    (loop,) = k.body
    (st,) = loop.body
    assert st.index[0].const == 0 and st.index[0].syms == ((Arg(0, "int64"), 1),)
    loads = sorted((x for x in walk_exprs(st.value) if isinstance(x, Load)), key=lambda x: x.index[0].const)
    assert [ld.index[0].const for ld in loads] == [0, 1, 2]
    assert all(ld.index[0].syms == ((Arg(1, "int64"), 1),) for ld in loads)
    other = lift_offsets(_kernel(1, 0, (7, 9, 8), 5))         # the same window elsewhere
    assert other.body == k.body and [s.source for s in other.slots] == ["5", "7"]


def test_zero_offsets_are_not_arguments():
    k = _kernel(1, 0, (0, 2), 0)
    assert lift_offsets(k) is k
