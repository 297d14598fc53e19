"""Elementwise graph nodes -> loop-IR expressions (one element at a time).

`lower_elementwise(node, operands)` turns a ufunc / where / clip / astype node into an
`Op` tree over its operands' expressions. The loop dtypes are NumPy's own: the ufunc's
`resolve_dtypes` on the operands' dtypes, with weak Python scalars passed as `int`/`float`
(NEP 50), so `f32_array * 2.0` computes in float32 and `i32_array < 2.5` in float64.
Anything it cannot express raises `NotLowerable`, and the node runs as a NumPy fallback.

The loop-IR op vocabulary (`LOOP_OPS`) is the contract with the code generator: every
(op, operand kind) listed here is implemented there (a test checks it); the ufuncs' entries
come from the registry (each op's `Loop(kinds)`, ir/ops/elementwise.py).
"""
from __future__ import annotations

import weakref

import numpy as np
import sympy

from ..ir.graph import SCALAR_MATH, Node, fold_operands_first
from ..ir.ops.elementwise import BINARY, UNARY          # registers the elementwise ops
from ..ir.registry import OPS, Loop, lowered_as, lowering
from .loop_ir import Const, Op, cast

SUPPORTED_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                              "uint32", "uint64", "float32", "float64"})
# native loop bodies (backends/llvm/loops.py) compute complex values too
# (codegen/llvm_kernels/complex_ops.py); fused kernels leave them to NumPy
LOOP_DTYPES = SUPPORTED_DTYPES | {"complex64", "complex128"}


class NotLowerable(Exception):
    """This node has no loop-IR lowering; it runs as a NumPy fallback."""


def kind(dtype: str) -> str:
    """'b' bool, 'i' signed, 'u' unsigned, 'f' float."""
    return np.dtype(dtype).kind


# internal ops: affine(Affine) -> int64 index value, cast, where(c, a, b), clip(x, lo, hi) with np.clip's NaN rules,
# reduction combiners red_add/red_mul (reassoc for floats), red_max/red_min (NaN-propagating),
# red_fmax/red_fmin (NaN-skipping), red_max_nonan/red_min_nonan (a `nnan` max, vmaxpd: the
# reduction masks and tracks NaN apart), red_peak_max/red_peak_min (the same, unmasked: argmax/argmin's
# first pass, which compares equal), fix_zero_sign(m, neg, pos) (a max/min's zero result with the
# sign of the zeros seen, lower/reductions.py), mask_nan(x, fill) (x with NaN replaced by the
# constant fill, which the optimiser does not see: a max over it stays a vectorised reduction),
# keep_bits(acc, x) -> int64 (acc | the bits of x: what a flag-check kernel keeps of the values
# it does not store, lower/flag_check.py),
# sort_vec(row...) / sort_pick(sorted, k, lanes) (lower/sorting.py),
# gather_pos(index, n) -> the in-bounds int64 position of a gather (take_along_axis),
# red_and/red_or, argbetter_max/argbetter_min(x, best) -> bool (NumPy's first-NaN rule).
# clip_scalar(x, lo, hi): NumPy's clip loop for bounds that do not move (scalars, size-1 arrays): ties keep x.
# scalar_add/subtract/multiply/negative/absolute: integer `a * b` on NumPy scalars (graph.SCALAR_MATH),
# whose overflow NumPy's scalar math reports (the "over" flag; fpflags.SCALAR_INT).
SCALAR_INT = frozenset({"scalar_add", "scalar_subtract", "scalar_multiply", "scalar_negative", "scalar_absolute"})
_INTERNAL = ("scalar_add scalar_subtract scalar_multiply scalar_negative scalar_absolute "
             "affine cast where clip clip_scalar red_add red_mul red_max red_min red_fmax red_fmin red_and red_or "
             "red_peak_max red_peak_min red_max_nonan red_min_nonan fix_zero_sign mask_nan keep_bits "
             "sort_vec sort_pick gather_pos "
             "argbetter_max argbetter_min")

# (loop-IR op, operand kind) -> operand count: the ufuncs' loop bodies as registered
# (ir/ops/elementwise.py, `Loop(kinds)`), and the internal ops (0: any count)
LOOP_OPS = {
    **{(n, k): OPS[n].ufunc.nin for n, lw in lowered_as(Loop).items() if lw.body is None for k in lw.kinds},
    **{(n, k): 0 for n in _INTERNAL.split() for k in "biuf"},
}
# the same for complex operands (native loop bodies only: NumPy's formulas, codegen's complex_ops.py)
COMPLEX_LOOP_OPS = {
    **{n: OPS[n].ufunc.nin for n in ("add", "subtract", "multiply", "true_divide", "negative", "conjugate",
                                     "absolute", "equal", "not_equal", "less", "less_equal", "greater",
                                     "greater_equal", "isnan", "isfinite", "isinf", "logical_not")},
    **{n: 0 for n in ("cast", "where", "red_add", "scalar_multiply", "scalar_absolute")},
    "real": 1, "imag": 1,                    # the parts of a complex element (native loop bodies)
}


# ----------------------------------------------------------------------------- operand types

_PY_OF = {"bool": bool, "int64": int, "float64": float, "complex128": complex}


class _WeakTypes:
    """Membership by identity: np.dtype("int64") == int holds, yet a NumPy operand is strong."""
    def __contains__(self, t):
        return t is bool or t is int or t is float or t is complex


_WEAK_TYPES = _WeakTypes()


_WEAK: "weakref.WeakKeyDictionary[Node, bool]" = weakref.WeakKeyDictionary()


def _may_be_weak(node: Node) -> bool:
    return node.op != "input" and node.scalar and node.shape == () and node.dtype is not None \
        and node.dtype.name in _PY_OF and (node.op == "select" or UNARY.get(node.op, BINARY.get(node.op)) is not None)


def _values(node: Node):
    """The operands whose types make the node's: a select's two values, not its condition."""
    return node.args[1:] if node.op == "select" else node.args


def weak_node(node: Node) -> bool:
    """A Python scalar at run time (NEP 50 weak): a scalar input, or Python-operator
    arithmetic on weak values only (the meta rule's FakeScalar case), or `a if c else b` of two
    (an if-converted branch, `min(a, b)`: select's meta keeps a Python scalar one). Remembered per node and
    computed without recursion: a long loop of Python arithmetic is a long chain of them."""
    if node.op == "input":
        return node.attr("kind") == "scalar"
    if not _may_be_weak(node):
        return False
    return fold_operands_first(node, _WEAK, _may_be_weak,
                               lambda n: all(operand_type(a) in _WEAK_TYPES for a in _values(n)))


def operand_type(a):
    """np.dtype for strong operands, the Python type for weak ones (for resolve_dtypes)."""
    if isinstance(a, Node):
        return _PY_OF[a.dtype.name] if weak_node(a) else a.dtype
    if isinstance(a, np.generic):              # before float: np.float64 subclasses float
        return a.dtype
    if isinstance(a, (bool, int, float, complex)):
        return type(a)
    if isinstance(a, sympy.Basic):
        return int if a.is_integer is not False else float
    raise NotLowerable(f"operand {a!r}")


def _check(dt, dtypes=SUPPORTED_DTYPES) -> str:
    name = np.dtype(dt).name
    if name not in dtypes:
        raise NotLowerable(f"dtype {name}")
    return name


def constant(value, dtype: str) -> Const:
    """A Python / NumPy constant converted to `dtype` as NumPy converts it."""
    try:
        v = np.array(value).astype(dtype) if isinstance(value, np.generic) else np.dtype(dtype).type(value)
    except (OverflowError, ValueError, TypeError) as exc:
        raise NotLowerable(f"constant {value!r} as {dtype}: {exc}") from exc
    return Const(v.item(), dtype)


def operand(a, expr, dtype: str):
    """Operand `a` (graph argument) whose expression is `expr`, converted to `dtype`."""
    if isinstance(a, (bool, int, float, complex, np.generic)):
        return constant(a, dtype)
    return cast(expr, dtype)


# ----------------------------------------------------------------------------- rewrites

def _mul_chain(x, n: int):
    """x ** n for an integer n >= 1 by repeated squaring (what NumPy's integer power does)."""
    result, base = None, x
    while n:
        if n & 1:
            result = base if result is None else Op("multiply", x.dtype, (result, base))
        n >>= 1
        if n:
            base = Op("multiply", x.dtype, (base, base))
    return result


def _power(base, exp_arg, exp_expr, dt: str):
    """power(x, c) with a constant c -> multiplications (NumPy: x**3 is a slow pow)."""
    k = kind(dt)
    c = exp_arg.item() if isinstance(exp_arg, np.generic) else exp_arg
    if isinstance(c, sympy.Basic) and c.is_number:
        c = int(c) if c.is_Integer else float(c)
    if isinstance(c, (bool, int, float)) and not isinstance(c, bool) and float(c).is_integer():
        n = int(c)
        if n == 0:
            return Const(1 if k != "f" else 1.0, dt)
        if k in "iu" and n < 0:
            raise NotLowerable("integers to negative integer powers raise in NumPy")
        if 1 <= n <= 16:
            return _mul_chain(base, n)
        if k == "f" and -4 <= n <= -1:
            return Op("true_divide", dt, (Const(1.0, dt), _mul_chain(base, -n)))
    if k == "f" and c == 0.5:
        return Op("sqrt", dt, (base,))
    if k != "f":
        raise NotLowerable("integer power with a non-constant exponent may raise")
    e = operand(exp_arg, exp_expr, dt)
    scalar = isinstance(exp_arg, sympy.Basic) or (isinstance(exp_arg, Node) and exp_arg.scalar)
    if isinstance(e, Const) or not scalar:
        return Op("power", dt, (base, e))
    # NumPy computes x ** 0.5 as sqrt(x) when the exponent is a scalar: -0.0 and -inf differ from pow
    half = Op("equal", "bool", (e, Const(0.5, dt)))
    return Op("where", dt, (half, Op("sqrt", dt, (base,)), Op("power", dt, (base, e))))


def _unary_rewrite(name, x, dt):
    if name == "square":                          # x*x: vectorises, exact as NumPy's square
        return Op("multiply", dt, (x, x))
    if name == "reciprocal" and kind(dt) == "f":
        return Op("true_divide", dt, (Const(1.0, dt), x))
    if name in ("floor", "ceil", "trunc", "rint") and kind(dt) != "f":
        return x                                  # integer loops are the identity
    if name == "positive" or (name == "absolute" and kind(dt) == "b"):
        return x
    return None


_MIRROR = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
           "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def _mixed_sign_compare(name, a, b):
    """NumPy 2's exact int64-vs-uint64 comparison (`-1 < 2**64 - 1` is True): a signed `a`
    below zero is smaller than every unsigned `b`; otherwise compare as unsigned."""
    if kind(a.dtype) == "u":                      # b < a  <=>  a > b: put the signed one first
        return _mixed_sign_compare(_MIRROR[name], b, a)
    negative = Op("less", "bool", (a, Const(0, a.dtype)))
    same = Op(name, "bool", (cast(a, b.dtype), b))
    if name in ("less", "less_equal", "not_equal"):
        return Op("logical_or", "bool", (negative, same))
    return Op("logical_and", "bool", (Op("logical_not", "bool", (negative,)), same))


# ----------------------------------------------------------------------------- lowering

def lower_elementwise(node: Node, exprs: list, dtypes=SUPPORTED_DTYPES):
    """Expression of an elementwise node; `exprs[i]` is the expression of `node.args[i]`
    (None for Python constants). `dtypes`: the dtypes the caller computes (LOOP_DTYPES: complex
    too). Raises NotLowerable."""
    name = node.op
    out = _check(node.dtype, dtypes)
    if name == "astype":
        src = _check(operand_dt(node.args[0]), dtypes)
        if kind(src) == "c" and kind(out) not in "cb":
            raise NotLowerable("a complex value cast to a real type (NumPy warns: ComplexWarning)")
        return cast(operand(node.args[0], exprs[0], src), out)
    if name in ("where", "select"):           # (select: an array a data-dependent `if` chose)
        c = operand(node.args[0], exprs[0], "bool") if not isinstance(node.args[0], (int, float)) \
            else constant(bool(node.args[0]), "bool")
        a, b = (operand(x, e, out) for x, e in zip(node.args[1:], exprs[1:]))
        return Op("where", out, (c, a, b))
    if name == "clip":
        return _clip(node, exprs, out)
    body = getattr(lowering(name), "body", None) or name   # divide_quiet: true_divide's loop
    ufunc = getattr(np, body, None)
    if not isinstance(ufunc, np.ufunc) or ufunc.nin != len(node.args) or ufunc.nout != 1:
        raise NotLowerable(f"op {name}")
    types = tuple(operand_type(a) for a in node.args)
    try:
        loop = ufunc.resolve_dtypes(types + (None,))
    except Exception as exc:
        raise NotLowerable(f"{name}{types}: {exc}") from exc
    ins = [_check(d, dtypes) for d in loop[:-1]]
    if _check(loop[-1], dtypes) != out:
        raise NotLowerable(f"{name}: loop output {loop[-1]} != node dtype {out}")
    if kind(ins[0]) == "c":
        return _complex(node, name, [operand(a, e, d) for a, e, d in zip(node.args, exprs, ins)], out)
    if name == "power":
        return _power(operand(node.args[0], exprs[0], ins[0]), node.args[1], exprs[1], ins[1])
    args = tuple(operand(a, e, d) for a, e, d in zip(node.args, exprs, ins))
    if name in _MIRROR and {kind(d) for d in ins} == {"i", "u"}:
        return _mixed_sign_compare(name, *args)
    if len(args) == 1:
        rewritten = _unary_rewrite(name, args[0], ins[0])
        if rewritten is not None:
            return cast(rewritten, out)
    if LOOP_OPS.get((body, kind(ins[0]))) != len(args):
        raise NotLowerable(f"{name} on {ins[0]}")
    if node.attr(SCALAR_MATH) and kind(ins[0]) in "iu" and f"scalar_{body}" in SCALAR_INT:
        return Op(f"scalar_{body}", out, args)         # overflow reported as NumPy's scalar math does
    return Op(body, out, args)


def operand_dt(a) -> str:
    t = operand_type(a)
    return np.dtype({bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}.get(t, t)).name


def _complex(node: Node, name: str, args: list, out: str):
    """A ufunc on complex operands: NumPy's loop where it is known (complex_ops.py). NumPy
    scalars' operators and Python's complex compute some ops otherwise: multiply unfused
    (scalar_multiply), abs as hypot and Python's division by another algorithm (refused)."""
    scalar = bool(node.attr(SCALAR_MATH)) or weak_node(node)
    dt = args[0].dtype
    if name in ("power", "square") and (scalar or node.shape == ()):
        # (np.square of a NumPy scalar multiplies unfused, of an array as np.multiply does)
        raise NotLowerable(f"complex {name} of a scalar")
    if name == "power":
        c = node.args[1].item() if isinstance(node.args[1], np.generic) else node.args[1]
        if not isinstance(c, (int, float)) or isinstance(c, bool) or c not in (1, 2):
            raise NotLowerable("a complex power other than z**1 and z**2 of arrays")
        return args[0] if c == 1 else Op("multiply", dt, (args[0], args[0]))
    if name == "square":
        return Op("multiply", dt, (args[0], args[0]))
    if name == "positive":
        return args[0]
    if name == "multiply" and scalar:
        return Op("scalar_multiply", out, tuple(args))
    if scalar and name in _MIRROR and name not in ("equal", "not_equal"):
        raise NotLowerable(f"{name} of complex scalars (NumPy's scalar math orders NaN otherwise)")
    if name == "absolute" and node.attr(SCALAR_MATH) and not weak_node(node):
        return Op("scalar_absolute", out, tuple(args))            # the C library's hypot, as NumPy's
    if scalar and name == "absolute" or weak_node(node) and name == "true_divide":
        raise NotLowerable(f"{name} of complex scalars (NumPy's scalar math / Python compute it otherwise)")
    if COMPLEX_LOOP_OPS.get(name) != len(args):
        raise NotLowerable(f"{name} on {dt}")
    return Op(name, out, tuple(args))


def _clip(node, exprs, out):
    """np.clip: lo None -> minimum(x, hi); hi None -> maximum(x, lo); else the clip ufunc,
    whose float loop differs on ties (0.0 vs -0.0) between fixed bounds (the loop over
    scalars keeps x) and bounds that move with x (the bound wins)."""
    x, lo, hi = node.args
    ex, elo, ehi = exprs
    vx = operand(x, ex, out)
    if lo is None and hi is None:
        return vx
    if lo is None:
        return Op("minimum", out, (vx, operand(hi, ehi, out)))
    if hi is None:
        return Op("maximum", out, (vx, operand(lo, elo, out)))
    fixed = all(not isinstance(b, Node) or all(_is_one(d) for d in b.shape) for b in (lo, hi))
    return Op("clip_scalar" if fixed and kind(out) == "f" else "clip", out,
              (vx, operand(lo, elo, out), operand(hi, ehi, out)))


def _is_one(d) -> bool:
    return isinstance(d, (int, np.integer, sympy.Integer)) and int(d) == 1
