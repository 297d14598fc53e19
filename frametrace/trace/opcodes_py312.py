"""Opcode handlers for CPython 3.12 and 3.13 bytecode (PEP 709 comprehensions, new call protocol).

OpcodeHandlers (opcodes.py) inherits this mixin. Handlers named `op_<OPNAME>` exist only on the
versions whose `dis.opmap` has that opcode; the others are chosen per version by
`pyversion.HANDLERS` (opname -> method name), so no handler tests the version.
"""
from __future__ import annotations

import types

from .. import pyversion
from ..errors import Unsupported
from . import loops
from .variables.base import NullVariable, VariableTracker
from .variables.constant import ConstantVariable
from .variables.containers import DictVariable, SliceVariable
from .variables.functions import NestedUserFunctionVariable
from .variables.strings import format_value, not_formattable


def _named(name):
    """A stand-in instruction carrying one name (for the superinstructions of 3.13)."""
    return types.SimpleNamespace(argval=name, arg=None, opname="")


class BoundMethodVariable(VariableTracker):
    """What a method load pushes: the attribute is resolved when called (x.sum(...), lst.append(...))."""

    def __init__(self, obj, name):
        self.obj, self.name = obj, name

    def call_function(self, tx, args, kwargs):
        return self.obj.call_method(tx, self.name, args, kwargs)

    def describe(self):
        return f"{self.obj.describe()}.{self.name}"

    def reconstruct(self, rebuild):
        return f"({rebuild(self.obj)}).{self.name}"


class VersionedOpcodes:
    # -- loads whose NULL goes below (3.11, 3.12) or above (3.13) the callable --

    def load_global_null_above(self, ins):
        self.push(self.load_global(ins.argval))
        if pyversion.load_global_pushes_null(ins):
            self.push(NullVariable())

    def load_attr_method_bit_null_below(self, ins):
        obj = self.pop()
        if pyversion.load_attr_is_method(ins):
            self.push(NullVariable())
            self.push(BoundMethodVariable(obj, ins.argval))
        else:
            self.push(obj.var_getattr(self, ins.argval))

    def load_attr_method_bit_null_above(self, ins):
        obj = self.pop()
        if pyversion.load_attr_is_method(ins):
            self.push(BoundMethodVariable(obj, ins.argval))
            self.push(NullVariable())
        else:
            self.push(obj.var_getattr(self, ins.argval))

    # -- calls (3.13: [callable, NULL or self, args...]) --

    def _call_with_names(self, argc, kw_names):
        args = self.popn(argc)
        self_or_null = self.pop()
        fn = self.pop()
        if not isinstance(self_or_null, NullVariable):
            args = [self_or_null] + args
        kwargs = {}
        if kw_names:
            kwargs = dict(zip(kw_names, args[len(args) - len(kw_names):]))
            args = args[:len(args) - len(kw_names)]
        self.push(self.call(fn, args, kwargs))

    def call_null_above(self, ins):
        self._call_with_names(ins.arg, ())

    def op_CALL_KW(self, ins):
        names = self.pop().as_python_constant()
        self._call_with_names(ins.arg, names)

    def call_ex_null_above(self, ins):
        kwargs = self.pop() if ins.arg & 1 else DictVariable({})
        args = self.pop()
        null = self.pop()
        fn = self.pop()
        if not isinstance(null, NullVariable):
            raise Unsupported("CALL_FUNCTION_EX without NULL", kind="opcode")
        self.push(self.call(fn, args.unpack(self), dict(kwargs.items)))

    # -- locals: PEP 709 inlined comprehensions and the 3.13 superinstructions --

    def op_LOAD_FAST_AND_CLEAR(self, ins):
        name = ins.argval
        if name in self.lazy:
            self.locals[name] = self.wrap_value(*self.lazy.pop(name))
        value = self.locals.pop(name, None)
        self.push(NullVariable() if value is None else value)

    def store_fast_null_unbinds(self, ins):
        """STORE_FAST of the NULL LOAD_FAST_AND_CLEAR pushed for an unbound name unbinds it again."""
        if isinstance(self.stack[-1], NullVariable):
            self.pop()
            self.lazy.pop(ins.argval, None)
            self.locals.pop(ins.argval, None)
        else:
            self.op_STORE_FAST(ins)

    def load_fast_or_closure_cell(self, ins):
        """3.13: LOAD_FAST of a cell (or free) variable loads the cell itself, to build a closure."""
        if ins.argval in self.cells and ins.argval not in self.locals and ins.argval not in self.lazy:
            self.op_LOAD_CLOSURE(ins)
        else:
            self.op_LOAD_FAST(ins)

    def op_LOAD_FAST_LOAD_FAST(self, ins):
        for name in ins.argval:
            self.dispatch["LOAD_FAST"](self, _named(name))

    def op_STORE_FAST_STORE_FAST(self, ins):
        for name in ins.argval:
            self.dispatch["STORE_FAST"](self, _named(name))

    def op_STORE_FAST_LOAD_FAST(self, ins):
        store, load = ins.argval
        self.dispatch["STORE_FAST"](self, _named(store))
        self.dispatch["LOAD_FAST"](self, _named(load))

    # -- loops and returns --

    def for_iter_skip_end_for(self, ins):
        """3.12+: an exhausted FOR_ITER pops the iterator and skips the END_FOR (and POP_TOP) at its target."""
        it = self.stack[-1]
        if isinstance(it, loops.LoopIterator):
            loops.trace_for(self, ins, it)
            return
        if not hasattr(it, "next_item"):
            raise Unsupported(f"iterating {it.describe()}", kind="iter")
        item = it.next_item()
        if item is None:
            self.pop()
            self.jump(ins.argval)
            self.ip += pyversion.FOR_ITER_SKIP
        else:
            self.push(item)

    def op_RETURN_CONST(self, ins):
        self.op_LOAD_CONST(ins)
        self.op_RETURN_VALUE(ins)

    # -- operators --

    def op_BINARY_SLICE(self, ins):
        end = self.pop()
        start = self.pop()
        obj = self.pop()
        self.push(self.getitem(obj, SliceVariable(start, end, ConstantVariable(None))))

    def op_STORE_SLICE(self, ins):
        end = self.pop()
        start = self.pop()
        self.push(SliceVariable(start, end, ConstantVariable(None)))
        self.op_STORE_SUBSCR(ins)

    def op_CALL_INTRINSIC_1(self, ins):
        name = pyversion.INTRINSIC_1.get(ins.arg)
        if name == "INTRINSIC_UNARY_POSITIVE":
            self._unary("+")
        elif name == "INTRINSIC_LIST_TO_TUPLE":
            self.op_LIST_TO_TUPLE(ins)
        else:
            raise Unsupported(f"{name} is not traced", kind="opcode")

    def op_CALL_INTRINSIC_2(self, ins):
        raise Unsupported("CALL_INTRINSIC_2 (exception groups, type parameters) is not traced", kind="opcode")

    def op_LOAD_SUPER_ATTR(self, ins):
        """`super().name` / `super(cls, obj).name`: [super, cls, obj] -> the attribute (or its method form).

        Like CPython: when `super` is the builtin, cls and obj come from the stack (the `__class__`
        cell and the first argument for the zero-argument form); a rebound `super` is called as written.
        """
        obj = self.pop()
        cls = self.pop()
        global_super = self.pop()
        two_args = bool(ins.arg & 2)
        if global_super.is_python_constant() and global_super.as_python_constant() is super \
                and cls.is_python_constant() and isinstance(cls.as_python_constant(), type):
            bound = self.call(global_super, [cls, obj], {})
        else:
            bound = self.call(global_super, [cls, obj] if two_args else [], {})
        self.push(bound)
        self.dispatch["LOAD_ATTR"](self, ins)       # the low bit asks for the method form, as for LOAD_ATTR

    def op_TO_BOOL(self, ins):
        """3.13: every consumer of TO_BOOL's result asks for its truth, so the value itself stands in."""

    # -- strings (3.13) --

    def _format(self, value, spec):
        lazy = format_value(value, 0, spec)
        if lazy is not None:
            self.push(lazy)
            return
        if not value.is_python_constant():
            raise not_formattable(value)
        self.push(ConstantVariable(format(value.as_python_constant(), spec)))

    def op_FORMAT_SIMPLE(self, ins):
        self._format(self.pop(), "")

    def op_FORMAT_WITH_SPEC(self, ins):
        spec = self.pop()
        if not spec.is_python_constant():
            raise Unsupported("a format spec computed from graph values", kind="call")
        self._format(self.pop(), spec.as_python_constant())

    def op_CONVERT_VALUE(self, ins):
        value = self.pop()
        lazy = format_value(value, ins.arg, "")
        if lazy is not None:
            self.push(lazy)
            return
        if not value.is_python_constant():
            raise not_formattable(value)
        convert = {1: str, 2: repr, 3: ascii}[ins.arg]
        self.push(ConstantVariable(convert(value.as_python_constant())))

    # -- functions (3.13: MAKE_FUNCTION takes the code only) --

    def make_function_bare(self, ins):
        code = self.pop().as_python_constant()
        self.push(NestedUserFunctionVariable(code, code.co_qualname, self.fn_globals, [], {}, [],
                                             self.globals_source))

    def op_SET_FUNCTION_ATTRIBUTE(self, ins):
        fn = self.pop()
        value = self.pop()
        if ins.arg == 0x01:
            fn.pos_defaults = value.unpack(self)
        elif ins.arg == 0x02:
            fn.kw_defaults = dict(value.items)
        elif ins.arg == 0x08:
            fn.cells = [c.box for c in value.unpack(self)]
        elif ins.arg != 0x04:                        # annotations are not needed to run the function
            raise Unsupported(f"SET_FUNCTION_ATTRIBUTE {ins.arg}", kind="opcode")
        self.push(fn)
