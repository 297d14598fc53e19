"""Loop IR: what one fused kernel computes, before any LLVM detail.

A `Kernel` is a loop nest over symbolic extents. Its buffers are strided arrays (base
pointer + one byte stride per dimension, passed at run time); its scalar arguments are
sizes, index offsets and scalar inputs, also passed at run time. Static sizes are `Const`s.

Expressions are immutable, hashable records (equal records are the same value, which is
how the code generator shares common subexpressions). Every expression has a `dtype`, a
NumPy dtype name ("float64", "int32", "bool", ...); `Op.dtype` is the *result* dtype, the
operands carry their own (comparisons: operands float64, result bool).

Statements:
  Loop(var, stop, body, start=0, split=False, until=None)   for var in [start, stop)
      `split`: the loop that is cut into [lo, hi) chunks for threads (at most one, top level)
      `until`: a bool expression evaluated after each iteration's body; the loop ends when it
      holds (a `break`: only the native loops of backends/llvm/loops.py build it)
      `pairwise`: its float `red_add` accumulators add up the iterations in NumPy's pairwise
      order (codegen/llvm_kernels/pairwise.py; lower/reductions.py decides where)
      `short`: at most a few iterations (the first ones of an unroll-and-jam copy: backends/
      llvm/loop_jam.py), compiled as one scalar loop (no vector versions to build)
  Acc(name, dtype, init)        declare an accumulator (mutable scalar) and initialise it
  Update(name, value)           accumulator := value (value may read Var(name))
  Let(name, value)              an immutable scalar computed once (e.g. mean = acc / n)
  Store(buf, index, value, pos=())
                                buffers[buf][index] = value (pos: data-dependent positions, DataLoad)
  Append(buf, counter, cap, value, cond)
                                compaction onto a 1-d buffer of `cap` elements: if cond,
                                buffers[buf][counter] = value and the accumulator `counter`
                                (int64) grows by one (x[mask]: lower/compact.py)
  If(cond, body, orelse)        run `body` when the bool `cond` holds, else `orelse`: a choice
                                made once per call or row, on run-time facts (a matrix
                                product's loop order from its operands' strides, or BLAS having
                                computed it already: lower/matmul.py). Lets made inside a
                                branch are local to it.

Indices are `Affine` forms, one per buffer dimension: sum(coef * loop var) + const + syms,
where `syms` are int64 `Arg`s times ints (symbolic offsets: the start of `x[s0 - 1:]`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Const:
    value: object
    dtype: str

    def __str__(self):
        return f"{self.value!r}:{self.dtype}"


@dataclass(frozen=True)
class Arg:
    """A by-value kernel argument (slot index into the packed argument block)."""
    slot: int
    dtype: str

    def __str__(self):
        return f"arg{self.slot}"


@dataclass(frozen=True)
class Var:
    """The current value of an accumulator, or a Let."""
    name: str
    dtype: str

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Stride:
    """The byte stride of buffer `buf` along dimension `dim` (int64, known at run time)."""
    buf: int
    dim: int
    dtype: str = "int64"

    def __str__(self):
        return f"stride(b{self.buf}, {self.dim})"


@dataclass(frozen=True)
class Affine:
    terms: tuple = ()          # ((loop var name, int coefficient), ...), sorted by var
    const: int = 0
    syms: tuple = ()           # ((Arg, int coefficient), ...): run-time offsets

    @staticmethod
    def var(name, coef=1):
        return Affine(((name, coef),)) if coef else Affine()

    @staticmethod
    def _merge(a, b):
        coefs = dict(a)
        for v, c in b:
            coefs[v] = coefs.get(v, 0) + c
        return tuple(sorted(((v, c) for v, c in coefs.items() if c), key=lambda t: str(t[0])))

    def __add__(self, other: "Affine") -> "Affine":
        return Affine(self._merge(self.terms, other.terms), self.const + other.const,
                      self._merge(self.syms, other.syms))

    def scale(self, k: int) -> "Affine":
        if k == 0:
            return Affine()
        return Affine(tuple((v, c * k) for v, c in self.terms), self.const * k,
                      tuple((a, c * k) for a, c in self.syms))

    def coef(self, var: str) -> int:
        return dict(self.terms).get(var, 0)

    def without(self, var: str) -> "Affine":
        return Affine(tuple(t for t in self.terms if t[0] != var), self.const, self.syms)

    def __str__(self):
        parts = [str(v) if c == 1 else f"{c}*{v}" for v, c in self.terms + self.syms]
        if self.const or not parts:
            parts.append(str(self.const))
        return "+".join(parts)


@dataclass(frozen=True)
class Load:
    buf: int
    index: tuple               # tuple[Affine], one per buffer dimension
    dtype: str

    def __str__(self):
        return f"b{self.buf}[{', '.join(map(str, self.index))}]"


@dataclass(frozen=True)
class Gather(Load):
    """A load at a data-dependent position along `axis`: index[axis] is Affine() and `pos` (an
    int64 expression, in bounds: op gather_pos) is added there (np.take_along_axis)."""
    axis: int = 0
    pos: object = None

    def __str__(self):
        return f"b{self.buf}[{', '.join(map(str, self.index))}; {self.axis}: {self.pos}]"


@dataclass(frozen=True)
class DataLoad(Load):
    """A load at data-dependent positions: `pos` is ((axis, int64 expression), ...), each added
    along its axis (whose Affine in `index` is 0); the expressions are in bounds (checked_index:
    the native element loops of backends/llvm/loops.py)."""
    pos: tuple = ()

    def __str__(self):
        return f"b{self.buf}[{_positions(self.index, self.pos)}]"


def _positions(index, pos) -> str:
    data = dict(pos)
    return ", ".join(str(data[d]) if d in data else str(a) for d, a in enumerate(index))


@dataclass(frozen=True)
class Op:
    op: str
    dtype: str
    args: tuple

    def __hash__(self):
        # cached: a fused chain shares subexpressions (x[1:] - x[:-1], repeated), and an
        # uncached hash walks the DAG as a tree, exponential in its depth
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.op, self.dtype, self.args))
            object.__setattr__(self, "_hash", h)
        return h

    def __str__(self):
        return f"{self.op}({', '.join(map(str, self.args))}):{self.dtype}"


def cast(x, dtype: str):
    """`x` converted to `dtype` as NumPy's unsafe astype would (no-op if already)."""
    if x.dtype == dtype:
        return x
    return Op("cast", dtype, (x,))


# ----------------------------------------------------------------------------- statements


@dataclass
class Loop:
    var: str
    stop: object               # Const | Arg (int64)
    body: list
    start: object = Const(0, "int64")
    split: bool = False
    until: object = None       # bool expression: leave after this iteration when it holds
    pairwise: bool = False     # float sums in NumPy's pairwise order (module doc)
    short: bool = False        # a few iterations at most: one scalar version, not vectorised


@dataclass
class Acc:
    name: str
    dtype: str
    init: object


@dataclass
class Update:
    name: str
    value: object


@dataclass
class Let:
    name: str
    value: object


@dataclass
class Store:
    buf: int
    index: tuple
    value: object
    pos: tuple = ()            # data-dependent positions, as DataLoad.pos


@dataclass
class Append:
    buf: int
    counter: str
    cap: object                # Const | Arg (int64): elements of the buffer
    value: object
    cond: object               # bool


@dataclass
class If:
    cond: object               # bool expression
    body: list
    orelse: list = field(default_factory=list)


def nested(s) -> list:
    """The statement lists inside statement `s` (a loop's body, both branches of an If)."""
    if isinstance(s, Loop):
        return [s.body]
    if isinstance(s, If):
        return [s.body, s.orelse]
    return []


# ----------------------------------------------------------------------------- kernel


@dataclass
class Buffer:
    """One array argument: `source` is the wrapper variable holding the NumPy array."""
    source: str
    dtype: str
    ndim: int
    written: bool = False
    noalias: bool = True       # no other argument may overlap it (proved by the scheduler)


@dataclass
class Slot:
    """One by-value argument: `source` is a Python expression in the wrapper."""
    source: str
    dtype: str                 # "int64" for sizes/offsets; the scalar's dtype otherwise


@dataclass
class Kernel:
    name: str
    body: list
    buffers: list = field(default_factory=list)
    slots: list = field(default_factory=list)
    split_extent: str = "1"    # Python expression: trip count of the split loop (1: no split)
    work: str = "0"            # Python expression: estimated cost, decides threading
    note: str = ""             # which graph nodes it computes (for logs)
    tier: str = "full"         # "quick": compiled for small sizes (no interleave; backends/llvm/tiers.py)
    bail: tuple | None = None  # (status buffer, loop var): checked ops (codegen/llvm_kernels/checked.py)
                               # leave that loop, storing its var into the 0-d int64 buffer
    keep: str | None = None    # an int64 accumulator the body consumes at its exit, so that nothing
                               # that feeds it is optimised away (lower/flag_check.py)
    wide: bool = False         # vectorise with the host's widest vectors (512-bit on AVX-512):
                               # kernels holding a matrix product nest (lower/matmul.py)


def walk_exprs(e):
    """Every expression reachable from `e` (including e), each once."""
    seen, stack = set(), [e]
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        yield x
        if isinstance(x, Op):
            stack.extend(x.args)
        elif isinstance(x, Gather):
            stack.append(x.pos)
        elif isinstance(x, DataLoad):
            stack.extend(e for _, e in x.pos)


def format_kernel(k: Kernel) -> str:
    """Readable listing of a kernel (tested verbatim in golden tests)."""
    bufs = ", ".join(f"b{i}: {b.dtype}[{b.ndim}d]{' out' if b.written else ''} = {b.source}"
                     for i, b in enumerate(k.buffers))
    slots = ", ".join(f"arg{i}: {s.dtype} = {s.source}" for i, s in enumerate(k.slots))
    lines = [f"kernel {k.name}({bufs}){'; ' + slots if slots else ''}:"]
    _format_body(k.body, lines, "  ")
    return "\n".join(lines)


def _format_body(body, lines, ind):
    for s in body:
        if isinstance(s, Loop):
            lines.append(f"{ind}for {s.var} in [{s.start}, {s.stop}){' split' if s.split else ''}:")
            _format_body(s.body, lines, ind + "  ")
        elif isinstance(s, Acc):
            lines.append(f"{ind}acc {s.name}: {s.dtype} = {s.init}")
        elif isinstance(s, Update):
            lines.append(f"{ind}{s.name} := {s.value}")
        elif isinstance(s, Let):
            lines.append(f"{ind}let {s.name} = {s.value}")
        elif isinstance(s, Store):
            lines.append(f"{ind}b{s.buf}[{_positions(s.index, s.pos)}] = {s.value}")
        elif isinstance(s, Append):
            lines.append(f"{ind}if {s.cond}: b{s.buf}[{s.counter}++ < {s.cap}] = {s.value}")
        elif isinstance(s, If):
            lines.append(f"{ind}if {s.cond}:")
            _format_body(s.body, lines, ind + "  ")
            if s.orelse:
                lines.append(f"{ind}else:")
                _format_body(s.orelse, lines, ind + "  ")
        else:
            raise TypeError(s)
