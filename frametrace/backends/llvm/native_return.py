"""The return value of a native entry (native_entry.py): planned before anything is allocated
(ints computed then, so they may still miss), made once the kernels ran (a new reference:
an array, a NumPy scalar of a 0-d result, an input, an int, None/bools, or a tuple of those)."""
from __future__ import annotations

import ast

import sympy

from ...ir.graph import Node
from .native_ir import NotNative


class ReturnValue:
    """Mixin of native_entry._Builder (uses its ir, tr, objs, will_own, owned, null_fails)."""

    def _plan_return(self, t, plan, graph):
        """A tree of (kind, data) leaves; int values are computed now (they may miss)."""
        tr = self.tr
        if isinstance(t, ast.Tuple):
            return ("tuple", [self._plan_return(e, plan, graph) for e in t.elts])
        if isinstance(t, ast.Constant) and (t.value is None or type(t.value) is bool):
            tr.keep.append(t.value)
            return ("ref", t.value)
        if isinstance(t, ast.Constant) and type(t.value) is int:
            return ("int", tr.integer(t))
        if isinstance(t, ast.Name) and t.id in tr.argindex:
            return ("arg", t.id)
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "int" and len(t.args) == 1 \
                and not isinstance(t.args[0], ast.Subscript):
            return ("int", tr.integer(t.args[0]))
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == "___o" and \
                isinstance(t.slice, ast.Constant) and type(t.slice.value) is int and plan is not None:
            o = graph.outputs[t.slice.value]
            if isinstance(o, Node):
                var = plan.var[o]
                if var not in self.objs and var not in self.will_own:
                    raise NotNative(f"output {var} is not made by a kernel")
                scalar = o in plan.stored and o.scalar and o.shape == ()
                return ("scalar" if scalar else "array", var)
            if isinstance(o, sympy.Basic) and o.is_integer:
                return ("int", self.size(plan, plan.size_source(o)))
        raise NotNative(f"return value {ast.unparse(t)}")

    def _make(self, spec, live=()) -> str:
        """Emit the object for a planned return value (a new reference)."""
        ir, kind, data = self.ir, spec[0], spec[1]
        live = list(self.owned) + list(live)
        if kind == "tuple":
            items = []
            for s in data:
                items.append(self._make(s, items))
            t = ir.call("ptr", "PyTuple_New", f"i64 {len(items)}")
            self.null_fails(t, live + items)
            for i, it in enumerate(items):          # steals each item's reference
                ir.call("i32", "PyTuple_SetItem", f"ptr {t}", f"i64 {i}", f"ptr {it}")
            return t
        if kind == "int":
            v = ir.call("ptr", "PyLong_FromLongLong", f"i64 {data}")
            self.null_fails(v, live)
            return v
        obj = ir.const_ptr(data) if kind == "ref" else self.tr.arg(data).ref if kind == "arg" else self.objs[data]
        ir.call("void", "Py_IncRef", f"ptr {obj}")
        if kind != "scalar":
            return obj
        s = ir.call("ptr", "PyArray_Return", f"ptr {obj}")   # 0-d array -> NumPy scalar (steals)
        self.null_fails(s, live)
        return s
