"""How the wrapper calls a native element loop (loops.py builds its kernel): the packed
arguments, the checks that send a call to the generic path (arrays sharing memory: the kernel's
buffers are `noalias`; a read-only destination: NumPy raises; a Python int beyond int64), and
the hand-back when a checked op left the kernel early (codegen/llvm_kernels/checked.py): the
kernel's status word holds the iteration it left at, and the generic path runs the loop from
that iteration with the carried values it began with. The call is generated Python
(`_fast_call`, ~1 us), not a walk over the plan.
"""
from __future__ import annotations

import struct
from collections import Counter

import numpy as np

from ...codegen.llvm_kernels import fpflags, pack_format
from ...ir.graph import Node
from ...ir.registry import get_op
from ...lower.loop_ir import Kernel

# calls that ran the kernel ("native"), of which a checked op handed the rest to the generic path
# ("resumed"), and calls run by the generic path from the start ("generic": overlapping or
# read-only arrays, a Python int beyond int64)
runs: Counter = Counter()
# the trip count a native `while` loop gets when its test holds: it leaves by its `go` output
WHILE_TRIPS = 2 ** 62


class NotNative(Exception):
    """This loop keeps the generic path (the message says why, for the logs)."""


class NativeLoop:
    """The kernel of one loop node and the call that runs it from the wrapper."""

    def __init__(self, node: Node, kernel: Kernel, plan: list, out_types: list, object_abi: bool):
        self.node, self.kernel = node, kernel
        self.plan, self.out_types = plan, out_types       # how each kernel argument comes from the node's
        self._pack = struct.Struct(pack_format(kernel, object_abi)).pack
        self.object_abi = object_abi
        self._fn = None                                  # set once the module is loaded
        self.generic = None                              # () -> the loop run per iteration (overlapping arrays)
        self._generic = None
        self._arrays = [src for kind, src, _ in plan if kind == "buf"]
        bufs = [(src, b.written) for b, (kind, src, _) in zip(kernel.buffers, plan) if kind == "buf"]
        self._checks = [(a, b) for i, (a, wa) in enumerate(bufs) for b, wb in bufs[i + 1:]
                        if (wa or wb) and not _apart(node.args[a], node.args[b])]
        self._fast = None
        self.checked = any(kind == "stat" for kind, _, _ in plan)
        self._written = [src for b, (kind, src, _) in zip(kernel.buffers, plan) if kind == "buf" and b.written]
        self.jammed = 0                                  # outer iterations per pass (loop_jam.py), 0: none
        self.float_products = False                      # a float/complex dot or product (not BLAS's order)

    @property
    def fn(self):
        return self._fn

    @fn.setter
    def fn(self, fn):
        self._fn = fn
        self._fast = _fast_call(self) if fn is not None and self.object_abi else None

    def entry(self):
        """What the wrapper calls: the generated call when there is one (no indirection)."""
        return self._fast if self._fast is not None else self

    def __call__(self, *args):
        if self._fast is not None:
            return self._fast(*args)
        for a, b in self._checks:                        # the kernel's buffers are `noalias`
            if np.may_share_memory(args[a], args[b]):
                return self._run_generic(args)
        if not all(args[k].flags.writeable for k in self._written):
            return self._run_generic(args)               # NumPy raises its own error there
        bufs, slots, outs = [], [], []
        for kind, src, dt in self.plan:
            if kind == "buf":
                bufs.append(args[src])
            elif kind == "scratch":                       # loop_arrays.assign_array
                bufs.append(np.empty(args[src].size, dt))
            elif kind == "scratch_dims":                  # loop_arrays._matrix_product
                bufs.append(np.empty(tuple(f if isinstance(f, int) else args[f[0]].shape[f[1]] for f in src), dt))
            elif kind in ("out", "stat"):
                out = np.empty((), dt)
                if kind == "out":
                    outs.append(out)
                else:
                    status = out                         # the iteration a checked op left at, or -1
                bufs.append(out)
            elif kind == "trip":
                start, stop, step = args[0], args[1], args[2]
                slots.append(len(range(start, stop, step)))
            elif kind == "go":                           # a `while`: unbounded unless its test failed
                slots.append(WHILE_TRIPS if args[0] else 0)
            elif kind == "dim":
                slots.append(args[src[0]].shape[src[1]])
            else:
                value = args[src]
                slots.append(float(value) if dt == "f" else complex(value).real if dt == "re" else
                             complex(value).imag if dt == "im" else int(value))
        try:
            if self.object_abi:
                packed = self._pack(*(id(b) for b in bufs), *slots)
            else:
                strides = [s for b in bufs for s in b.strides]
                packed = self._pack(*(b.ctypes.data for b in bufs), *strides, *slots)
        except struct.error:                             # a Python int beyond int64
            return self._run_generic(args)
        runs["native"] += 1
        self.fn(0, 1, packed)
        carried = tuple(t(o[()]) if t is not None else o[()] for o, t in zip(outs, self.out_types))
        if self.checked and status[()] >= 0:
            return self._resume(args, int(status[()]), carried)
        return carried

    def _resume(self, args, ran, carried):
        """The kernel left at iteration `ran` (a checked op): the generic path runs the rest
        from that iteration's start, with the carried values it began with (a `while`: its
        test held, that iteration runs). The FP flags of the kernel's iterations stay the
        wrapper's (the body's own wrapper takes only its own: backends/llvm/reports.py)."""
        runs["resumed"] += 1
        args = list(args)
        if self.node.attr("body").kind == "while":
            args[0] = True
            args[1:1 + len(carried)] = carried
        else:
            args[0] = args[0] + args[2] * ran
            args[3:3 + len(carried)] = carried
        flags = fpflags.take()
        try:
            return self._run_generic(args)
        finally:
            fpflags.WORD.value |= flags

    def _run_generic(self, args):
        """Arrays that share memory: the body's own compiled graph, once per iteration."""
        runs["generic"] += 1
        if self._generic is None:
            self._generic = self.generic()
        return self._generic(*args)


def _base(v):
    while isinstance(v, Node) and v.op != "input" and get_op(v.op).kind == "view":
        v = v.args[0]
        if not isinstance(v, Node):
            return None
    return v


def _apart(a, b) -> bool:
    """Arrays `a` and `b` (loop-node arguments) never share memory: different bases, one of
    them a new array (a creation op, an elementwise result, a copy) of this graph."""
    a, b = _base(a), _base(b)
    if not (isinstance(a, Node) and isinstance(b, Node)) or a is b:
        return False
    return any(x.op != "input" and (x.op == "copy" or get_op(x.op).kind in ("creation", "elementwise"))
               for x in (a, b))


def _fast_call(nl: NativeLoop):
    """The call of `nl` as one generated function of the loop node's arguments."""
    nargs = len(nl.node.args)
    params = ", ".join(f"a{i}" for i in range(nargs))
    ns = {"_fn": nl.fn, "_pack": nl._pack, "_share": np.may_share_memory, "_empty": np.empty, "_id": id,
          "_generic": nl._run_generic, "_len": len, "_range": range, "_error": struct.error,
          "_resume": nl._resume, "_runs": runs, "_complex": complex}
    lines = [f"def call({params}):"]
    for a, b in nl._checks:
        lines.append(f"    if _share(a{a}, a{b}): return _generic(({params},))")
    for k in nl._written:                 # a read-only destination: NumPy's error, from the generic path
        lines.append(f"    if not a{k}.flags.writeable: return _generic(({params},))")
    packed, outs = [], []
    for kind, src, dt in nl.plan:
        if kind == "buf":
            packed.append(f"_id(a{src})")
        elif kind == "scratch":           # loop_arrays.assign_array: as large as the array it stands for
            name = f"s{len(packed)}"
            ns[f"_sdt{len(packed)}"] = np.dtype(dt)
            lines.append(f"    {name} = _empty(a{src}.size, _sdt{len(packed)})")
            packed.append(f"_id({name})")
        elif kind == "scratch_dims":      # loop_arrays._matrix_product: an array of these extents
            name = f"s{len(packed)}"
            ns[f"_sdt{len(packed)}"] = np.dtype(dt)
            shape = "".join(f"{f}, " if isinstance(f, int) else f"a{f[0]}.shape[{f[1]}], " for f in src)
            lines.append(f"    {name} = _empty(({shape}), _sdt{len(packed)})")
            packed.append(f"_id({name})")
        elif kind == "stat":
            lines.append("    st = _empty((), 'int64')")
            packed.append("_id(st)")
        elif kind == "out":
            name = f"o{len(outs)}"
            ns[f"_dt{len(outs)}"] = np.dtype(dt)
            lines.append(f"    {name} = _empty((), _dt{len(outs)})")
            packed.append(f"_id({name})")
            outs.append(name)
    for kind, src, dt in nl.plan:
        if kind == "trip":
            packed.append("_len(_range(a0, a1, a2))")
        elif kind == "go":
            packed.append(f"({WHILE_TRIPS} if a0 else 0)")
        elif kind == "slot" and dt in ("re", "im"):          # a complex scalar's parts (loops.py)
            packed.append(f"_complex(a{src}).{'real' if dt == 're' else 'imag'}")
        elif kind == "slot":
            packed.append(f"{'float' if dt == 'f' else 'int'}(a{src})")
        elif kind == "dim":
            packed.append(f"a{src[0]}.shape[{src[1]}]")
    lines.append("    try:")
    lines.append(f"        p = _pack({', '.join(packed)})")
    lines.append(f"    except _error: return _generic(({params},))")     # a Python int beyond int64
    lines.append("    _runs['native'] += 1")
    lines.append("    _fn(0, 1, p)")
    results = []
    for k, (name, t) in enumerate(zip(outs, nl.out_types)):
        if t is None:
            results.append(f"{name}[()]")
        else:
            ns[f"_t{k}"] = t
            results.append(f"_t{k}({name}[()])")
    if nl.checked:
        lines.append("    if st[()] >= 0:")
        lines.append(f"        return _resume(({params},), int(st[()]), ({''.join(r + ', ' for r in results)}))")
    lines.append(f"    return ({''.join(r + ', ' for r in results)})")
    exec(compile("\n".join(lines), f"<native loop {nl.kernel.name}>", "exec"), ns)
    return ns["call"]
