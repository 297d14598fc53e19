"""The kernel's entry point and its packed argument block (see emit.py's module doc).

`args` holds 8 bytes per item: buffer data pointers, then every buffer's byte strides, then
the by-value slots (sizes, offsets, scalars); with the object ABI, one PyArrayObject* per
buffer instead of pointers and strides (read from the array object at fixed offsets). The
entry loads them and calls `@k.body`, whose parameters are body_params(k).
"""
from __future__ import annotations

from ...lower.loop_ir import Kernel
from . import fpflags
from . import types as T

# PyArrayObject field offsets (CPython 3.11 / NumPy 2, 64-bit); the backend verifies them
# at import before choosing the object ABI (runtime.ARRAY_LAYOUT_OK)
ARRAY_DATA_OFFSET = 16
ARRAY_STRIDES_OFFSET = 40


def body_params(k: Kernel) -> list:
    """Parameters of `@k.body`: lo, hi, buffer pointers, their strides, the slots."""
    params = ["i64 %lo", "i64 %hi"]
    params += [f"ptr{' noalias' if b.noalias else ''} %b{i}" for i, b in enumerate(k.buffers)]
    params += [f"i64 %st{i}_{d}" for i, b in enumerate(k.buffers) for d in range(b.ndim)]
    params += [f"{T.reg(s.dtype)} %a{j}" for j, s in enumerate(k.slots)]
    return params


def entry_function(k: Kernel, object_abi: bool, fp: bool, x87: bool = False) -> str:
    """`define void @k(i64 %lo, i64 %hi, ptr %args)`: loads the packed block and calls the body
    (`x87`: it calls NumPy's loops, whose explicit flags may be in the x87 word: fpflags.entry_ir)."""
    wide = ' "prefer-vector-width"="512"' if k.wide else ""     # the body's, where it is inlined here
    out = [f"define void @{k.name}(i64 %lo, i64 %hi, ptr %args) nounwind{wide} {{", "entry:"]
    args, n = ["i64 %lo", "i64 %hi"], 0

    def slot(ty):
        nonlocal n
        p = f"%p{n}"
        out.append(f"  {p} = getelementptr i64, ptr %args, i64 {n}")
        out.append(f"  %v{n} = load {ty}, ptr {p}")
        n += 1
        return f"%v{n - 1}"
    if object_abi:                 # args hold PyArrayObject*: read data, strides
        objs = [slot("ptr") for _ in k.buffers]
        ptrs, strides = [], []
        for i, (o, b) in enumerate(zip(objs, k.buffers)):
            out.append(f"  %data{i}.p = getelementptr i8, ptr {o}, i64 {ARRAY_DATA_OFFSET}")
            out.append(f"  %data{i} = load ptr, ptr %data{i}.p")
            ptrs.append(f"ptr %data{i}")
            if b.ndim:
                out.append(f"  %strides{i}.p = getelementptr i8, ptr {o}, i64 {ARRAY_STRIDES_OFFSET}")
                out.append(f"  %strides{i} = load ptr, ptr %strides{i}.p")
            for d in range(b.ndim):
                out.append(f"  %st{i}.{d}.p = getelementptr i64, ptr %strides{i}, i64 {d}")
                out.append(f"  %st{i}.{d} = load i64, ptr %st{i}.{d}.p")
                strides.append(f"i64 %st{i}.{d}")
        args += ptrs + strides
    else:
        for _ in k.buffers:
            args.append(f"ptr {slot('ptr')}")
        for b in k.buffers:
            for _ in range(b.ndim):
                args.append(f"i64 {slot('i64')}")
    for j, s in enumerate(k.slots):
        ty = T.reg(s.dtype)
        if T.kind(s.dtype) == "f":
            v = slot("double")
            if ty == "float":
                out.append(f"  %c{j} = fptrunc double {v} to float")
                v = f"%c{j}"
        else:
            v = slot("i64")
            if ty == "i1":
                out.append(f"  %c{j} = icmp ne i64 {v}, 0")
                v = f"%c{j}"
            elif ty != "i64":
                out.append(f"  %c{j} = trunc i64 {v} to {ty}")
                v = f"%c{j}"
        args.append(f"{ty} {v}")
    call = f"  call void @{k.name}.body({', '.join(args)})"
    out += fpflags.entry_ir(call, x87) if fp else [call]
    out += ["  ret void", "}"]
    return "\n".join(out)


def pack_format(k: Kernel, object_abi: bool = False) -> str:
    """struct format of the packed argument block of kernel k (see module doc)."""
    fmt = "q" * (len(k.buffers) + (0 if object_abi else sum(b.ndim for b in k.buffers)))
    for s in k.slots:
        fmt += "d" if T.kind(s.dtype) == "f" else ("Q" if s.dtype == "uint64" else "q")
    return "=" + fmt
