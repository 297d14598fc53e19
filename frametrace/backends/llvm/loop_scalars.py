"""The steps of a loop body's wrapper that the native array-loop driver runs itself (its INT,
CHECKED, FLOAT, SELECT and STORE ops, loop_driver.py), as a mixin of ArrayLoop (array_loops.py):
compile time (`_wrapper_op`: the op of one wrapper step, or NotNative) and per call (`_add_*`:
the op's words in the driver table, or False when this call cannot run natively).

Python scalars live in 8-byte words: ints and bools as int64, floats by their IEEE bits.
    int  + - < <= ... and or     INT ops (bounded values: see array_loops.py)
    int  * // % (then + - too)   CHECKED ops: int64 overflow or a zero divisor abandons the
                                 iteration, Python runs the rest (big ints, ZeroDivisionError)
    float + - * / < <= ...       FLOAT ops on float words, float constants, captured floats and
                                 int constants, sizes or int words (`out * 0.5`) converted as
                                 Python converts them; x / 0.0 abandons the iteration like a
                                 CHECKED op
    a if c else b                SELECT of two words (an if-converted branch)
    x[i] = value                 STORE into a captured array, affine in the loop index
"""
from __future__ import annotations

import struct

import numpy as np
import sympy

from ...ir.graph import IndexSlice, Node
from ...lower.pointwise import SUPPORTED_DTYPES
from ...shapes import pycode
from . import runtime
from .loop_driver import CHECKED_OPS, FLOAT_OPS, SCALAR_OPS
from .loops import NotNative

ADD_LIMIT = 1 << 16          # INT (unchecked) add/subtract: of a constant below this only


class ScalarSteps:
    """Mixin of ArrayLoop: needs plan, body, index, nc, input_names, int_nodes, scalar_carried,
    py_carried, float_carried, checked, views, code(), index_coefficient()."""

    def _wrapper_op(self, n: Node):
        """The driver op of a step of the body's wrapper (None: a view only a STORE uses)."""
        if n.op == "select":
            return self._select_op(n)
        if n.op == "getitem" and self.plan.cat[n] == "view":
            self.views[self.plan.var[n]] = n
            return None
        if n.op == "assign":
            return self._store_op(n)
        if n.op in FLOAT_OPS and n.dtype is not None and (n.dtype.kind == "f" or any(
                _is_float(a) for a in n.args)):
            return self._float_op(n)
        return self._int_op(n)

    def _float_operand(self, a):
        """A FLOAT operand: a float word of the body, a captured Python float, or a constant or
        size converted to float as Python converts it."""
        name = self.plan.var.get(a) if isinstance(a, Node) else None
        if name is not None and name in self.int_nodes:
            if self.int_nodes[name].dtype.kind != "f":
                raise NotNative("Python int to float conversion runs in the body's wrapper")
            return name
        if name in self.scalar_carried and self.scalar_carried[name] in self.float_carried:
            return name
        if self._kernel_float(a):
            return name
        if name is not None and name in self.input_names[self.nc:] and a.attr("kind") == "scalar" \
                and a.dtype.kind == "f":
            return ("captured", name, "f")
        if type(a) in (int, float) and abs(a) < 2 ** 53:
            return ("const", _word(a, "f"))
        if isinstance(a, sympy.Basic) and a.is_integer and not (self.index is not None and
                                                                 self.index in a.free_symbols):
            return ("size", self.code(pycode(a, self.plan.sym_names)), "f")
        raise NotNative(f"float arithmetic on {a!r} runs in the body's wrapper")

    def _kernel_float(self, a) -> bool:
        """A Python float a kernel computed (`2.0 * t` fused into a kernel): its 0-d float64
        buffer holds the same 8-byte word a FLOAT or SELECT op reads."""
        return isinstance(a, Node) and a in self.plan.stored and a.scalar and a.shape == () and \
            a.dtype == np.float64 and self.plan.var.get(a) not in self.input_names

    def _float_op(self, n: Node):
        """Python float arithmetic / comparison: a FLOAT op (IEEE double, as Python computes)."""
        if self.plan.cat[n] not in ("scalar", "fallback") or not n.scalar or n.shape != () or n.attrs \
                or n.dtype.kind not in "fb" or len(n.args) != 2:
            raise NotNative(f"{n.op} runs in the body's wrapper")
        words = [self._int_word(a) for a in n.args]
        # a Python int word converts as Python converts it in int-float arithmetic; comparisons and
        # int / int are exact only below 2**53, which unchecked ints stay far below (INT_LIMIT)
        if any(words) and self.checked and (n.op not in FLOAT_OPS[:4] or all(words)):
            raise NotNative(f"{n.op} of a checked Python int and a float runs in the body's wrapper")
        operands = [("int", w) if w else self._float_operand(a) for a, w in zip(n.args, words)]
        self.int_nodes[self.plan.var[n]] = n
        return ("float", n.op, self.plan.var[n], operands)

    def _int_word(self, a):
        """The wrapper name of a Python int word the driver holds (computed by an INT or CHECKED op,
        or carried), else None."""
        name = self.plan.var.get(a) if isinstance(a, Node) else None
        if name is None or a.dtype is None or a.dtype.kind != "i":
            return None
        if name in self.int_nodes:
            return name
        k = self.scalar_carried.get(name)
        return name if k is not None and k in self.py_carried and k not in self.float_carried else None

    def _word_operand(self, a, kind: str):
        """A SELECT operand: a Python scalar word of the body, a captured Python scalar, or a
        constant (its 8-byte word); `kind` the result's dtype kind."""
        name = self.plan.var.get(a) if isinstance(a, Node) else None
        if name in self.int_nodes and self.int_nodes[name].dtype.kind == kind:
            return name
        if name in self.scalar_carried and self.scalar_carried[name] in self.py_carried and a.dtype.kind == kind:
            return name
        if kind == "f" and self._kernel_float(a):
            return name
        if name is not None and name in self.input_names[self.nc:] and a.attr("kind") == "scalar" \
                and a.dtype.kind == kind:
            return ("captured", name, kind)
        if type(a) in (int, bool, float) and (kind == "f") == (type(a) is float):
            return ("const", _word(a, kind))
        if isinstance(a, np.generic) and a.dtype.kind == kind and a.dtype.itemsize == 8:
            return ("const", _word(a.item(), kind))     # a NumPy scalar constant (GraphBuilder._harmless)
        if isinstance(a, sympy.Basic) and a.is_integer and kind == "i" and not (
                self.index is not None and self.index in a.free_symbols):
            return ("size", self.code(pycode(a, self.plan.sym_names)), kind)
        raise NotNative(f"select of {a!r} runs in the body's wrapper")

    def _select_op(self, n: Node):
        """`a if cond else b` on Python scalars (an if-converted branch): a SELECT op."""
        plan = self.plan
        cond, a, b = n.args
        if plan.cat[n] not in ("scalar", "fallback") or n.dtype is None or n.dtype.kind not in "bif" \
                or not n.scalar or n.shape != () or not isinstance(cond, Node):
            raise NotNative("select runs in the body's wrapper")
        cname = plan.var.get(cond)
        if not (cname in self.int_nodes and cond.dtype.kind == "b") and not (
                cond in plan.stored and cond.shape == () and cond.dtype == np.bool_):
            raise NotNative("the condition of a select is no bool the driver holds")
        operands = [self._word_operand(x, n.dtype.kind) for x in (a, b)]
        self.int_nodes[plan.var[n]] = n
        return ("select", n.op, plan.var[n], [cname] + operands)

    def _store_op(self, n: Node):
        """`x[i] = value`: one element of a captured array at a position affine in the loop
        index, from a 0-d value of the same dtype (a STORE op)."""
        plan = self.plan
        dst, src = n.args
        view = self.views.get(plan.var.get(dst)) if isinstance(dst, Node) else None
        if view is None or not isinstance(src, Node) or src not in plan.stored or src.shape != () \
                or src.dtype != dst.dtype or any(d != 1 for d in dst.shape):
            raise NotNative(_why_numpy_assigns(plan, n))
        base, index = view.args[0], view.attr("index")
        bname = plan.var.get(base)
        if bname not in self.input_names[self.nc:] or base.attr("kind") != "array" or \
                not isinstance(index, tuple) or len(index) != base.ndim:
            raise NotNative("an assign into no captured array runs in the body's wrapper")
        starts = []
        for e in index:
            if isinstance(e, IndexSlice):
                if e.start is None or e.step not in (None, 1):
                    raise NotNative("an assign through a slice runs in the body's wrapper")
                e = e.start
            if isinstance(e, Node) or e is None:
                raise NotNative("an assign at a computed position runs in the body's wrapper")
            expr = sympy.sympify(e)
            if self.body.kind == "while" and expr.free_symbols:
                raise NotNative("an assign at a moving position in a while loop")
            starts.append((self.code(pycode(expr, plan.sym_names)), self.index_coefficient(expr, "an assign position")))
        return ("store", n.op, bname, [plan.var[src], starts, dst.dtype.itemsize])

    def _int_op(self, n: Node):
        """A Python int / bool operation of the body's wrapper, run by the driver (INT op)."""
        plan = self.plan
        if plan.cat[n] != "scalar" or n.op not in SCALAR_OPS + CHECKED_OPS or n.dtype is None \
                or n.dtype.kind not in "bi" or n.attrs:
            raise NotNative(f"{n.op} runs in the body's wrapper")
        operands = []
        for a in n.args:
            name = plan.var.get(a) if isinstance(a, Node) else None
            if name in self.int_nodes and self.int_nodes[name].dtype.kind == "f" or \
                    self.scalar_carried.get(name, -1) in self.float_carried:
                raise NotNative(f"{n.op} of a Python float runs in the body's wrapper")
            if name in self.int_nodes or (name in self.scalar_carried and self.scalar_carried[name] in self.py_carried):
                operands.append(name)
            elif name is not None and name in self.input_names[self.nc:] and a.attr("kind") == "scalar" \
                    and a.dtype.kind in "bi":
                operands.append(("captured", name))
            elif type(a) in (int, bool):
                operands.append(("const", int(a)))
            elif isinstance(a, sympy.Basic) and a.is_integer and not (self.index is not None and
                                                                     self.index in a.free_symbols):
                operands.append(("size", self.code(pycode(a, plan.sym_names))))
            else:
                raise NotNative(f"{n.op} of {a!r} runs in the body's wrapper")
        checked = self.checked and n.op in CHECKED_OPS
        if n.op in ("add", "subtract") and not checked and sum(not isinstance(o, tuple) for o in operands) > 1:
            raise NotNative("Python int arithmetic of two variables")       # may grow past int64
        if checked and any(a.dtype.kind == "b" for a in n.args if isinstance(a, Node)):
            raise NotNative(f"{n.op} of a bool runs in the body's wrapper")
        self.int_nodes[plan.var[n]] = n
        return ("checked" if checked else "int", n.op, plan.var[n], operands)


    def _add_int_op(self, c, ns, env, table, alive) -> bool:
        kind, op, name, operands = c
        addresses = []
        for o in operands:
            if isinstance(o, tuple):
                value = int(ns[o[1]]) if o[0] == "captured" else int(eval(o[1], ns)) if o[0] == "size" else o[1]
                if kind == "int" and op in ("add", "subtract") and abs(value) >= ADD_LIMIT or \
                        not -2 ** 63 <= value < 2 ** 63:
                    return False
                a = np.array(value, np.int64)
                alive.append(a)
                addresses.append((runtime.data_ptr(a),) * 2)
            else:
                addresses.append(tuple(runtime.data_ptr(a) for a in env[o]))
        dst = tuple(runtime.data_ptr(a) for a in env[name])
        (table.checked_op if kind == "checked" else table.int_op)(op, dst, addresses[0], addresses[1])
        return True

    def _add_float_op(self, c, ns, env, table, alive) -> bool:
        _, op, name, operands = c
        addresses = []
        for o in operands:
            if isinstance(o, tuple) and o[0] == "int":
                addresses.append(tuple(runtime.data_ptr(a) for a in env[o[1]]))
            elif isinstance(o, tuple):
                if o[0] in ("captured", "size"):
                    v = ns[o[1]] if o[0] == "captured" else eval(o[1], ns)
                    if not isinstance(v, float) and abs(int(v)) >= 2 ** 53:
                        return False
                    o = ("const", _word(v, "f"))
                a = np.array(o[1], np.int64)
                alive.append(a)
                addresses.append((runtime.data_ptr(a),) * 2)
            else:
                addresses.append(tuple(runtime.data_ptr(a) for a in env[o]))
        ints = [isinstance(o, tuple) and o[0] == "int" for o in operands]
        table.float_op(op, tuple(runtime.data_ptr(a) for a in env[name]), addresses[0], addresses[1], *ints)
        return True

    def _add_select(self, c, ns, env, table, alive) -> bool:
        _, _, name, (cond, *operands) = c
        addresses = []
        for o in operands:
            if isinstance(o, tuple):
                if o[0] in ("captured", "size"):
                    v = ns[o[1]] if o[0] == "captured" else eval(o[1], ns)
                    if o[2] != "f" and not -2 ** 63 <= int(v) < 2 ** 63:
                        return False
                    o = ("const", _word(v, o[2]))
                a = np.array(o[1], np.int64)
                alive.append(a)
                addresses.append((runtime.data_ptr(a),) * 2)
            else:
                addresses.append(tuple(runtime.data_ptr(a) for a in env[o]))
        table.select(tuple(runtime.data_ptr(a) for a in env[name]), tuple(runtime.data_ptr(a) for a in env[cond]),
                     addresses[0], addresses[1])
        return True

    def _add_store(self, c, ns, env, table, step, trips) -> bool:
        _, _, base, (src, starts, nbytes) = c
        a = env[base][0]
        if not isinstance(a, np.ndarray) or not a.flags.writeable or a.itemsize != nbytes:
            return False
        address, per_j = runtime.data_ptr(a), 0
        for (code, coef), n, stride in zip(starts, a.shape, a.strides):
            first = int(eval(code, ns))
            k = int(eval(coef, ns)) * step if coef is not None else 0
            last = first + k * (trips - 1)
            if not (0 <= first < n and 0 <= last < n):
                return False                 # NumPy's wrap-around or IndexError: the wrapper's path
            address += first * stride
            per_j += k * stride
        table.store(nbytes, address, per_j, tuple(runtime.data_ptr(x) for x in env[src]))
        return True



def _why_numpy_assigns(plan, n: Node) -> str:
    """Why `dst[...] = src` is NumPy's step in the body (not a kernel, not a STORE), for the log."""
    dst, src = n.args
    what = f"an assign into {dst.dtype}"
    if dst.dtype.name not in SUPPORTED_DTYPES:
        return f"{what} runs in the body's wrapper (no kernel dtype)"
    if not isinstance(src, Node):
        return f"{what} of {src!r} runs in the body's wrapper (NumPy's conversion raises or warns)"
    if src.ndim == 0:
        return f"{what} of a {src.dtype} scalar runs in the body's wrapper (NumPy's checks of the conversion)"
    return f"{what} of {src.op} ({plan.cat[src]}) runs in the body's wrapper"


def _is_float(a) -> bool:
    """A Python float operand (a float word, a captured float, a float constant)."""
    if isinstance(a, Node):
        return a.dtype is not None and a.dtype.kind == "f" and a.scalar and a.shape == ()
    return type(a) is float


def _word(value, kind: str) -> int:
    """The int64 word holding a Python scalar: a float by its IEEE bits, an int or bool as is."""
    if kind == "f":
        return struct.unpack("<q", struct.pack("<d", float(value)))[0]
    return int(value)


__all__ = ["ScalarSteps"]
