"""The guards of an entry as one native builtin, for entries without a native entry (a model
passed as an object, a dict of weights: arrays reached through attributes and items).

    check = build_native_check(argnames, guards, bindings, input_sources, namespace, name)
    r = check.fn(*frame_values)    # NATIVE_MISS, or (inputs, symbols) lists ("full"), or True
    check.rest                      # guard records left to the Python condition (kinds not compiled)

The Python check of such an entry evaluates every guard from scratch: `type(self.layers[3].w1)`,
`self.layers[3].w1.dtype`, `self.layers[3].w1.ndim`, `.shape[0]`, `.shape[1]`, each walking the
attributes again (~400 guards and ~30 us for a 6-layer model, quiet machine). Here the walk is
shared: every source is read once (`source_obj` is memoised: one `PyObject_GetAttr` per attribute
of the whole tree, a list item by index from the list's array, a dict item by key), each array's
fields are compared in one place (type, ndim, descriptor, dims, strides, flags: a few loads), and
the graph's inputs and symbol values are handed back as the lists the wrapper takes, so the entry
does not walk the sources a second time to build its arguments.

Soundness (see native_guards.py, whose Translator this extends):
* every object the walk holds is a new reference kept in `own`, released at every exit, so code
  run by an attribute lookup (a property) cannot free what a later guard reads;
* a list / tuple item is read from the object's array only once its exact type is guarded (and
  the index is checked against its size); any other container is read with PyObject_GetItem, a
  failing lookup is a miss (the Python check would have raised: also a miss);
* guards are a pure conjunction: they are emitted type and identity guards first, then ndim and
  len, then the rest (each in the order the trace made them), so no field is read before the
  guard that makes reading it safe;
* a guard kind this module does not compile is left to Python (`rest`), evaluated after the
  native part passed; a guard that fails to compile halfway is rolled back.
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np

from csrc_free_runtime import native as rt_native

from ...config import config
from ...guards.kinds import GuardKind as K
from ...logs import get_logger
from ...pyversion import dict_entries
from ...pyversion.instance_attrs import attr_slot
from ...sources import AttrSource, GetItemSource, LocalSource, ShapeSource
from . import runtime, strict
from .walk_helpers import helper_address, read_attr
from .native_guards import IR, OVERFLOW_DECLS, NotNative, Translator, V, _function_member

_why = get_logger("native")
_CALL_OBJ_ARGS = ctypes.cast(ctypes.pythonapi.PyObject_CallFunctionObjArgs, ctypes.c_void_p).value
# guards emitted first (they make reading inside the value safe), then second, then the rest
# (a dict's keys are compared where its items are first read: the walk takes their values)
_FIRST = (K.TYPE_MATCH, K.ID_MATCH, K.BUILTIN, K.CODE_MATCH, K.KEYS)
_SECOND = (K.NDIM, K.LEN)
# O2 checks run ~7% faster than O0 ones (the walk's work is in walk_helpers.py's O2 helpers: 100
# arrays 1.61 against 1.73 us) and take ~10-16x longer to build (559 guards: 2.2 s against 0.2 s;
# 1,000 arrays: 42 s against 2.6 s; loaded machine): O2 only for checks of at most
# O2_MAX_GUARDS guards; a check beside a native entry serves only its misses: O0
OPT_LEVEL, MISS_PATH_OPT_LEVEL, O2_MAX_GUARDS = 2, 0, 200


class NativeCheck:
    """The compiled check: `fn(*frame_values)`; `full`: it returns the graph's (inputs, symbols);
    `rest`: records the Python condition still evaluates; `guarded`: how many it compiled."""

    def __init__(self, entry, rest, full, guarded):
        self.entry, self.rest, self.full, self.guarded = entry, rest, full, guarded

    @property
    def fn(self):
        return self.entry.fn


def build_native_check(argnames, guards, bindings, input_sources, namespace, name="entry", opt=None):
    """A NativeCheck for this entry's guards, or None (the Python check serves it).
    opt: the LLVM optimisation level (None: OPT_LEVEL up to O2_MAX_GUARDS guards, else O0)."""
    if not getattr(config, "native_dispatch", False) or not rt_native.AVAILABLE or not runtime.ARRAY_LAYOUT_OK:
        return None
    try:
        if opt is None:
            opt = OPT_LEVEL if len(guards) <= O2_MAX_GUARDS else 0
        return _build(argnames, guards, bindings, input_sources, namespace, name, opt)
    except NotNative as exc:
        _why.debug("no native check for %s: %s", name, exc)
        return None
    except Exception as exc:                  # a bug here must not cost the user the entry
        if strict():
            raise
        _why.warning("native check for %s failed (%s: %s); the Python check serves it", name,
                     type(exc).__name__, exc, exc_info=True)
        return None


class CheckTranslator(Translator):
    """Translator whose sources may go through any attribute or item, each read once."""

    def __init__(self, ir: IR, argnames, namespace: dict):
        super().__init__(ir, argnames, namespace)
        self.memo: dict = {}          # Source -> ptr: an argument, or a new reference in `own`
        self.owned = 0                # slots of `own` used
        self.slot_of: dict = {}       # ptr -> its slot of `own`
        self.wanted: set = set()      # GetItemSources some guard or input reads (want())

    def want(self, sources):
        """Note the dict items the entry reads (through `sources` and their bases): a keys guard
        takes them from its own pass over the dict (_keys) instead of looking them up again."""
        for src in sources:
            while src is not None:
                if isinstance(src, GetItemSource):
                    self.wanted.add(src)
                src = getattr(src, "base", None)

    # -- holding objects -----------------------------------------------------------------------
    def own(self, ptr: str) -> str:
        """Keep the new reference `ptr` until the check returns (released at every exit)."""
        p = self.ir.op(f"getelementptr inbounds ptr, ptr %own, i64 {self.owned}")
        self.ir.do(f"store ptr {ptr}, ptr {p}, align 8")
        self.slot_of[ptr] = self.owned
        self.owned += 1
        return ptr

    def source_obj(self, src) -> str:
        got = self.memo.get(src)
        if got is not None:
            return got
        ir = self.ir
        if isinstance(src, LocalSource) and src.local in self.argindex:
            got = self.arg(src.local).ref              # the caller's reference: alive
        elif isinstance(src, AttrSource) and not _function_member(src, self.types):
            base = self.source_obj(src.base)
            slot = attr_slot(self.types.get(src.base.code), src.member)   # (instance values: walk_helpers.py)
            got = self.own(read_attr(self, base, slot) if slot is not None else self._getattr(base, src.member))
        elif isinstance(src, GetItemSource):
            got = self.own(self._item(src))
        else:                                          # globals, function members, cells, defaults
            got = super().source_obj(src)
            ir.call("void", "Py_IncRef", f"ptr {got}")
            self.own(got)
        self.memo[src] = got
        return got

    def _item(self, src) -> str:
        """A new reference to base[index]: from a list's / tuple's array (exact type guarded),
        a dict by key, else PyObject_GetItem; a missing item is a miss."""
        ir, base, i = self.ir, self.source_obj(src.base), src.index
        t = self.types.get(src.base.code)
        if t in (list, tuple) and type(i) is int and i >= 0:
            size = ir.field(base, 16, "i64")                         # PyVarObject.ob_size
            ir.require(ir.op(f"icmp sgt i64 {size}, {i}"))
            items = ir.field(base, 24, "ptr") if t is list else \
                ir.op(f"getelementptr inbounds i8, ptr {base}, i64 24")   # ob_item (list: a pointer)
            item = ir.op(f"load ptr, ptr {ir.op(f'getelementptr inbounds ptr, ptr {items}, i64 {i}')}, align 8")
            ir.call("void", "Py_IncRef", f"ptr {item}")
            return item
        if t is dict and type(i) is str:
            key = sys.intern(i)
            self.keep.append(key)
            # (PyDict_GetItem would save and restore the error state around the lookup)
            item = ir.call("ptr", "PyDict_GetItemWithError", f"ptr {base}", f"ptr {ir.const_ptr(key)}")
            err, ok = ir.label("keyerr"), ir.label("keyok")
            ir.do(f"br i1 {ir.op(f'icmp eq ptr {item}, null')}, label %{err}, label %{ok}")
            ir.block(err)
            ir.call("void", "PyErr_Clear")                   # missing (no error) or an error
            ir.do(f"br label %{ir.fail}")
            ir.block(ok)
            ir.call("void", "Py_IncRef", f"ptr {item}")
            return item
        if type(i) not in (int, str):
            raise NotNative(f"item {i!r} of {src.base.name}")
        self.keep.append(i)
        item = ir.call("ptr", "PyObject_GetItem", f"ptr {base}", f"ptr {ir.const_ptr(i)}")
        err, ok = ir.label("itemerr"), ir.label("itemok")
        ir.do(f"br i1 {ir.op(f'icmp eq ptr {item}, null')}, label %{err}, label %{ok}")
        ir.block(err)
        ir.call("void", "PyErr_Clear")
        ir.do(f"br label %{ir.fail}")
        ir.block(ok)
        return item

    def source_addr(self, src) -> str:
        return self.ir.op(f"ptrtoint ptr {self.source_obj(src)} to i64")

    def _array(self, src) -> str:
        if self.types.get(src.code) is not np.ndarray:
            raise NotNative(f"array fields of an unguarded value: {src.name}")
        return self.source_obj(src)

    def source_size(self, src) -> V:
        got = self._sizes.get(src)
        if got is None:
            if isinstance(src, ShapeSource) or (isinstance(src, LocalSource) and src.local in self.argindex):
                return super().source_size(src)
            if self.types.get(src.code) is not int:
                raise NotNative(f"size source {src.name}: not a guarded int")
            got = V("int", self.as_int(self._number(int, self.source_obj(src), src.name)))
            self._sizes[src] = got
        return got

    # -- guards this module adds ---------------------------------------------------------------
    def require_top(self, g):
        if g.kind is K.KEYS:
            return self._keys(g.source, g.payload)
        if g.kind is K.PREDICATE:
            return self._predicate(g.source, g.payload[0])
        return super().require_top(g)

    def _keys(self, src, keys):
        """list(d) == keys: d an exact dict of len(keys) entries, whose keys in order are
        identical to the expected ones or equal to them. The pass takes the items the entry
        reads (`wanted`): the value of an entry whose key is the expected key or an exact str
        equal to it is d[key] (a str's hash and equality are str's: the lookup would find that
        entry, dict keys being unique); any other equal key is looked up. First, where the
        layout allows (pyversion/dict_entries.py), walk_helpers' ft_keys_same reads the entries
        in place: keys identical in order, values taken; anything else takes the PyDict_Next pass."""
        if self.types.get(src.code) is not dict:
            raise NotNative(f"keys of {src.name}: not a guarded dict")
        ir, d = self.ir, self.source_obj(src)
        self.keep += list(keys)
        ir.require(ir.op(f"icmp eq i64 {ir.field(d, 16, 'i64')}, {len(keys)}"))   # PyDictObject.ma_used
        items = {i: GetItemSource(src, key) for i, key in enumerate(keys) if type(key) is str}
        items = {i: item for i, item in items.items() if item in self.wanted and item not in self.memo}
        slots = {i: self.reserve() for i in items}     # each item's reference, from either path
        join = None
        if dict_entries.AVAILABLE and keys:
            want = (ctypes.c_void_p * len(keys))(*map(id, keys))
            self.keep.append(want)
            out = ir.alloca(f"[{len(keys)} x ptr]")
            fn = ir.op(f"inttoptr i64 {helper_address('ft_keys_same')} to ptr")
            wp = ir.op(f"inttoptr i64 {ctypes.addressof(want)} to ptr")
            same = ir.op(f"call i1 {fn}(ptr {d}, ptr {wp}, i64 {len(keys)}, ptr {out})")
            fast, slow, join = ir.label("keysfast"), ir.label("keysslow"), ir.label("keysjoin")
            ir.do(f"br i1 {same}, label %{fast}, label %{slow}")
            ir.block(fast)
            for i in items:
                v = ir.op(f"load ptr, ptr {ir.op(f'getelementptr inbounds ptr, ptr {out}, i64 {i}')}, align 8")
                ir.call("void", "Py_IncRef", f"ptr {v}")
                self._store_own(slots[i], v)
            ir.do(f"br label %{join}")
            ir.block(slow)
        pos, k, v = ir.alloca("i64"), ir.alloca("ptr"), ir.alloca("ptr")
        ir.do(f"store i64 0, ptr {pos}, align 8")
        self.keep.append(str)
        for i, key in enumerate(keys):
            more = ir.call("i32", "PyDict_Next", f"ptr {d}", f"ptr {pos}", f"ptr {k}", f"ptr {v}")
            ir.require(ir.op(f"icmp ne i32 {more}, 0"))
            got = ir.op(f"load ptr, ptr {k}, align 8")
            same, eq, eqok, ne, ok = (ir.label(x) for x in ("keysame", "keyeq", "keyeqok", "keyne", "keyok"))
            want = ir.const_ptr(key)
            ir.do(f"br i1 {ir.op(f'icmp eq ptr {got}, {want}')}, label %{same}, label %{eq}")
            ir.block(eq)
            r = ir.call("i32", "PyObject_RichCompareBool", f"ptr {got}", f"ptr {want}", "i32 2")   # Py_EQ
            ir.do(f"br i1 {ir.op(f'icmp eq i32 {r}, 1')}, label %{eqok}, label %{ne}")
            ir.block(eqok)
            exact = ir.op(f"icmp eq ptr {ir.field(got, 8, 'ptr')}, {ir.const_ptr(str)}")
            ir.do(f"br label %{ok}")
            ir.block(ne)
            ir.call("void", "PyErr_Clear")                   # -1 (an error) or 0: a miss
            ir.do(f"br label %{ir.fail}")
            ir.block(same)
            ir.do(f"br label %{ok}")
            ir.block(ok)
            if i in items:
                hit = ir.op(f"phi i1 [true, %{same}], [{exact}, %{eqok}]")
                self._item_from_pass(d, key, hit, ir.op(f"load ptr, ptr {v}, align 8"), slots[i])
        if join is not None:
            ir.do(f"br label %{join}")
            ir.block(join)
        for i, item in items.items():
            got = ir.op(f"load ptr, ptr {ir.op(f'getelementptr inbounds ptr, ptr %own, i64 {slots[i]}')}, align 8")
            self.memo[item] = got
            self.slot_of[got] = slots[i]

    def reserve(self) -> int:
        """A slot of `own` for a reference stored later (_store_own)."""
        self.owned += 1
        return self.owned - 1

    def _store_own(self, slot: int, ptr: str):
        self.ir.do(f"store ptr {ptr}, ptr {self.ir.op(f'getelementptr inbounds ptr, ptr %own, i64 {slot}')}, align 8")

    def _item_from_pass(self, d, key, hit, value, slot):
        """own[slot] = a new reference to d[key]: `value` where `hit`, else looked up."""
        ir = self.ir
        start, look, have = ir.label("itempass"), ir.label("itemlook"), ir.label("itemhave")
        ir.do(f"br label %{start}")
        ir.block(start)
        ir.do(f"br i1 {hit}, label %{have}, label %{look}")
        ir.block(look)
        key = sys.intern(key)
        self.keep.append(key)
        found = ir.call("ptr", "PyDict_GetItemWithError", f"ptr {d}", f"ptr {ir.const_ptr(key)}")
        err, ok = ir.label("keyerr"), ir.label("keyfound")
        ir.do(f"br i1 {ir.op(f'icmp eq ptr {found}, null')}, label %{err}, label %{ok}")
        ir.block(err)
        ir.call("void", "PyErr_Clear")
        ir.do(f"br label %{ir.fail}")
        ir.block(ok)
        ir.do(f"br label %{have}")
        ir.block(have)
        got = ir.op(f"phi ptr [{value}, %{start}], [{found}, %{ok}]")
        ir.call("void", "Py_IncRef", f"ptr {got}")
        self._store_own(slot, got)

    def _predicate(self, src, fn):
        """fn(v) is true (a Python call: an exception is a miss)."""
        ir = self.ir
        self.keep.append(fn)
        call = ir.op(f"inttoptr i64 {_CALL_OBJ_ARGS} to ptr")
        r = ir.op(f"call ptr (ptr, ...) {call}(ptr {ir.const_ptr(fn)}, ptr {self.source_obj(src)}, ptr null)")
        err, ok = ir.label("prederr"), ir.label("predok")
        ir.do(f"br i1 {ir.op(f'icmp eq ptr {r}, null')}, label %{err}, label %{ok}")
        ir.block(err)
        ir.call("void", "PyErr_Clear")
        ir.do(f"br label %{ir.fail}")
        ir.block(ok)
        self.own(r)
        truth = ir.call("i32", "PyObject_IsTrue", f"ptr {r}")
        ir.require(ir.op(f"icmp eq i32 {truth}, 1"))

    # -- rollback of a guard that did not compile ------------------------------------------------
    def state(self):
        return (len(self.ir.lines), len(self.ir.allocas), self.owned, len(self.keep),
                {k: dict(v) for k, v in self.__dict__.items() if isinstance(v, dict) and k != "namespace"})

    def restore(self, st):
        n_lines, n_allocas, owned, n_keep, dicts = st
        del self.ir.lines[n_lines:]
        del self.ir.allocas[n_allocas:]
        del self.keep[n_keep:]
        self.owned = owned
        for k, v in dicts.items():
            setattr(self, k, v)


def ordered(guards) -> list:
    """Type and identity guards first (they make reading inside a value safe), then ranks and
    lengths, then the rest, each in the trace's order (guards are a pure conjunction)."""
    first = [g for g in guards if g.kind in _FIRST]
    second = [g for g in guards if g.kind in _SECOND]
    return first + second + [g for g in guards if g.kind not in _FIRST and g.kind not in _SECOND]


def _build(argnames, guards, bindings, input_sources, namespace, name, opt):
    ir = IR()
    tr = CheckTranslator(ir, argnames, namespace)
    ir.require(ir.op(f"icmp eq i64 %nargs, {len(argnames)}"))
    tr.want([g.source for g in guards] + list(input_sources) + [src for _, src in bindings])
    rest, compiled = [], 0
    for g in ordered(guards):
        st = tr.state()
        try:
            tr.require_top(g)
            compiled += 1
        except NotNative as exc:
            tr.restore(st)
            rest.append(g)
            _why.debug("guard %s stays in Python: %s", g.name, exc)
    if not compiled:
        raise NotNative("no guard compiles natively")
    rest = [g for g in guards if g in rest]                   # the trace's order
    st = tr.state()
    try:
        result = _result(tr, bindings, input_sources)
        full = True
    except NotNative as exc:                                  # the Python entry builds them
        tr.restore(st)
        _why.debug("native check for %s returns no inputs: %s", name, exc)
        tr.keep.append(True)
        result = ir.const_ptr(True)
        ir.call("void", "Py_IncRef", f"ptr {result}")
        full = False
    return NativeCheck(_finish(tr, result, name, opt), rest, full, compiled)


def _result(tr: CheckTranslator, bindings, input_sources) -> str:
    """(inputs, symbols): the graph's input objects (new references) and symbol values."""
    ir = tr.ir
    objs = [tr.source_obj(src) for src in input_sources]
    syms = [tr.source_size(src) for _, src in bindings]
    ints = [tr.as_int(v) for v in syms]
    ir.fail = "fail_null"                       # from here on: only allocation errors
    lists = []
    for n, fill in ((len(objs), objs), (len(ints), ints)):
        lst = ir.call("ptr", "PyList_New", f"i64 {n}")
        _null_fails(ir, lst, lists)
        items = ir.field(lst, 24, "ptr") if n else None     # PyListObject.ob_item: filled in
        for i, x in enumerate(fill):                         # place (PyList_SET_ITEM: steals)
            if fill is objs:
                slot = tr.slot_of.pop(x, None)
                if slot is None:                        # an argument (borrowed), or used twice
                    ir.call("void", "Py_IncRef", f"ptr {x}")
                else:                                   # the list takes the walk's reference
                    ir.do(f"store ptr null, ptr {ir.op(f'getelementptr inbounds ptr, ptr %own, i64 {slot}')}, align 8")
                item = x
            else:
                item = ir.call("ptr", "PyLong_FromLongLong", f"i64 {x}")
                _null_fails(ir, item, lists + [lst])
            ir.do(f"store ptr {item}, ptr {ir.op(f'getelementptr inbounds ptr, ptr {items}, i64 {i}')}, align 8")
        lists.append(lst)
    t = ir.call("ptr", "PyTuple_New", "i64 2")
    _null_fails(ir, t, lists)
    for i, lst in enumerate(lists):
        ir.call("i32", "PyTuple_SetItem", f"ptr {t}", f"i64 {i}", f"ptr {lst}")    # steals lst
    return t


def _null_fails(ir, value, live):
    err, ok = ir.label("err"), ir.label("ok")
    ir.do(f"br i1 {ir.op(f'icmp eq ptr {value}, null')}, label %{err}, label %{ok}")
    ir.block(err)
    for p in live:
        ir.call("void", "Py_DecRef", f"ptr {p}")
    ir.do("br label %fail_null")
    ir.block(ok)


def emit_release(release: str, n: int) -> list:
    """Lines of `void @release(ptr %own)`: drop the n references of `%own` (a CheckTranslator's
    walk; NULL slots skipped) through walk_helpers' ft_release (compiled once, at O2). The caller
    allocates `%own = alloca [n x ptr]`, zeroes it, and calls the release at every exit."""
    return [f"define internal void @{release}(ptr %own) {{", "entry:",
            f"  %rel = inttoptr i64 {helper_address('ft_release')} to ptr",
            f"  call void %rel(ptr %own, i64 {n})", "  ret void", "}", ""]


def _finish(tr: CheckTranslator, result: str, name: str, opt: int):
    ir = tr.ir
    n = max(tr.owned, 1)
    inc = rt_native.C_ADDRESSES["Py_IncRef"]
    fname = "ft_check_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    release = f"{fname}.release"
    text = "\n".join(
        emit_release(release, n) +
        [f"define ptr @{fname}(ptr %self, ptr %args, i64 %nargs) {{", "entry:",
         f"  %own = alloca [{n} x ptr], align 8"] + ir.allocas +
        [f"  call void @llvm.memset.p0.i64(ptr %own, i8 0, i64 {8 * n}, i1 false)",
         "  br label %start", "start:"] + ir.lines +
        [f"  call void @{release}(ptr %own)", f"  ret ptr {result}",
         "miss:", f"  call void @{release}(ptr %own)",
         f"  %missinc = inttoptr i64 {inc} to ptr", "  call void %missinc(ptr %self)", "  ret ptr %self",
         "fail_null:", f"  call void @{release}(ptr %own)", "  ret ptr null", "}", "",
         "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)", OVERFLOW_DECLS, ""])
    from ...codegen.llvm_jit import compile_ir
    module = compile_ir(text, [fname], opt=opt)
    entry = rt_native.NativeEntry()
    keep = (module, dict(tr.namespace), tuple(tr.keep))
    return entry.attach(module.address(fname), fname, keep, text)


__all__ = ["build_native_check", "NativeCheck", "CheckTranslator", "emit_release", "ordered"]
