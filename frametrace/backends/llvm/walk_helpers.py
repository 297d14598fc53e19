"""`obj.name` in a native check without PyObject_GetAttr, where the class allows it
(pyversion/instance_attrs.py says where and why; this module only emits the IR).

    ptr = read_attr(tr, obj, slot)   # a new reference to obj.<slot.name>; a missing one is a miss

The read is one call of a small helper compiled once per process at O2 (`helper_address`):

    PyObject *ft_attr_read(obj, cls, tag, index, name, basicsize)   # a new reference, or NULL

which returns NULL unless type(obj) is `cls`, cls's version tag is `tag` and the keys' entry at
`index` is `name` itself, with a value there; the generated code then calls PyObject_GetAttr as
before (whose answer defines the result: a property or __getattr__ added later, a combined dict,
a deleted attribute). Both give a new reference, so the caller's ownership rules
(native_check.CheckTranslator.own) hold. Each read checks type and tag again: code run by an
earlier lookup in the same walk (a property, an __eq__) may have changed either. One shared
helper keeps every check's code small (a native entry is built at O0, where the same logic
inlined per attribute ran slower than PyObject_GetAttr).
"""
from __future__ import annotations

from csrc_free_runtime.native import C_ADDRESSES

from ...pyversion import dict_entries as de
from ...pyversion import instance_attrs as ia

_HELPER = None          # (CompiledModule, address): compiled on first use


def read_attr(tr, obj: str, slot: ia.AttrSlot) -> str:
    ir = tr.ir
    tr.keep += [slot.cls, slot.name]
    fn = ir.op(f"inttoptr i64 {helper_address('ft_attr_read')} to ptr")
    value = ir.op(f"call ptr {fn}(ptr {obj}, ptr {ir.const_ptr(slot.cls)}, i32 {slot.tag}, i64 {slot.index}, "
                  f"ptr {ir.const_ptr(slot.name)}, i64 {slot.basicsize})")
    got, slow, slow_done, join = (ir.label(x) for x in ("agot", "aslow", "aslowdone", "ajoin"))
    ir.do(f"br i1 {ir.op(f'icmp ne ptr {value}, null')}, label %{got}, label %{slow}")
    ir.block(got)
    ir.do(f"br label %{join}")
    ir.block(slow)                      # the definition: PyObject_GetAttr (a miss when it raises)
    generic = tr._getattr(obj, slot.name)
    ir.do(f"br label %{slow_done}")
    ir.block(slow_done)
    ir.do(f"br label %{join}")
    ir.block(join)
    return ir.op(f"phi ptr [{value}, %{got}], [{generic}, %{slow_done}]")


def helper_address(name: str = "ft_attr_read") -> int:
    """The address of helper `name` (ft_attr_read, ft_release, ft_keys_same), compiled once per
    process."""
    global _HELPER
    if _HELPER is None:
        from ...codegen.llvm_jit import compile_ir
        names = ("ft_attr_read", "ft_release", "ft_keys_same")
        module = compile_ir(helper_ir() + release_ir() + keys_ir(), list(names), opt=2)
        _HELPER = (module, {n: module.address(n) for n in names})
    return _HELPER[1][name]


def keys_ir() -> str:
    """LLVM IR of `i1 ft_keys_same(PyDictObject *d, PyObject **want, i64 n, PyObject **out)`: 1
    when d is a combined str-keyed dict of n entries none deleted (pyversion/dict_entries.py)
    whose keys are, in order, the very objects `want`; the values (borrowed) go to `out`.
    0 says nothing: the caller's PyDict_Next pass decides. The caller checked ma_used == n."""
    return "\n".join([
        "define i1 @ft_keys_same(ptr %d, ptr %want, i64 %n, ptr %out) {", "entry:",
        f"  %mvp = getelementptr inbounds i8, ptr %d, i64 {ia.DICT_VALUES}", "  %mv = load ptr, ptr %mvp, align 8",
        f"  %kp = getelementptr inbounds i8, ptr %d, i64 {ia.DICT_KEYS}", "  %keys = load ptr, ptr %kp, align 8",
        f"  %kindp = getelementptr inbounds i8, ptr %keys, i64 {ia.KEYS_KIND}",
        "  %kind = load i8, ptr %kindp, align 1",
        f"  %np = getelementptr inbounds i8, ptr %keys, i64 {ia.KEYS_NENTRIES}", "  %ne = load i64, ptr %np, align 8",
        "  %combined = icmp eq ptr %mv, null", f"  %unicode = icmp eq i8 %kind, {de.DICT_KEYS_UNICODE}",
        "  %dense = icmp eq i64 %ne, %n", "  %ok0 = and i1 %combined, %unicode", "  %ok1 = and i1 %ok0, %dense",
        "  br i1 %ok1, label %start, label %no", "start:",
        f"  %lp = getelementptr inbounds i8, ptr %keys, i64 {ia.KEYS_LOG2_INDEX_BYTES}",
        "  %l8 = load i8, ptr %lp, align 1", "  %l = zext i8 %l8 to i64", "  %isize = shl i64 1, %l",
        f"  %eoff = add i64 %isize, {ia.KEYS_INDICES}", "  %ents = getelementptr inbounds i8, ptr %keys, i64 %eoff",
        "  %any = icmp sgt i64 %n, 0", "  br i1 %any, label %loop, label %yes", "loop:",
        "  %i = phi i64 [0, %start], [%i1, %same]",
        f"  %off = mul i64 %i, {ia.ENTRY_SIZE}", "  %ep = getelementptr inbounds i8, ptr %ents, i64 %off",
        "  %key = load ptr, ptr %ep, align 8",
        "  %wp = getelementptr inbounds ptr, ptr %want, i64 %i", "  %w = load ptr, ptr %wp, align 8",
        "  %eq = icmp eq ptr %key, %w", "  br i1 %eq, label %same, label %no", "same:",
        "  %vp = getelementptr inbounds i8, ptr %ep, i64 8", "  %v = load ptr, ptr %vp, align 8",
        "  %op = getelementptr inbounds ptr, ptr %out, i64 %i", "  store ptr %v, ptr %op, align 8",
        "  %i1 = add i64 %i, 1", "  %more = icmp slt i64 %i1, %n", "  br i1 %more, label %loop, label %yes",
        "yes:", "  ret i1 1", "no:", "  ret i1 0", "}", ""])


def release_ir() -> str:
    """LLVM IR of `void ft_release(PyObject **own, i64 n)`: drop the n references of a walk
    (NULL slots skipped). Py_DECREF inline: an object whose count stays above zero is only
    decremented (an immortal one, 3.12+: its low 32 bits read as a negative int32, is left
    alone, as Py_DECREF does); the last reference goes through Py_DecRef (deallocation)."""
    immortal = ["  %low = trunc i64 %rc to i32", "  %imm = icmp slt i32 %low, 0",
                "  br i1 %imm, label %next, label %mortal", "mortal:"] if ia.PY >= (3, 12) else []
    return "\n".join([
        "define void @ft_release(ptr %own, i64 %n) {", "entry:",
        "  %any = icmp sgt i64 %n, 0", "  br i1 %any, label %loop, label %done", "loop:",
        "  %i = phi i64 [0, %entry], [%i1, %next]",
        "  %p = getelementptr inbounds ptr, ptr %own, i64 %i", "  %o = load ptr, ptr %p, align 8",
        "  %null = icmp eq ptr %o, null", "  br i1 %null, label %next, label %live", "live:",
        "  %rc = load i64, ptr %o, align 8"] + immortal + [
        "  %last = icmp eq i64 %rc, 1", "  br i1 %last, label %dealloc, label %dec", "dec:",
        "  %rc1 = sub i64 %rc, 1", "  store i64 %rc1, ptr %o, align 8", "  br label %next", "dealloc:",
        f"  %decref = inttoptr i64 {C_ADDRESSES['Py_DecRef']} to ptr", "  call void %decref(ptr %o)",
        "  br label %next", "next:",
        "  %i1 = add i64 %i, 1", "  %more = icmp slt i64 %i1, %n", "  br i1 %more, label %loop, label %done",
        "done:", "  ret void", "}", ""])


def helper_ir() -> str:
    """LLVM IR of ft_attr_read for this CPython (instance_attrs.VALUES_KIND)."""
    kind, hdr = ia.VALUES_KIND, ia.VALUES_HEADER

    def at(ptr, off, ty="ptr", align=8):
        return [f"  %{ptr}.{off & 0xffff}.p = getelementptr inbounds i8, ptr %{ptr}, i64 {off}",
                f"  %{ptr}.{off & 0xffff} = load {ty}, ptr %{ptr}.{off & 0xffff}.p, align {align}"]

    lines = ["define ptr @ft_attr_read(ptr %obj, ptr %cls, i32 %tag, i64 %index, ptr %name, i64 %basicsize) {",
             "entry:"]
    lines += at("obj", 8) + at("cls", ia.TP_VERSION_TAG, "i32", 4)
    lines += ["  %same = icmp eq ptr %obj.8, %cls",
              f"  %sametag = icmp eq i32 %cls.{ia.TP_VERSION_TAG}, %tag",
              "  %ok0 = and i1 %same, %sametag",
              "  br i1 %ok0, label %fast, label %none", "fast:"]
    md = ia.MANAGED_DICT & 0xffff
    if kind == "pointer":               # 3.11: a pointer before the object, NULL once materialised
        lines += at("obj", ia.VALUES_POINTER) + at("obj", ia.MANAGED_DICT)
        vp = ia.VALUES_POINTER & 0xffff
        lines += [f"  %values = bitcast ptr %obj.{vp} to ptr", f"  %dict = bitcast ptr %obj.{md} to ptr",
                  "  %hasvalues = icmp ne ptr %values, null"]
    elif kind == "tagged":              # 3.12: values - 1 (low bit set) or the dict
        lines += at("obj", ia.MANAGED_DICT, "i64")
        lines += [f"  %vw = add i64 %obj.{md}, 1", "  %values = inttoptr i64 %vw to ptr",
                  f"  %dict = inttoptr i64 %obj.{md} to ptr",
                  f"  %bit = and i64 %obj.{md}, 1", "  %hasvalues = icmp ne i64 %bit, 0"]
    else:                               # 3.13: inline after the object, `valid` at +3
        lines += ["  %values = getelementptr inbounds i8, ptr %obj, i64 %basicsize"] + at("values", 3, "i8", 1)
        lines += at("obj", ia.MANAGED_DICT)
        lines += ["  %hasvalues = icmp ne i8 %values.3, 0", f"  %dict = bitcast ptr %obj.{md} to ptr"]
    lines += ["  br i1 %hasvalues, label %vals, label %dictpath", "vals:"]
    lines += at("cls", ia.CACHED_KEYS) + ["  br label %check", "dictpath:",
                                           "  %nodict = icmp eq ptr %dict, null",
                                           "  br i1 %nodict, label %none, label %hasdict", "hasdict:"]
    lines += at("dict", ia.DICT_VALUES) + [f"  %dv = bitcast ptr %dict.{ia.DICT_VALUES} to ptr",
                                           "  %nodv = icmp eq ptr %dv, null",
                                           "  br i1 %nodv, label %none, label %split", "split:"]
    lines += at("dict", ia.DICT_KEYS) + ["  br label %check", "check:",
                                         f"  %keys = phi ptr [%cls.{ia.CACHED_KEYS}, %vals], "
                                         f"[%dict.{ia.DICT_KEYS}, %split]",
                                         "  %vptr = phi ptr [%values, %vals], [%dv, %split]"]
    lines += at("keys", ia.KEYS_NENTRIES, "i64") + at("keys", ia.KEYS_KIND, "i8", 1) + \
        at("keys", ia.KEYS_LOG2_INDEX_BYTES, "i8", 1)
    lines += [f"  %inrange = icmp sgt i64 %keys.{ia.KEYS_NENTRIES}, %index",
              f"  %issplit = icmp eq i8 %keys.{ia.KEYS_KIND}, {ia.DICT_KEYS_SPLIT}",
              "  %ok1 = and i1 %inrange, %issplit",
              f"  %log2 = zext i8 %keys.{ia.KEYS_LOG2_INDEX_BYTES} to i64",
              "  %isize = shl i64 1, %log2",
              f"  %eoff = mul i64 %index, {ia.ENTRY_SIZE}",
              f"  %koff0 = add i64 %isize, {ia.KEYS_INDICES}",
              "  %koff = add i64 %koff0, %eoff",
              "  %kp = getelementptr inbounds i8, ptr %keys, i64 %koff",
              "  br i1 %ok1, label %entrykey, label %none", "entrykey:",
              "  %key = load ptr, ptr %kp, align 8",
              "  %samekey = icmp eq ptr %key, %name"]
    if hdr:                             # 3.13: values[] past its capacity byte is not ours
        lines += at("vptr", 0, "i8", 1) + ["  %cap = zext i8 %vptr.0 to i64", "  %incap = icmp sgt i64 %cap, %index",
                                           "  %ok2 = and i1 %samekey, %incap"]
    else:
        lines += ["  %ok2 = and i1 %samekey, true"]
    lines += ["  br i1 %ok2, label %item, label %none", "item:",
              "  %voff0 = mul i64 %index, 8", f"  %voff = add i64 %voff0, {hdr}",
              "  %vp = getelementptr inbounds i8, ptr %vptr, i64 %voff",
              "  %v = load ptr, ptr %vp, align 8",
              "  %nov = icmp eq ptr %v, null",
              "  br i1 %nov, label %none, label %found", "found:",
              f"  %incref = inttoptr i64 {C_ADDRESSES['Py_IncRef']} to ptr",
              "  call void %incref(ptr %v)", "  ret ptr %v",
              "none:", "  ret ptr null", "}", ""]
    return "\n".join(lines)


__all__ = ["read_attr", "helper_address", "helper_ir", "release_ir", "keys_ir"]
