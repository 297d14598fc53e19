"""Arrays, NumPy scalars and run-time Python scalars that live in the graph."""
from __future__ import annotations

import numpy as np

from ...errors import DataDependentError, Unsupported
from ...ir.fake import FakeScalar
from .base import VariableTracker


_WEAK_SENSITIVE = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)}


def check_mixing(args):
    """A Python float the graph computed (`float(a.sum())`) is a float64 graph value: against an
    operand of dtype float16, float32 or complex64 NumPy would promote it differently from a
    Python float, so that combination is not traced."""
    derived = [a for a in args if getattr(a, "derived_python_scalar", False)]
    if not derived:
        return
    for a in args:
        if isinstance(a, ArrayVariable) and not a.is_python_scalar and a.proxy.dtype in _WEAK_SENSITIVE:
            raise DataDependentError("a Python float computed from array data combined with a "
                                     f"{a.proxy.dtype} value", context="float()",
                                     hints=("keep the value as a NumPy scalar (drop float())",))


class ArrayVariable(VariableTracker):
    """A graph value: an ndarray, a NumPy scalar (`x.sum()`) or a run-time Python scalar input."""

    derived_python_scalar = False     # float(a) of graph data: a Python float only at the output
    shape_set = False                 # `x.shape = ...` of an input: rebuilt as the caller's object

    def __init__(self, proxy, source=None):
        self.proxy, self.source = proxy, source

    @property
    def is_python_scalar(self) -> bool:
        return isinstance(self.proxy.fake, FakeScalar)

    def python_type(self):
        fake = self.proxy.fake
        if isinstance(fake, FakeScalar):
            return fake.pytype
        if fake.scalar:
            return fake.dtype.type
        return np.ndarray

    def var_getattr(self, tx, name):
        if self.is_python_scalar:
            raise Unsupported(f"attribute {name!r} of a Python scalar input", kind="getattr")
        from ...ir.numpy_api import array_attribute, lookup_method
        if lookup_method(name) is not None:
            return ArrayMethodVariable(self, name)
        return tx.wrap_result(array_attribute(tx.output.builder, self.proxy, name))

    def call_method(self, tx, name, args, kwargs):
        return self.var_getattr(tx, name).call_function(tx, args, kwargs)

    def store_attr(self, tx, name, value):
        """`x.shape = s`: NumPy reshapes the array object in place (a view or AttributeError).
        Every traced reference to the object sees the new shape (a view of the old value in the
        graph). Of an input (the caller's array, an attribute's array) the trace records the store
        as a side effect: after the graph the entry sets the caller's object's shape, and the
        object itself (not a view) is what every reference to it rebuilds to."""
        if name != "shape" or isinstance(self.proxy.fake, FakeScalar) or self.proxy.fake.scalar:
            raise Unsupported(f"setting attribute {name!r} of {self.describe()}", kind="side_effect")
        from ...ir.numpy_api.shaping import set_shape, setting_shape_warns
        if setting_shape_warns():
            raise Unsupported(f"setting .shape warns in NumPy {np.__version__} (deprecated); it runs eagerly",
                              kind="side_effect", hints=("write x = x.reshape(...) instead",))
        old, new = self.proxy, set_shape(tx.output.builder, self.proxy, tx.unwrap(value))
        if self.source is not None:
            tx.output.side_effects.store_attr(self, "shape", value)
        tx.rebind_array(old, new)
        self.proxy, self.shape_set = new, self.shape_set or self.source is not None

    def unpack(self, tx):
        fake = self.proxy.fake
        if isinstance(fake, FakeScalar) or fake.ndim == 0:
            raise Unsupported("iteration over a 0-d array", kind="iter")
        from ...shapes import guard_int
        n = guard_int(fake.shape[0])
        from ...ir.numpy_api import getitem
        return [tx.wrap_result(getitem(tx.output.builder, self.proxy, i)) for i in range(n)]

    def truth(self, tx):
        raise DataDependentError(
            "branching on the value of an array (data-dependent control flow)",
            context=f"bool({self.describe()})",
            hints=("the frame breaks the graph here; np.where computes both branches without one",))

    def describe(self):
        fake = self.proxy.fake
        if isinstance(fake, FakeScalar):
            return f"{fake.pytype.__name__} input"
        return f"array {self.proxy.node.type_str()}"

    def __repr__(self):
        return f"ArrayVariable({self.proxy.node!r})"


def _mark_derived(vt) -> None:
    """Python floats a method made of graph data (nested lists too) are float64 graph values:
    `check_mixing` keeps them away from float32 operands."""
    if isinstance(vt, ArrayVariable):
        vt.derived_python_scalar = vt.is_python_scalar and vt.python_type() is float
    for item in getattr(vt, "items", ()):
        _mark_derived(item)


class ArrayMethodVariable(VariableTracker):
    """A bound ndarray method, e.g. `x.sum`."""

    def __init__(self, array: ArrayVariable, name: str):
        self.array, self.name = array, name

    def python_type(self):
        return type(np.ndarray.sum)

    def call_function(self, tx, args, kwargs):
        from ...ir.numpy_api import lookup_method
        impl = lookup_method(self.name)
        if impl is None:
            raise Unsupported(f"ndarray.{self.name} is not supported", kind="call")
        check_mixing([self.array] + list(args) + list(kwargs.values()))
        out = tx.wrap_result(impl(tx.output.builder, self.array.proxy,
                                  *[tx.unwrap(a) for a in args],
                                  **{k: tx.unwrap(v) for k, v in kwargs.items()}))
        if getattr(impl, "derived_python_scalar", False):
            _mark_derived(out)                     # x.item(), x.tolist(): float64 in the graph
        return out

    def describe(self):
        return f"ndarray.{self.name}"

    def reconstruct(self, rebuild):
        return f"({rebuild(self.array)}).{self.name}"


def references(node, values) -> list:
    """The ArrayVariables holding `node`'s array among `values` and in the lists, tuples and
    dicts they hold, each once: every traced reference to that very object."""
    from .containers import BaseSequenceVariable, DictVariable
    seen, found, todo = set(), [], list(values)
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, ArrayVariable) and v.proxy.node is node:
            found.append(v)
        elif isinstance(v, BaseSequenceVariable):
            todo.extend(v.items)
        elif isinstance(v, DictVariable):
            todo.extend(v.items.values())
    return found
