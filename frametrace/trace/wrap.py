"""VariableBuilder: turn a real input value into a VariableTracker, installing the guards it needs.

Arrays become graph inputs whose sizes are static ints or ShapeEnv symbols as the dynamic
policy decides; Python ints follow the same policy; floats are graph inputs (never baked in);
other values are constants guarded by equality or identity.
"""
from __future__ import annotations

import builtins
import functools
import math
import types

import csrc_free_runtime as rt
import numpy as np

from ..errors import Unsupported
from ..sources import INT_LIST_CONVERT, GetItemSource, IntListArraySource, LocalSource, ShapeSource
from .variables.array import ArrayVariable
from .variables.builtins import MATH_FUNCTIONS, BuiltinVariable, MathFunctionVariable
from .variables.constant import ConstantVariable, SymNumberVariable
from .variables.containers import DictVariable, IntListVariable, ListVariable, TupleVariable
from .variables.functions import (ModuleVariable, NumpyFunctionVariable, PartialVariable, UserClassVariable,
                                  UserFunctionVariable, UserMethodVariable, UserObjectVariable, is_user_class)
from .variables.special import special_function_variable


def _is_numpy_callable(value) -> bool:
    if isinstance(value, np.ufunc):
        return True
    if isinstance(value, type) and issubclass(value, (np.generic, np.dtype)):
        return True
    module = getattr(value, "__module__", None) or ""
    return callable(value) and (module == "numpy" or module.startswith("numpy."))


_CONSTANT_TYPES = (type(None), bool, str, bytes, complex, np.dtype, range, slice, type(Ellipsis),
                   type(NotImplemented))


class VariableBuilder:
    def __init__(self, output):
        self.output = output
        self.mutable_inputs: dict = {}     # id(list / dict / user object) -> (value, VT)
        self.mutated: list = []            # those of them the trace writes to

    def __call__(self, value, source):
        out = self.output
        if source is not None:
            cached = out.input_vars.get(source.name)
            if cached is not None:
                return cached
            if _is_mutable(value):
                seen = self.mutable_inputs.get(id(value))
                if seen is not None:
                    # one object reached by two paths is one traced value (a write through one is
                    # seen through the other), guarded to stay the same object
                    other = seen[1]
                    out.guards.add(f"{source.code} is {other.source.code}", f"{source.name} is {other.source.name}",
                                   "ALIAS", source.name)
                    out.input_vars[source.name] = other
                    return other
        var = self._wrap(value, source)
        if source is not None:
            out.input_vars[source.name] = var
            if _is_mutable(value):
                self.mutable_inputs[id(value)] = (value, var)
                for mutated in self.mutated:
                    if mutated.python_type() is type(value):
                        self._not_same(mutated, var)
        return var

    def _not_same(self, a, b):
        self.output.guards.add(f"{a.source.code} is not {b.source.code}",
                               f"{a.source.name} is not {b.source.name}", "ALIAS", a.source.name)

    def guard_not_aliased(self, var):
        """`var` (an input container or object) is mutated: every other mutable input of its type
        was a different object when traced, and must stay one (else a write through one path
        would be missed by reads through the other)."""
        self.mutated.append(var)
        for value, other in self.mutable_inputs.values():
            if other is not var and type(value) is var.python_type() and other.source is not None:
                self._not_same(var, other)

    def _wrap(self, value, source):
        g = self.output.guards if source is not None else None
        t = type(value)
        if t is np.ndarray:
            if source is None:
                raise Unsupported("an array constant made outside the traced code", kind="constant")
            return self._wrap_array(value, source)
        if isinstance(value, np.ndarray):
            raise Unsupported(f"ndarray subclass {t.__name__}", kind="input")
        if t is int:
            return self._wrap_int(value, source)
        if t is float:
            if source is None:
                return ConstantVariable(value)
            g.type_match(source, value)
            proxy = self.output.builder.input_scalar(source.name, float)
            self.output.graph_inputs.append((proxy.node, source))
            return ArrayVariable(proxy, source)
        if isinstance(value, np.generic) and isinstance(source, LocalSource) and \
                source.local in self.output.array_scalar_args:
            return self._wrap_array_scalar(value, source)
        if isinstance(value, _CONSTANT_TYPES) or isinstance(value, np.generic):
            if g is not None:
                if isinstance(value, np.generic):
                    g.type_match(source, value)
                    if value == value:
                        g.equals_match(source, value)
                elif isinstance(value, (range, slice)) or value is Ellipsis or value is NotImplemented:
                    g.type_match(source, value)
                    g.add(f"{source.code} == {g.bind(value, 'const')}", f"{source.name} == {value!r}",
                          "EQUALS_MATCH", source.name)
                else:
                    g.equals_match(source, value)
            return ConstantVariable(value, source)
        if t is list and source is not None and value and _is_int64_list(value):
            g.type_match(source, value)
            return IntListVariable(value, source, lambda: self._sequence_items(value, source),
                                   lambda: self._int_list_array(value, source))
        if t in (tuple, list):
            if g is None:
                return (TupleVariable if t is tuple else ListVariable)([self(v, None) for v in value])
            g.type_match(source, value)
            return (TupleVariable if t is tuple else ListVariable)(self._sequence_items(value, source), source)
        if t is dict:
            keys = list(value.keys())
            if not all(type(k) in (str, int, bool) for k in keys):
                raise Unsupported("dict with non-constant keys", kind="input")
            if g is not None:
                g.type_match(source, value)
                k = g.bind(keys, "keys")
                g.add(f"list({source.code}) == {k}", f"list({source.name}) == {keys!r}", "KEYS", source.name)
            return DictVariable({k: self(v, GetItemSource(source, k) if source is not None else None)
                                 for k, v in value.items()}, source)
        return self._wrap_object(value, source)

    def _wrap_object(self, value, source):
        g = self.output.guards if source is not None else None
        special = special_function_variable(value)
        if special is not None:
            if g is not None:
                g.id_match(source, value)
            return special
        if isinstance(value, types.ModuleType):
            if g is not None:
                g.id_match(source, value)
            return ModuleVariable(value, source)
        if _hashable(value) and value in MATH_FUNCTIONS:
            if g is not None:
                g.id_match(source, value)
            return MathFunctionVariable(value, source)
        if value is functools.partial:
            if g is not None:
                g.id_match(source, value)
            return BuiltinVariable(value, source)
        if type(value) is functools.partial:
            from ..sources import AttrSource
            if g is None:
                raise Unsupported("a functools.partial created outside the traced code", kind="input")
            g.type_match(source, value)
            fn = self(value.func, AttrSource(source, "func") if source is not None else None)
            args = [self(v, GetItemSource(AttrSource(source, "args"), i) if source is not None else None)
                    for i, v in enumerate(value.args)]
            if source is not None:
                g.add(f"len({source.code}.args) == {len(value.args)}", f"len({source.name}.args) == "
                      f"{len(value.args)}", "LEN", source.name)
                keys = g.bind(list(value.keywords), "keys")
                g.add(f"list({source.code}.keywords) == {keys}", f"list({source.name}.keywords) == "
                      f"{list(value.keywords)!r}", "KEYS", source.name)
            kwargs = {k: self(v, GetItemSource(AttrSource(source, "keywords"), k) if source is not None else None)
                      for k, v in value.keywords.items()}
            return PartialVariable(fn, args, kwargs, source)
        if _is_builtin(value):
            if g is not None:
                g.id_match(source, value)
            return BuiltinVariable(value, source)
        if _is_numpy_callable(value):
            if g is not None:
                g.id_match(source, value)
            return NumpyFunctionVariable(value, source)
        if isinstance(value, types.FunctionType) and isinstance(getattr(value, "_frametrace_cache", None),
                                                                rt.FrameCache):
            # a function wrapped by ft.compile: its original function is inlined
            from ..sources import AttrSource
            original = value._frametrace_cache.fn
            if g is not None:
                g.type_match(source, value)
            return self(original, AttrSource(AttrSource(source, "_frametrace_cache"), "fn")
                        if source is not None else None)
        if isinstance(value, types.FunctionType) and _hooked_original(value) is not None:
            # a function the global hook swapped a trampoline into: its original body is inlined
            # (guarded on the trampoline code: once the hook restores the function, a recompile)
            if g is not None:
                self._guard_function(value, source)
            return UserFunctionVariable(value, source, code=_hooked_original(value))
        if isinstance(value, types.FunctionType):
            if _is_library_function(value):
                if g is not None:
                    g.id_match(source, value)
                from .variables.special import SkipFunctionVariable
                return SkipFunctionVariable(value, source)
            if g is not None:
                self._guard_function(value, source)
            return UserFunctionVariable(value, source)
        if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType):
            from ..sources import AttrSource
            self_var = self(value.__self__, AttrSource(source, "__self__") if source is not None else None)
            fn_var = self(value.__func__, AttrSource(source, "__func__") if source is not None else None)
            return UserMethodVariable(fn_var, self_var)
        if isinstance(value, type):
            if g is not None:
                g.id_match(source, value)
            return UserClassVariable(value, source) if is_user_class(value) else ConstantVariable(value, source)
        if source is None:
            raise Unsupported(f"a {type(value).__name__} object created outside the traced code", kind="input")
        g.type_match(source, value)
        return UserObjectVariable(value, source)

    def _guard_function(self, fn, source):
        """A user function is guarded on its code, not its identity (a fresh closure or lambda per
        call shares the graph): its defaults and closure contents are guarded through their own
        sources when the call is inlined; here only their shape (count, keys) and its globals."""
        g = self.output.guards
        code = g.bind(fn.__code__, "code")
        g.add(f"{source.code}.__code__ is {code}", f"{source.name}.__code__ is {fn.__code__.co_qualname}",
              "ID_MATCH", source.name)
        ndefaults = len(fn.__defaults__ or ())
        g.add(f"len({source.code}.__defaults__ or ()) == {ndefaults}",
              f"len({source.name}.__defaults__) == {ndefaults}", "LEN", source.name)
        kw = g.bind(sorted(fn.__kwdefaults__ or {}), "keys")
        g.add(f"sorted({source.code}.__kwdefaults__ or {{}}) == {kw}",
              f"sorted({source.name}.__kwdefaults__) == {sorted(fn.__kwdefaults__ or {})!r}", "KEYS", source.name)
        gl = g.bind(fn.__globals__, "globals")
        g.add(f"{source.code}.__globals__ is {gl}", f"{source.name}.__globals__ is {fn.__module__}.__dict__",
              "ID_MATCH", source.name)

    def _sequence_items(self, value, source):
        """The items of a list or tuple input, its length and each element guarded."""
        g = self.output.guards
        name = f"len({source.name}) == {len(value)}"
        if type(value) is list:
            name += " (a list whose items are read has a static length: pass an array to vary it)"
        g.add(f"len({source.code}) == {len(value)}", name, "LEN", source.name)
        return [self(v, GetItemSource(source, i)) for i, v in enumerate(value)]

    def _int_list_array(self, value, source):
        """A list of ints as an int64 graph input: guarded on holding only ints that fit int64
        (not on their values); its length is a size like an array's."""
        g = self.output.guards
        check = g.bind(_is_int64_list, "fn")
        g.add(f"{check}({source.code})", f"{source.name} is a list of int64 ints", "LIST_OF_INTS", source.name)
        g.namespace[INT_LIST_CONVERT] = _as_int64_array
        array_source = IntListArraySource(source)
        return self(_as_int64_array(value), array_source)

    def _wrap_int(self, value, source):
        if source is None:
            return ConstantVariable(value)
        out = self.output
        if out.policy.int_is_dynamic(source.name, value, out.frame_state):
            out.guards.type_match(source, value)
            sym = out.shape_env.create_symbol(value, source.name, dynamic="dynamic")
            if isinstance(sym, int):
                out.guards.equals_match(source, value)
                return ConstantVariable(value, source)
            out.bind_symbol(sym, source)
            return SymNumberVariable(sym, source)
        out.guards.equals_match(source, value)
        return ConstantVariable(value, source)

    def _wrap_array_scalar(self, value, source):
        """A NumPy scalar a graph computed before a break, passed to the resume function: a
        0-d graph input guarded on its type (and so its dtype), not on its value."""
        dtype = value.dtype
        if dtype.kind not in "biufc":
            raise Unsupported(f"NumPy scalars of dtype {dtype} are not traced", kind="input")
        self.output.guards.type_match(source, value)
        proxy = self.output.builder.input_array(source.name, (), dtype, scalar=True)
        self.output.graph_inputs.append((proxy.node, source))
        var = ArrayVariable(proxy, source)
        var.example_value = value
        return var

    def _wrap_array(self, value, source):
        out = self.output
        g = out.guards
        dtype = value.dtype
        if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None or \
                not dtype.isnative or dtype.kind in "OVSUMm":
            raise Unsupported(f"arrays of dtype {dtype} are not traced", kind="input",
                              hints=("object, structured, string and datetime arrays run eagerly",))
        g.type_match(source, value)
        dt = g.bind(dtype, "dtype")
        g.add(f"{source.code}.dtype == {dt}", f"{source.name}.dtype == {dtype.name}", "DTYPE", source.name)
        g.add(f"{source.code}.ndim == {value.ndim}", f"{source.name}.ndim == {value.ndim}", "NDIM", source.name)
        dims = out.policy.array_dims(source, value, out.frame_state)
        shape = []
        for d, (size, decision) in enumerate(zip(value.shape, dims)):
            size_source = ShapeSource(source, d)
            if decision.kind == "static":
                g.add(f"{size_source.code} == {size}", f"{size_source.name} == {size}", "SIZE", source.name)
                shape.append(size)
                continue
            sym = out.shape_env.create_symbol(size, size_source.name, dynamic="dynamic", min=decision.min,
                                              max=decision.max, strict=decision.strict)
            if isinstance(sym, int):
                g.add(f"{size_source.code} == {size}", f"{size_source.name} == {size}", "SIZE", source.name)
            else:
                out.bind_symbol(sym, size_source)
            shape.append(sym)
        proxy = out.builder.input_array(source.name, tuple(shape), dtype)
        out.graph_inputs.append((proxy.node, source))
        out.input_arrays[proxy.node] = (value, source)
        var = ArrayVariable(proxy, source)
        var.example_value = value
        return var


def _is_builtin(value) -> bool:
    name = getattr(value, "__name__", None)
    return isinstance(name, str) and getattr(builtins, name, None) is value and callable(value) \
        and (isinstance(value, types.BuiltinFunctionType) or value in _BUILTIN_TYPES)


_BUILTIN_TYPES = (range, enumerate, zip, int, float, bool, tuple, list, dict, reversed, type, iter, map, filter,
                  super)


def _hooked_original(fn):
    """The original code of a function whose `__code__` is a global-hook trampoline (a code
    object holding the function's FrameCache as a constant), else None."""
    code = fn.__code__
    for c in code.co_consts:
        if isinstance(c, rt.FrameCache) and c.code is not code:
            return c.code
    return None


def _is_mutable(value) -> bool:
    t = type(value)
    return t is list or t is dict or (t.__module__ not in ("builtins", "numpy") and hasattr(value, "__dict__")
                                      and not isinstance(value, (type, types.ModuleType, types.FunctionType)))


def _is_int64_list(value) -> bool:
    return all(type(v) is int and -2 ** 63 <= v < 2 ** 63 for v in value)


def _as_int64_array(value):
    return np.array(value, dtype=np.int64)


def _hashable(value) -> bool:
    try:
        hash(value)
        return True
    except TypeError:
        return False


def _is_library_function(fn) -> bool:
    """Functions of the standard library and installed packages are not inlined."""
    import os
    import sysconfig
    filename = fn.__code__.co_filename
    if filename.startswith("<"):
        return False
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return any(filename.startswith(p) for p in paths) or filename.startswith(here) or \
        "site-packages" in filename


_ = math
