"""Checked int64 ops: Python int arithmetic and data-dependent indices in native element loops.

A checked op computes what Python (or NumPy's indexing) computes whenever the result is an
int64 and the operation is defined; otherwise it *bails*: the emitter's `bail_if(cond)`
branches to the end of the kernel's loop, recording the iteration that did not run
(backends/llvm/loops.py then runs the rest of the loop on the generic path, where Python
ints grow and Python raises ZeroDivisionError / NumPy raises IndexError itself).

    checked_add / _subtract / _multiply (a, b)   llvm.s*.with.overflow.i64; bail on overflow
    checked_negative (a)                          0 - a; bail on -MIN
    checked_floor_divide / _remainder (a, b)      Python's floor semantics; bail on b == 0,
                                                  and MIN // -1 (MIN % -1 == 0 is exact)
    checked_index (i, n)                          i, or i + n if i < 0 (NumPy wraps once);
                                                  bail unless 0 <= result < n
    checked_range (v, lo, hi)                     v; bail unless lo <= v <= hi (a Python int
                                                  stored into a narrower integer array)
    checked_left_shift (a, s)                     a << s; bail on s < 0 (ValueError) and when
                                                  the result leaves int64
    checked_right_shift (a, s)                    a >> s (arithmetic; 0 or -1 once s >= 64);
                                                  bail on s < 0

Every rule is (emitter, operand dtype, *values) -> value, operands int64.
"""
from __future__ import annotations

from .ops import _i_divmod_values

INT64_MIN = -(1 << 63)


def _with_overflow(name):
    def rule(e, t, a, b):
        e.mod.decls.add(f"declare {{i64, i1}} @llvm.{name}.with.overflow.i64(i64, i64)")
        pair = e.emit(f"call {{i64, i1}} @llvm.{name}.with.overflow.i64(i64 {a}, i64 {b})", "{i64, i1}")
        e.bail_if(e.emit(f"extractvalue {{i64, i1}} {pair}, 1", "i1"))
        return e.emit(f"extractvalue {{i64, i1}} {pair}, 0", "i64")
    return rule


def _negative(e, t, a):
    e.bail_if(e.emit(f"icmp eq i64 {a}, {INT64_MIN}", "i1"))
    return e.emit(f"sub i64 0, {a}", "i64")


def _divmod(want):
    def rule(e, t, a, b):
        bad = e.emit(f"icmp eq i64 {b}, 0", "i1")
        if want == 0:                                    # MIN // -1 == 2 ** 63: not an int64
            wraps = e.emit(f"and i1 {e.emit(f'icmp eq i64 {b}, -1', 'i1')}, "
                           f"{e.emit(f'icmp eq i64 {a}, {INT64_MIN}', 'i1')}", "i1")
            bad = e.emit(f"or i1 {bad}, {wraps}", "i1")
        e.bail_if(bad)
        return _i_divmod_values(True, e, "int64", a, b)[want]
    return rule


def _index(e, t, i, n):
    neg = e.emit(f"icmp slt i64 {i}, 0", "i1")
    pos = e.emit(f"select i1 {neg}, i64 {e.emit(f'add i64 {i}, {n}', 'i64')}, i64 {i}", "i64")
    e.bail_if(e.emit(f"icmp uge i64 {pos}, {n}", "i1"))     # negative (below -n) or >= n
    return pos


def _range(e, t, v, lo, hi):
    out = e.emit(f"or i1 {e.emit(f'icmp slt i64 {v}, {lo}', 'i1')}, {e.emit(f'icmp sgt i64 {v}, {hi}', 'i1')}", "i1")
    e.bail_if(out)
    return v


def _left_shift(e, t, a, s):
    big = e.emit(f"icmp sgt i64 {s}, 63", "i1")
    s63 = e.emit(f"select i1 {big}, i64 63, i64 {s}", "i64")
    out = e.emit(f"shl i64 {a}, {s63}", "i64")
    lost = e.emit(f"icmp ne i64 {e.emit(f'ashr i64 {out}, {s63}', 'i64')}, {a}", "i1")
    nonzero_big = e.emit(f"and i1 {big}, {e.emit(f'icmp ne i64 {a}, 0', 'i1')}", "i1")
    neg = e.emit(f"icmp slt i64 {s}, 0", "i1")
    e.bail_if(e.emit(f"or i1 {neg}, {e.emit(f'or i1 {lost}, {nonzero_big}', 'i1')}", "i1"))
    return out


def _right_shift(e, t, a, s):
    e.bail_if(e.emit(f"icmp slt i64 {s}, 0", "i1"))
    s63 = e.emit(f"select i1 {e.emit(f'icmp sgt i64 {s}, 63', 'i1')}, i64 63, i64 {s}", "i64")
    return e.emit(f"ashr i64 {a}, {s63}", "i64")


CHECKED = {
    "checked_add": _with_overflow("sadd"),
    "checked_subtract": _with_overflow("ssub"),
    "checked_multiply": _with_overflow("smul"),
    "checked_negative": _negative,
    "checked_floor_divide": _divmod(0),
    "checked_remainder": _divmod(1),
    "checked_index": _index,
    "checked_range": _range,
    "checked_left_shift": _left_shift,
    "checked_right_shift": _right_shift,
}
