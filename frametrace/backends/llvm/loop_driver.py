"""The native driver of array-bodied loops: one LLVM function that runs a loop's iterations and
calls the body's kernels directly (array_loops.py builds its table).

    run(table)            # one call runs every iteration; no Python between kernel calls

The driver is one function for every loop, steered by a table of int64 words that the
wrapper fills per call (all addresses and sizes are run-time values, so the machine code is
cached on disk like any kernel module):

    table[0]  iteration to stop before              table[1]  number of ops per iteration
    table[2]  address of a bool the body writes (a `while` loop's condition), or 0
    table[3]  out: the iteration reached           table[4]  the first iteration j to run
    table[5]  out: 1 when an iteration was abandoned (a CHECKED op failed), else 0
    then per op, in run order:
      CALL  0, kernel, hi, args, npatch, (offset, v0, v1, b) * npatch
            before the call, word `offset` (bytes) of the kernel's argument block `args` gets
            (v1 if j is odd else v0) + b * j: the double-buffered arrays of carried values (their
            data or object pointers alternate) and slots affine in the loop index; a negative
            offset (load_patch) gets the 8 bytes AT address (v1 if j is odd else v0): a carried
            NumPy scalar, read from its double-buffered 0-d array
      COPY  1, nbytes, dst0, dst1, src0, src1
            memcpy(j odd ? dst1 : dst0, j odd ? src1 : src0, nbytes): the `<var>_before` copy an
            in-place update reads (NumPy evaluates the source before writing)
      INT   2, opcode, dst0, dst1, a0, a1, b0, b1
            *dst = *a <op> *b on int64 words (the same parity choice): a Python int counter and
            its comparisons (`it += 1`, `it < 100`); SCALAR_OPS names the opcodes
      CHECKED  3, opcode, dst0, dst1, a0, a1, b0, b1
            the same for CHECKED_OPS with Python's int semantics (// and % round toward minus
            infinity): when the result does not fit an int64 or the divisor is 0, the driver
            abandons iteration j there (table[3] = j, table[5] = 1) and the caller runs the rest
            with Python (which raises ZeroDivisionError, or computes the big int); array_loops.py
            puts checked ops before any effect on memory the next iteration does not rewrite
      SELECT   4, dst0, dst1, c0, c1, a0, a1, b0, b1
            *dst = (the byte at c) ? *a : *b on 8-byte words (a Python int or float, by its bits):
            `1.0 if s % 2 == 0 else -1.0`; the condition is a bool byte or a 0/1 int64 word
      FLOAT    6, opcode, dst0, dst1, a0, a1, b0, b1
            Python float arithmetic and comparisons (FLOAT_OPS) on IEEE doubles held in 8-byte
            words (comparisons give a 0/1 int64 word); `x / 0.0` abandons the iteration as a
            failed CHECKED op does (Python raises ZeroDivisionError). `x ** y` calls the C
            library's pow, as Python's float power does, for finite operands only; a zero base
            with a negative exponent (ZeroDivisionError), a negative base with a fractional one
            (Python's complex result), a result past the double range (OverflowError) or
            subnormal (the C library may report a range error there), and any inf or NaN
            operand abandon the iteration: Python computes it. The opcode's bits
            FLOAT_A_INT / FLOAT_B_INT mark an operand that is a Python int's int64 word: it is
            converted as Python converts an int in int-float arithmetic (correctly rounded)
      STORE    5, nbytes, dst, dst_step, src0, src1
            memcpy(dst + dst_step * j, src, nbytes): `pos[i] = value`, an element of a captured
            array at a position affine in the loop index (array_loops.py checks both ends)

Table.run calls the driver for CHUNK iterations at a time, so a long loop still sees Ctrl-C
(Python checks for signals between the calls). Kernels are called as the wrapper calls a small
kernel: `kernel(0, hi, args)` on this thread. Their floating-point flags reach the
process-wide word as usual (the outer wrapper reads it).
"""
from __future__ import annotations

import ctypes

import numpy as np

from . import jit
from .loop_driver_ir import (CALL, CHECKED, CHECKED_OPS, COPY, FLOAT, FLOAT_A_INT, FLOAT_B_INT, FLOAT_OPS,
                             INT, IR, NAME, SCALAR_OPS, SELECT, STORE)

CHUNK = 1 << 16                 # iterations per driver call (even: the parity of j carries over)

_DRIVER_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
_module = _fn = None


def driver():
    """The driver's ctypes function (compiled once per process; the object is cached on disk).
    ctypes releases the GIL during the call, as for any kernel."""
    global _module, _fn
    if _fn is None:
        _module = jit.LoadedModule(IR, [NAME])
        _fn = _DRIVER_TYPE(_module.address(NAME))
    return _fn


def load_patch(offset: int) -> int:
    """The patch offset that loads the slot at byte `offset` from the patch's address."""
    return -1 - offset


class Table:
    """A driver table under construction (see the module doc)."""

    def __init__(self):
        self.words: list = []
        self.nops = 0

    def call(self, kernel_address: int, hi: int, args_address: int, patches):
        self.words += [CALL, kernel_address, hi, args_address, len(patches)]
        for p in patches:
            self.words += list(p)
        self.nops += 1

    def copy(self, nbytes: int, dst: tuple, src: tuple):
        self.words += [COPY, nbytes, dst[0], dst[1], src[0], src[1]]
        self.nops += 1

    def int_op(self, op: str, dst: tuple, a: tuple, b: tuple):
        self.words += [INT, SCALAR_OPS.index(op), dst[0], dst[1], a[0], a[1], b[0], b[1]]
        self.nops += 1

    def checked_op(self, op: str, dst: tuple, a: tuple, b: tuple):
        self.words += [CHECKED, CHECKED_OPS.index(op), dst[0], dst[1], a[0], a[1], b[0], b[1]]
        self.nops += 1

    def float_op(self, op: str, dst: tuple, a: tuple, b: tuple, a_int=False, b_int=False):
        opcode = FLOAT_OPS.index(op) | (FLOAT_A_INT if a_int else 0) | (FLOAT_B_INT if b_int else 0)
        self.words += [FLOAT, opcode, dst[0], dst[1], a[0], a[1], b[0], b[1]]
        self.nops += 1

    def select(self, dst: tuple, cond: tuple, a: tuple, b: tuple):
        self.words += [SELECT, dst[0], dst[1], cond[0], cond[1], a[0], a[1], b[0], b[1]]
        self.nops += 1

    def store(self, nbytes: int, dst: int, dst_step: int, src: tuple):
        self.words += [STORE, nbytes, dst, dst_step, src[0], src[1]]
        self.nops += 1

    def run(self, iterations: int, go_address: int = 0, check=None) -> int:
        """Run up to `iterations` iterations; the number run (a `while` stops when the bool at
        `go_address` is False after an iteration; any loop stops between chunks when `check()`
        is False; `self.abandoned`: a CHECKED op stopped it in the middle of the next one)."""
        table = np.array([0, self.nops, go_address, 0, 0, 0] + self.words, dtype=np.int64)
        self.abandoned = False
        run, address, j = driver(), table.ctypes.data, 0
        while j < iterations:
            if check is not None and not check():
                break
            end = min(j + CHUNK, iterations)
            table[0], table[4] = end, j
            run(0, 1, address)
            j = int(table[3])
            if table[5]:
                self.abandoned = True
                break
            if j < end or (go_address and not ctypes.c_bool.from_address(go_address).value):
                break                     # the `while` condition was False
        return j


__all__ = ["Table", "driver", "load_patch", "CALL", "COPY", "INT", "CHECKED", "SELECT", "STORE", "FLOAT",
           "SCALAR_OPS", "CHECKED_OPS", "FLOAT_OPS", "FLOAT_A_INT", "FLOAT_B_INT"]
