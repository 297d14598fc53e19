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

CALL, COPY, INT, CHECKED, SELECT, STORE, FLOAT = 0, 1, 2, 3, 4, 5, 6
SCALAR_OPS = ("add", "subtract", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
              "logical_and", "logical_or")
CHECKED_OPS = ("multiply", "floor_divide", "remainder", "add", "subtract")
FLOAT_OPS = ("add", "subtract", "multiply", "true_divide", "less", "less_equal", "greater", "greater_equal",
             "equal", "not_equal", "power")
FLOAT_A_INT, FLOAT_B_INT = 16, 32  # FLOAT opcode bits: that operand is a Python int's int64 word
HEADER = 6
CHUNK = 1 << 16                 # iterations per driver call (even: the parity of j carries over)
NAME = "frametrace_array_loop"

IR = f"""
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare {{i64, i1}} @llvm.smul.with.overflow.i64(i64, i64)
declare {{i64, i1}} @llvm.sadd.with.overflow.i64(i64, i64)
declare {{i64, i1}} @llvm.ssub.with.overflow.i64(i64, i64)
declare double @llvm.fabs.f64(double)
declare double @llvm.floor.f64(double)
declare double @pow(double, double)

define void @{NAME}(i64 %lo, i64 %hi, ptr %t) {{
entry:
  %n = load i64, ptr %t
  %p1 = getelementptr i64, ptr %t, i64 1
  %nops = load i64, ptr %p1
  %p2 = getelementptr i64, ptr %t, i64 2
  %go = load i64, ptr %p2
  %goptr = inttoptr i64 %go to ptr
  %hasgo = icmp ne i64 %go, 0
  %p3 = getelementptr i64, ptr %t, i64 3
  %p4 = getelementptr i64, ptr %t, i64 4
  %j0 = load i64, ptr %p4
  %p5 = getelementptr i64, ptr %t, i64 5
  %ops = getelementptr i64, ptr %t, i64 {HEADER}
  br label %iter
iter:
  %j = phi i64 [%j0, %entry], [%j1, %next]
  %more = icmp slt i64 %j, %n
  br i1 %more, label %start, label %done
start:
  %odd = trunc i64 %j to i1
  br label %oploop
oploop:
  %o = phi i64 [0, %start], [%o1, %opnext]
  %w = phi ptr [%ops, %start], [%wnext, %opnext]
  %moreops = icmp slt i64 %o, %nops
  br i1 %moreops, label %op, label %iterend
op:
  %kind = load i64, ptr %w
  %iscall = icmp eq i64 %kind, {CALL}
  br i1 %iscall, label %call, label %notcall
notcall:
  %iscopy = icmp eq i64 %kind, {COPY}
  br i1 %iscopy, label %copy, label %notcopy
notcopy:
  %isint = icmp eq i64 %kind, {INT}
  br i1 %isint, label %int, label %notint
notint:
  %issel = icmp eq i64 %kind, {SELECT}
  br i1 %issel, label %sel, label %notsel
notsel:
  %isstore = icmp eq i64 %kind, {STORE}
  br i1 %isstore, label %store, label %notstore
notstore:
  %isfloat = icmp eq i64 %kind, {FLOAT}
  br i1 %isfloat, label %flt, label %chk
flt:
  %f1p = getelementptr i64, ptr %w, i64 1
  %fopw = load i64, ptr %f1p
  %fopc = and i64 %fopw, 15
  %faflag = and i64 %fopw, {FLOAT_A_INT}
  %faint = icmp ne i64 %faflag, 0
  %fbflag = and i64 %fopw, {FLOAT_B_INT}
  %fbint = icmp ne i64 %fbflag, 0
  %f2p = getelementptr i64, ptr %w, i64 2
  %fd0 = load i64, ptr %f2p
  %f3p = getelementptr i64, ptr %w, i64 3
  %fd1 = load i64, ptr %f3p
  %f4p = getelementptr i64, ptr %w, i64 4
  %fa0 = load i64, ptr %f4p
  %f5p = getelementptr i64, ptr %w, i64 5
  %fa1 = load i64, ptr %f5p
  %f6p = getelementptr i64, ptr %w, i64 6
  %fb0 = load i64, ptr %f6p
  %f7p = getelementptr i64, ptr %w, i64 7
  %fb1 = load i64, ptr %f7p
  %fdv = select i1 %odd, i64 %fd1, i64 %fd0
  %fav = select i1 %odd, i64 %fa1, i64 %fa0
  %fbv = select i1 %odd, i64 %fb1, i64 %fb0
  %fdp = inttoptr i64 %fdv to ptr
  %fap = inttoptr i64 %fav to ptr
  %fbp = inttoptr i64 %fbv to ptr
  %fxd = load double, ptr %fap
  %fyd = load double, ptr %fbp
  %fxw = load i64, ptr %fap
  %fyw = load i64, ptr %fbp
  %fxc = sitofp i64 %fxw to double
  %fyc = sitofp i64 %fyw to double
  %fx = select i1 %faint, double %fxc, double %fxd
  %fy = select i1 %fbint, double %fyc, double %fyd
  %fisdiv = icmp eq i64 %fopc, 3
  %fyz = fcmp oeq double %fy, 0.0
  %fbad = and i1 %fisdiv, %fyz
  %fispow = icmp eq i64 %fopc, 10
  br i1 %fispow, label %fpow, label %fnotpow
fnotpow:
  br i1 %fbad, label %fail, label %fcalc
fpow:
  %qax = call double @llvm.fabs.f64(double %fx)
  %qay = call double @llvm.fabs.f64(double %fy)
  %qxf = fcmp olt double %qax, 0x7FF0000000000000
  %qyf = fcmp olt double %qay, 0x7FF0000000000000
  %qfin = and i1 %qxf, %qyf
  %qxz = fcmp oeq double %fx, 0.0
  %qyn = fcmp olt double %fy, 0.0
  %qzdiv = and i1 %qxz, %qyn
  %qxn = fcmp olt double %fx, 0.0
  %qyfl = call double @llvm.floor.f64(double %fy)
  %qyni = fcmp une double %qyfl, %fy
  %qcplx = and i1 %qxn, %qyni
  %qbad = or i1 %qzdiv, %qcplx
  %qgood = xor i1 %qbad, true
  %qok = and i1 %qfin, %qgood
  br i1 %qok, label %fpowc, label %fail
fpowc:
  %qr = call double @pow(double %fx, double %fy)
  %qar = call double @llvm.fabs.f64(double %qr)
  %qrf = fcmp olt double %qar, 0x7FF0000000000000
  %qrn = fcmp oge double %qar, 0x0010000000000000
  %qrz = fcmp oeq double %qr, 0.0
  %qrnz = or i1 %qrn, %qrz
  %qrok = and i1 %qrf, %qrnz
  br i1 %qrok, label %fpows, label %fail
fpows:
  %qw = bitcast double %qr to i64
  store i64 %qw, ptr %fdp
  %qnext = getelementptr i64, ptr %w, i64 8
  br label %opnext
fcalc:
  %fr0 = fadd double %fx, %fy
  %fr1 = fsub double %fx, %fy
  %fr2 = fmul double %fx, %fy
  %fr3 = fdiv double %fx, %fy
  %fw0 = bitcast double %fr0 to i64
  %fw1 = bitcast double %fr1 to i64
  %fw2 = bitcast double %fr2 to i64
  %fw3 = bitcast double %fr3 to i64
  %fc4 = fcmp olt double %fx, %fy
  %fc5 = fcmp ole double %fx, %fy
  %fc6 = fcmp ogt double %fx, %fy
  %fc7 = fcmp oge double %fx, %fy
  %fc8 = fcmp oeq double %fx, %fy
  %fc9 = fcmp une double %fx, %fy
  %fw4 = zext i1 %fc4 to i64
  %fw5 = zext i1 %fc5 to i64
  %fw6 = zext i1 %fc6 to i64
  %fw7 = zext i1 %fc7 to i64
  %fw8 = zext i1 %fc8 to i64
  %fw9 = zext i1 %fc9 to i64
  %fis1 = icmp eq i64 %fopc, 1
  %fis2 = icmp eq i64 %fopc, 2
  %fis4 = icmp eq i64 %fopc, 4
  %fis5 = icmp eq i64 %fopc, 5
  %fis6 = icmp eq i64 %fopc, 6
  %fis7 = icmp eq i64 %fopc, 7
  %fis8 = icmp eq i64 %fopc, 8
  %fis9 = icmp eq i64 %fopc, 9
  %fs9 = select i1 %fis9, i64 %fw9, i64 %fw0
  %fs8 = select i1 %fis8, i64 %fw8, i64 %fs9
  %fs7 = select i1 %fis7, i64 %fw7, i64 %fs8
  %fs6 = select i1 %fis6, i64 %fw6, i64 %fs7
  %fs5 = select i1 %fis5, i64 %fw5, i64 %fs6
  %fs4 = select i1 %fis4, i64 %fw4, i64 %fs5
  %fs3 = select i1 %fisdiv, i64 %fw3, i64 %fs4
  %fs2 = select i1 %fis2, i64 %fw2, i64 %fs3
  %fs1 = select i1 %fis1, i64 %fw1, i64 %fs2
  store i64 %fs1, ptr %fdp
  %fnext = getelementptr i64, ptr %w, i64 8
  br label %opnext
sel:
  %e1p = getelementptr i64, ptr %w, i64 1
  %ed0 = load i64, ptr %e1p
  %e2p = getelementptr i64, ptr %w, i64 2
  %ed1 = load i64, ptr %e2p
  %e3p = getelementptr i64, ptr %w, i64 3
  %ec0 = load i64, ptr %e3p
  %e4p = getelementptr i64, ptr %w, i64 4
  %ec1 = load i64, ptr %e4p
  %e5p = getelementptr i64, ptr %w, i64 5
  %ea0 = load i64, ptr %e5p
  %e6p = getelementptr i64, ptr %w, i64 6
  %ea1 = load i64, ptr %e6p
  %e7p = getelementptr i64, ptr %w, i64 7
  %eb0 = load i64, ptr %e7p
  %e8p = getelementptr i64, ptr %w, i64 8
  %eb1 = load i64, ptr %e8p
  %edv = select i1 %odd, i64 %ed1, i64 %ed0
  %ecv = select i1 %odd, i64 %ec1, i64 %ec0
  %eav = select i1 %odd, i64 %ea1, i64 %ea0
  %ebv = select i1 %odd, i64 %eb1, i64 %eb0
  %edp = inttoptr i64 %edv to ptr
  %ecp = inttoptr i64 %ecv to ptr
  %eap = inttoptr i64 %eav to ptr
  %ebp = inttoptr i64 %ebv to ptr
  %ec = load i8, ptr %ecp
  %ecb = icmp ne i8 %ec, 0
  %esp = select i1 %ecb, ptr %eap, ptr %ebp
  %ev = load i64, ptr %esp
  store i64 %ev, ptr %edp
  %enext = getelementptr i64, ptr %w, i64 9
  br label %opnext
store:
  %t1p = getelementptr i64, ptr %w, i64 1
  %tn = load i64, ptr %t1p
  %t2p = getelementptr i64, ptr %w, i64 2
  %tbase = load i64, ptr %t2p
  %t3p = getelementptr i64, ptr %w, i64 3
  %tstep = load i64, ptr %t3p
  %t4p = getelementptr i64, ptr %w, i64 4
  %ts0 = load i64, ptr %t4p
  %t5p = getelementptr i64, ptr %w, i64 5
  %ts1 = load i64, ptr %t5p
  %toff = mul i64 %tstep, %j
  %tdv = add i64 %tbase, %toff
  %tsv = select i1 %odd, i64 %ts1, i64 %ts0
  %tdp = inttoptr i64 %tdv to ptr
  %tsp = inttoptr i64 %tsv to ptr
  call void @llvm.memcpy.p0.p0.i64(ptr %tdp, ptr %tsp, i64 %tn, i1 false)
  %tnext = getelementptr i64, ptr %w, i64 6
  br label %opnext
chk:
  %k1p = getelementptr i64, ptr %w, i64 1
  %kopc = load i64, ptr %k1p
  %k2p = getelementptr i64, ptr %w, i64 2
  %kd0 = load i64, ptr %k2p
  %k3p = getelementptr i64, ptr %w, i64 3
  %kd1 = load i64, ptr %k3p
  %k4p = getelementptr i64, ptr %w, i64 4
  %ka0 = load i64, ptr %k4p
  %k5p = getelementptr i64, ptr %w, i64 5
  %ka1 = load i64, ptr %k5p
  %k6p = getelementptr i64, ptr %w, i64 6
  %kb0 = load i64, ptr %k6p
  %k7p = getelementptr i64, ptr %w, i64 7
  %kb1 = load i64, ptr %k7p
  %kdv = select i1 %odd, i64 %kd1, i64 %kd0
  %kav = select i1 %odd, i64 %ka1, i64 %ka0
  %kbv = select i1 %odd, i64 %kb1, i64 %kb0
  %kdp = inttoptr i64 %kdv to ptr
  %kap = inttoptr i64 %kav to ptr
  %kbp = inttoptr i64 %kbv to ptr
  %kx = load i64, ptr %kap
  %ky = load i64, ptr %kbp
  %kism = icmp eq i64 %kopc, 0
  br i1 %kism, label %kmul, label %knotmul
kmul:
  %kmr = call {{i64, i1}} @llvm.smul.with.overflow.i64(i64 %kx, i64 %ky)
  %kmv = extractvalue {{i64, i1}} %kmr, 0
  %kmo = extractvalue {{i64, i1}} %kmr, 1
  br i1 %kmo, label %fail, label %kstore
knotmul:
  %kisadd = icmp eq i64 %kopc, 3
  br i1 %kisadd, label %kadd, label %knotadd
kadd:
  %kar = call {{i64, i1}} @llvm.sadd.with.overflow.i64(i64 %kx, i64 %ky)
  %kav2 = extractvalue {{i64, i1}} %kar, 0
  %kao = extractvalue {{i64, i1}} %kar, 1
  br i1 %kao, label %fail, label %kstore
knotadd:
  %kissub = icmp eq i64 %kopc, 4
  br i1 %kissub, label %ksub, label %kdivchk
ksub:
  %ksr = call {{i64, i1}} @llvm.ssub.with.overflow.i64(i64 %kx, i64 %ky)
  %ksv = extractvalue {{i64, i1}} %ksr, 0
  %kso = extractvalue {{i64, i1}} %ksr, 1
  br i1 %kso, label %fail, label %kstore
kdivchk:
  %kyz = icmp eq i64 %ky, 0
  %kxmin = icmp eq i64 %kx, -9223372036854775808
  %kym1 = icmp eq i64 %ky, -1
  %kovf = and i1 %kxmin, %kym1
  %kbad = or i1 %kyz, %kovf
  br i1 %kbad, label %fail, label %kdiv
kdiv:
  %kq = sdiv i64 %kx, %ky
  %kr = srem i64 %kx, %ky
  %krnz = icmp ne i64 %kr, 0
  %kxr = xor i64 %kr, %ky
  %ksgn = icmp slt i64 %kxr, 0
  %kadj = and i1 %krnz, %ksgn
  %kq1 = sub i64 %kq, 1
  %kr1 = add i64 %kr, %ky
  %kqf = select i1 %kadj, i64 %kq1, i64 %kq
  %krf = select i1 %kadj, i64 %kr1, i64 %kr
  %kisfd = icmp eq i64 %kopc, 1
  %kdvv = select i1 %kisfd, i64 %kqf, i64 %krf
  br label %kstore
kstore:
  %kv = phi i64 [%kmv, %kmul], [%kav2, %kadd], [%ksv, %ksub], [%kdvv, %kdiv]
  store i64 %kv, ptr %kdp
  %knext = getelementptr i64, ptr %w, i64 8
  br label %opnext
fail:
  store i64 %j, ptr %p3
  store i64 1, ptr %p5
  ret void
int:
  %i1p = getelementptr i64, ptr %w, i64 1
  %opc = load i64, ptr %i1p
  %i2p = getelementptr i64, ptr %w, i64 2
  %id0 = load i64, ptr %i2p
  %i3p = getelementptr i64, ptr %w, i64 3
  %id1 = load i64, ptr %i3p
  %i4p = getelementptr i64, ptr %w, i64 4
  %ia0 = load i64, ptr %i4p
  %i5p = getelementptr i64, ptr %w, i64 5
  %ia1 = load i64, ptr %i5p
  %i6p = getelementptr i64, ptr %w, i64 6
  %ib0 = load i64, ptr %i6p
  %i7p = getelementptr i64, ptr %w, i64 7
  %ib1 = load i64, ptr %i7p
  %idv = select i1 %odd, i64 %id1, i64 %id0
  %iav = select i1 %odd, i64 %ia1, i64 %ia0
  %ibv = select i1 %odd, i64 %ib1, i64 %ib0
  %idp = inttoptr i64 %idv to ptr
  %iap = inttoptr i64 %iav to ptr
  %ibp = inttoptr i64 %ibv to ptr
  %x = load i64, ptr %iap
  %y = load i64, ptr %ibp
  %r0 = add i64 %x, %y
  %r1 = sub i64 %x, %y
  %qc2 = icmp slt i64 %x, %y
  %qc3 = icmp sle i64 %x, %y
  %qc4 = icmp sgt i64 %x, %y
  %qc5 = icmp sge i64 %x, %y
  %qc6 = icmp eq i64 %x, %y
  %qc7 = icmp ne i64 %x, %y
  %xb = icmp ne i64 %x, 0
  %yb = icmp ne i64 %y, 0
  %qc8 = and i1 %xb, %yb
  %qc9 = or i1 %xb, %yb
  %r2 = zext i1 %qc2 to i64
  %r3 = zext i1 %qc3 to i64
  %r4 = zext i1 %qc4 to i64
  %r5 = zext i1 %qc5 to i64
  %r6 = zext i1 %qc6 to i64
  %r7 = zext i1 %qc7 to i64
  %r8 = zext i1 %qc8 to i64
  %r9 = zext i1 %qc9 to i64
  %is1 = icmp eq i64 %opc, 1
  %is2 = icmp eq i64 %opc, 2
  %is3 = icmp eq i64 %opc, 3
  %is4 = icmp eq i64 %opc, 4
  %is5 = icmp eq i64 %opc, 5
  %is6 = icmp eq i64 %opc, 6
  %is7 = icmp eq i64 %opc, 7
  %is8 = icmp eq i64 %opc, 8
  %is9 = icmp eq i64 %opc, 9
  %sel9 = select i1 %is9, i64 %r9, i64 %r0
  %sel8 = select i1 %is8, i64 %r8, i64 %sel9
  %sel7 = select i1 %is7, i64 %r7, i64 %sel8
  %sel6 = select i1 %is6, i64 %r6, i64 %sel7
  %sel5 = select i1 %is5, i64 %r5, i64 %sel6
  %sel4 = select i1 %is4, i64 %r4, i64 %sel5
  %sel3 = select i1 %is3, i64 %r3, i64 %sel4
  %sel2 = select i1 %is2, i64 %r2, i64 %sel3
  %sel1 = select i1 %is1, i64 %r1, i64 %sel2
  store i64 %sel1, ptr %idp
  %inext = getelementptr i64, ptr %w, i64 8
  br label %opnext
call:
  %w1 = getelementptr i64, ptr %w, i64 1
  %fnv = load i64, ptr %w1
  %fn = inttoptr i64 %fnv to ptr
  %w2 = getelementptr i64, ptr %w, i64 2
  %khi = load i64, ptr %w2
  %w3 = getelementptr i64, ptr %w, i64 3
  %argsv = load i64, ptr %w3
  %args = inttoptr i64 %argsv to ptr
  %w4 = getelementptr i64, ptr %w, i64 4
  %np = load i64, ptr %w4
  %pw0 = getelementptr i64, ptr %w, i64 5
  br label %patch
patch:
  %q = phi i64 [0, %call], [%q1, %dostore]
  %pw = phi ptr [%pw0, %call], [%pwnext, %dostore]
  %morepatch = icmp slt i64 %q, %np
  br i1 %morepatch, label %patchbody, label %callit
patchbody:
  %off = load i64, ptr %pw
  %pv0p = getelementptr i64, ptr %pw, i64 1
  %pv0 = load i64, ptr %pv0p
  %pv1p = getelementptr i64, ptr %pw, i64 2
  %pv1 = load i64, ptr %pv1p
  %pbp = getelementptr i64, ptr %pw, i64 3
  %pb = load i64, ptr %pbp
  %base = select i1 %odd, i64 %pv1, i64 %pv0
  %bj = mul i64 %pb, %j
  %val0 = add i64 %base, %bj
  %isload = icmp slt i64 %off, 0
  br i1 %isload, label %doload, label %dostore
doload:
  %lp = inttoptr i64 %base to ptr
  %lv = load i64, ptr %lp
  br label %dostore
dostore:
  %val = phi i64 [%val0, %patchbody], [%lv, %doload]
  %loff = sub i64 -1, %off
  %realoff = select i1 %isload, i64 %loff, i64 %off
  %dst = getelementptr i8, ptr %args, i64 %realoff
  store i64 %val, ptr %dst
  %q1 = add i64 %q, 1
  %pwnext = getelementptr i64, ptr %pw, i64 4
  br label %patch
callit:
  call void %fn(i64 0, i64 %khi, ptr %args)
  br label %opnext
copy:
  %c1 = getelementptr i64, ptr %w, i64 1
  %nbytes = load i64, ptr %c1
  %c2 = getelementptr i64, ptr %w, i64 2
  %d0 = load i64, ptr %c2
  %c3 = getelementptr i64, ptr %w, i64 3
  %d1 = load i64, ptr %c3
  %c4 = getelementptr i64, ptr %w, i64 4
  %s0 = load i64, ptr %c4
  %c5 = getelementptr i64, ptr %w, i64 5
  %s1 = load i64, ptr %c5
  %dv = select i1 %odd, i64 %d1, i64 %d0
  %sv = select i1 %odd, i64 %s1, i64 %s0
  %dp = inttoptr i64 %dv to ptr
  %sp = inttoptr i64 %sv to ptr
  call void @llvm.memcpy.p0.p0.i64(ptr %dp, ptr %sp, i64 %nbytes, i1 false)
  %cnext = getelementptr i64, ptr %w, i64 6
  br label %opnext
opnext:
  %wnext = phi ptr [%pw, %callit], [%cnext, %copy], [%inext, %int], [%knext, %kstore], [%enext, %sel],
                  [%tnext, %store], [%fnext, %fcalc], [%qnext, %fpows]
  %o1 = add i64 %o, 1
  br label %oploop
iterend:
  %j1 = add i64 %j, 1
  br i1 %hasgo, label %checkgo, label %next
checkgo:
  %g = load i8, ptr %goptr
  %stop = icmp eq i8 %g, 0
  br i1 %stop, label %done, label %next
next:
  br label %iter
done:
  %ran = phi i64 [%j, %iter], [%j1, %checkgo]
  store i64 %ran, ptr %p3
  ret void
}}
"""

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
