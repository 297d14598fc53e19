"""One handler per CPython 3.11 opcode, named `op_<OPNAME>`; the dispatch table is built once.

3.12/3.13 handlers live in opcodes_py312.py; pyversion.HANDLERS picks, per version, the handler of an
opcode whose semantics changed."""
from __future__ import annotations

import builtins

import numpy as np

from .. import pyversion
from ..errors import NumpyError, Unsupported
from ..sources import GlobalIn, LocalSource
from .variables.array import ArrayVariable
from .variables.base import CellBox, CellVariable, NullVariable
from .variables.constant import ConstantVariable, SymNumberVariable
from .variables.containers import (DictVariable, ListIteratorVariable, ListVariable, SliceVariable,
                                   TupleVariable, constant_key)
from .variables.functions import NestedUserFunctionVariable
from .variables.scalar_choice import ScalarChoiceVariable
from .variables.strings import build_string, format_value, not_formattable
from . import errstate, loop_state, loops, while_loops
from .opcodes_py312 import BoundMethodVariable, VersionedOpcodes
from .signals import ReturnSignal


class _DispatchMeta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        table = {}
        for klass in reversed(cls.__mro__):
            for attr, fn in vars(klass).items():
                if attr.startswith("op_"):
                    table[attr[3:]] = fn
        for opname in pyversion.NO_OPS:
            table.setdefault(opname, lambda self, ins: None)
        for opname in pyversion.POP_JUMPS:
            table[opname] = cls._pop_jump
        for opname in pyversion.POP_JUMPS_NONE:
            table[opname] = cls._pop_jump_none
        for opname in pyversion.JUMP_OR_POP:
            table[opname] = cls._jump_or_pop
        for opname in pyversion.UNCONDITIONAL_JUMPS:
            table[opname] = cls._jump
        for opname, method in pyversion.HANDLERS.items():
            table[opname] = getattr(cls, method)
        cls.dispatch = table


class OpcodeHandlers(VersionedOpcodes, metaclass=_DispatchMeta):
    last_compare = None         # (index, a, b, op) of the last COMPARE_OP: trace/counted_while.py
    # -- stack --

    def op_POP_TOP(self, ins):
        self.pop()

    def op_PUSH_NULL(self, ins):
        self.push(NullVariable())

    def op_COPY(self, ins):
        self.push(self.stack[-ins.arg])

    def op_SWAP(self, ins):
        i = ins.arg
        self.stack[-1], self.stack[-i] = self.stack[-i], self.stack[-1]

    # -- names --

    def op_LOAD_CONST(self, ins):
        self.push(_constant(ins.argval))

    def op_LOAD_FAST(self, ins):
        name = ins.argval
        if name not in self.locals and name in self.lazy:
            self.locals[name] = self.wrap_value(*self.lazy.pop(name))
        if name not in self.locals:
            raise Unsupported(f"local variable {name!r} referenced before assignment", kind="exception")
        self.push(self.locals[name])

    op_LOAD_FAST_CHECK = op_LOAD_FAST

    def op_STORE_FAST(self, ins):
        self.lazy.pop(ins.argval, None)
        self.locals[ins.argval] = self.pop()

    def op_DELETE_FAST(self, ins):
        self.lazy.pop(ins.argval, None)
        self.locals.pop(ins.argval, None)

    def op_LOAD_GLOBAL(self, ins):
        if pyversion.load_global_pushes_null(ins):
            self.push(NullVariable())
        self.push(self.load_global(ins.argval))

    def _globals_code(self):
        return "___G" if self.globals_source is None else self.globals_source.code

    def op_STORE_GLOBAL(self, ins):
        self.output.side_effects.store_global(self.fn_globals, self._globals_code(), ins.argval, self.pop())

    def load_global(self, name):
        stored = self.output.side_effects.load_global(self.fn_globals, name)
        if stored is not None:
            return stored
        g = self.fn_globals
        if name in g:
            return self.wrap_value(g[name], GlobalIn(self.globals_source, name))
        if not hasattr(builtins, name):
            raise Unsupported(f"name {name!r} is not defined", kind="exception")
        # A builtin: guarded by the name staying absent from the globals.
        self.output.guards.builtin_not_shadowed(self.globals_source, name)
        return self.wrap_value(getattr(builtins, name), None)

    def op_LOAD_DEREF(self, ins):
        box = self.cells.get(ins.argval)
        if box is None or box.value is None:
            raise Unsupported(f"free variable {ins.argval!r} referenced before assignment", kind="exception")
        self.push(box.value)

    def op_STORE_DEREF(self, ins):
        box = self.cells.get(ins.argval)
        if box is None or (self.parent is None and ins.argval in self.code.co_freevars):
            raise Unsupported("assigning to a variable of an enclosing function (nonlocal)", kind="side_effect")
        loop_state.store_cell(self, box, self.pop())       # in a loop body: carried by the loop
        if box.cell_source is not None:        # a real cell the caller can see: replay the write
            self.output.side_effects.store_cell(box)

    def op_LOAD_CLOSURE(self, ins):
        name = ins.argval
        box = self.cells.setdefault(name, CellBox(None, name, self.code))
        self.push(CellVariable(box))

    def op_MAKE_CELL(self, ins):
        name = ins.argval
        if name in self.lazy:
            self.locals[name] = self.wrap_value(*self.lazy.pop(name))
        if name not in self.cells:
            self.cells[name] = CellBox(self.locals.pop(name, None), name, self.code)

    def op_LOAD_ATTR(self, ins):
        obj = self.pop()
        self.push(obj.var_getattr(self, ins.argval))

    def op_LOAD_METHOD(self, ins):
        obj = self.pop()
        self.push(NullVariable())
        self.push(_BoundMethod(obj, ins.argval))

    def op_STORE_ATTR(self, ins):
        obj = self.pop()
        value = self.pop()
        store = getattr(obj, "store_attr", None)
        if store is None:
            raise Unsupported(f"setting attribute {ins.argval!r} of {obj.describe()}", kind="side_effect")
        store(self, ins.argval, value)

    def op_LOAD_ASSERTION_ERROR(self, ins):
        self.push(ConstantVariable(AssertionError))

    # -- building values --

    def op_BUILD_TUPLE(self, ins):
        self.push(TupleVariable(self.popn(ins.arg)))

    def op_BUILD_LIST(self, ins):
        self.push(ListVariable(self.popn(ins.arg)))

    def op_LIST_TO_TUPLE(self, ins):
        self.push(TupleVariable(self.pop().items))

    def op_LIST_APPEND(self, ins):
        v = self.pop()
        self.stack[-ins.arg].items.append(v)

    def op_LIST_EXTEND(self, ins):
        v = self.pop()
        self.stack[-ins.arg].items.extend(v.unpack(self))

    def op_BUILD_MAP(self, ins):
        items = self.popn(2 * ins.arg)
        self.push(DictVariable({constant_key(self, items[i]): items[i + 1] for i in range(0, len(items), 2)}))

    def op_BUILD_CONST_KEY_MAP(self, ins):
        keys = self.pop().as_python_constant()
        values = self.popn(ins.arg)
        self.push(DictVariable(dict(zip(keys, values))))

    def op_MAP_ADD(self, ins):
        value = self.pop()
        key = self.pop()
        self.stack[-ins.arg].items[constant_key(self, key)] = value

    def op_DICT_UPDATE(self, ins):
        v = self.pop()
        self.stack[-ins.arg].items.update(v.items)

    op_DICT_MERGE = op_DICT_UPDATE

    def op_BUILD_SLICE(self, ins):
        parts = self.popn(ins.arg)
        if len(parts) == 2:
            parts.append(ConstantVariable(None))
        self.push(SliceVariable(*parts))

    def op_BUILD_STRING(self, ins):
        self.push(build_string(self.popn(ins.arg)))

    def op_FORMAT_VALUE(self, ins):
        spec = self.pop() if (ins.arg & 0x04) else ConstantVariable("")
        if not spec.is_python_constant():
            raise Unsupported("a format spec computed from graph values", kind="call")
        spec = spec.as_python_constant()
        value = self.pop()
        lazy = format_value(value, ins.arg & 0x03, spec)
        if lazy is not None:
            self.push(lazy)
            return
        if not value.is_python_constant():
            raise not_formattable(value)
        v = value.as_python_constant()
        conv = ins.arg & 0x03
        v = {0: v, 1: str(v), 2: repr(v), 3: ascii(v)}[conv]
        self.push(ConstantVariable(format(v, spec)))

    def op_UNPACK_SEQUENCE(self, ins):
        items = self.pop().unpack(self)
        if len(items) != ins.arg:
            raise Unsupported(f"unpacking {len(items)} values into {ins.arg}", kind="exception")
        for item in reversed(items):
            self.push(item)

    def op_UNPACK_EX(self, ins):
        items = self.pop().unpack(self)
        before, after = ins.arg & 0xFF, ins.arg >> 8
        if len(items) < before + after:
            raise Unsupported("not enough values to unpack", kind="exception")
        middle = ListVariable(items[before:len(items) - after])
        for item in reversed(items[:before] + [middle] + items[len(items) - after:]):
            self.push(item)

    # -- operators --

    def op_BINARY_OP(self, ins):
        b = self.pop()
        a = self.pop()
        self.push(self.binary(a, b, pyversion.BINARY_OPS[ins.arg]))

    def op_COMPARE_OP(self, ins):
        b = self.pop()
        a = self.pop()
        self.last_compare = (self.ip - 1, a, b, ins.argval)
        self.push(self.compare(a, b, ins.argval))

    def op_IS_OP(self, ins):
        b = self.pop()
        a = self.pop()
        same = self.is_same(a, b)
        self.push(ConstantVariable(same != bool(ins.arg)))

    def op_CONTAINS_OP(self, ins):
        container = self.pop()
        item = self.pop()
        if isinstance(container, DictVariable):
            found = constant_key(self, item) in container.items
        else:
            found = any(self.compare(item, x, "==").truth(self) for x in container.unpack(self))
        self.push(ConstantVariable(found != bool(ins.arg)))

    def _unary(self, op):
        from ..ir import numpy_api
        x = self.pop()
        if isinstance(x, ScalarChoiceVariable):
            self.push(x.unary(self, op))
        elif isinstance(x, ArrayVariable):
            out = self.wrap_result(numpy_api.unary_op(self.output.builder, op, x.proxy))
            out.derived_python_scalar = x.derived_python_scalar and out.is_python_scalar
            self.push(out)
        elif isinstance(x, (SymNumberVariable, ConstantVariable)) and op != "not":
            import operator
            fn = {"-": operator.neg, "+": operator.pos, "~": operator.invert}[op]
            if isinstance(x, ConstantVariable) and isinstance(x.value, np.generic):
                # NumPy's scalar math may report (-np.int64(-2 ** 63)): computed at run time then
                self.push(self.constant_fold(fn, [x], {}, traced=lambda: self.wrap_result(
                    numpy_api.unary_op(self.output.builder, op, *self.numpy_scalar_operands(x)))))
                return
            try:
                value = fn(self.unwrap(x))
            except TypeError as exc:                 # ~1.5: Python raises it
                raise NumpyError(exc, context=f"unary {op}") from None
            self.push(self.wrap_result(value))
        else:
            raise Unsupported(f"unary {op} on {x.describe()}", kind="operator")

    def op_UNARY_NEGATIVE(self, ins):
        self._unary("-")

    def op_UNARY_POSITIVE(self, ins):
        self._unary("+")

    def op_UNARY_INVERT(self, ins):
        self._unary("~")

    def op_UNARY_NOT(self, ins):
        self.push(ConstantVariable(not self.pop().truth(self)))

    def op_BINARY_SUBSCR(self, ins):
        key = self.pop()
        obj = self.pop()
        self.push(self.getitem(obj, key))

    def op_STORE_SUBSCR(self, ins):
        key = self.pop()
        obj = self.pop()
        value = self.pop()
        from ..ir import numpy_api
        if isinstance(obj, ArrayVariable) and not obj.is_python_scalar:
            if isinstance(value, ScalarChoiceVariable):
                value = value.stored_into(obj)
            numpy_api.setitem(self.output.builder, obj.proxy, self.index_key(key), self.unwrap(value))
        elif isinstance(obj, ListVariable):
            obj.setitem(self, key, value)
        elif isinstance(obj, DictVariable):
            obj.call_method(self, "__setitem__", [key, value], {})
        else:
            raise Unsupported(f"item assignment on {obj.describe()}", kind="side_effect")

    def op_DELETE_SUBSCR(self, ins):
        key = self.pop()
        obj = self.pop()
        if isinstance(obj, ListVariable):
            obj.delitem(self, key)
        elif isinstance(obj, DictVariable):
            obj.call_method(self, "__delitem__", [key], {})
        else:
            raise Unsupported(f"item deletion on {obj.describe()}", kind="side_effect")

    # -- control flow --

    def _jump(self, ins):
        self.jump(ins.argval)

    def _pop_jump(self, ins):
        value = self.pop()
        if while_loops.handles_jump(self, ins, value):
            return                                   # a loop test, a loop, or an if in a loop body
        if value.truth(self) == pyversion.POP_JUMPS[ins.opname]:
            self.jump(ins.argval)

    def _pop_jump_none(self, ins):
        value = self.pop()
        is_none = value.is_python_constant() and value.as_python_constant() is None
        if is_none == pyversion.POP_JUMPS_NONE[ins.opname]:
            self.jump(ins.argval)

    def _jump_or_pop(self, ins):
        value = self.stack[-1]
        if value.truth(self) == pyversion.JUMP_OR_POP[ins.opname]:
            self.jump(ins.argval)
        else:
            self.pop()

    def op_GET_ITER(self, ins):
        self.push(self.iterate(self.pop()))

    def op_FOR_ITER(self, ins):
        it = self.stack[-1]
        if isinstance(it, loops.LoopIterator):
            loops.trace_for(self, ins, it)
            return
        if not isinstance(it, ListIteratorVariable):
            raise Unsupported(f"iterating {it.describe()}", kind="iter")
        item = it.next_item()
        if item is None:
            self.pop()
            self.jump(ins.argval)
        else:
            self.push(item)

    def op_RETURN_VALUE(self, ins):
        raise ReturnSignal(self.pop())

    def op_RAISE_VARARGS(self, ins):
        raise Unsupported("the traced code raises an exception", kind="exception",
                          hints=("the frame runs eagerly so Python raises it",))

    # -- calls --

    def op_KW_NAMES(self, ins):
        self.kw_names = self.code.co_consts[ins.arg]

    def op_CALL(self, ins):
        argc = ins.arg
        args = self.popn(argc)
        fn = self.pop()
        below = self.pop()
        if not isinstance(below, NullVariable):       # method form: [callable, self, args...]
            args = [fn] + args
            fn = below
        kw_names = self.kw_names
        self.kw_names = ()
        kwargs = {}
        if kw_names:
            kwargs = dict(zip(kw_names, args[len(args) - len(kw_names):]))
            args = args[:len(args) - len(kw_names)]
        self.push(self.call(fn, args, kwargs))

    def op_BEFORE_WITH(self, ins):
        errstate.before_with(self, ins)      # a traced `with np.errstate(...)` (trace/errstate.py)

    def op_CALL_FUNCTION_EX(self, ins):
        kwargs = self.pop() if ins.arg & 1 else DictVariable({})
        args = self.pop()
        fn = self.pop()
        null = self.pop()
        if not isinstance(null, NullVariable):
            raise Unsupported("CALL_FUNCTION_EX without NULL", kind="opcode")
        self.push(self.call(fn, args.unpack(self), dict(kwargs.items)))

    def op_MAKE_FUNCTION(self, ins):
        code = self.pop().as_python_constant()
        flags = ins.arg
        cells = [c.box for c in self.pop().unpack(self)] if flags & 0x08 else []
        if flags & 0x04:
            self.pop()                                  # annotations
        kwdefaults = self.pop().items if flags & 0x02 else {}
        defaults = self.pop().unpack(self) if flags & 0x01 else []
        self.push(NestedUserFunctionVariable(code, code.co_qualname, self.fn_globals, defaults, kwdefaults, cells,
                                             self.globals_source))

    def op_RETURN_GENERATOR(self, ins):
        if self.yielded is None:
            raise Unsupported("generators are not traced", kind="generator")
        self.push(ConstantVariable(None))             # popped by the POP_TOP that follows

    def op_YIELD_VALUE(self, ins):
        if self.yielded is None:
            raise Unsupported("yield outside an inlined generator", kind="generator")
        if loop_state.yields_in_body(self):
            raise Unsupported("`yield` inside a loop body (one item per iteration)", kind="loop")
        self.yielded.append(self.pop())
        self.push(ConstantVariable(None))             # what `yield` evaluates to: nothing is sent


def _constant(value):
    if type(value) is tuple:
        return TupleVariable([_constant(v) for v in value])
    return ConstantVariable(value)


_BoundMethod = BoundMethodVariable

_ = LocalSource
