"""Floating-point errors in the native entry (native_entry.py): what fp_errors.py does for
the Python wrapper, as LLVM IR.

Kernels that may set an FP exception flag can make NumPy's error mode matter: when a flag is
set and the mode of its kind is not "ignore", the call is handed to NumPy, which must see the
inputs as they were. So before the kernels the entry saves the memory the graph writes in its
inputs (`written_regions`: only the written views, `a[3]` of a 64x64 `a` is 512 bytes) into a
scratch buffer (`snapshot`), and after them (`miss_on_fp_flags`) a flagged call puts the
regions back and misses: the Python path runs the call again and NumPy reports.

What is copied is the written region, natively (a stack buffer up to SMALL_SNAPSHOT bytes:
no allocation and no call into Python; above that only when the error state does not ignore
every kind the graph's kernels may report, fp_errors.GraphFlags). A graph whose writing kernel
tests its flags before its first write (flag_checks.py) copies nothing: it runs the writer's
check kernel if it has one, then tests the word (test_before_writing), and a flagged call misses
with nothing written.
"""
from __future__ import annotations

import numpy as np

from csrc_free_runtime import native as rt_native

from ...codegen.llvm_kernels import fpflags
from ...ir.graph import Node
from ...ir.registry import get_op

SMALL_SNAPSHOT = 4096  # written regions up to this many bytes are saved on the stack, without asking NumPy
SMALL_CHECK = 1 << 12  # a flag check of at most this static work runs without asking the error state
LONE_UFUNC_BYTES = 40 << 10  # a lone in-place ufunc whose operands span at least this many bytes and
                             #   whose check must run: NumPy's call (below: check + kernel in L1 win)


def _asks(b, question):
    """Call `question` (a bound method of fp_errors.GraphFlags, kept alive with the entry) and
    return the i1 `its answer is True` (NULL: it raised, the entry returns NULL)."""
    b.tr.keep.append(question)
    r = b.py_call(question)
    b.ir.call("void", "Py_DecRef", f"ptr {r}")
    return b.ir.op(f"icmp eq ptr {r}, {b.ir.const_ptr(True)}")


def written_regions(b, plan, graph) -> list:
    """Descs of the memory the graph's mutations write in its inputs: the written view
    when it is a chain of basic slices of an input (`cache[:, pos] = k` saves one column,
    not the cache), else the whole input. Computed before anything may not miss."""
    index = set(graph.inputs)
    regions = {}
    for n in graph.nodes:
        if n.op != "assign" or n not in plan.live or not isinstance(n.args[0], Node):
            continue
        chain, d = [], n.args[0]
        while d not in index and get_op(d.op).kind == "view" and isinstance(d.args[0], Node):
            chain.append(d)
            d = d.args[0]
        if d not in index:
            continue                           # writes memory this call allocated
        desc = b.input_desc(plan, d)
        if all(v.op == "getitem" for v in chain):
            for v in reversed(chain):
                desc = b.descs.get(plan.var[v]) or b.vw.getitem(plan, v, desc)
        regions.setdefault(desc.key, desc)
    whole = {r.root for r in regions.values() if len(r.key) == 1}
    return [r for r in regions.values() if len(r.key) == 1 or r.root not in whole]


def snapshot(b, regions, flags) -> tuple:
    """Copy the written regions into one scratch buffer, so that a flagged call can be
    redone by NumPy from the original contents (fp_errors.py). Small regions (at most
    SMALL_SNAPSHOT bytes) are always saved into a stack buffer; larger ones only when
    `flags` (fp_errors.GraphFlags: the kinds the kernels may report) says NumPy may have to
    redo the call in the current error state. Returns (slot of the buffer's address (null:
    nothing saved), slot of the buffer object, [(region, offset)])."""
    ir, vw = b.ir, b.vw
    base_slot, obj_slot = ir.alloca("ptr"), ir.alloca("ptr")
    ir.do(f"store ptr null, ptr {base_slot}, align 8")
    ir.do(f"store ptr null, ptr {obj_slot}, align 8")
    if not regions:
        return base_slot, obj_slot, []
    sizes = [vw.nbytes(r) for r in regions]
    offsets, total = [], "0"
    for n in sizes:
        offsets.append(total)
        padded = ir.op(f"add i64 {n}, 15")
        total = ir.op(f"add i64 {total}, {ir.op(f'and i64 {padded}, -16')}")
    stack = ir.alloca(f"[{SMALL_SNAPSHOT} x i8]")
    small, large, alloc, go, done = (ir.label(x) for x in ("small", "large", "salloc", "save", "saved"))
    ir.do(f"br i1 {ir.op(f'icmp ule i64 {total}, {SMALL_SNAPSHOT}')}, label %{small}, label %{large}")
    ir.block(small)
    ir.do(f"store ptr {stack}, ptr {base_slot}, align 8")
    ir.do(f"br label %{go}")
    ir.block(large)
    ir.do(f"br i1 {_asks(b, flags.snapshot_wanted)}, label %{alloc}, label %{done}")
    ir.block(alloc)
    dims = ir.alloca("[1 x i64]")
    ir.do(f"store i64 {total}, ptr {dims}, align 8")
    arr = ir.call("ptr", "PyArray_New", f"ptr {ir.const_ptr(np.ndarray)}", "i32 1", f"ptr {dims}",
                  f"i32 {np.dtype(np.uint8).num}", "ptr null", "ptr null", "i32 0", "i32 0", "ptr null")
    b.null_fails(arr, b.owned)
    ir.do(f"store ptr {arr}, ptr {obj_slot}, align 8")
    heap = ir.field(arr, rt_native.ARRAY_FIELDS["data"], "ptr")
    ir.do(f"store ptr {heap}, ptr {base_slot}, align 8")
    ir.do(f"br label %{go}")
    ir.block(go)
    buf = ir.op(f"load ptr, ptr {base_slot}, align 8")
    at = ir.op(f"ptrtoint ptr {buf} to i64")
    pairs = []
    for r, off in zip(regions, offsets):
        vw.copy(vw.contiguous_like(ir.op(f"add i64 {at}, {off}"), r), r)   # F region: one memmove
        pairs.append((r, off))
    ir.do(f"br label %{done}")
    ir.block(done)
    return base_slot, obj_slot, pairs


def miss_on_fp_flags(b, saved, flags):
    """Kernels set an FP exception flag and NumPy must report it (flags.redo, fp_errors.GraphFlags):
    put back what the graph wrote, drop what we own and miss; the Python path runs the
    call again and lets NumPy report. Nothing saved (every mode was "ignore" when the
    call began): the results stand."""
    ir = b.ir
    base_slot, obj_slot, pairs = saved
    word = ir.op(f"load volatile i32, ptr {ir.op(f'inttoptr i64 {fpflags.ADDRESS} to ptr')}")
    flagged, redo, clean = ir.label("fpset"), ir.label("fpredo"), ir.label("fpclean")
    ir.do(f"br i1 {ir.op(f'icmp ne i32 {word}, 0')}, label %{flagged}, label %{clean}")
    ir.block(flagged)
    go = _asks(b, flags.redo)
    base = ir.op(f"load ptr, ptr {base_slot}, align 8")
    if pairs:                                  # inputs written and nothing saved: results stand
        go = ir.op(f"and i1 {go}, {ir.op(f'icmp ne ptr {base}, null')}")
    ir.do(f"br i1 {go}, label %{redo}, label %{clean}")
    ir.block(redo)
    at = ir.op(f"ptrtoint ptr {base} to i64")
    for region, off in pairs:
        b.vw.copy(region, b.vw.contiguous_like(ir.op(f"add i64 {at}, {off}"), region))
    ir.call("void", "Py_DecRef", f"ptr {ir.op(f'load ptr, ptr {obj_slot}, align 8')}")
    for p in b.owned:
        ir.call("void", "Py_DecRef", f"ptr {p}")
    ir.do("br label %miss")
    ir.block(clean)
    ir.call("void", "Py_DecRef", f"ptr {ir.op(f'load ptr, ptr {obj_slot}, align 8')}")


def test_before_writing(b, flags, launch_check=None, small=False):
    """Before the graph's first write into its inputs (flag_checks.py): run the writer's flag
    check if it has one (`launch_check()` emits its call; a `small` one always, a larger one
    when the error state does not ignore the graph's kinds: asking costs a call into Python),
    then, flagged and NumPy must report it: drop what we own and miss, with nothing written yet
    (the Python path runs the call again)."""
    ir = b.ir
    ask, redo, go = (ir.label(x) for x in ("chkask", "chkredo", "chkok"))
    if launch_check is not None and small:
        launch_check()
    elif launch_check is not None:
        run = ir.label("chk")
        ir.do(f"br i1 {_asks(b, flags.snapshot_wanted)}, label %{run}, label %{go}")
        ir.block(run)
        launch_check()
    word = ir.op(f"load volatile i32, ptr {ir.op(f'inttoptr i64 {fpflags.ADDRESS} to ptr')}")
    ir.do(f"br i1 {ir.op(f'icmp ne i32 {word}, 0')}, label %{ask}, label %{go}")
    ir.block(ask)
    ir.do(f"br i1 {_asks(b, flags.redo)}, label %{redo}, label %{go}")
    ir.block(redo)
    for p in b.owned:
        ir.call("void", "Py_DecRef", f"ptr {p}")
    ir.do("br label %miss")
    ir.block(go)


def report_after_write(b, probes):
    """After the kernel of a graph that NumPy reports only after writing (fp_probes.py): the
    word set, take it and let NumPy report its kinds (probes.kinds) through the ufunc's probe for
    them, called from here so that a warning names the caller's line as NumPy's would; NULL
    (it raised: "raise", a handler's or a warnings filter's exception) is returned as NULL."""
    ir = b.ir
    b.tr.keep.append(probes)                     # (its ufunc and probe arrays, kept alive)
    at = ir.op(f"inttoptr i64 {fpflags.ADDRESS} to ptr")
    word = ir.op(f"load volatile i32, ptr {at}")
    flagged, done = ir.label("awset"), ir.label("awdone")
    ir.do(f"br i1 {ir.op(f'icmp ne i32 {word}, 0')}, label %{flagged}, label %{done}")
    ir.block(flagged)
    ir.do(f"store volatile i32 0, ptr {at}")
    bits = ir.op(f"and i32 {word}, {probes.kinds}")
    cases = {mask: ir.label(f"aw{mask}") for mask in sorted(probes.probes)}
    ir.do(f"switch i32 {bits}, label %{done} [{' '.join(f'i32 {m}, label %{lb}' for m, lb in cases.items())}]")
    for mask, label in cases.items():
        ir.block(label)
        r = b.py_call(probes.ufunc, *(ir.const_ptr(p) for p in probes.operands(mask)))
        ir.call("void", "Py_DecRef", f"ptr {r}")
        ir.do(f"br label %{done}")
    ir.block(done)


def lone_ufunc_min(numpy_call) -> int:
    """Elements from which a lone in-place ufunc (flag_checks._lone_ufunc) whose check must run
    is NumPy's call: its operands span LONE_UFUNC_BYTES (x += y in float64: 2560). Below, the
    check pulls them into L1 and the kernel reads them there: 2048 float64 `x += y`, 0.46 us
    against NumPy's 0.68 us; 4096: 1.51 us both ways, 8192: 4.5 against 2.9 us."""
    per_element = numpy_call[3]
    return max(1, LONE_UFUNC_BYTES // max(per_element, 1))


def numpy_or_check(b, flags, call, work, static, launch_check, done, least):
    """The graph is one in-place ufunc (flag_checks._lone_ufunc: `x += y`, `call` = (ufunc,
    operand pointers)). Its flag check and its kernel read the operands twice, NumPy's own call
    once; so from `least` elements (lone_ufunc_min), when the error state wants the check, the entry makes
    NumPy's call instead (`np.add(x, y, x)`, what `x += y` runs eagerly: NumPy's values, warnings
    and exceptions) and branches to `done`, past the kernel. Not wanted: the kernel alone.
    Fewer elements (a dynamic size): the check always runs, as test_before_writing's small one."""
    ir = b.ir
    ask, numpy, go = ir.label("lonask"), ir.label("lonnp"), ir.label("longo")
    if not static:
        chk = ir.label("lonchk")
        ir.do(f"br i1 {ir.op(f'icmp sge i64 {work}, {least}')}, label %{ask}, label %{chk}")
        ir.block(chk)
        test_before_writing(b, flags, launch_check, small=True)
        ir.do(f"br label %{go}")
    else:
        ir.do(f"br label %{ask}")
    ir.block(ask)
    ir.do(f"br i1 {_asks(b, flags.snapshot_wanted)}, label %{numpy}, label %{go}")
    ir.block(numpy)
    fn, args = call
    r = b.py_call(fn, *args)                     # NULL (NumPy raised, after writing): we return NULL
    ir.call("void", "Py_DecRef", f"ptr {r}")
    ir.do(f"br label %{done}")
    ir.block(go)


__all__ = ["SMALL_SNAPSHOT", "lone_ufunc_min", "numpy_or_check", "miss_on_fp_flags", "report_after_write", "snapshot",
           "test_before_writing", "written_regions"]
