"""VariableBuilder: turn a real input value into a VariableTracker, installing the guards it needs.

Arrays become graph inputs whose sizes are static ints or ShapeEnv symbols as the dynamic
policy decides; Python ints follow the same policy; floats are graph inputs (never baked in), except
the float constants of NumPy and `math` (`np.inf`, `np.pi`, `math.e`, ...) read from a global or an
attribute, which are constants guarded by value; other values are constants guarded by equality or
identity.
"""
from __future__ import annotations

import builtins
import functools
import math
import types

import csrc_free_runtime as rt
import numpy as np
from csrc_free_runtime import original_function

from ..dynamic_policy import item_group
from ..errors import Unsupported
from ..sources import (INT_LIST_CONVERT, ITER_ITEM, AttrSource, GetItemSource, GlobalsOfSource, IntListArraySource,
                       LenSource, ShapeSource)
from .variables.array import ArrayVariable
from .variables.builtins import MATH_FUNCTIONS, BuiltinVariable, MathFunctionVariable
from .variables.constant import ConstantVariable, ReadGuardedConstant, SymNumberVariable
from .variables.containers import (DictVariable, InputIteratorVariable, InputListVariable, IntListVariable,
                                   ListVariable, TupleVariable, iter_item)
from .variables.functions import (ModuleVariable, NumpyFunctionVariable, NumpyGridVariable, PartialVariable,
                                  UserClassVariable, UserFunctionVariable, UserMethodVariable, UserObjectVariable,
                                  is_user_class)
from .errstate import ErrstateClassVariable
from .variables.special import special_function_variable


def _is_numpy_callable(value) -> bool:
    if isinstance(value, np.ufunc):
        return True
    if isinstance(value, type) and issubclass(value, (np.generic, np.dtype)):
        return True
    module = _str_attr(value, "__module__")
    return callable(value) and (module == "numpy" or module.startswith("numpy."))


def _str_attr(value, name: str) -> str:
    """`value.name` when it is a str, else "". Never asks an instance of a user class (whose
    `__getattr__` may answer anything, or raise): its class's attribute is read instead."""
    holder = type(value) if is_user_class(type(value)) else value
    try:
        got = getattr(holder, name, None)
    except Exception:           # noqa: BLE001 - a property or __getattr__ of a library object
        return ""
    return got if isinstance(got, str) else ""


_CONSTANT_TYPES = (type(None), bool, str, bytes, complex, np.dtype, range, slice, type(Ellipsis),
                   type(NotImplemented))


class CodeGuardedFunctionVariable(UserFunctionVariable):
    """A user function input guarded by its code (VariableBuilder._guard_function), not its
    identity: when the object itself is asked for (identity, equality, membership, a constant
    result), its identity is guarded then."""
    guarded_by_code = True

    def __init__(self, fn, source, guards, code=None):
        super().__init__(fn, source, code=code)
        self._guards = guards

    def is_python_constant(self):
        return True

    def as_python_constant(self):
        self._guards.identity(self.source, self.fn)
        return self.fn


class VariableBuilder:
    def __init__(self, output):
        self.output = output
        self.mutable_inputs: dict = {}     # id(list / dict / user object) -> (value, VT)
        self.mutated: list = []            # those of them the trace writes to
        self.observed_groups: set = set()  # containers whose int items automatic dynamic has seen

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
                    out.guards.alias(source, other.source, True)
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
        self.output.guards.alias(a.source, b.source, False)

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
            if source.is_attribute_or_global and _is_module_float_constant(value):
                g.equals(source, value)          # by bits: np.nan stays a constant too
                return ConstantVariable(value, source)
            g.type(source, value)
            proxy = self.output.builder.input_scalar(source.name, float)
            self.output.graph_inputs.append((proxy.node, source))
            return ArrayVariable(proxy, source)
        if isinstance(value, np.generic) and source is not None and value.dtype.kind in "biufc":
            return self._wrap_array_scalar(value, source)
        if t in (str, bytes) and g is not None:
            g.type(source, value)
            return ReadGuardedConstant(value, source, g)    # its value guarded where the trace reads it
        if isinstance(value, _CONSTANT_TYPES) or isinstance(value, np.generic):
            if g is not None:
                g.equals(source, value)
            return ConstantVariable(value, source)
        if t is list and source is not None:
            g.type(source, value)
            if value and _is_int64_list(value):
                return IntListVariable(value, source, self)
            return InputListVariable(value, source, self)
        if t in (tuple, list):
            if g is None:
                return (TupleVariable if t is tuple else ListVariable)([self(v, None) for v in value])
            g.type(source, value)
            return (TupleVariable if t is tuple else ListVariable)(self._sequence_items(value, source), source)
        if t is _LIST_ITERATOR and source is not None:
            g.type(source, value)
            g.namespace[ITER_ITEM] = iter_item
            return InputIteratorVariable(value, source, self)
        if t is dict:
            keys = list(value.keys())
            if not all(type(k) in (str, int, bool) for k in keys):
                raise Unsupported("dict with non-constant keys", kind="input")
            if g is not None:
                g.type(source, value)
                g.dict_keys(source, keys)
                self._observe_int_items(source, value.items())
            return DictVariable({k: self(v, GetItemSource(source, k) if source is not None else None)
                                 for k, v in value.items()}, source)
        return self._wrap_object(value, source)

    def _wrap_object(self, value, source):
        g = self.output.guards if source is not None else None
        if value is np.errstate:                 # `with np.errstate(...)` is traced (trace/errstate.py)
            if g is not None:
                g.identity(source, value)
            return ErrstateClassVariable()
        if type(value) is np.errstate:           # made outside: its block is split out, guarded by type
            if g is None:
                raise Unsupported("an np.errstate object created outside the traced code", kind="input")
            g.type(source, value)
            return UserObjectVariable(value, source)
        special = special_function_variable(value)
        if special is not None:
            if g is not None:
                g.identity(source, value)
            return special
        if isinstance(value, types.ModuleType):
            if g is not None:
                g.identity(source, value)
            return ModuleVariable(value, source)
        if _hashable(value) and value in MATH_FUNCTIONS:
            if g is not None:
                g.identity(source, value)
            return MathFunctionVariable(value, source)
        if value is functools.partial:
            if g is not None:
                g.identity(source, value)
            return BuiltinVariable(value, source)
        if type(value) is functools.partial:
            if g is None:
                raise Unsupported("a functools.partial created outside the traced code", kind="input")
            g.type(source, value)
            g.length(AttrSource(source, "args"), len(value.args))
            g.dict_keys(AttrSource(source, "keywords"), value.keywords)
            fn = self(value.func, AttrSource(source, "func"))
            args = [self(v, GetItemSource(AttrSource(source, "args"), i)) for i, v in enumerate(value.args)]
            kwargs = {k: self(v, GetItemSource(AttrSource(source, "keywords"), k)) for k, v in value.keywords.items()}
            return PartialVariable(fn, args, kwargs, source)
        if _is_builtin(value):
            if g is not None:
                g.identity(source, value)
            return BuiltinVariable(value, source)
        if _is_numpy_callable(value):
            if g is not None:
                g.identity(source, value)
            return NumpyFunctionVariable(value, source)
        if value is np.mgrid or value is np.ogrid:
            if g is not None:
                g.identity(source, value)
            return NumpyGridVariable(value, source)
        if isinstance(value, types.FunctionType) and isinstance(getattr(value, "_frametrace_cache", None),
                                                                rt.FrameCache):
            # a function wrapped by ft.compile: its original function is inlined
            original = value._frametrace_cache.fn
            if g is not None:
                g.type(source, value)
            return self(original, AttrSource(AttrSource(source, "_frametrace_cache"), "fn")
                        if source is not None else None)
        if isinstance(value, types.FunctionType):
            if _is_library_function(value):
                if g is not None:
                    g.identity(source, value)
                from .variables.special import SkipFunctionVariable
                return SkipFunctionVariable(value, source)
            # the user's code, not a hook trampoline; defaults and closure are read from `value` itself
            original = original_function(value)
            code = original.__code__ if original is not value else None
            if g is None:
                return UserFunctionVariable(value, source, code=code)
            self._guard_function(g, value, source)
            return CodeGuardedFunctionVariable(value, source, g, code=code)
        if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType):
            self_var = self(value.__self__, AttrSource(source, "__self__") if source is not None else None)
            fn_var = self(value.__func__, AttrSource(source, "__func__") if source is not None else None)
            return UserMethodVariable(fn_var, self_var)
        if isinstance(value, type):
            if g is not None:
                g.identity(source, value)
            return UserClassVariable(value, source) if is_user_class(value) else ConstantVariable(value, source)
        if source is None:
            raise Unsupported(f"a {type(value).__name__} object created outside the traced code", kind="input")
        g.type(source, value)
        return UserObjectVariable(value, source)

    def _guard_function(self, g, fn, source):
        """A user function is guarded by what tracing it reads, not by its identity: its code
        object, the shape of its defaults (their values are wrapped, and guarded, when read
        through DefaultsSource), and which globals dict it reads; its closure cells are wrapped
        through ClosureSource when inlined. So a fresh lambda per call reuses the entry."""
        g.type(source, fn)
        g.code(source, fn)
        # a function's __defaults__ is a tuple or None, its __kwdefaults__ a dict or None
        defaults = AttrSource(source, "__defaults__")
        if fn.__defaults__ is None:
            g.identity(defaults, None)
        else:
            g.length(defaults, len(fn.__defaults__))
        kwdefaults = AttrSource(source, "__kwdefaults__")
        if fn.__kwdefaults__ is None:
            g.identity(kwdefaults, None)
        else:
            g.dict_keys(kwdefaults, fn.__kwdefaults__)
        if fn.__globals__ is self.output.root_globals and fn.__code__.co_names:
            g.identity(GlobalsOfSource(source), fn.__globals__)   # code that names no global reads none

    def _sequence_items(self, value, source):
        """The items of a list or tuple input, its length and each element guarded."""
        g = self.output.guards
        g.length(source, len(value))
        self._observe_int_items(source, enumerate(value))
        return [self(v, GetItemSource(source, i)) for i, v in enumerate(value)]

    def _observe_int_items(self, source, items):
        """Automatic dynamic sees all int items of a container together (dynamic_policy.item_group),
        once per trace."""
        if source.name in self.observed_groups:
            return
        self.observed_groups.add(source.name)
        key = [(k, v) for k, v in items if type(k) is int and type(v) is int]
        if key:
            self.output.frame_state.observe_items(f"{source.name}[*]", hash(tuple(key)))

    # -- the items and length of a lazy list input (variables/containers.InputListVariable) --
    def list_items(self, value, source):
        """Every item of a list input, its length guarded."""
        return self._sequence_items(value, source)

    def list_item(self, value, source, k: int):
        """Item `k` of a list input (k < 0: from its end, read as `L['lst'][-1]`). Its int items
        are observed together first (automatic dynamic sees the whole list change)."""
        self._observe_int_items(source, enumerate(value))
        return self(value[k], GetItemSource(source, k))

    def list_length(self, value, source):
        """len() of a list input: a constant guarded by `len(L['lst']) == n`, or, once the length
        varied (automatic dynamic, PGO, dynamic_sources, dynamic=True), a size symbol bound to
        `len(L['lst'])` in [0, int_oo], specialised only where the trace branches on it."""
        out = self.output
        n = len(value)
        length_source = LenSource(source)
        if out.policy.length_is_dynamic(length_source.name, n, out.frame_state):
            sym = out.shape_env.create_symbol(n, length_source.name, dynamic="dynamic", duck=False,
                                              zero_one=False)
            if not isinstance(sym, int):
                out.bind_symbol(sym, length_source)
                return SymNumberVariable(sym)
        out.guards.length(source, n)
        return ConstantVariable(n)

    def int_list_array(self, value, source, length):
        """A list of ints as an int64 graph input: guarded on holding only ints that fit int64
        (not on their values). The entry makes it from the list on each call, so it is 1-d
        int64 and its size is the list's length (`length`, a constant or the length's symbol)."""
        out = self.output
        array_source = IntListArraySource(source)
        cached = out.input_vars.get(array_source.name)
        if cached is not None:
            return cached
        g = out.guards
        g.predicate(source, _is_int64_list, "is a list of ints that fit int64")
        g.namespace[INT_LIST_CONVERT] = _as_int64_array
        array = _as_int64_array(value)
        proxy = out.builder.input_array(array_source.name, (length,), array.dtype)
        out.graph_inputs.append((proxy.node, array_source))
        out.input_arrays[proxy.node] = (array, array_source)
        var = ArrayVariable(proxy, array_source)
        var.example_value = array
        out.input_vars[array_source.name] = var
        return var

    def _wrap_int(self, value, source):
        if source is None:
            return ConstantVariable(value)
        out = self.output
        if out.policy.int_is_dynamic(source.name, value, out.frame_state, item_group(source)):
            out.guards.type(source, value)
            sym = out.shape_env.create_symbol(value, source.name, dynamic="dynamic", machine_int=True,
                                              positive=False, zero_one=False)
            if isinstance(sym, int):
                out.guards.equals(source, value)
                return ConstantVariable(value, source)
            out.bind_symbol(sym, source)
            return SymNumberVariable(sym, source)
        out.guards.equals(source, value)
        return ConstantVariable(value, source)

    def _wrap_array_scalar(self, value, source):
        """A NumPy scalar (an argument, global, attribute, or a value a graph computed before a
        break): a 0-d graph input guarded on its type (and so its dtype), never on its value."""
        dtype = value.dtype
        if dtype.kind not in "biufc":
            raise Unsupported(f"NumPy scalars of dtype {dtype} are not traced", kind="input")
        self.output.guards.type(source, value)
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
        g.type(source, value)
        g.dtype(source, dtype)
        g.ndim(source, value.ndim)
        dims = out.policy.array_dims(source, value, out.frame_state)
        shape = []
        for d, (size, decision) in enumerate(zip(value.shape, dims)):
            size_source = ShapeSource(source, d)
            if decision.kind == "static":
                g.size(size_source, size)
                shape.append(size)
                continue
            sym = out.shape_env.create_symbol(size, size_source.name, dynamic="dynamic", min=decision.min,
                                              max=decision.max, strict=decision.strict)
            if isinstance(sym, int):
                g.size(size_source, size)
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
    name = _str_attr(value, "__name__")
    return bool(name) and getattr(builtins, name, None) is value and callable(value) \
        and (isinstance(value, types.BuiltinFunctionType) or value in _BUILTIN_TYPES)


_BUILTIN_TYPES = (range, enumerate, zip, int, float, bool, str, tuple, list, dict, reversed, type, iter, map, filter,
                  super)


# The float objects NumPy and `math` export (np.inf, np.nan, np.pi, np.e, np.euler_gamma, math.tau,
# ...), kept alive here so identity with them is meaningful: `np.inf`, `from numpy import pi` or a
# global aliasing one of them is the library's constant, not a run-time number.
_MODULE_FLOATS = tuple({id(v): v for module in (np, math) for v in vars(module).values()
                        if type(v) is float}.values())
_MODULE_FLOAT_IDS = frozenset(id(v) for v in _MODULE_FLOATS)


def _is_module_float_constant(value) -> bool:
    return id(value) in _MODULE_FLOAT_IDS


_LIST_ITERATOR = type(iter([]))


def _is_mutable(value) -> bool:
    t = type(value)
    if t is list or t is dict or t is _LIST_ITERATOR:
        return True
    return (_str_attr(t, "__module__") not in ("builtins", "numpy") and isinstance(_instance_dict(value), dict)
            and not isinstance(value, (type, types.ModuleType, types.FunctionType)))


def _instance_dict(value):
    """The object's own `__dict__`, never through a `__getattr__` of its class."""
    try:
        return object.__getattribute__(value, "__dict__")
    except Exception:           # noqa: BLE001 - no __dict__, or a class that makes reading it raise
        return None


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
    """Functions of the standard library, installed packages and frametrace are not inlined."""
    from ..file_kinds import is_library, is_ours
    filename = fn.__code__.co_filename
    if filename.startswith("<"):
        return False
    return is_library(filename) or is_ours(filename)


_ = math
