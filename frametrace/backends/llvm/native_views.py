"""Basic-slice views and plain copies inside the native entry (native_entry.py).

The LLVM backend leaves `a[3] = r` and `a[:2, :2] = r` to NumPy (wrapper steps "getitem"
then "assign": a copy has nothing to fuse). The native entry does both itself:

    d = Desc(data, dims, strides, root, key)    # an array as (address, sizes, byte strides)
    views.getitem(node, parent)                 # a canonical basic index: pointer arithmetic
    views.copy(dst, src)                        # dst[...] = src: nested loops, memmove rows

A view is never a Python object here: only its address, sizes and strides (i64 IR values),
so it costs a few integer operations. Only views of graph inputs (their memory is known
before anything runs) and copies of the same dtype are handled (a copy is then bit-exact,
as NumPy's); everything else raises NotNative and the entry keeps its Python path.
"""
from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass

import numpy as np

from csrc_free_runtime import native as rt_native

from ...ir.graph import IndexSlice, Node
from .native_guards import NotNative

MEMMOVE = ctypes.cast(ctypes.memmove, ctypes.c_void_p).value
MEMSET = ctypes.cast(ctypes.memset, ctypes.c_void_p).value
COPY_KINDS = "biufc"           # dtypes whose copy is a copy of bits


@dataclass(frozen=True)
class Desc:
    """An array's memory: i64 IR values of its address, sizes and byte strides."""
    data: str
    dims: tuple
    strides: tuple
    itemsize: int
    root: str                  # wrapper variable of the array object it views
    key: tuple                 # (root, index, index, ...): equal keys are the same view


class Views:
    def __init__(self, builder):
        self.b = builder
        self.ir = builder.ir

    # -- descriptors ------------------------------------------------------------------------
    def of_obj(self, plan, var: str, node: Node) -> Desc:
        """The descriptor of an array object (dims from the guarded shape)."""
        ir, at = self.ir, rt_native.ARRAY_FIELDS
        obj = self.b.objs[var]
        data = ir.op(f"ptrtoint ptr {ir.field(obj, at['data'], 'ptr')} to i64")
        strides = []
        if node.ndim:
            sp = ir.field(obj, at["strides"], "ptr")
            for d in range(node.ndim):
                p = ir.op(f"getelementptr inbounds i64, ptr {sp}, i64 {d}")
                strides.append(ir.op(f"load i64, ptr {p}, align 8"))
        dims = tuple(self.b.size(plan, plan.size_source(d)) for d in node.shape)
        return Desc(data, dims, tuple(strides), node.dtype.itemsize, var, (var,))

    def getitem(self, plan, node: Node, parent: Desc) -> Desc:
        """x[index] for a canonical basic index (ir/ops/indexing.py: ints already wrapped and
        in bounds, slice starts normalised, steps static): a view, never an element."""
        if node.scalar and node.shape == ():
            raise NotNative("an element read (a NumPy scalar)")
        ir, size = self.ir, (lambda e: self.b.size(plan, plan.size_source(e)))
        index = node.attr("index")
        offset, dims, strides, d, k = "0", [], [], 0, 0
        for e in index:
            if e is None:                          # new axis
                dims.append("1")
                strides.append("0")
                k += 1
                continue
            if d >= len(parent.dims):
                raise NotNative("index longer than the array")
            st = parent.strides[d]
            if isinstance(e, IndexSlice):
                if not isinstance(e.step, int) or e.start is None:
                    raise NotNative(f"slice {e}")
                start = size(e.start)                 # only used when the slice is non-empty
                dims.append(size(node.shape[k]))
                strides.append(ir.op(f"mul i64 {st}, {e.step}"))
                k += 1
            else:
                start = size(e)
            offset = ir.op(f"add i64 {offset}, {ir.op(f'mul i64 {start}, {st}')}")
            d += 1
        if d != len(parent.dims) or k != node.ndim:
            raise NotNative("a non-canonical index")
        data = ir.op(f"add i64 {parent.data}, {offset}")
        return Desc(data, tuple(dims), tuple(strides), parent.itemsize, parent.root,
                    parent.key + (_index_key(index),))

    def bounds(self, d: Desc):
        """(lowest byte, one past the highest byte, is empty) of the memory `d` spans."""
        ir = self.ir
        lo, hi, empty = d.data, ir.op(f"add i64 {d.data}, {d.itemsize}"), "false"
        for n, st in zip(d.dims, d.strides):
            empty = ir.op(f"or i1 {empty}, {ir.op(f'icmp eq i64 {n}, 0')}")
            span = ir.op(f"mul i64 {ir.op(f'sub i64 {n}, 1')}, {st}")
            neg = ir.op(f"icmp slt i64 {span}, 0")
            lo = ir.op(f"add i64 {lo}, {ir.op(f'select i1 {neg}, i64 {span}, i64 0')}")
            hi = ir.op(f"add i64 {hi}, {ir.op(f'select i1 {neg}, i64 0, i64 {span}')}")
        return lo, hi, empty

    def require_copyable(self, dst: Desc, src: Desc, same_ok=True):
        """Miss unless a forward copy src -> dst equals NumPy's (which copies the source first
        when the two overlap): disjoint memory, or (same_ok: not a cast) the very same elements."""
        ir = self.ir
        (alo, ahi, ae), (blo, bhi, be) = self.bounds(dst), self.bounds(src)
        cross = ir.op(f"and i1 {ir.op(f'icmp ult i64 {alo}, {bhi}')}, {ir.op(f'icmp ult i64 {blo}, {ahi}')}")
        ok = ir.op(f"or i1 {ir.op(f'or i1 {ae}, {be}')}, {ir.op(f'xor i1 {cross}, true')}")
        if same_ok and len(dst.dims) == len(src.dims):
            same = ir.op(f"icmp eq i64 {dst.data}, {src.data}")
            for a, b in zip(dst.strides, src.strides):
                same = ir.op(f"and i1 {same}, {ir.op(f'icmp eq i64 {a}, {b}')}")
            ok = ir.op(f"or i1 {ok}, {same}")
        ir.require(ok)

    def broadcast(self, src: Desc, shape: tuple, dst: Desc) -> Desc:
        """src (guarded shape `shape`) with dst's dims: stride 0 where src has size 1 or lacks
        the dim; extra leading dims of size 1 are dropped, as NumPy's assignment does."""
        extra = len(shape) - len(dst.dims)
        strides = src.strides
        if extra > 0:
            if any(not (isinstance(n, int) and n == 1) for n in shape[:extra]):
                raise NotNative("assignment source with more dims")
            shape, strides, extra = shape[extra:], strides[extra:], 0
        strides = ["0"] * -extra + ["0" if (isinstance(n, int) and n == 1) else st
                                    for n, st in zip(shape, strides)]
        return Desc(src.data, dst.dims, tuple(strides), src.itemsize, src.root, src.key)

    def contiguous(self, data: str, like: Desc) -> Desc:
        """A C-contiguous array of `like`'s dims at address `data`."""
        ir, strides, step = self.ir, [], str(like.itemsize)
        for n in reversed(like.dims):
            strides.append(step)
            step = ir.op(f"mul i64 {step}, {n}")
        return Desc(data, like.dims, tuple(reversed(strides)), like.itemsize, "", ("scratch", data))

    def dense_f(self, d: Desc) -> str:
        """i1: `d` is F-contiguous (dense, first axis fastest)."""
        ir, dense, step = self.ir, "true", str(d.itemsize)
        for n, st in zip(d.dims, d.strides):
            dense = ir.op(f"and i1 {dense}, {ir.op(f'icmp eq i64 {st}, {step}')}")
            step = ir.op(f"mul i64 {step}, {n}")
        return dense

    def contiguous_like(self, data: str, like: Desc) -> Desc:
        """A dense array of `like`'s dims at `data`: F order when `like` is F-contiguous (so
        that copy() between them is one memmove), else C order."""
        c = self.contiguous(data, like)
        if len(like.dims) < 2:
            return c
        ir, f_order, strides, step = self.ir, self.dense_f(like), [], str(like.itemsize)
        for n, cs in zip(like.dims, c.strides):
            strides.append(ir.op(f"select i1 {f_order}, i64 {step}, i64 {cs}"))
            step = ir.op(f"mul i64 {step}, {n}")
        return Desc(data, like.dims, tuple(strides), like.itemsize, "", ("scratch", data))

    def nbytes(self, d: Desc) -> str:
        n = str(d.itemsize)
        for size in d.dims:
            n = self.ir.op(f"mul i64 {n}, {size}")
        return n

    # -- the copy ---------------------------------------------------------------------------
    def copy(self, dst: Desc, src, cast=None):
        """Emit dst[...] = src: src a Desc broadcast to dst's dims, or ("const", bytes).
        Both C- or both F-contiguous (checked at run time): one memmove; else nested loops whose
        innermost dimension is one memmove when it is dense on both sides. `cast`: (source
        dtype, destination dtype) of a safe cast (safe_cast), converted element by element."""
        if cast is not None:
            self._loop(dst, src, 0, dst.data, src.data, cast)
            return
        if isinstance(src, tuple) and not any(src[1]) and dst.dims:
            self._zero(dst)                      # `x[...] = 0`: memset (this code is built at O0)
            return
        if isinstance(src, tuple) or len(dst.dims) < 2:
            self._loop(dst, src, 0, dst.data, None if isinstance(src, tuple) else src.data)
            return
        ir = self.ir
        dense, step = "true", str(dst.itemsize)
        for k in reversed(range(len(dst.dims))):
            for st in (dst.strides[k], src.strides[k]):
                dense = ir.op(f"and i1 {dense}, {ir.op(f'icmp eq i64 {st}, {step}')}")
            step = ir.op(f"mul i64 {step}, {dst.dims[k]}")
        if src.dims == dst.dims:                 # both F-contiguous: one memmove too
            both_f = ir.op(f"and i1 {self.dense_f(dst)}, {self.dense_f(src)}")
            dense = ir.op(f"or i1 {dense}, {both_f}")
        whole, loops, done = ir.label("whole"), ir.label("loops"), ir.label("copied")
        ir.do(f"br i1 {dense}, label %{whole}, label %{loops}")
        ir.block(whole)
        self._memmove(dst.data, src.data, step)
        ir.do(f"br label %{done}")
        ir.block(loops)
        self._loop(dst, src, 0, dst.data, src.data)
        ir.do(f"br label %{done}")
        ir.block(done)

    def _zero(self, dst: Desc):
        """dst[...] = 0 (all bytes zero): one memset when dst is C- or F-contiguous, else one per
        dense innermost row, else element by element."""
        ir = self.ir
        dense, step = "true", str(dst.itemsize)
        for k in reversed(range(len(dst.dims))):
            dense = ir.op(f"and i1 {dense}, {ir.op(f'icmp eq i64 {dst.strides[k]}, {step}')}")
            step = ir.op(f"mul i64 {step}, {dst.dims[k]}")
        dense = ir.op(f"or i1 {dense}, {self.dense_f(dst)}")
        whole, loops, done = ir.label("zwhole"), ir.label("zloops"), ir.label("zeroed")
        ir.do(f"br i1 {dense}, label %{whole}, label %{loops}")
        ir.block(whole)
        self._memset(dst.data, step)
        ir.do(f"br label %{done}")
        ir.block(loops)
        self._loop(dst, ("const", bytes(dst.itemsize)), 0, dst.data, None)
        ir.do(f"br label %{done}")
        ir.block(done)

    def _memset(self, dp: str, nbytes: str):
        ir = self.ir
        fn = ir.op(f"inttoptr i64 {MEMSET} to ptr")
        ir.op(f"call ptr {fn}(ptr {ir.op(f'inttoptr i64 {dp} to ptr')}, i32 0, i64 {nbytes})")

    def _memmove(self, dp: str, sp: str, nbytes: str):
        ir = self.ir
        fn = ir.op(f"inttoptr i64 {MEMMOVE} to ptr")
        ir.op(f"call ptr {fn}(ptr {ir.op(f'inttoptr i64 {dp} to ptr')}, "
              f"ptr {ir.op(f'inttoptr i64 {sp} to ptr')}, i64 {nbytes})")

    def _loop(self, dst: Desc, src, k: int, dp: str, sp, cast=None):
        ir, nd = self.ir, len(dst.dims)
        if k == nd:
            self._element(dst, src, dp, sp, cast)
            return
        if cast is not None:
            self._counted(dst, src, k, dp, sp, cast)
            return
        if k == nd - 1 and sp is None and not any(src[1]):   # a row of zeros: memset when dense
            row, loop, done = ir.label("zrow"), ir.label("zelems"), ir.label("zrowdone")
            ir.do(f"br i1 {ir.op(f'icmp eq i64 {dst.strides[k]}, {dst.itemsize}')}, label %{row}, label %{loop}")
            ir.block(row)
            self._memset(dp, ir.op(f"mul i64 {dst.dims[k]}, {dst.itemsize}"))
            ir.do(f"br label %{done}")
            ir.block(loop)
            self._counted(dst, src, k, dp, sp)
            ir.do(f"br label %{done}")
            ir.block(done)
            return
        if k == nd - 1 and sp is not None:         # a contiguous row: one memmove
            row, loop, done = ir.label("row"), ir.label("elems"), ir.label("rowdone")
            isz = dst.itemsize
            dense = ir.op(f"and i1 {ir.op(f'icmp eq i64 {dst.strides[k]}, {isz}')}, "
                          f"{ir.op(f'icmp eq i64 {src.strides[k]}, {isz}')}")
            ir.do(f"br i1 {dense}, label %{row}, label %{loop}")
            ir.block(row)
            self._memmove(dp, sp, ir.op(f"mul i64 {dst.dims[k]}, {isz}"))
            ir.do(f"br label %{done}")
            ir.block(loop)
            self._counted(dst, src, k, dp, sp)
            ir.do(f"br label %{done}")
            ir.block(done)
            return
        self._counted(dst, src, k, dp, sp)

    def _counted(self, dst: Desc, src, k: int, dp: str, sp, cast=None):
        ir = self.ir
        i = ir.alloca("i64")
        head, body, done = ir.label("head"), ir.label("body"), ir.label("done")
        ir.do(f"store i64 0, ptr {i}, align 8")
        ir.do(f"br label %{head}")
        ir.block(head)
        iv = ir.op(f"load i64, ptr {i}, align 8")
        ir.do(f"br i1 {ir.op(f'icmp slt i64 {iv}, {dst.dims[k]}')}, label %{body}, label %{done}")
        ir.block(body)
        dp2 = ir.op(f"add i64 {dp}, {ir.op(f'mul i64 {iv}, {dst.strides[k]}')}")
        sp2 = None if sp is None else ir.op(f"add i64 {sp}, {ir.op(f'mul i64 {iv}, {src.strides[k]}')}")
        self._loop(dst, src, k + 1, dp2, sp2, cast)
        ir.do(f"store i64 {ir.op(f'add i64 {iv}, 1')}, ptr {i}, align 8")
        ir.do(f"br label %{head}")
        ir.block(done)

    def _element(self, dst: Desc, src, dp: str, sp, cast=None):
        ir = self.ir
        if cast is not None:
            (sty, dty), conv = (_llvm_type(t) for t in cast), _conversion(*cast)
            value = ir.op(f"load {sty}, ptr {ir.op(f'inttoptr i64 {sp} to ptr')}, align 1")
            if conv is not None:
                value = ir.op(f"{conv} {sty} {value} to {dty}")
            ir.do(f"store {dty} {value}, ptr {ir.op(f'inttoptr i64 {dp} to ptr')}, align 1")
            return
        ty = f"i{8 * dst.itemsize}"
        if sp is None:
            value = str(int.from_bytes(src[1], "little", signed=True))
        else:
            value = ir.op(f"load {ty}, ptr {ir.op(f'inttoptr i64 {sp} to ptr')}, align 1")
        ir.do(f"store {ty} {value}, ptr {ir.op(f'inttoptr i64 {dp} to ptr')}, align 1")


def constant_bytes(value, dtype: np.dtype):
    """The bits NumPy stores for `dst[...] = value` (a Python scalar), when exact and
    unambiguous; None otherwise (NumPy decides: casts that raise or warn, NaN into ints)."""
    if type(value) is bool and dtype.kind == "b":
        return bytes([int(value)])
    if type(value) is int and dtype == np.float64 and abs(value) <= 2 ** 53:
        return struct.pack("<d", float(value))
    if type(value) is float and dtype == np.float64:
        return struct.pack("<d", value)
    if type(value) is int and dtype == np.int64 and -2 ** 63 <= value < 2 ** 63:
        return struct.pack("<q", value)
    return None


def safe_cast(src: np.dtype, dst: np.dtype):
    """(src, dst) when `dst[...] = src_array` is a cast the entry makes exactly as NumPy does:
    a safe cast between bool, integer and real float dtypes (never raises or reports: an
    int64 -> float64 rounds to nearest as C's conversion does); None otherwise."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst or any(t.kind not in "biuf" or not t.isnative or (t.kind == "f" and t.itemsize not in (4, 8))
                         for t in (src, dst)) or not np.can_cast(src, dst, "safe"):
        return None                # (float16 and long double: no plain LLVM conversion here)
    return src, dst


def _llvm_type(dt: np.dtype) -> str:
    return ("float" if dt.itemsize == 4 else "double") if dt.kind == "f" else f"i{8 * dt.itemsize}"


def _conversion(src: np.dtype, dst: np.dtype):
    """The LLVM cast instruction of a safe cast (safe_cast), or None for the same bits."""
    unsigned = src.kind in "bu"
    if dst.kind == "f":
        if src.kind == "f":
            return "fpext"
        return "uitofp" if unsigned else "sitofp"
    if src.itemsize == dst.itemsize:
        return None
    return "zext" if unsigned else "sext"


def _index_key(index) -> tuple:
    return tuple((e.start, e.stop, e.step) if isinstance(e, IndexSlice) else e for e in index)


__all__ = ["Desc", "Views", "constant_bytes", "safe_cast", "COPY_KINDS"]
