"""Python guard expressions -> LLVM IR, for native entries (native_entry.py).

Guards, symbol bindings and size expressions are Python source (guards/guard_set.py,
shapes/printer.py). `Translator` compiles a small, exactly-specified subset of that source
to IR over the frame values of a METH_FASTCALL call; anything outside the subset raises
`NotNative` and the entry simply keeps only its Python path.

Soundness rules (a native guard that passes where Python's fails is a wrong answer):
* every evaluation that could differ from Python (an int past 64 bits, an arithmetic
  overflow, a division by zero, a missing global, an attribute error) branches to `miss`,
  which is always safe: the Python path then decides;
* `x.dtype == D` is checked as identity of the descriptor (identity implies equality); that
  is only sound where the comparison must be true for the guard to pass, so it is accepted
  only as a top-level conjunct;
* array fields are read only from frame values whose exact type `numpy.ndarray` and ndim are
  guarded; type and ndim guards are therefore hoisted before all others (guards are a pure
  conjunction, so their order does not change the answer);
* `and`/`or` evaluate both sides (no short circuit): a side that would raise makes a miss.
"""
from __future__ import annotations

import ast
import sys

import numpy as np

from csrc_free_runtime.native import ARRAY_FIELDS, C_ADDRESSES

INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
_NONE = object()           # V.py of the constant None


class NotNative(Exception):
    """This entry (or this construct) is not compiled natively; the reason is logged."""


class IR:
    """Text IR of one function: numbered temporaries, blocks, entry-block allocas."""

    def __init__(self):
        self.lines: list = []
        self.allocas: list = []
        self._n = 0
        self.fail = "miss"          # where a failed check goes (None: checks are over)

    def tmp(self, prefix="t") -> str:
        self._n += 1
        return f"%{prefix}{self._n}"

    def op(self, rhs: str) -> str:
        name = self.tmp()
        self.lines.append(f"  {name} = {rhs}")
        return name

    def do(self, text: str):
        self.lines.append(f"  {text}")

    def label(self, prefix="b") -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def block(self, label: str):
        self.lines.append(f"{label}:")

    def alloca(self, ty: str) -> str:
        name = self.tmp("a")
        self.allocas.append(f"  {name} = alloca {ty}, align 8")
        return name

    def require(self, cond: str):
        """Continue only if the i1 `cond` is true; otherwise take the miss path."""
        if self.fail is None:
            raise AssertionError("native entry: a guard check after the outputs were allocated")
        ok = self.label("ok")
        self.do(f"br i1 {cond}, label %{ok}, label %{self.fail}")
        self.block(ok)

    def cfn(self, name: str) -> str:
        """A pointer to C function `name` (its address is fixed for this process)."""
        return self.op(f"inttoptr i64 {C_ADDRESSES[name]} to ptr")

    def call(self, ret: str, name: str, *args: str) -> str:
        fn = self.cfn(name)
        text = f"call {ret} {fn}({', '.join(args)})"
        if ret == "void":
            self.do(text)
            return ""
        return self.op(text)

    def const_ptr(self, obj) -> str:
        return self.op(f"inttoptr i64 {id(obj)} to ptr")

    def field(self, obj: str, offset: int, ty: str) -> str:
        p = self.op(f"getelementptr inbounds i8, ptr {obj}, i64 {offset}")
        return self.op(f"load {ty}, ptr {p}, align {4 if ty == 'i32' else 8}")


class V:
    """A translated value: kind int (i64), bool (i1), float (double), obj (ptr, borrowed),
    addr (i64 address, only for `is`), dims/strides (of array `ref`), str/const (Python
    values known now)."""

    __slots__ = ("kind", "ref", "py", "arg")

    def __init__(self, kind, ref=None, py=None, arg=None):
        self.kind, self.ref, self.py, self.arg = kind, ref, py, arg


_INT_OPS = {ast.Add: "sadd", ast.Sub: "ssub", ast.Mult: "smul"}
_CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "slt", ast.LtE: "sle", ast.Gt: "sgt", ast.GtE: "sge"}


class Translator:
    """Compiles guard/size source over the frame values `argnames` (args[i] of the call)."""

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

    # -- guards ----------------------------------------------------------------------------
    def hoisted(self, guard_codes) -> list:
        """Emit, in their order, the guards that do not look inside frame values (type guards,
        globals: the only ones that may run Python code, through getattr); then the ndim
        guards; return the rest. So no field is read before code that could change it ran."""
        rest, ndims = [], []
        for code in guard_codes:
            tree = ast.parse(code, mode="eval").body
            name, value = self._type_guard(tree)
            if name is not None:
                self.require_top(tree)
                self.types[name] = value
                continue
            name, nd = self._ndim_guard(tree)
            if name is not None:
                ndims.append((name, nd, tree))
            elif self._opaque(tree):
                self.require_top(tree)
            else:
                rest.append(tree)
        for name, nd, tree in ndims:
            if self.types.get(name) is np.ndarray:
                self.require_top(tree)
                self.ndims[name] = nd
            else:
                rest.append(tree)
        return rest

    def _type_guard(self, t):
        """`type(<frame value>) is <bound type>` -> (name, type)."""
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Is) and \
                isinstance(t.left, ast.Call) and isinstance(t.left.func, ast.Name) and t.left.func.id == "type" \
                and len(t.left.args) == 1 and isinstance(t.left.args[0], ast.Name) and \
                t.left.args[0].id in self.argindex and isinstance(t.comparators[0], ast.Name) and \
                isinstance(self.namespace.get(t.comparators[0].id), type):
            return t.left.args[0].id, self.namespace[t.comparators[0].id]
        return None, None

    def _opaque(self, t) -> bool:
        """Frame values appear in `t` only as objects (`type(v)`, `v is ...`), never read."""
        if isinstance(t, ast.Name):
            return t.id not in self.argindex
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "type" and \
                len(t.args) == 1 and isinstance(t.args[0], ast.Name):
            return True
        if isinstance(t, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in t.ops):
            return all(isinstance(x, ast.Name) or self._opaque(x) for x in [t.left] + t.comparators)
        return all(self._opaque(c) for c in ast.iter_child_nodes(t) if isinstance(c, ast.expr))

    def _ndim_guard(self, t):
        if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq) and \
                isinstance(t.left, ast.Attribute) and t.left.attr == "ndim" and isinstance(t.left.value, ast.Name) \
                and t.left.value.id in self.argindex and isinstance(t.comparators[0], ast.Constant) and \
                type(t.comparators[0].value) is int:
            return t.left.value.id, t.comparators[0].value
        return None, None

    def require_top(self, tree):
        """A guard: each top-level conjunct must hold (dtype equality as identity)."""
        parts = tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]
        for part in parts:
            dt = self._dtype_eq(part)
            if dt is not None:
                self.ir.require(dt)
            else:
                self.ir.require(self.boolean(part))

    def _dtype_eq(self, t):
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)):
            return None
        left, right = t.left, t.comparators[0]
        if not (isinstance(left, ast.Attribute) and left.attr == "dtype" and isinstance(right, ast.Name)
                and isinstance(self.namespace.get(right.id), np.dtype)):
            return None
        arr = self.array(left.value)
        descr = self.ir.field(arr, ARRAY_FIELDS["descr"], "ptr")
        want = self.namespace[right.id]
        self.keep.append(want)
        return self.ir.op(f"icmp eq ptr {descr}, {self.ir.const_ptr(want)}")

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
        if name in self._ints:
            return self._ints[name]
        t, ir, obj = self.types.get(name), self.ir, self.arg(name).ref
        if t is int:
            flag = ir.alloca("i32")
            val = ir.call("i64", "PyLong_AsLongLongAndOverflow", f"ptr {obj}", f"ptr {flag}")
            f = ir.op(f"load i32, ptr {flag}, align 4")
            ir.require(ir.op(f"icmp eq i32 {f}, 0"))          # past 64 bits: Python decides
            v = V("int", val)
        elif t is bool:
            self.keep.append(True)
            v = V("bool", ir.op(f"icmp eq ptr {obj}, {ir.const_ptr(True)}"))
        elif t is float:
            v = V("float", ir.call("double", "PyFloat_AsDouble", f"ptr {obj}"))
        else:
            raise NotNative(f"{name} is not a guarded int/bool/float")
        self._ints[name] = v
        return v

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

    def arith(self, op: str, a: str, b: str) -> str:
        """a (+|-|*) b on i64; an overflow (Python would go on exactly) is a miss."""
        ir = self.ir
        r = ir.op(f"call {{i64, i1}} @llvm.{op}.with.overflow.i64(i64 {a}, i64 {b})")
        ir.require(ir.op(f"xor i1 {ir.op(f'extractvalue {{i64, i1}} {r}, 1')}, true"))
        return ir.op(f"extractvalue {{i64, i1}} {r}, 0")

    def _binop(self, t) -> V:
        a, b, ir = self.integer(t.left), None, self.ir
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
            b = self.integer(t.right)
            ir.require(ir.op(f"icmp ne i64 {b}, 0"))             # ZeroDivisionError: a miss
            minus = ir.op(f"and i1 {ir.op(f'icmp eq i64 {a}, {INT_MIN}')}, {ir.op(f'icmp eq i64 {b}, -1')}")
            ir.require(ir.op(f"xor i1 {minus}, true"))           # INT_MIN // -1 overflows
            q, r = ir.op(f"sdiv i64 {a}, {b}"), ir.op(f"srem i64 {a}, {b}")
            # Python rounds toward -inf: adjust when the remainder's sign differs from b's
            signs = ir.op(f"icmp slt i64 {ir.op(f'xor i64 {r}, {b}')}, 0")
            adj = ir.op(f"and i1 {ir.op(f'icmp ne i64 {r}, 0')}, {signs}")
            if isinstance(t.op, ast.FloorDiv):
                return V("int", ir.op(f"sub i64 {q}, {ir.op(f'zext i1 {adj} to i64')}"))
            return V("int", ir.op(f"select i1 {adj}, i64 {ir.op(f'add i64 {r}, {b}')}, i64 {r}"))
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


OVERFLOW_DECLS = "\n".join(f"declare {{i64, i1}} @llvm.{op}.with.overflow.i64(i64, i64)"
                           for op in ("sadd", "ssub", "smul"))
