"""Callables: user functions (inlined), NumPy functions, modules and user objects."""
from __future__ import annotations

import inspect
import types

import numpy as np

from ...errors import Unsupported
from .base import VariableTracker
from .constant import ConstantVariable


class UserFunctionVariable(VariableTracker):
    """A Python function whose body is traced inline."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self):
        return types.FunctionType

    def as_python_constant(self):
        return self.fn

    @property
    def code(self):
        return self.fn.__code__

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
        from ...sources import ClosureSource
        from .base import CellBox
        cells = []
        for i, (name, cell) in enumerate(zip(self.code.co_freevars, self.fn.__closure__ or ())):
            src = ClosureSource(self.source, i) if self.source is not None else None
            try:
                contents = cell.cell_contents
            except ValueError:
                raise Unsupported(f"closure variable {name!r} is not bound yet", kind="closure") from None
            cells.append(CellBox(tx.wrap_value(contents, src), name))
        return cells

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
        if all(a.is_python_constant() for a in args) and all(v.is_python_constant() for v in kwargs.values()) \
                and _foldable(self.fn):
            return tx.constant_fold(self.fn, args, kwargs)
        from ...ir.numpy_api import lookup_function
        impl = lookup_function(self.fn)
        if impl is None:
            raise Unsupported(f"numpy.{getattr(self.fn, '__name__', self.fn)} is not supported", kind="call",
                              hints=("file an issue naming this function",))
        return tx.wrap_result(impl(tx.output.builder, *[tx.unwrap(a) for a in args],
                                   **{k: tx.unwrap(v) for k, v in kwargs.items()}))

    def var_getattr(self, tx, name):
        value = getattr(self.fn, name, None)
        if isinstance(value, (int, float, str, np.dtype)) or value is None:
            return ConstantVariable(value)
        if isinstance(self.fn, np.ufunc) and name in ("at", "reduce", "accumulate", "outer"):
            return NumpyFunctionVariable(value)     # np.add.at & co.: the ufunc is guarded already
        return super().var_getattr(tx, name)

    def describe(self):
        return f"numpy.{getattr(self.fn, '__name__', repr(self.fn))}"


_NOT_FOLDABLE = {"empty", "empty_like", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
                 "array", "asarray", "arange", "linspace", "copy", "concatenate", "stack", "eye", "identity"}


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
    """An object of a user class: attribute reads are traced (and guarded), writes are not yet."""

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self):
        return type(self.value)

    def var_getattr(self, tx, name):
        from ...sources import AttrSource
        try:
            static = inspect.getattr_static(self.value, name)
        except AttributeError:
            raise Unsupported(f"{type(self.value).__name__} has no attribute {name!r}", kind="getattr") from None
        src = AttrSource(self.source, name) if self.source is not None else None
        instance_dict = getattr(self.value, "__dict__", {})
        if name in instance_dict:
            return tx.wrap_value(instance_dict[name], src)
        if isinstance(static, types.FunctionType):
            fn_src = AttrSource(_TypeSource(self.source), name) if self.source is not None else None
            return UserMethodVariable(UserFunctionVariable(static, fn_src), self)
        if isinstance(static, property) and isinstance(static.fget, types.FunctionType):
            return UserFunctionVariable(static.fget).call_function(tx, [self], {})
        if isinstance(static, (staticmethod,)):
            return tx.wrap_value(static.__func__, src)
        if isinstance(static, (int, float, str, bool, tuple, type(None))):
            return tx.wrap_value(getattr(self.value, name), src)
        raise Unsupported(f"attribute {name!r} of {type(self.value).__name__} ({type(static).__name__})",
                          kind="getattr")

    def describe(self):
        return f"object of {type(self.value).__name__}"


def _TypeSource(base):
    from ...sources import AttrSource
    return AttrSource(base, "__class__")
