"""The pieces native entries are built from: IR (text LLVM IR of one function), V (a
translated value) and NotNative (this construct is not compiled natively)."""
from __future__ import annotations

from csrc_free_runtime.native import C_ADDRESSES

INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


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


OVERFLOW_DECLS = "\n".join(f"declare {{i64, i1}} @llvm.{op}.with.overflow.i64(i64, i64)"
                           for op in ("sadd", "ssub", "smul"))
