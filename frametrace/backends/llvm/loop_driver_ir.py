"""The LLVM IR of the array-loop driver (loop_driver.py documents its table and op kinds).

One function, `frametrace_array_loop(lo, hi, table)`, runs iterations j of the table's ops.
Each op reads its operands from the words after its kind: most come in pairs (v0, v1), chosen
by the parity of j (double-buffered carried values), so the text of every op starts the same
way (`_pairs`); the INT and FLOAT ops compute every result of their opcode family and keep
the one the opcode names (`_choose`).
"""
from __future__ import annotations

CALL, COPY, INT, CHECKED, SELECT, STORE, FLOAT = 0, 1, 2, 3, 4, 5, 6
SCALAR_OPS = ("add", "subtract", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
              "logical_and", "logical_or")
CHECKED_OPS = ("multiply", "floor_divide", "remainder", "add", "subtract")
FLOAT_OPS = ("add", "subtract", "multiply", "true_divide", "less", "less_equal", "greater", "greater_equal",
             "equal", "not_equal", "power")
FLOAT_A_INT, FLOAT_B_INT = 16, 32  # FLOAT opcode bits: that operand is a Python int's int64 word
HEADER = 6
NAME = "frametrace_array_loop"


def _word(tag: str, k: int, name: str) -> str:
    """%name = word k of the current op (at %w)."""
    return f"  %{tag}word{k} = getelementptr i64, ptr %w, i64 {k}\n  %{name} = load i64, ptr %{tag}word{k}\n"


def _pairs(tag: str, letters: str, first: int) -> str:
    """Words first, first+1, ... as pairs %{tag}{L}0 / %{tag}{L}1 for each letter L, then
    %{tag}{L}v the one for this iteration's parity and %{tag}{L}p that address as a pointer."""
    text = "".join(_word(tag, first + 2 * i + b, f"{tag}{c}{b}") for i, c in enumerate(letters) for b in (0, 1))
    text += "".join(f"  %{tag}{c}v = select i1 %odd, i64 %{tag}{c}1, i64 %{tag}{c}0\n" for c in letters)
    return text + "".join(f"  %{tag}{c}p = inttoptr i64 %{tag}{c}v to ptr\n" for c in letters)


def _choose(tag: str, opcode: str, results: list) -> str:
    """%{tag}pick1 = results[opcode] (results[0] for any opcode past the list)."""
    text = "".join(f"  %{tag}is{k} = icmp eq i64 %{opcode}, {k}\n" for k in range(1, len(results)))
    prev = results[0]
    for k in range(len(results) - 1, 0, -1):
        text += f"  %{tag}pick{k} = select i1 %{tag}is{k}, i64 %{results[k]}, i64 %{prev}\n"
        prev = f"{tag}pick{k}"
    return text


def _compare_words(tag: str, ty: str, x: str, y: str, preds: list, first: int) -> str:
    """%{tag}r{first + i} = (x preds[i] y) as a 0/1 int64 word."""
    cmp = "fcmp" if ty == "double" else "icmp"
    text = "".join(f"  %{tag}c{first + i} = {cmp} {p} {ty} %{x}, %{y}\n" for i, p in enumerate(preds))
    return text + "".join(f"  %{tag}r{first + i} = zext i1 %{tag}c{first + i} to i64\n" for i in range(len(preds)))


_FLOAT = (
    "flt:\n" + _word("f", 1, "fopw") + f"""  %fopc = and i64 %fopw, 15
  %faflag = and i64 %fopw, {FLOAT_A_INT}
  %faint = icmp ne i64 %faflag, 0
  %fbflag = and i64 %fopw, {FLOAT_B_INT}
  %fbint = icmp ne i64 %fbflag, 0
""" + _pairs("f", "dab", 2) + """  %fxd = load double, ptr %fap
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
""" + "".join(f"  %fo{k} = {op} double %fx, %fy\n  %fr{k} = bitcast double %fo{k} to i64\n"
              for k, op in enumerate(("fadd", "fsub", "fmul", "fdiv")))
    + _compare_words("f", "double", "fx", "fy", ["olt", "ole", "ogt", "oge", "oeq", "une"], 4)
    + _choose("f", "fopc", [f"fr{k}" for k in range(10)]) + """  store i64 %fpick1, ptr %fdp
  %fnext = getelementptr i64, ptr %w, i64 8
  br label %opnext
""")

_SELECT = "sel:\n" + _pairs("e", "dcab", 1) + """  %ec = load i8, ptr %ecp
  %ecb = icmp ne i8 %ec, 0
  %esp = select i1 %ecb, ptr %eap, ptr %ebp
  %ev = load i64, ptr %esp
  store i64 %ev, ptr %edp
  %enext = getelementptr i64, ptr %w, i64 9
  br label %opnext
"""

_STORE = ("store:\n" + "".join(_word("t", k, n) for k, n in enumerate(("tn", "tbase", "tstep", "ts0", "ts1"), 1))
          + """  %toff = mul i64 %tstep, %j
  %tdv = add i64 %tbase, %toff
  %tsv = select i1 %odd, i64 %ts1, i64 %ts0
  %tdp = inttoptr i64 %tdv to ptr
  %tsp = inttoptr i64 %tsv to ptr
  call void @llvm.memcpy.p0.p0.i64(ptr %tdp, ptr %tsp, i64 %tn, i1 false)
  %tnext = getelementptr i64, ptr %w, i64 6
  br label %opnext
""")


def _overflowing(tag: str, op: str, label: str) -> str:
    return f"""{label}:
  %{tag}r = call {{i64, i1}} @llvm.{op}.with.overflow.i64(i64 %kx, i64 %ky)
  %{tag}v = extractvalue {{i64, i1}} %{tag}r, 0
  %{tag}o = extractvalue {{i64, i1}} %{tag}r, 1
  br i1 %{tag}o, label %fail, label %kstore
"""


_CHECKED = ("chk:\n" + _word("k", 1, "kopc") + _pairs("k", "dab", 2) + """  %kx = load i64, ptr %kap
  %ky = load i64, ptr %kbp
  %kism = icmp eq i64 %kopc, 0
  br i1 %kism, label %kmul, label %knotmul
""" + _overflowing("km", "smul", "kmul") + """knotmul:
  %kisadd = icmp eq i64 %kopc, 3
  br i1 %kisadd, label %kadd, label %knotadd
""" + _overflowing("kad", "sadd", "kadd") + """knotadd:
  %kissub = icmp eq i64 %kopc, 4
  br i1 %kissub, label %ksub, label %kdivchk
""" + _overflowing("ks", "ssub", "ksub") + """kdivchk:
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
  %kv = phi i64 [%kmv, %kmul], [%kadv, %kadd], [%ksv, %ksub], [%kdvv, %kdiv]
  store i64 %kv, ptr %kdp
  %knext = getelementptr i64, ptr %w, i64 8
  br label %opnext
""")

_INT = ("int:\n" + _word("i", 1, "opc") + _pairs("i", "dab", 2) + """  %x = load i64, ptr %iap
  %y = load i64, ptr %ibp
  %ir0 = add i64 %x, %y
  %ir1 = sub i64 %x, %y
""" + _compare_words("i", "i64", "x", "y", ["slt", "sle", "sgt", "sge", "eq", "ne"], 2) + """  %xb = icmp ne i64 %x, 0
  %yb = icmp ne i64 %y, 0
  %ic8 = and i1 %xb, %yb
  %ic9 = or i1 %xb, %yb
  %ir8 = zext i1 %ic8 to i64
  %ir9 = zext i1 %ic9 to i64
""" + _choose("i", "opc", [f"ir{k}" for k in range(10)]) + """  store i64 %ipick1, ptr %idp
  %inext = getelementptr i64, ptr %w, i64 8
  br label %opnext
""")

_CALL = ("call:\n" + _word("", 1, "fnv") + "  %fn = inttoptr i64 %fnv to ptr\n" + _word("", 2, "khi")
         + _word("", 3, "argsv") + "  %args = inttoptr i64 %argsv to ptr\n" + _word("", 4, "np")
         + """  %pw0 = getelementptr i64, ptr %w, i64 5
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
""")

_COPY = "copy:\n" + _word("c", 1, "nbytes") + _pairs("c", "ds", 2) + """\
  call void @llvm.memcpy.p0.p0.i64(ptr %cdp, ptr %csp, i64 %nbytes, i1 false)
  %cnext = getelementptr i64, ptr %w, i64 6
  br label %opnext
"""

_DISPATCH = "".join(f"""{here}:
  %is{kind_name} = icmp eq i64 %kind, {kind}
  br i1 %is{kind_name}, label %{label}, label %{other}
""" for here, kind_name, kind, label, other in (
    ("op", "call", CALL, "call", "notcall"), ("notcall", "copy", COPY, "copy", "notcopy"),
    ("notcopy", "int", INT, "int", "notint"), ("notint", "sel", SELECT, "sel", "notsel"),
    ("notsel", "store", STORE, "store", "notstore"), ("notstore", "float", FLOAT, "flt", "chk")))

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
  br label %dispatch
dispatch:
{_DISPATCH.split(':', 1)[1]}{_FLOAT}{_SELECT}{_STORE}{_CHECKED}fail:
  store i64 %j, ptr %p3
  store i64 1, ptr %p5
  ret void
{_INT}{_CALL}{_COPY}opnext:
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
