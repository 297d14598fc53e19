"""Random NumPy programs as Python source, and a differential runner (eager vs compiled).

A program is a function `f(x[, y[, z]][, s])` of up to three arrays and an optional Python
scalar, built statement by statement from templates (ufuncs, operators, broadcasting,
reductions, reshapes, transposes, slices, where/clip/astype/concatenate/matmul, in-place
updates on copies and on the arguments, boolean masks, branches on sizes and on data).
Each candidate statement is executed on two small *sample* environments (different sizes
for the symbolic dims n, m, k); it is kept if NumPy accepts it on both (so most programs
are valid for every size), and with a small probability an invalid one is kept to end the
program (so error paths are exercised too).

The generator draws through a `Source`: `RandomSource` (run_fuzz.py: fast, endless) or
`HypothesisSource` (pytest: shrinking). fuzzrun.py runs a program eagerly and compiled
(dynamic None/True/False x backends) on several calls and returns a list of mismatches.
"""
from __future__ import annotations

import copy
import dataclasses
import random
import warnings

import numpy as np


DTYPES = ("bool", "int32", "int64", "float32", "float64")
SIZES = (0, 1, 2, 3, 4, 5, 7, 11, 13)
LAYOUTS = ("C", "F", "strided", "neg")
SAMPLE_DIMS = ({"n": 2, "m": 3, "k": 4}, {"n": 5, "m": 7, "k": 6})
TOL = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-9,
       np.dtype(np.complex64): 1e-5, np.dtype(np.complex128): 1e-9}


# ---- sources of randomness ----------------------------------------------------------------

class RandomSource:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def choice(self, seq):
        return seq[self.r.randrange(len(seq))]

    def randint(self, lo, hi):
        return self.r.randint(lo, hi)

    def chance(self, p):
        return self.r.random() < p


class HypothesisSource:
    def __init__(self, data):
        from hypothesis import strategies as st
        self.st, self.data = st, data

    def choice(self, seq):
        return self.data.draw(self.st.sampled_from(list(seq)))

    def randint(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))

    def chance(self, p):
        # biased boolean that shrinks to False
        return self.data.draw(self.st.integers(0, 999)) >= 1000 * (1 - p)


# ---- program description --------------------------------------------------------------------

@dataclasses.dataclass
class ArgSpec:
    name: str
    dims: tuple = ()          # of "n" | "m" | "k" | 1   (arrays)
    dtype: str = "float64"    # arrays
    scalar: str | None = None  # "int" | "float" | "bool" for the scalar argument


@dataclasses.dataclass
class CallSpec:
    sizes: dict
    seed: int
    layouts: dict             # arg name -> layout
    readonly: dict            # arg name -> bool
    dtypes: dict              # arg name -> dtype (usually the program's)
    scalar: object = None     # value of the scalar argument
    same_xy: bool = False     # pass x as y too (aliasing arguments)


@dataclasses.dataclass
class Program:
    source: str
    args: list
    calls: list
    writes_args: bool = False
    factories: list | None = None   # fuzzshapes: fresh inputs per call (args/calls unused)
    one_graph: bool | None = None   # dynamic=True: no recompile after the first call
    specialises: str = ""           # why one_graph is False
    errstate: str | None = None     # None (quiet) | "warn" | "raise" around every call

    def describe(self):
        if self.factories is not None:
            lines = [self.source.rstrip()]
            for fac in self.factories:
                lines.append(f"# call: {fac()!r}")
            lines.append(f"# one_graph={self.one_graph} {self.specialises} errstate={self.errstate}")
            return "\n".join(lines)
        lines = [self.source.rstrip(), "# args: " + ", ".join(
            f"{a.name}: {a.scalar or (a.dtype + str(tuple(a.dims)))}" for a in self.args)]
        for c in self.calls:
            lines.append(f"# call: {c}")
        return "\n".join(lines)


# ---- inputs ---------------------------------------------------------------------------------

def _values(shape, dtype, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(-6, 7, size=shape).astype(dt)
    v = np.round(rng.standard_normal(shape) * 3, 2)
    if v.size and rng.random() < 0.15:
        flat = v.reshape(-1)
        for _ in range(max(1, v.size // 5)):
            flat[rng.integers(v.size)] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0])
    return v.astype(dt)


def make_array(shape, dtype, layout, readonly, rng):
    vals = _values(shape, dtype, rng)
    nd = len(shape)
    if layout == "F" and nd >= 2:
        a = np.asfortranarray(vals)
    elif layout == "strided" and nd >= 1:
        big = np.zeros(tuple(2 * d + 1 for d in shape), dtype=vals.dtype)
        a = big[tuple(slice(1, None, 2) for _ in shape)]
        a[...] = vals
    elif layout == "neg" and nd >= 1:
        rev = tuple(slice(None, None, -1) for _ in shape)
        a = np.ascontiguousarray(vals[rev])[rev]
    else:
        a = np.array(vals, order="C", copy=True)
    assert a.shape == tuple(shape)
    if readonly:
        a.setflags(write=False)
    return a


def make_inputs(prog: Program, call: CallSpec):
    rng = np.random.default_rng(call.seed)
    out = []
    for a in prog.args:
        if a.scalar is not None:
            out.append(call.scalar)
            continue
        if call.same_xy and a.name == "y":
            out.append(out[0])
            continue
        shape = tuple(call.sizes[d] if isinstance(d, str) else d for d in a.dims)
        out.append(make_array(shape, call.dtypes[a.name], call.layouts[a.name],
                              call.readonly[a.name], rng))
    return out


# ---- generation -----------------------------------------------------------------------------

UNARY_FUNCS = ("np.sin", "np.exp", "np.abs", "np.sqrt", "np.floor", "np.negative", "np.isnan",
               "np.square", "np.log1p", "np.tanh", "np.sign", "np.ceil", "np.isfinite",
               "np.logical_not", "np.cos", "np.reciprocal", "np.trunc", "np.rint", "np.invert")
UNARY_OPS = ("-{a}", "~{a}", "abs({a})", "+{a}")
BIN_OPS = ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<", "<=", "==", "!=", ">", ">=")
BIN_FUNCS = ("np.maximum", "np.minimum", "np.add", "np.multiply", "np.subtract", "np.arctan2",
             "np.hypot", "np.fmax", "np.logical_and", "np.logical_xor", "np.true_divide",
             "np.power", "np.fmod", "np.floor_divide", "np.copysign")
REDUCTIONS = ("sum", "mean", "max", "min", "prod", "any", "all", "argmax", "argmin", "std",
              "var", "cumsum")
CAST_DTYPES = ("np.float32", "np.float64", "np.int32", "np.int64", "np.bool_", "np.int8",
               "np.uint8", "np.float16")
CONSTS = ("0", "1", "2", "3", "-1", "-2", "0.5", "2.5", "-1.5", "True", "False", "7", "1e3")


class Gen:
    def __init__(self, src, args, scalar_name):
        self.src = src
        self.args = args
        self.scalar_name = scalar_name
        self.envs = []
        self.lines = []
        self.counter = 0
        self.writes_args = False
        self.broken = False

    # sample environments -----------------------------------------------------------------
    def init_envs(self):
        for i, dims in enumerate(SAMPLE_DIMS):
            rng = np.random.default_rng(i)
            env = {"np": np}
            for a in self.args:
                if a.scalar is not None:
                    env[a.name] = {"int": 3, "float": 1.5, "bool": True}[a.scalar]
                else:
                    shape = tuple(dims[d] if isinstance(d, str) else d for d in a.dims)
                    env[a.name] = _values(shape, a.dtype, rng)
            self.envs.append(env)

    def names(self):
        return [k for k in self.envs[0] if k != "np" and not k.startswith("_")]

    def value(self, name, i=0):
        return self.envs[i][name]

    def arrays(self, min_ndim=0):
        return [n for n in self.names()
                if isinstance(self.value(n), np.ndarray) and self.value(n).ndim >= min_ndim]

    def try_stmt(self, text):
        """Execute text on copies of the sample envs; keep it if it works on all of them."""
        new = []
        for env in self.envs:
            env2 = {"np": np, **copy.deepcopy({k: v for k, v in env.items() if k != "np"})}
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exec(text, env2)
            except Exception:
                return False
            for k in [k for k in env2 if k.startswith("__")]:
                del env2[k]
            new.append(env2)
        # the same names must have the same kinds in both sample envs
        self.envs = new
        self.lines.append(text)
        return True

    def fresh(self):
        self.counter += 1
        return f"v{self.counter}"

    # operand choice -----------------------------------------------------------------------
    def pick(self, pool=None):
        pool = pool or self.names()
        # prefer recent values
        if len(pool) > 2 and self.src.chance(0.5):
            return pool[-1 - self.src.randint(0, min(2, len(pool) - 1))]
        return self.src.choice(pool)

    def compatible(self, a):
        """Names whose values broadcast with a in every sample env."""
        out = []
        for n in self.names():
            try:
                for env in self.envs:
                    np.broadcast_shapes(np.shape(env[a]), np.shape(env[n]))
            except ValueError:
                continue
            out.append(n)
        return out

    def operand(self, a):
        r = self.src.randint(0, 9)
        if r < 5:
            return self.pick(self.compatible(a) or None)
        if r < 8:
            return self.src.choice(CONSTS)
        if self.scalar_name and r == 8:
            return self.scalar_name
        return self.pick()

    def slice_text(self):
        def bound():
            return self.src.choice(("", "", "1", "2", "-1", "-2", "3", "-3"))
        step = self.src.choice(("", "", "1", "2", "-1", "-2", "3"))
        lo, hi = bound(), bound()
        return f"{lo}:{hi}" + (f":{step}" if step else "")

    # statements ---------------------------------------------------------------------------
    def candidate(self):
        s = self.src
        arrs = self.arrays()
        a = self.pick(arrs) if arrs else self.pick()
        v = self.fresh()
        nd = np.ndim(self.value(a))
        if s.chance(0.1):
            return self.loop_stmt(a, v, nd)
        kind = s.randint(0, 99)
        if kind < 16:
            b = self.operand(a)
            op = s.choice(BIN_OPS)
            if op == "**" and s.chance(0.6):
                b = s.choice(("2", "3", "0", "1", "-1", "2.0", "0.5", "-2"))
            if s.chance(0.3):
                a, b = b, a
            return f"{v} = {a} {op} {b}"
        if kind < 24:
            return f"{v} = {s.choice(BIN_FUNCS)}({a}, {self.operand(a)})"
        if kind < 32:
            if s.chance(0.5):
                return f"{v} = {s.choice(UNARY_FUNCS)}({a})"
            return f"{v} = " + s.choice(UNARY_OPS).format(a=a)
        if kind < 42:
            red = s.choice(REDUCTIONS)
            axis = None
            if nd and s.chance(0.7):
                if s.chance(0.2) and nd >= 2:
                    axis = "(" + ", ".join(str(i) for i in sorted(
                        {s.randint(-nd, nd - 1) % nd for _ in range(2)})) + ",)"
                else:
                    axis = str(s.randint(-nd, nd - 1))
            kw = []
            if axis is not None:
                kw.append(f"axis={axis}")
            if red not in ("cumsum",) and s.chance(0.3):
                kw.append("keepdims=True")
            if s.chance(0.5):
                return f"{v} = {a}.{red}({', '.join(kw)})"
            return f"{v} = np.{red}({', '.join([a] + kw)})"
        if kind < 52:
            opts = [f"{a}.reshape(-1)", f"{a}.ravel()", f"{a}.T", f"np.transpose({a})",
                    f"{a}[None]", f"np.expand_dims({a}, 0)", f"{a}.flatten()",
                    f"{a}.reshape({a}.shape[::-1])", f"np.squeeze({a})", f"{a}.copy()"]
            if nd >= 1:
                opts += [f"{a}[:, None]",
                         f"{a}.reshape(-1, {a}.shape[-1])", f"{a}.reshape({a}.shape[0], -1)",
                         f"{a}.reshape(1, -1)", f"{a}.reshape(-1, 1)"]
            if nd >= 2:
                opts += [f"np.swapaxes({a}, 0, -1)", f"{a}.transpose(1, 0, *range(2, {a}.ndim))",
                         f"{a}.reshape({a}.shape[0] * {a}.shape[1], *{a}.shape[2:])",
                         f"{a}.T.reshape(-1)"]
            return f"{v} = {s.choice(opts)}"
        if kind < 62:
            if nd == 0:
                return f"{v} = {a}[()]" if s.chance(0.5) else f"{v} = {a}[...]"
            r = s.randint(0, 5)
            if r == 0:
                idx = s.choice(("0", "-1", "1"))
            elif r == 1 and self.scalar_name and self.args[-1].scalar == "int":
                idx = s.choice((f":{self.scalar_name}", f"{self.scalar_name}:", "::-1"))
            elif r == 2:
                idx = "..., " + self.slice_text()
            else:
                idx = ", ".join(self.slice_text() for _ in range(s.randint(1, nd)))
            return f"{v} = {a}[{idx}]"
        if kind < 68:
            b, c = self.operand(a), self.operand(a)
            cond = s.choice((f"{a} > 0", f"{a} > {b}", f"{a}", f"np.isnan({a})"))
            if s.chance(0.5):
                return f"{v} = np.where({cond}, {b}, {c})"
            return f"{v} = np.where({cond}, {a}, {b})"
        if kind < 72:
            lo = s.choice(("-1", "0", "None", "-2.5", self.operand(a)))
            hi = s.choice(("1", "3", "None", "2.5", self.operand(a)))
            return f"{v} = np.clip({a}, {lo}, {hi})"
        if kind < 77:
            return f"{v} = {a}.astype({s.choice(CAST_DTYPES)})"
        if kind < 81:
            others = [n for n in self.arrays() if np.ndim(self.value(n)) == nd] or [a]
            b = s.choice(others)
            ax = s.randint(-nd, nd - 1) if nd else 0
            extra = f", axis={ax}" if s.chance(0.7) else ""
            return f"{v} = np.concatenate([{a}, {b}]{extra})"
        if kind < 85:
            others = self.arrays(1) or [a]
            b = s.choice(others)
            return s.choice((f"{v} = {a} @ {b}", f"{v} = np.matmul({a}, {b})",
                             f"{v} = {a} @ {a}.T", f"{v} = np.dot({a}, {b})"))
        if kind < 93:
            return self.inplace(a, v)
        if kind < 96:
            cond = s.choice((f"{a} > 0", f"~np.isnan({a})", f"{a} != 1"))
            return f"{v} = {a}[{cond}]"
        if kind < 98:
            sz = f"{a}.shape[{s.randint(0, nd - 1)}]" if nd else f"{a}.size"
            sc = self.scalar_name or "2"
            return s.choice((f"{v} = {sz} * {sc} + 1", f"{v} = {a} * ({sz} - 1)",
                             f"{v} = len({a}) if {a}.ndim else {a}.size",
                             f"{v} = {a} * 2 if {sz} > 3 else {a} - 1",
                             f"{v} = {a} + {sc} if {sc} > 1 else {a} - {sc}"))
        return s.choice((f"{v} = {a} + 1 if {a}.sum() > 0 else {a} - 1",
                         f"{v} = float({a}.sum()) * 2",
                         f"{v} = {a}.sum().item() + 1"))

    def loop_stmt(self, a, v, nd):
        """A Python loop (trace/loops.py makes loop nodes of these): a recurrence over the
        first axis, an accumulation with a data-dependent branch, a while loop on data, a
        nested element loop, a `while i < n` counter, a `break` on data. Loop variables start
        with `_` (not reused as operands)."""
        s = self.src
        i, j, acc = f"_i{self.counter}", f"_j{self.counter}", f"_a{self.counter}"
        if nd == 0:
            return (f"{v} = np.asarray({a}, dtype=np.float64).copy()\n{acc} = 0\n"
                    f"while {v} > 1.0 and {acc} < 4:\n    {v} = {v} * 0.5\n    {acc} += 1")
        r = s.randint(0, 6)
        step = s.choice(("", "", ", -1"))
        elem = f"{a}[{i}{', 0' * (nd - 1)}]"
        if r == 5:
            return (f"{acc} = 0.0\n{i} = 0\nwhile {i} < {a}.shape[0]:\n"
                    f"    {acc} = {acc} * 0.5 + {elem}\n    {i} += {s.choice(('1', '2'))}\n{v} = {acc} + {i}")
        if r == 6:
            return (f"{acc} = {a}.ravel()[0] * 0\nfor {i} in range({a}.shape[0]):\n"
                    f"    if {elem} > {s.choice(('0', '1', '-1'))}:\n        break\n"
                    f"    {acc} = {acc} + {elem}\n{v} = {acc}")
        if r == 0:
            rng = f"range(1, {v}.shape[0])" if not step else f"range({v}.shape[0] - 2, -1, -1)"
            prev = f"{i} - 1" if not step else f"{i} + 1"
            coef = s.choice(("0.5", "2", "-1", self.scalar_name or "3"))
            return (f"{v} = {a}.copy()\nfor {i} in {rng}:\n"
                    f"    {v}[{i}] = {v}[{i}] * {coef} + {v}[{prev}]")
        if r == 1:
            init = s.choice(("0.0", "0", f"{a}.ravel()[0] * 0" if nd else "0"))
            body = f"{a}[{i}]" if nd == 1 else f"{a}[{i}].sum()"
            return (f"{acc} = {init}\nfor {i} in range({a}.shape[0]):\n"
                    f"    if {body} > {s.choice(('0', '1', '-1'))}:\n        {acc} = {acc} + {body}\n"
                    f"    else:\n        {acc} = {acc} * {s.choice(('1', '2', '0.5'))}\n{v} = {acc}")
        if r == 2:
            return (f"{v} = {a}.astype(np.float64)\n{acc} = 0\n"
                    f"while np.abs({v}).max() > 1.0 and {acc} < 6:\n"
                    f"    {v} = {v} * 0.5 + 0.1\n    {acc} += 1")
        if r == 3 and nd >= 2:
            return (f"{v} = np.zeros({a}.shape[:2])\nfor {i} in range({a}.shape[0]):\n"
                    f"    for {j} in range({a}.shape[1]):\n"
                    f"        {v}[{i}, {j}] = {v}[{i} - 1, {j}] + {a}[{i}, {j}] if {i} > 0 else {a}[{i}, {j}] * 2")
        return (f"{v} = {a}.copy()\nfor {i} in range({s.choice(('3', '40', f'{a}.shape[0]'))}):\n"
                f"    {v} = {v} * 0.5 + {a}")

    def errstate_block(self, text):
        """The statement inside a `with np.errstate(...)` block (traced: trace/errstate.py)."""
        kind = self.src.choice(("divide", "invalid", "over", "all"))
        mode = self.src.choice(("ignore", "ignore", "warn", "raise"))
        return f"with np.errstate({kind}={mode!r}):\n" + "\n".join("    " + ln for ln in text.splitlines())

    def inplace(self, a, v):
        s = self.src
        arg_arrays = [x.name for x in self.args if x.scalar is None]
        on_arg = s.chance(0.4)
        if on_arg:
            t = s.choice(arg_arrays)
            prefix = ""
        else:
            t = v
            prefix = f"{v} = {a}.copy()\n" if s.chance(0.7) else f"{v} = {a}[::-1]\n"
        tv = self.value(t) if on_arg else self.value(a)
        nd = np.ndim(tv)
        op = s.choice(("+=", "-=", "*=", "/=", "//=", "%=", "**=", "|=", "&="))
        rhs = self.operand(t if on_arg else a)
        r = s.randint(0, 5)
        if r <= 1 or nd == 0:
            stmt = f"{t} {op} {rhs}"
        elif r == 2:
            stmt = f"{t}[{self.slice_text()}] = {rhs}"
        elif r == 3:
            stmt = f"{t}[{t} > 0] = {s.choice(('0', '1', '-1.5', rhs))}"
        elif r == 4:
            stmt = f"{t}[{self.slice_text()}] {op} {rhs}"
        else:
            stmt = f"{t}[...] = {rhs}"
        if on_arg:
            self.writes_args = True
            return stmt + (f"\n{v} = {t}" if s.chance(0.5) else "")
        return prefix + stmt


def gen_program(src) -> Program:
    n_arr = src.choice((1, 2, 2, 3))
    args = []
    dim_pool = ("n", "m", "k", 1)
    first_dims = tuple(src.choice(("n", "m", "k")) for _ in range(src.choice((0, 1, 1, 2, 2, 2, 3))))
    for name in ("x", "y", "z")[:n_arr]:
        if name == "x":
            dims = first_dims
        else:
            r = src.randint(0, 4)
            if r <= 1:          # broadcastable suffix / same shape
                dims = first_dims[src.randint(0, len(first_dims)):] if first_dims else ()
                dims = tuple(1 if (d != 1 and src.chance(0.2)) else d for d in dims)
            else:
                dims = tuple(src.choice(dim_pool) for _ in range(src.choice((0, 1, 2, 2, 3))))
        args.append(ArgSpec(name, dims, src.choice(DTYPES)))
    scalar_name = None
    if src.chance(0.5):
        args.append(ArgSpec("s", scalar=src.choice(("int", "int", "float", "float", "bool"))))
        scalar_name = "s"

    g = Gen(src, args, scalar_name)
    g.init_envs()
    n_stmts = src.randint(1, 6)
    for _ in range(n_stmts):
        for _attempt in range(8):
            text = g.candidate()
            if src.chance(0.08):
                text = g.errstate_block(text)
            if g.try_stmt(text):
                break
        else:
            if src.chance(0.3):        # keep an invalid statement: an error program
                g.lines.append(text)
                g.broken = True
                break
    # return value
    names = [n for n in g.names() if n not in ("np",)]
    r = src.randint(0, 9)
    if g.broken or r < 5:
        ret = names[-1] if names else "None"
        if g.broken:
            ret = text.split("=")[0].strip() if "=" in text and not text.lstrip().startswith(
                tuple(a.name for a in args)) else names[-1]
    elif r < 8:
        k = src.randint(2, 3)
        ret = "(" + ", ".join(src.choice(names) for _ in range(k)) + ",)"
    else:
        ret = src.choice(names)
    body = "\n".join(g.lines) or "pass"
    sig = ", ".join(a.name for a in args)
    source = "import numpy as np\n\ndef f(" + sig + "):\n" + "\n".join(
        "    " + ln for ln in body.splitlines()) + f"\n    return {ret}\n"

    # calls
    calls = []
    n_calls = src.randint(2, 5)
    base = {d: src.choice(SIZES) for d in ("n", "m", "k")}
    for i in range(n_calls):
        r = src.randint(0, 3)
        if i == 0 or r == 0:
            sizes = dict(base)          # same sizes, new data
        else:
            sizes = {d: (src.choice(SIZES) if src.chance(0.6) else base[d]) for d in base}
        layouts, ro, dts = {}, {}, {}
        for a in args:
            if a.scalar is None:
                layouts[a.name] = src.choice(LAYOUTS) if src.chance(0.5) else "C"
                ro[a.name] = src.chance(0.25 if not g.writes_args else 0.05)
                dts[a.name] = a.dtype if not src.chance(0.06) else src.choice(DTYPES)
        scalar = None
        if scalar_name:
            kind = args[-1].scalar
            if src.chance(0.05):
                kind = src.choice(("int", "float", "bool"))
            scalar = {"int": lambda: src.randint(-3, 8),
                      "float": lambda: src.choice((0.5, 1.5, -2.25, 3.0, 0.0, 1e-3, 7.5)),
                      "bool": lambda: src.chance(0.5)}[kind]()
        same_xy = (len([a for a in args if a.scalar is None]) >= 2 and args[0].dims == args[1].dims
                   and args[0].dtype == args[1].dtype and src.chance(0.1))
        calls.append(CallSpec(sizes, src.randint(0, 2**31), layouts, ro, dts, scalar, same_xy))
    return Program(source, args, calls, g.writes_args)
