"""Callables: user functions (inlined), NumPy functions, modules and user objects."""
from __future__ import annotations

import functools
import inspect
import types

import numpy as np
from csrc_free_runtime import original_function

from ...errors import NumpyError, Unsupported
from .base import VariableTracker
from .constant import ConstantVariable
from .containers import TupleVariable


def _user_function(fn):
    """`fn` read off a class (or a property, `__call__`, a classmethod): see UserFunctionVariable."""
    return UserFunctionVariable(fn)


def user_code(fn):
    """(function, code or None) to inline for `fn`: behind an ft.compile trampoline, the user's
    function itself; a function whose code the global hook swapped for a trampoline keeps its
    object (defaults, closure, globals) with its own code, so the trace never meets
    frametrace's dispatch function as if it were the user's."""
    original = original_function(fn)
    if original is fn:
        return fn, None
    if getattr(fn, "__wrapped__", None) is original:        # ft.compile's trampoline
        return original, None
    return fn, original.__code__


class UserFunctionVariable(VariableTracker):
    """A Python function whose body is traced inline. Without a source (reached through a class,
    an object or a property), a trampoline is seen through here (user_code); with a source the
    VariableBuilder already did it, guarding what it read."""

    def __init__(self, fn, source=None, code=None):
        if code is None and source is None:
            fn, code = user_code(fn)
        self.fn, self.source = fn, source
        self._code = code          # the original body of a function the global hook swapped out

    def python_type(self):
        return types.FunctionType

    def as_python_constant(self):
        return self.fn

    @property
    def code(self):
        return self._code if self._code is not None else self.fn.__code__

    def get_globals(self):
        return self.fn.__globals__

    def call_function(self, tx, args, kwargs):
        return tx.inline_call(self, args, kwargs)

    def defaults(self, tx):
        """(positional defaults as VTs, kw defaults dict of VTs)."""
        from ...sources import DefaultsSource
        pos = []
        for i, v in enumerate(self.fn.__defaults__ or ()):
            src = DefaultsSource(self.source, i) if self.source is not None else None
            pos.append(tx.wrap_value(v, src))
        kw = {}
        for k, v in (self.fn.__kwdefaults__ or {}).items():
            src = DefaultsSource(self.source, 0, k) if self.source is not None else None
            kw[k] = tx.wrap_value(v, src)
        return pos, kw

    def closure_cells(self, tx):
        """One box per real cell of the trace (two closures sharing a cell share the box), its
        contents guarded and its writes replayed through the function (held by the entry when
        the function came with no source of its own: it is fixed by what it was reached through)."""
        from ...sources import CellSource, ClosureSource
        base = self.source
        if base is None:
            base = tx.output.hold(self.fn, f"{_str(self.fn, '__module__')}.{_str(self.fn, '__qualname__')}")
        return [tx.output.cell_box(cell, name, ClosureSource(base, i), CellSource(base, i))
                for i, (name, cell) in enumerate(zip(self.code.co_freevars, self.fn.__closure__ or ()))]

    def var_getattr(self, tx, name):
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.fn, name))
        return super().var_getattr(tx, name)

    def describe(self):
        return f"function {self.fn.__qualname__}"


class NestedUserFunctionVariable(VariableTracker):
    """A function (or lambda) created while tracing by MAKE_FUNCTION."""

    def __init__(self, code, qualname, fn_globals, defaults, kwdefaults, cells, globals_source=None):
        self.code, self.qualname, self.fn_globals = code, qualname, fn_globals
        self.pos_defaults, self.kw_defaults, self.cells = defaults, kwdefaults, cells
        self.globals_source = globals_source

    def python_type(self):
        return types.FunctionType

    def get_globals(self):
        return self.fn_globals

    def defaults(self, tx):
        return list(self.pos_defaults), dict(self.kw_defaults)

    def closure_cells(self, tx):
        return list(self.cells)

    def call_function(self, tx, args, kwargs):
        return tx.inline_call(self, args, kwargs)

    def describe(self):
        return f"function {self.qualname}"


class UserMethodVariable(VariableTracker):
    """A function bound to a traced `self`."""

    def __init__(self, fn_var, self_var):
        self.fn_var, self.self_var = fn_var, self_var

    def python_type(self):
        return types.MethodType

    def call_function(self, tx, args, kwargs):
        return self.fn_var.call_function(tx, [self.self_var] + list(args), kwargs)

    def describe(self):
        return f"method {self.fn_var.describe()}"


class NumpyFunctionVariable(VariableTracker):
    """A NumPy callable: np.sin, np.sum, np.zeros, np.float32, ..."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self):
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call_function(self, tx, args, kwargs):
        if self.fn in (np.array, np.asarray) and args and getattr(args[0], "array_ready", False):
            args = [args[0].as_array(tx)] + list(args[1:])      # np.array(list of ints): array data
        if all(a.is_python_constant() for a in args) and all(v.is_python_constant() for v in kwargs.values()) \
                and _foldable(self.fn):
            # a ufunc on constants that reports (np.log(0.0)) runs at run time: its graph node
            traced = (lambda: self._traced(tx, args, kwargs, lift=True)) if isinstance(self.fn, np.ufunc) else None
            return tx.constant_fold(self.fn, args, kwargs, traced=traced)
        return self._traced(tx, args, kwargs)

    def _traced(self, tx, args, kwargs, lift=False):
        from ...ir.numpy_api import lookup_function
        from ...ir.numpy_api.common import as_array
        from .array import check_mixing
        check_mixing(list(args) + list(kwargs.values()))
        impl = lookup_function(self.fn)
        if impl is None:
            raise Unsupported(f"numpy.{getattr(self.fn, '__name__', self.fn)} is not supported", kind="call",
                              hints=("file an issue naming this function",))
        from .scalar_choice import choice_call_args
        values = [tx.unwrap(a) for a in choice_call_args(self.fn, args, kwargs)]
        if lift:                                 # NumPy scalar constants as graph values
            values = [as_array(tx.output.builder, v, "call") if isinstance(v, np.generic) else v for v in values]
        return tx.wrap_result(impl(tx.output.builder, *values, **{k: tx.unwrap(v) for k, v in kwargs.items()}))

    def var_getattr(self, tx, name):
        value = getattr(self.fn, name, None)
        if isinstance(value, (int, float, str, np.dtype)) or value is None:
            return ConstantVariable(value)
        if isinstance(self.fn, np.ufunc) and name in ("at", "reduce", "accumulate", "outer"):
            return NumpyFunctionVariable(value)     # np.add.at & co.: the ufunc is guarded already
        return super().var_getattr(tx, name)

    def describe(self):
        from ...guards.text import value_text
        name = getattr(self.fn, "__name__", None)
        return f"numpy.{name}" if name else value_text(self.fn)


class NumpyGridVariable(VariableTracker):
    """np.mgrid or np.ogrid: `np.mgrid[0:n, 0:m]` is traced (ir/numpy_api/creation.py)."""

    def __init__(self, grid, source=None):
        self.grid, self.source = grid, source

    def python_type(self):
        return type(self.grid)

    def as_python_constant(self):
        return self.grid

    def subscript(self, tx, key):
        from ...ir.numpy_api.creation import grid_getitem
        return tx.wrap_result(grid_getitem(tx.output.builder, tx.unwrap(key), sparse=self.grid is np.ogrid))

    def describe(self):
        return "numpy.ogrid" if self.grid is np.ogrid else "numpy.mgrid"


_NOT_FOLDABLE = {"empty", "empty_like", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
                 "array", "asarray", "arange", "linspace", "copy", "concatenate", "stack", "eye", "identity",
                 "ndarray"}


def _foldable(fn) -> bool:
    """Calling fn on constants at trace time gives the same result as at run time and makes no
    new mutable array the program could write to (array constructors are traced instead)."""
    if isinstance(fn, type) and issubclass(fn, (np.generic, np.dtype)):
        return True
    name = getattr(fn, "__name__", "")
    if name in _NOT_FOLDABLE:
        return False
    return isinstance(fn, np.ufunc) or name in {"result_type", "promote_types", "can_cast", "dtype",
                                                 "iinfo", "finfo", "isscalar", "ndim", "shape"}


class ModuleVariable(VariableTracker):
    def __init__(self, module, source=None):
        self.module, self.source = module, source

    def python_type(self):
        return types.ModuleType

    def as_python_constant(self):
        return self.module

    def var_getattr(self, tx, name):
        from ...sources import AttrSource
        try:
            value = getattr(self.module, name)
        except AttributeError:
            raise Unsupported(f"module {self.module.__name__} has no attribute {name!r}", kind="getattr") from None
        return tx.wrap_value(value, AttrSource(self.source, name) if self.source is not None else None)

    def describe(self):
        return f"module {self.module.__name__}"


class UserObjectVariable(VariableTracker):
    """An object of a user class: attribute reads are traced (and guarded); attribute stores are
    side effects recorded on the OutputGraph and replayed after the graph; calling it inlines
    `type(obj).__call__` (its type is guarded when the object was wrapped)."""

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        return type(self.value)

    def store_attr(self, tx, name, value):
        static = inspect.getattr_static(type(self.value), name, None)
        if hasattr(type(static), "__set__") and not isinstance(static, types.MemberDescriptorType):
            raise Unsupported(f"setting property {name!r} of {type(self.value).__name__}", kind="side_effect")
        if getattr(type(self.value), "__setattr__", object.__setattr__) is not object.__setattr__:
            raise Unsupported(f"{type(self.value).__name__} defines __setattr__", kind="side_effect")
        tx.output.side_effects.store_attr(self, name, value)

    def var_getattr(self, tx, name):
        from ...sources import AttrSource
        stored = tx.output.side_effects.load_attr(self, name)
        if stored is not None:
            return stored
        if type(self.value).__getattribute__ is not object.__getattribute__:
            raise Unsupported(f"{type(self.value).__name__} defines __getattribute__", kind="getattr")
        src = AttrSource(self.source, name) if self.source is not None else None
        return class_attribute(tx, type(self.value), name, self, src, instance=self.value)

    def call_function(self, tx, args, kwargs):
        call = inspect.getattr_static(type(self.value), "__call__", None)
        if not isinstance(call, types.FunctionType):
            raise Unsupported(f"calling object of {type(self.value).__name__}", kind="call")
        return UserFunctionVariable(call).call_function(tx, [self] + list(args), kwargs)

    def describe(self):
        return f"object of {type(self.value).__name__}"


def class_attribute(tx, cls, name, obj_var, src, instance=None, mro_after=None):
    """`obj.name` looked up as Python does (data descriptors, instance dict, class dict), for an
    instance of `cls` (instance given) or through `super()` (mro_after: the class to skip past)."""
    mro = type.mro(cls)
    if mro_after is not None:
        mro = mro[mro.index(mro_after) + 1:]
    klass, static, stored = _lookup_in_mro(tx, mro, name)
    if stored is not None:                 # a class attribute this trace stored (a plain value)
        instance_dict = _instance_dict(instance) if instance is not None and mro_after is None else None
        if instance_dict is not None and name in instance_dict:
            return tx.wrap_value(instance_dict[name], src)
        return stored
    if isinstance(static, property):
        if not isinstance(static.fget, types.FunctionType):
            raise Unsupported(f"property {name!r} without a Python getter", kind="getattr")
        return _user_function(static.fget).call_function(tx, [obj_var], {})
    instance_dict = _instance_dict(instance) if instance is not None and mro_after is None else None
    if instance_dict is not None and name in instance_dict:
        return tx.wrap_value(instance_dict[name], src)
    if static is _MISSING:
        if instance is not None and mro_after is None:
            # a slot, a builtin base's attribute, or what the class's __getattr__ answers (the
            # user's code, run here as Python would run it; what it raises, the program raises)
            try:
                value = getattr(instance, name)
            except Exception as exc:         # noqa: BLE001
                raise NumpyError(exc, context=f"{cls.__name__}.{name}") from None
            return tx.wrap_value(value, src)
        raise Unsupported(f"{cls.__name__} has no attribute {name!r}", kind="getattr")
    if isinstance(static, types.FunctionType):
        return UserMethodVariable(_user_function(static), obj_var)
    if isinstance(static, staticmethod):
        return tx.wrap_value(static.__func__, None)
    if isinstance(static, classmethod):
        fn = static.__func__
        if not isinstance(fn, types.FunctionType):
            raise Unsupported(f"classmethod {name!r} is not a Python function", kind="getattr")
        return UserMethodVariable(UserFunctionVariable(fn), class_variable(tx, cls))
    if hasattr(type(static), "__get__") and not isinstance(static, (types.MemberDescriptorType,
                                                                      types.GetSetDescriptorType, type)):
        raise Unsupported(f"attribute {name!r} of {cls.__name__} is a {type(static).__name__} descriptor",
                          kind="getattr")
    if instance is not None and mro_after is None:
        try:
            value = getattr(instance, name)          # an unset slot raises, as the program would
        except Exception as exc:             # noqa: BLE001
            raise NumpyError(exc, context=f"{cls.__name__}.{name}") from None
        return tx.wrap_value(value, src)
    # a plain class attribute read past the instance (super()): read and guarded through its class
    return tx.wrap_value(static, _class_attr_source(tx, klass, name))


_MISSING = object()


def _str(obj, name) -> str:
    value = getattr(obj, name, None)
    return value if isinstance(value, str) else "?"


def _instance_dict(obj):
    """The object's own `__dict__` (None without one), never through its class's `__getattr__`."""
    try:
        d = object.__getattribute__(obj, "__dict__")
    except Exception:                # noqa: BLE001 - no __dict__ (slots), or reading it raises
        return None
    return d if isinstance(d, dict) else None


def _lookup_in_mro(tx, mro, name):
    """(class, its own attribute or _MISSING, the VT a store in this trace gave it or None) for the
    first class of `mro` that has `name`, counting class attribute stores made in this trace."""
    stores = tx.output.side_effects
    for klass in mro:
        stored = stores.load_class_attr(klass, name)
        if stored is not None:
            return klass, _MISSING, stored
        if name in vars(klass):
            return klass, vars(klass)[name], None
    return None, _MISSING, None


def _class_attr_source(tx, klass, name):
    """`C.name` read from the class that defines it: through the class, held by the entry (a
    user class; its identity is what the trace reached it by), so the value is guarded."""
    from ...sources import AttrSource
    if klass is None or not is_user_class(klass):
        return None
    return AttrSource(class_variable(tx, klass).source, name)


def class_variable(tx, cls, source=None):
    """The VT of a class the trace reached through a guarded object or class (`type(self)`, a
    classmethod's `cls`): a user class gets a source (held by the entry) so its attributes are
    guarded and can be stored to; other classes are constants."""
    if not is_user_class(cls):
        return ConstantVariable(cls, source)
    if source is None:
        source = tx.output.hold(cls, f"{cls.__module__}.{cls.__qualname__}")
    return UserClassVariable(cls, source)


class SuperVariable(VariableTracker):
    """`super()` / `super(cls, obj)` bound to a traced object: methods resolve past `cls`."""

    def __init__(self, cls, obj_var):
        self.cls, self.obj_var = cls, obj_var

    def python_type(self):
        return super

    def var_getattr(self, tx, name):
        obj = getattr(self.obj_var, "value", None)
        if not isinstance(self.obj_var, UserObjectVariable):
            raise Unsupported(f"super() of {self.obj_var.describe()}", kind="getattr")
        return class_attribute(tx, type(obj), name, self.obj_var, None, instance=obj, mro_after=self.cls)

    def describe(self):
        return f"super({self.cls.__name__})"


class PartialVariable(VariableTracker):
    """functools.partial(fn, *args, **kwargs): calling it calls fn with the stored arguments first."""

    def __init__(self, fn_var, args, kwargs, source=None):
        self.fn_var, self.args, self.kwargs, self.source = fn_var, list(args), dict(kwargs), source

    def python_type(self):
        return functools.partial

    def call_function(self, tx, args, kwargs):
        return self.fn_var.call_function(tx, self.args + list(args), {**self.kwargs, **kwargs})

    def var_getattr(self, tx, name):
        if name == "func":
            return self.fn_var
        if name == "args":
            return TupleVariable(self.args)
        return super().var_getattr(tx, name)

    def describe(self):
        return f"partial({self.fn_var.describe()})"


def is_user_class(value) -> bool:
    """A class made by a `class` statement (a heap type), not an exception class."""
    return isinstance(value, type) and bool(value.__flags__ & _HEAP_TYPE) and not issubclass(value, BaseException)


_HEAP_TYPE = 1 << 9          # Py_TPFLAGS_HEAPTYPE


class UserClassVariable(VariableTracker):
    """A user class (guarded by identity when it came from an input or a global): its attributes
    are read like an instance's class attributes; calling it (making an object) is not traced."""

    def __init__(self, cls, source=None):
        self.cls, self.source = cls, source

    def python_type(self):
        return type(self.cls)

    def as_python_constant(self):
        return self.cls

    def store_attr(self, tx, name, value):
        """`cls.name = value` (`type(self).n += 1`, `Counter.calls = ...`): a side effect replayed
        after the graph, seen by later reads of the class and its instances in this trace. Only
        plain values on plain classes: a stored function or descriptor would change how later
        attribute reads resolve, a metaclass may define what a store does."""
        if type(self.cls) is not type:
            raise Unsupported(f"setting attribute {name!r} of a class with metaclass {type(self.cls).__name__}",
                              kind="side_effect")
        if hasattr(value.python_type(), "__get__"):
            raise Unsupported(f"storing a {value.describe()} on class {self.cls.__name__}", kind="side_effect")
        static = inspect.getattr_static(self.cls, name, None)
        if hasattr(type(static), "__get__") and not isinstance(static, type):
            raise Unsupported(f"attribute {name!r} of class {self.cls.__name__} is a descriptor", kind="side_effect")
        if self.source is None:
            self.source = class_variable(tx, self.cls).source
        tx.output.side_effects.store_class_attr(self, name, value)

    def var_getattr(self, tx, name):
        from ...sources import AttrSource
        _, _, stored = _lookup_in_mro(tx, type.mro(self.cls), name)
        if stored is not None and not _metaclass_data_descriptor(self.cls, name):
            return stored
        try:
            static = inspect.getattr_static(self.cls, name)
        except AttributeError:
            raise Unsupported(f"{self.cls.__name__} has no attribute {name!r}", kind="getattr") from None
        if isinstance(static, types.FunctionType):
            return _user_function(static)             # a plain function when read off the class
        if isinstance(static, (classmethod, staticmethod)):
            return class_attribute(tx, self.cls, name, self, None)
        if name in ("__name__", "__qualname__", "__module__"):
            return ConstantVariable(getattr(self.cls, name))
        if hasattr(type(static), "__get__") and not isinstance(static, type):
            raise Unsupported(f"attribute {name!r} of class {self.cls.__name__} is a descriptor", kind="getattr")
        if self.source is None:
            self.source = class_variable(tx, self.cls).source
        return tx.wrap_value(getattr(self.cls, name), AttrSource(self.source, name))

    def describe(self):
        return f"class {self.cls.__qualname__}"


def _metaclass_data_descriptor(cls, name) -> bool:
    static = inspect.getattr_static(type(cls), name, None)
    return hasattr(type(static), "__set__")
