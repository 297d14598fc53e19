"""Guard records and size expressions -> LLVM IR, for native entries (native_entry.py).

Guards are records (guards/records.py): `Translator.require_top` compiles each from its kind,
`Source` and payload, walking the source (frame value, global, function member, default,
closure cell) itself. Symbol bindings are Sources (`source_size`); shape-env facts, size
variables and runtime asserts are sympy expressions, translated from their tree (`sym`, exact
integer semantics). The entry's return expression is Python (`ev`, a small subset over the
frame values of a METH_FASTCALL call). Anything outside what is compiled raises `NotNative`
and the entry simply keeps only its Python path.

Soundness rules (a native guard that passes where Python's fails is a wrong answer):
* every evaluation that could differ from Python (an int past 64 bits, an arithmetic
  overflow, a division by zero, a missing global, an attribute error) branches to `miss`,
  which is always safe: the Python path then decides;
* `x.dtype == D` is checked as identity of the descriptor (identity implies equality: a miss
  where Python would pass is only slower);
* floats compare by bits (NaN equals NaN, -0.0 differs from 0.0), like the Python check;
* an object is read through a source only once the guards before it fixed its exact type
  (a function's members, a tuple's items, a cell's contents);
* array fields are read only from frame values whose exact type `numpy.ndarray` and ndim are
  guarded; type and ndim guards are therefore hoisted before all others (guards are a pure
  conjunction, so their order does not change the answer);
* `and`/`or` evaluate both sides (no short circuit): a side that would raise makes a miss.
"""
from __future__ import annotations

import ast
import ctypes
import struct
import sys
import types

import numpy as np

from csrc_free_runtime.global_hook import trampoline_cell
from csrc_free_runtime.native import ARRAY_FIELDS

from ...guards.builder import RootGlobals
from ...guards.kinds import GuardKind as K
from ...sources import (AttrSource, ClosureSource, DefaultsSource, GlobalIn, GlobalsOfSource, GlobalSource,
                        HeldSource, LocalSource, ShapeSource)
from .native_ir import INT_MAX, INT_MIN, IR, OVERFLOW_DECLS, NotNative, V   # noqa: F401 (native_entry imports them here)
from .native_sizes import SizeExprs

NPY_C_CONTIGUOUS, NPY_F_CONTIGUOUS = 0x1, 0x2
_FUNCTION_MEMBERS = ("__code__", "__defaults__", "__kwdefaults__", "__closure__", "__globals__")
_NONE = object()           # V.py of the constant None


_INT_OPS = {ast.Add: "sadd", ast.Sub: "ssub", ast.Mult: "smul"}
_CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge"}


class Translator(SizeExprs):
    """Compiles guard records, size expressions (native_sizes.py) and the entry's return
    expression over the frame values `argnames` (args[i] of the call)."""

    def __init__(self, ir: IR, argnames, namespace: dict):
        self.ir = ir
        self.argindex = {name: i for i, name in enumerate(argnames)}
        self.namespace = namespace
        self.env: dict = {}           # compiler-bound names (symbols, sizes) -> V
        self.types: dict = {}         # frame value name -> its guarded exact type
        self.ndims: dict = {}         # array frame value name -> its guarded ndim
        self._args: dict = {}         # name -> V obj (loaded once)
        self._ints: dict = {}         # name -> V int/float value (converted once)
        self.keep: list = []          # objects whose addresses the IR holds
        self.codes: dict = {}         # function source code -> its guarded code object
        self.lengths: dict = {}       # tuple/list source code -> its guarded length
        self._sizes: dict = {}        # size Source -> V int (read once)

    # -- guards (from records) ---------------------------------------------------------------
    def hoisted(self, guards) -> list:
        """Emit, in their order, the guards that do not look inside frame values (type and
        identity guards of locals and globals, builtins not shadowed); then the ndim guards;
        return the other records (emitted with `require_top`, in order). So no field is read
        before code that could change it ran."""
        rest, ndims = [], []
        for g in guards:
            if g.kind is K.NDIM and isinstance(g.source, LocalSource):
                ndims.append(g)
            elif g.kind in (K.TYPE_MATCH, K.ID_MATCH, K.BUILTIN) and _shallow(g.source):
                self.require_top(g)
            else:
                rest.append(g)
        for g in ndims:
            if self.types.get(g.source.code) is np.ndarray:
                self.require_top(g)
            else:
                rest.append(g)
        return rest

    def require_top(self, g):
        """Continue only if guard record `g` holds (anything not compiled: NotNative)."""
        ir, k, src = self.ir, g.kind, g.source
        if k is K.TYPE_MATCH:
            obj = self.source_obj(src)
            self.keep.append(g.payload)
            ir.require(ir.op(f"icmp eq ptr {ir.field(obj, 8, 'ptr')}, {ir.const_ptr(g.payload)}"))
            self.types[src.code] = g.payload
        elif k is K.ID_MATCH:
            self.keep.append(g.payload)
            want = ir.op(f"ptrtoint ptr {ir.const_ptr(g.payload)} to i64")
            ir.require(ir.op(f"icmp eq i64 {self.source_addr(src)}, {want}"))
        elif k is K.CODE_MATCH:
            self.keep.append(g.payload)
            code = self.source_obj(AttrSource(src, "__code__"))
            cell = trampoline_cell(g.payload)     # the function hooked (now or later): its trampoline
            self.keep.append(cell)
            tramp = ir.op(f"load ptr, ptr {ir.op(f'inttoptr i64 {ctypes.addressof(cell)} to ptr')}, align 8")
            user = ir.op(f"icmp eq ptr {code}, {ir.const_ptr(g.payload)}")
            ir.require(ir.op(f"or i1 {user}, {ir.op(f'icmp eq ptr {code}, {tramp}')}"))
            self.codes[src.code] = g.payload
        elif k is K.NDIM:
            nd = ir.field(self._array(src), ARRAY_FIELDS["nd"], "i32")
            ir.require(ir.op(f"icmp eq i32 {nd}, {g.payload}"))
            self.ndims[src.code] = g.payload
        elif k is K.DTYPE:
            descr = ir.field(self._array(src), ARRAY_FIELDS["descr"], "ptr")
            self.keep.append(g.payload)          # identity implies equality: sound for a guard
            ir.require(ir.op(f"icmp eq ptr {descr}, {ir.const_ptr(g.payload)}"))
        elif k is K.SIZE:
            ir.require(ir.op(f"icmp eq i64 {self._array_field(src, 'dimensions')}, {g.payload}"))
        elif k is K.STRIDES:
            base = src.code
            if len(g.payload) != self.ndims.get(base, -1):
                raise NotNative("strides of an array whose ndim is not guarded")
            for d, stride in enumerate(g.payload):
                ir.require(ir.op(f"icmp eq i64 {self._array_field(ShapeSource(src, d), 'strides')}, {stride}"))
        elif k is K.STRIDE_FORMULA:           # products of the array's own sizes: no overflow
            base = src.code                    # (each is at most its byte size / itemsize)
            if len(g.payload) != self.ndims.get(base, -1):
                raise NotNative("strides of an array whose ndim is not guarded")
            for d, (coef, dims) in enumerate(g.payload):
                want = str(coef)
                for j in dims:
                    want = ir.op(f"mul i64 {want}, {self._array_field(ShapeSource(src, j), 'dimensions')}")
                got = self._array_field(ShapeSource(src, d), "strides")
                ir.require(ir.op(f"icmp eq i64 {got}, {want}"))
        elif k is K.LAYOUT:
            flags = ir.field(self._array(src), ARRAY_FIELDS["flags"], "i32")
            bit = NPY_C_CONTIGUOUS if g.payload == "C" else NPY_F_CONTIGUOUS
            ir.require(ir.op(f"icmp ne i32 {ir.op(f'and i32 {flags}, {bit}')}, 0"))
        elif k is K.LEN:
            obj = self.source_obj(src)
            if _function_member(src, self.types) == "__defaults__":
                self.keep.append(None)                              # a tuple or None
                ir.require(ir.op(f"icmp ne ptr {obj}, {ir.const_ptr(None)}"))
                self.types[src.code] = tuple
            if self.types.get(src.code) not in (tuple, list):
                raise NotNative(f"len() of {src.name}")
            size = ir.field(obj, 16, "i64")                         # PyVarObject.ob_size
            ir.require(ir.op(f"icmp eq i64 {size}, {g.payload}"))
            self.lengths[src.code] = g.payload
        elif k is K.EQUALS_MATCH:
            ir.require(self._equals(src, g.payload))
        elif k is K.BUILTIN:
            if not isinstance(src, (RootGlobals, HeldSource)):
                raise NotNative(f"builtin lookup through {src.name}")
            ns = self.namespace[src.code]
            name = sys.intern(g.payload)
            self.keep += [ns, name]
            r = ir.call("i32", "PyDict_Contains", f"ptr {ir.const_ptr(ns)}", f"ptr {ir.const_ptr(name)}")
            ir.require(ir.op(f"icmp eq i32 {r}, 0"))
        elif k is K.ALIAS:
            other, same = g.payload
            a, b = self.source_addr(src), self.source_addr(other)
            ir.require(ir.op(f"icmp {'eq' if same else 'ne'} i64 {a}, {b}"))
        elif k is K.SHAPE_ENV:
            # the record's sympy expression, each symbol read from its Source
            self.ir.require(self.sym_bool(g.payload.expr, lambda sym: self.source_size(g.sources[sym])))
        else:
            raise NotNative(f"{k.value} guard {g.name}")

    def _equals(self, src, value) -> str:
        """i1: the value at `src` (its exact type guarded as type(value)) equals `value` exactly."""
        ir, t = self.ir, type(value)
        if value is None or t is bool:
            self.keep.append(value)
            return ir.op(f"icmp eq ptr {self.source_obj(src)}, {ir.const_ptr(value)}")
        if t is int and INT_MIN <= value <= INT_MAX:
            return ir.op(f"icmp eq i64 {self.as_int(self.source_number(src))}, {value}")
        if t is float:
            v = self.source_number(src)
            if value != value:
                return ir.op(f"fcmp uno double {v.ref}, {v.ref}")
            bits = ir.op(f"bitcast double {v.ref} to i64")          # -0.0 differs from 0.0
            return ir.op(f"icmp eq i64 {bits}, {struct.unpack('<q', struct.pack('<d', value))[0]}")
        raise NotNative(f"equality with {value!r}")

    # -- sources -------------------------------------------------------------------------------
    def source_obj(self, src) -> str:
        """A borrowed PyObject* for `src`: a frame value, a global, a member of a function (kept
        alive by the function), a default or a closure cell's contents."""
        ir = self.ir
        if isinstance(src, LocalSource) and src.local in self.argindex:
            return self.arg(src.local).ref
        if isinstance(src, (GlobalSource, GlobalIn)) and getattr(src, "globals_source", None) is None:
            return self._dict_item(self.namespace["___G"], src.global_name)
        if isinstance(src, GlobalIn) and isinstance(src.globals_source, HeldSource):
            return self._dict_item(self.namespace[src.globals_source.code], src.global_name)
        if isinstance(src, HeldSource):
            held = self.namespace[src.code]
            self.keep.append(held)
            return ir.const_ptr(held)
        if isinstance(src, GlobalIn) and isinstance(src.globals_source, GlobalsOfSource):
            return self._dict_item_of(self.source_obj(src.globals_source), src.global_name)
        if isinstance(src, GlobalsOfSource):
            return self.source_obj(AttrSource(src.base, "__globals__"))
        if _function_member(src, self.types):
            # a read-only slot of an exactly-typed function: the function owns the result
            got = self._getattr(self.source_obj(src.base), src.member)
            ir.call("void", "Py_DecRef", f"ptr {got}")
            return got
        if isinstance(src, ClosureSource) and src.base.code in self.codes and \
                src.index < len(self.codes[src.base.code].co_freevars):
            cells = self.source_obj(AttrSource(src.base, "__closure__"))   # a tuple of the code's cells
            cell = self._tuple_item(cells, src.index)
            contents = ir.field(cell, 16, "ptr")                            # PyCellObject.ob_ref
            ir.require(ir.op(f"icmp ne ptr {contents}, null"))              # empty cell: Python raises
            return contents
        if isinstance(src, DefaultsSource):
            if src.kw is not None:
                owner = AttrSource(src.base, "__kwdefaults__")
                if self.types.get(owner.code) is not dict:
                    raise NotNative(f"{src.name}: kwdefaults not guarded to be a dict")
                return self._dict_item_of(self.source_obj(owner), src.kw)
            owner = AttrSource(src.base, "__defaults__")
            if self.types.get(owner.code) is not tuple or src.index >= self.lengths.get(owner.code, 0):
                raise NotNative(f"{src.name}: defaults not guarded to be a long enough tuple")
            return self._tuple_item(self.source_obj(owner), src.index)
        raise NotNative(f"source {src.name}")

    def source_addr(self, src) -> str:
        """The i64 address of the object at `src`, only for identity tests: an attribute is
        looked up and released at once (if it equals a constant the entry keeps, it is alive)."""
        ir = self.ir
        if isinstance(src, AttrSource) and not _function_member(src, self.types):
            base = self.source_obj(src.base)
            ir.call("void", "Py_IncRef", f"ptr {base}")       # attribute code may run Python
            got = self._getattr(base, src.member, release=base)
            ir.call("void", "Py_DecRef", f"ptr {base}")
            addr = ir.op(f"ptrtoint ptr {got} to i64")
            ir.call("void", "Py_DecRef", f"ptr {got}")
            return addr
        return ir.op(f"ptrtoint ptr {self.source_obj(src)} to i64")

    def source_number(self, src) -> V:
        if isinstance(src, LocalSource) and src.local in self.argindex:
            return self.number(src.local)
        return self._number(self.types.get(src.code), self.source_obj(src), src.name)

    def source_size(self, src) -> V:
        """The int at a size source: `L['x'].shape[d]` of a guarded array, or an int frame value
        (its exact type guarded). Read once per source."""
        got = self._sizes.get(src)
        if got is None:
            if isinstance(src, ShapeSource):
                got = V("int", self._array_field(src, "dimensions"))
            elif isinstance(src, LocalSource) and src.local in self.argindex:
                got = V("int", self.as_int(self.number(src.local)))
            else:
                raise NotNative(f"size source {src.name}")
            self._sizes[src] = got
        return got

    def _getattr(self, obj: str, member: str, release: str | None = None) -> str:
        """New reference to obj.member; a missing attribute is a miss (releasing `release`)."""
        ir = self.ir
        name = sys.intern(member)
        self.keep.append(name)
        got = ir.call("ptr", "PyObject_GetAttr", f"ptr {obj}", f"ptr {ir.const_ptr(name)}")
        err, ok = ir.label("attrerr"), ir.label("attrok")
        ir.do(f"br i1 {ir.op(f'icmp eq ptr {got}, null')}, label %{err}, label %{ok}")
        ir.block(err)
        ir.call("void", "PyErr_Clear")
        if release is not None:
            ir.call("void", "Py_DecRef", f"ptr {release}")
        ir.do(f"br label %{ir.fail}")
        ir.block(ok)
        return got

    def _dict_item(self, d: dict, key: str) -> str:
        self.keep.append(d)
        return self._dict_item_of(self.ir.const_ptr(d), key)

    def _dict_item_of(self, dptr: str, key: str) -> str:
        """Borrowed d[key] of a dict (a missing key: KeyError in Python, a miss here)."""
        ir = self.ir
        key = sys.intern(key)
        self.keep.append(key)
        got = ir.call("ptr", "PyDict_GetItem", f"ptr {dptr}", f"ptr {ir.const_ptr(key)}")
        ir.require(ir.op(f"icmp ne ptr {got}, null"))
        return got

    def _tuple_item(self, tup: str, i: int) -> str:
        p = self.ir.op(f"getelementptr inbounds i8, ptr {tup}, i64 {24 + 8 * i}")   # PyTupleObject.ob_item
        return self.ir.op(f"load ptr, ptr {p}, align 8")

    def _array(self, src) -> str:
        if not (isinstance(src, LocalSource) and self.types.get(src.code) is np.ndarray):
            raise NotNative(f"array fields of an unguarded value: {src.name}")
        return self.arg(src.local).ref

    def _array_field(self, size_source, field: str) -> str:
        """shape[d] or strides[d] of a local array whose type and ndim are guarded."""
        if not isinstance(size_source, ShapeSource):
            raise NotNative(f"size source {size_source.name}")
        base, d = size_source.base, size_source.dim
        if not 0 <= d < self.ndims.get(base.code, 0):
            raise NotNative(f"{field}[{d}] past the guarded ndim")
        ptr = self.ir.field(self._array(base), ARRAY_FIELDS[field], "ptr")
        p = self.ir.op(f"getelementptr inbounds i64, ptr {ptr}, i64 {d}")
        return self.ir.op(f"load i64, ptr {p}, align 8")

    # -- expressions -----------------------------------------------------------------------
    def boolean(self, t) -> str:
        v = self.ev(t)
        if v.kind == "bool":
            return v.ref
        if v.kind == "int":
            return self.ir.op(f"icmp ne i64 {v.ref}, 0")
        raise NotNative(f"truth value of {ast.unparse(t)}")

    def integer(self, t) -> str:
        v = self.ev(t)
        return self.as_int(v, t)

    def as_int(self, v: V, t=None) -> str:
        if v.kind == "int":
            return v.ref
        if v.kind == "bool":
            return self.ir.op(f"zext i1 {v.ref} to i64")
        if v.kind == "obj" and v.arg is not None:
            num = self.number(v.arg)
            if num.kind in ("int", "bool"):
                return self.as_int(num)
        raise NotNative(f"not an integer: {ast.unparse(t) if t is not None else v.kind}")

    def number(self, name: str) -> V:
        """The value of an int/bool/float frame value (its exact type is guarded)."""
        if name not in self._ints:
            self._ints[name] = self._number(self.types.get(name), self.arg(name).ref, name)
        return self._ints[name]

    def _number(self, t, obj: str, name: str) -> V:
        ir = self.ir
        if t is int:
            flag = ir.alloca("i32")
            val = ir.call("i64", "PyLong_AsLongLongAndOverflow", f"ptr {obj}", f"ptr {flag}")
            f = ir.op(f"load i32, ptr {flag}, align 4")
            ir.require(ir.op(f"icmp eq i32 {f}, 0"))          # past 64 bits: Python decides
            return V("int", val)
        if t is bool:
            self.keep.append(True)
            return V("bool", ir.op(f"icmp eq ptr {obj}, {ir.const_ptr(True)}"))
        if t is float:
            return V("float", ir.call("double", "PyFloat_AsDouble", f"ptr {obj}"))
        raise NotNative(f"{name} is not a guarded int/bool/float")

    def arg(self, name: str) -> V:
        if name not in self._args:
            p = self.ir.op(f"getelementptr inbounds ptr, ptr %args, i64 {self.argindex[name]}")
            self._args[name] = V("obj", self.ir.op(f"load ptr, ptr {p}, align 8"), arg=name)
        return self._args[name]

    def array(self, t) -> str:
        """PyArrayObject* of a frame value guarded to be exactly an ndarray."""
        if not (isinstance(t, ast.Name) and self.types.get(t.id) is np.ndarray):
            raise NotNative(f"array fields of an unguarded value: {ast.unparse(t)}")
        return self.arg(t.id).ref

    def ev(self, t) -> V:
        ir = self.ir
        if isinstance(t, ast.Constant):
            v = t.value
            if type(v) is bool:
                return V("bool", "true" if v else "false")
            if type(v) is int:
                if not INT_MIN <= v <= INT_MAX:
                    raise NotNative(f"integer constant {v}")
                return V("int", str(v))
            if type(v) is str:
                return V("str", py=sys.intern(v))
            if v is None:
                return V("obj", ir.const_ptr(None), py=_NONE)
            raise NotNative(f"constant {v!r}")
        if isinstance(t, ast.Name):
            if t.id in self.env:
                return self.env[t.id]
            if t.id in self.argindex:
                return self.arg(t.id)
            if t.id in self.namespace:
                obj = self.namespace[t.id]
                self.keep.append(obj)
                return V("const", ir.const_ptr(obj), py=obj)
            raise NotNative(f"name {t.id}")
        if isinstance(t, ast.Attribute):
            return self._attribute(t)
        if isinstance(t, ast.Subscript):
            return self._subscript(t)
        if isinstance(t, ast.Call):
            return self._call(t)
        if isinstance(t, ast.BinOp):
            return self._binop(t)
        if isinstance(t, ast.UnaryOp):
            if isinstance(t.op, ast.Not):
                return V("bool", ir.op(f"xor i1 {self.boolean(t.operand)}, true"))
            if isinstance(t.op, ast.USub):
                return V("int", self.arith("ssub", "0", self.integer(t.operand)))
            if isinstance(t.op, ast.UAdd):
                return V("int", self.integer(t.operand))
        if isinstance(t, ast.BoolOp):
            vals = [self.boolean(v) for v in t.values]
            acc = vals[0]
            for v in vals[1:]:
                acc = ir.op(f"{'and' if isinstance(t.op, ast.And) else 'or'} i1 {acc}, {v}")
            return V("bool", acc)
        if isinstance(t, ast.Compare):
            return self._compare(t)
        raise NotNative(f"expression {ast.unparse(t)}")

    def _attribute(self, t) -> V:
        if t.attr in ("ndim", "shape", "strides") and isinstance(t.value, ast.Name) and \
                self.types.get(t.value.id) is np.ndarray:
            arr = self.array(t.value)
            if t.attr == "ndim":
                nd = self.ir.field(arr, ARRAY_FIELDS["nd"], "i32")
                return V("int", self.ir.op(f"sext i32 {nd} to i64"))
            return V(t.attr, arr, arg=t.value.id)
        base = self.ev(t.value)
        if base.kind not in ("obj", "const"):
            raise NotNative(f"attribute of {ast.unparse(t.value)}")
        name = sys.intern(t.attr)
        self.keep.append(name)
        ir = self.ir
        ir.call("void", "Py_IncRef", f"ptr {base.ref}")       # attribute code may run Python
        got = ir.call("ptr", "PyObject_GetAttr", f"ptr {base.ref}", f"ptr {ir.const_ptr(name)}")
        ir.call("void", "Py_DecRef", f"ptr {base.ref}")
        isnull = ir.op(f"icmp eq ptr {got}, null")
        err, ok = ir.label("attrerr"), ir.label("attrok")
        ir.do(f"br i1 {isnull}, label %{err}, label %{ok}")
        ir.block(err)
        ir.call("void", "PyErr_Clear")
        ir.do(f"br label %{ir.fail}")
        ir.block(ok)
        addr = ir.op(f"ptrtoint ptr {got} to i64")
        ir.call("void", "Py_DecRef", f"ptr {got}")              # only its identity is used
        return V("addr", addr)

    def _subscript(self, t) -> V:
        base = self.ev(t.value)
        key = t.slice
        ir = self.ir
        if base.kind in ("shape", "strides"):
            if not (isinstance(key, ast.Constant) and type(key.value) is int):
                raise NotNative(f"index {ast.unparse(key)}")
            i = key.value
            if not 0 <= i < self.ndims.get(base.arg, 0):
                raise NotNative(f"{base.kind}[{i}] past the guarded ndim")
            ptr = ir.field(base.ref, ARRAY_FIELDS["dimensions" if base.kind == "shape" else "strides"], "ptr")
            p = ir.op(f"getelementptr inbounds i64, ptr {ptr}, i64 {i}")
            return V("int", ir.op(f"load i64, ptr {p}, align 8"))
        if base.kind == "const" and type(base.py) is dict:
            k = self.ev(key)
            if k.kind != "str":
                raise NotNative("dict key")
            self.keep.append(k.py)
            got = ir.call("ptr", "PyDict_GetItem", f"ptr {base.ref}", f"ptr {ir.const_ptr(k.py)}")
            ir.require(ir.op(f"icmp ne ptr {got}, null"))       # KeyError in Python: a miss
            return V("obj", got)
        raise NotNative(f"subscript {ast.unparse(t)}")

    def _call(self, t) -> V:
        if not isinstance(t.func, ast.Name) or t.keywords or t.func.id in self.namespace:
            raise NotNative(f"call {ast.unparse(t)}")
        fn, ir = t.func.id, self.ir
        if fn == "type" and len(t.args) == 1:
            obj = self.ev(t.args[0])
            if obj.kind not in ("obj", "const"):
                raise NotNative("type() of a non-object")
            return V("obj", ir.field(obj.ref, 8, "ptr"))
        if fn in ("max", "min") and len(t.args) >= 2:
            vals = [self.integer(a) for a in t.args]
            acc = vals[0]
            for v in vals[1:]:
                c = ir.op(f"icmp {'sgt' if fn == 'max' else 'slt'} i64 {v}, {acc}")
                acc = ir.op(f"select i1 {c}, i64 {v}, i64 {acc}")
            return V("int", acc)
        if fn == "abs" and len(t.args) == 1:
            v = self.integer(t.args[0])
            neg = self.arith("ssub", "0", v)
            c = ir.op(f"icmp slt i64 {v}, 0")
            return V("int", ir.op(f"select i1 {c}, i64 {neg}, i64 {v}"))
        if fn == "int" and len(t.args) == 1:
            return V("int", self.integer(t.args[0]))
        raise NotNative(f"call {fn}")

    def _binop(self, t) -> V:
        a = self.integer(t.left)
        if type(t.op) in _INT_OPS:
            return V("int", self.arith(_INT_OPS[type(t.op)], a, self.integer(t.right)))
        if isinstance(t.op, ast.Pow):
            if not (isinstance(t.right, ast.Constant) and type(t.right.value) is int and 0 <= t.right.value <= 64):
                raise NotNative(f"power {ast.unparse(t)}")
            acc = "1"
            for _ in range(t.right.value):
                acc = self.arith("smul", acc, a)
            return V("int", acc)
        if isinstance(t.op, (ast.FloorDiv, ast.Mod)):
            return V("int", self.floordiv_mod(a, self.integer(t.right), isinstance(t.op, ast.Mod)))
        raise NotNative(f"operator {ast.unparse(t)}")

    def _compare(self, t) -> V:
        ir = self.ir
        left = self.ev(t.left)
        results = []
        for op, right_t in zip(t.ops, t.comparators):
            right = self.ev(right_t)
            results.append(self._compare2(op, left, right, t))
            left = right
        acc = results[0]
        for r in results[1:]:
            acc = ir.op(f"and i1 {acc}, {r}")
        return V("bool", acc)

    def _compare2(self, op, a: V, b: V, t) -> str:
        ir = self.ir
        if isinstance(op, (ast.Is, ast.IsNot)):
            if a.kind not in ("obj", "const", "addr") or b.kind not in ("obj", "const", "addr"):
                raise NotNative(f"identity of non-objects in {ast.unparse(t)}")
            ai = a.ref if a.kind == "addr" else ir.op(f"ptrtoint ptr {a.ref} to i64")
            bi = b.ref if b.kind == "addr" else ir.op(f"ptrtoint ptr {b.ref} to i64")
            return ir.op(f"icmp {'eq' if isinstance(op, ast.Is) else 'ne'} i64 {ai}, {bi}")
        if isinstance(op, (ast.In, ast.NotIn)):
            if a.kind != "str" or b.kind != "const" or type(b.py) is not dict:
                raise NotNative(f"membership {ast.unparse(t)}")
            self.keep.append(a.py)
            r = ir.call("i32", "PyDict_Contains", f"ptr {b.ref}", f"ptr {ir.const_ptr(a.py)}")
            ir.require(ir.op(f"icmp sge i32 {r}, 0"))
            return ir.op(f"icmp {'ne' if isinstance(op, ast.In) else 'eq'} i32 {r}, 0")
        if isinstance(op, (ast.Eq, ast.NotEq)) and _NONE in (a.py, b.py):
            other = b if a.py is _NONE else a          # `v == None` with type(v) guarded NoneType
            if other.kind == "obj" and self.types.get(other.arg) is type(None):
                return self._compare2(ast.Is() if isinstance(op, ast.Eq) else ast.IsNot(), a, b, t)
        if type(op) in _CMP:
            return ir.op(f"icmp {_CMP[type(op)]} i64 {self.as_int(a, t)}, {self.as_int(b, t)}")
        raise NotNative(f"comparison {ast.unparse(t)}")


def _function_member(src, guarded_types) -> str | None:
    """The member name when `src` is a member slot of a function whose exact type is guarded."""
    if isinstance(src, AttrSource) and src.member in _FUNCTION_MEMBERS and \
            guarded_types.get(src.base.code) is types.FunctionType:
        return src.member
    return None


def _shallow(src) -> bool:
    """`src` is a frame value or a global: reaching it reads inside no frame value."""
    if isinstance(src, (LocalSource, GlobalSource, RootGlobals, HeldSource)):
        return True
    return isinstance(src, GlobalIn) and (src.globals_source is None or isinstance(src.globals_source, HeldSource))
