"""InstructionTranslator: the symbolic interpreter of one frame (and of inlined calls).

It runs the frame's bytecode over VariableTrackers: `step()` executes one instruction
through a dispatch table of `op_<OPNAME>` handlers (`opcodes.py`), branches on sizes are
decided by the ShapeEnv (which records guards), loops are unrolled, and calls to user
functions are traced inline by a child translator sharing the same OutputGraph.
"""
from __future__ import annotations

import linecache
import operator
import warnings

import numpy as np

from .. import pyversion
from ..config import config
from ..errors import NumpyError, Unsupported
from ..ir.builder import Proxy
from ..ir.fake import FakeScalar
from . import errstate, frame_builtins, loops
from .opcodes import OpcodeHandlers
from .signals import BreakPoint, ReturnSignal
from .variables.array import ArrayVariable, check_mixing
from .variables.base import CellBox, VariableTracker
from .variables.constant import ConstantVariable, SymNumberVariable, wrap_number
from .variables.scalar_choice import choice_binary, choice_operands
from .variables.strings import join as join_strings, string_binary
from .variables.containers import (DictVariable, InputListVariable, ListIteratorVariable, ListVariable,
                                   RangeVariable, SliceVariable, TupleVariable, constant_key)


_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
           "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
           ">>": operator.rshift}
_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
            ">=": operator.ge}


class InstructionTranslator(OpcodeHandlers):
    def __init__(self, output, code, f_locals: dict, cells: dict, fn_globals: dict, globals_source=None,
                 parent=None, name=None, generator=False):
        self.output, self.code, self.parent = output, code, parent
        self.name = name or code.co_name
        self.instructions = pyversion.instructions(code)
        self.offset_to_index = _offset_to_index(self.instructions)
        self.ip = 0
        self.stack: list = []
        self.locals: dict = dict(f_locals)
        self.lazy: dict = {}                   # name -> (value, source): inputs wrapped on first use
        self.stop_index = None                 # root only: stop before this instruction (graph break)
        self.cells: dict = dict(cells)         # name -> CellBox (cellvars and freevars)
        self.fn_globals, self.globals_source = fn_globals, globals_source
        self.kw_names = ()
        self.lineno = code.co_firstlineno
        self.depth = 0 if parent is None else parent.depth + 1
        self.locals_dict = None               # 3.11/3.12: the one dict locals() refreshes and returns
        self.function_paths = None            # an inlined function's branches on data, as paths (trace/while_loops.py)
        self.region_starts = frozenset()      # root only: try/with blocks split the frame there
        if pyversion.has_exception_table(code) and parent is None:
            self.region_starts = _region_starts(self.instructions, code)
        elif pyversion.has_exception_table(code):
            raise Unsupported("try/except/with blocks are not traced yet", kind="exception_table",
                              context=code.co_name, location=f"{code.co_filename}:{code.co_firstlineno}",
                              hints=("move the try/with block out of the compiled function",))
        flags = code.co_flags
        self.yielded = [] if generator else None      # an inlined generator collects what it yields
        if flags & (0x80 | 0x100 | 0x200) or (flags & 0x20 and not generator):
            raise Unsupported("generators and coroutines are not traced", kind="generator",
                              context=code.co_name)

    # -- running --

    def location(self):
        from ..shapes.records import Location
        filename = self.code.co_filename
        return Location(filename, self.lineno, self.code.co_name,
                        linecache.getline(filename, self.lineno).strip() if self.lineno else "")

    def run(self):
        prev = self.output.current_tx
        self.output.current_tx = self
        try:
            while True:
                if self.ip == self.stop_index:
                    raise BreakPoint(self)
                try:
                    if self.ip in self.region_starts and not errstate.trace_block(self):
                        self._split_at_block()
                    self.step()
                except ReturnSignal as ret:
                    return ret.value
                except Unsupported as exc:
                    if not exc.location:
                        loc = self.location()
                        exc.location, exc.source_line = loc.short(), loc.source_line
                    if self.parent is None and getattr(exc, "root_index", None) is None:
                        exc.root_index = self.ip - 1
                    if self.parent is None and self.output.open_blocks:
                        errstate.restart_split(self, exc)       # no resume function inside the block
                    raise
        finally:
            self.output.current_tx = prev

    def step(self):
        """Execute the instruction at `ip`."""
        ins = self.instructions[self.ip]
        self.ip += 1
        line = pyversion.line_started(ins)
        if line is not None:
            self.lineno = line
        self.output.steps += 1
        if self.output.steps > config.max_trace_steps:
            raise Unsupported(f"trace exceeded {config.max_trace_steps} instructions", kind="budget",
                              hints=("a very long unrolled loop; mark its bound static or use NumPy ops",))
        handler = self.dispatch.get(ins.opname)
        if handler is None:
            raise Unsupported(f"opcode {ins.opname} is not supported", kind="opcode",
                              context=f"{ins.opname} {ins.argrepr}".strip())
        handler(self, ins)

    def _split_at_block(self):
        """A try/with block starts here: the frame breaks before it (resume/region.py runs it)."""
        ins = self.instructions[self.ip]
        kind = "with" if ins.opname in pyversion.WITH_STARTS else "try"
        exc = Unsupported(f"a `{kind}` block is run by Python, not traced", kind="exception_table",
                          context=f"{ins.opname} {ins.argrepr}".strip(),
                          hints=("the code before and after the block still compiles",))
        loc = self.location()
        exc.location, exc.source_line = loc.short(), loc.source_line
        exc.root_index, exc.stack_depth = self.ip, len(self.stack)
        raise exc

    def jump(self, offset):
        self.ip = self.offset_to_index[offset]

    def push(self, v):
        self.stack.append(v)

    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    # -- values --

    def wrap_value(self, value, source):
        return self.output.wrap(value, source)

    def wrap_result(self, value):
        """A value returned by the NumPy API layer (Proxy, SymInt, constants, tuples) as a VT."""
        if isinstance(value, Proxy):
            return ArrayVariable(value)
        if isinstance(value, VariableTracker):
            return value
        if isinstance(value, tuple):
            return TupleVariable([self.wrap_result(v) for v in value])
        if isinstance(value, list):
            return ListVariable([self.wrap_result(v) for v in value])
        return wrap_number(value) if isinstance(value, (int, float, bool)) or _is_sym(value) or \
            hasattr(value, "maybe_as_constant") else ConstantVariable(value)

    def index_key(self, key):
        """An array index as the NumPy API sees it; a run-time Python int of the graph (an item of an
        int list read at a loop index) indexes as the 0-d int64 array it is held in (same meaning)."""
        if isinstance(key, TupleVariable):
            return tuple(self.index_key(k) for k in key.items)
        if isinstance(key, ArrayVariable) and key.is_python_scalar and key.python_type() is int:
            return self.output.builder.emit("astype", key.proxy, dtype=np.dtype(np.int64))
        return self.unwrap(key)

    def unwrap(self, v):
        """A VT as the NumPy API layer sees it: Proxy, SymInt, constants, tuples, slices."""
        if isinstance(v, ArrayVariable):
            return v.proxy
        if isinstance(v, SymNumberVariable):
            return v.value
        if isinstance(v, ConstantVariable):
            return v.value
        if isinstance(v, TupleVariable):
            return tuple(self.unwrap(i) for i in v.items)
        if isinstance(v, ListVariable):
            return [self.unwrap(i) for i in v.items]
        if isinstance(v, SliceVariable):
            return slice(*(self.unwrap(p) for p in v.parts))
        if isinstance(v, RangeVariable):
            return list(v.as_python_constant()) if v.is_python_constant() else v.as_array(self).proxy
        if v.is_python_constant():
            return v.as_python_constant()
        raise Unsupported(f"passing {v.describe()} to NumPy", kind="call")

    def constant_fold(self, fn, args, kwargs, traced=None):
        """fn(*args, **kwargs) on constants, computed now. A call that reports a floating-point
        error or warns (`np.int64(2 ** 62) * 4`, `np.log(0.0)`) does so at every call of the
        eager program, under the error state and warning filters of that moment: it is not
        folded but computed at run time, by the graph (`traced()`, which emits its node) or,
        without one, by Python after a graph break."""
        values = [a.as_python_constant() for a in args]
        kw = {k: v.as_python_constant() for k, v in kwargs.items()}
        try:
            value, reports = fold_quietly(fn, values, kw)
        except Exception as exc:     # the program raises here: let eager execution raise it
            raise NumpyError(exc, context=getattr(fn, "__name__", str(fn))) from None
        if reports:
            if traced is not None:
                return traced()
            raise Unsupported(f"{getattr(fn, '__name__', fn)} on constants reports a floating-point "
                              f"error or warns", kind="constant",
                              hints=("it runs in Python, after a graph break, as NumPy reports at each call",))
        if isinstance(value, np.ndarray):
            raise Unsupported(f"{getattr(fn, '__name__', fn)} on constants makes an array constant",
                              kind="constant")
        return self.wrap_value(value, None)

    def numpy_scalar_operands(self, *vs) -> list | None:
        """The operands of an operator on constants, NumPy scalars emitted as graph values
        (np.int64(2 ** 62) * 4 computed at run time by NumPy's scalar math), or None when no
        operand is a NumPy scalar."""
        from ..ir.numpy_api.common import as_array
        values = [v.as_python_constant() for v in vs]
        if not any(isinstance(x, np.generic) for x in values):
            return None
        return [as_array(self.output.builder, x, "operator") if isinstance(x, np.generic) else x for x in values]

    # -- operators --

    def binary(self, a, b, op: str):
        text = string_binary(a, b, op)           # a string formatted from graph values
        if text is not None:
            return text
        choice = choice_binary(self, a, b, op)    # `d * s` of a max()/min() or loop choice and a Python float
        if choice is not None:
            return choice
        a, b = choice_operands(a, b)
        inplace = op.endswith("=") and op not in ("==", "!=", "<=", ">=")
        base = op[:-1] if inplace else op
        from ..ir import numpy_api
        if isinstance(a, ArrayVariable) or isinstance(b, ArrayVariable):
            check_mixing([a, b])
            builder = self.output.builder
            if inplace and isinstance(a, ArrayVariable) and not a.is_python_scalar and not a.proxy.scalar:
                numpy_api.inplace_op(builder, base, a.proxy, self.unwrap(b))
                return a
            out = self.wrap_result(numpy_api.binary_op(builder, base, self.unwrap(a), self.unwrap(b)))
            if isinstance(out, ArrayVariable) and out.is_python_scalar and \
                    (getattr(a, "derived_python_scalar", False) or getattr(b, "derived_python_scalar", False)):
                out.derived_python_scalar = True       # still float64 at run time, not a Python float
            return out
        if isinstance(a, (TupleVariable, ListVariable)) and isinstance(b, (TupleVariable, ListVariable)) \
                and base == "+":
            if inplace and isinstance(a, ListVariable):
                a.items.extend(b.items)
                a.mutated(self)
                return a
            return type(a)(a.items + b.items)
        if isinstance(a, (TupleVariable, ListVariable)) and base == "*" and b.is_python_constant():
            return type(a)(a.items * b.as_python_constant())
        fn = _BINARY.get(base)
        if fn is not None and _is_number_like(a) and _is_number_like(b):
            try:
                return self.wrap_result(fn(self.unwrap(a), self.unwrap(b)))
            except (ZeroDivisionError, OverflowError, TypeError, ValueError) as exc:
                raise NumpyError(exc, context=op) from None
        if a.is_python_constant() and b.is_python_constant() and fn is not None:
            def traced():
                operands = self.numpy_scalar_operands(a, b)
                if operands is None:
                    return None
                return self.wrap_result(numpy_api.binary_op(self.output.builder, base, *operands))
            return self.constant_fold(fn, [a, b], {}, traced=lambda: traced() or _unfoldable(op))
        raise Unsupported(f"operator {op} on {a.describe()} and {b.describe()}", kind="operator")

    def compare(self, a, b, op: str):
        a, b = choice_operands(a, b)
        from ..ir import numpy_api
        if isinstance(a, ArrayVariable) or isinstance(b, ArrayVariable):
            check_mixing([a, b])
            return self.wrap_result(numpy_api.compare_op(self.output.builder, op, self.unwrap(a), self.unwrap(b)))
        if _is_number_like(a) and _is_number_like(b):
            return self.wrap_result(_COMPARE[op](self.unwrap(a), self.unwrap(b)))
        if a.is_python_constant() and b.is_python_constant():
            return ConstantVariable(_COMPARE[op](a.as_python_constant(), b.as_python_constant()))
        if op in ("==", "!=") and type(a) is not type(b):
            if isinstance(a, ConstantVariable) or isinstance(b, ConstantVariable):
                other = b if isinstance(a, ConstantVariable) else a
                if isinstance(other, (TupleVariable, ListVariable, DictVariable)):
                    return ConstantVariable(op == "!=")
        if isinstance(a, (TupleVariable, ListVariable)) and isinstance(b, (TupleVariable, ListVariable)) \
                and op in ("==", "!="):
            equal = type(a) is type(b) and len(a.items) == len(b.items) and all(
                self.compare(x, y, "==").truth(self) for x, y in zip(a.items, b.items))
            return ConstantVariable(equal if op == "==" else not equal)
        raise Unsupported(f"comparison {op} of {a.describe()} and {b.describe()}", kind="operator")

    def is_same(self, a, b) -> bool:
        if a is b:
            return True
        if getattr(a, "guarded_by_code", False) or getattr(b, "guarded_by_code", False):
            fn, other = (a, b) if getattr(a, "guarded_by_code", False) else (b, a)
            if isinstance(other, ConstantVariable) and other.value is None:
                return False
            if getattr(other, "guarded_by_code", False):
                same = fn.fn is other.fn
                self.output.guards.alias(fn.source, other.source, same)
                return same
            # otherwise as_python_constant() below guards the function's identity
        if a.is_python_constant() and b.is_python_constant():
            return a.as_python_constant() is b.as_python_constant()
        if isinstance(a, ArrayVariable) and isinstance(b, ArrayVariable):
            if a.proxy.node is b.proxy.node:
                return True
            ea, eb = getattr(a, "example_value", None), getattr(b, "example_value", None)
            if ea is not None and eb is not None and a.source is not None and b.source is not None:
                same = ea is eb
                self.output.guards.alias(a.source, b.source, same)
                return same
            if ea is None or eb is None:
                if a.source is None or b.source is None:
                    return False     # a fresh array is never the same object as another value
            raise Unsupported("identity of two arrays", kind="operator")
        if isinstance(a, (ArrayVariable, TupleVariable, ListVariable, DictVariable, SymNumberVariable)) and \
                b.is_python_constant() and b.as_python_constant() is None:
            return False
        if isinstance(b, (ArrayVariable, TupleVariable, ListVariable, DictVariable, SymNumberVariable)) and \
                a.is_python_constant() and a.as_python_constant() is None:
            return False
        raise Unsupported(f"`is` between {a.describe()} and {b.describe()}", kind="operator")

    def rebind_array(self, old, new):
        """Every traced reference to the array object of proxy `old` (stack, locals, cells and
        containers of this frame and the frames inlining it) now holds `new` (x.shape = s)."""
        from .variables.array import references
        roots, tx = [], self
        while tx is not None:
            roots += [*tx.stack, *tx.locals.values(), *(box.value for box in tx.cells.values())]
            tx = tx.parent
        for v in references(old.node, roots):
            v.proxy, v.shape_set = new, v.shape_set or v.source is not None

    def getitem(self, obj, key):
        from ..ir import numpy_api
        if isinstance(obj, ArrayVariable):
            if isinstance(key, RangeVariable) or getattr(key, "array_ready", False):
                key = key.as_array(self)          # a list of ints or a range as an index: array data
            return self.wrap_result(numpy_api.getitem(self.output.builder, obj.proxy, self.index_key(key)))
        if isinstance(obj, InputListVariable) and obj.lazy and not isinstance(key, SliceVariable):
            got = obj.lazy_getitem(self, key)     # one item of a list input, its length kept a size
            if got is not None:
                return got
        if isinstance(obj, (TupleVariable, ListVariable)):
            k = slice(*(constant_key(self, p) for p in key.parts)) if isinstance(key, SliceVariable) \
                else constant_key(self, key)
            try:
                if isinstance(k, slice):
                    return type(obj)(obj.items[k])
                return obj.items[k]
            except (IndexError, TypeError) as exc:
                raise NumpyError(exc, context="subscript") from None
        if isinstance(obj, DictVariable):
            return obj.getitem(constant_key(self, key))
        if hasattr(obj, "subscript"):                 # objects with a traced [] (np.mgrid)
            return obj.subscript(self, key)
        if obj.is_python_constant() and key.is_python_constant():
            return self.constant_fold(operator.getitem, [obj, key], {})
        raise Unsupported(f"subscript of {obj.describe()}", kind="subscript")

    # -- calls --

    def call(self, fn, args, kwargs):
        result = frame_builtins.call(self, fn, args, kwargs)
        if result is None:
            result = join_strings(self, fn, args, kwargs)    # ", ".join(f"{v:.3f}" for v in vs)
        if result is not None:
            return result
        return fn.call_function(self, list(args), dict(kwargs))

    def inline_call(self, fn_var, args, kwargs):
        if self.depth >= config.max_inline_depth:
            raise Unsupported("inlining too deep (recursion?)", kind="inline")
        code = fn_var.code
        f_locals = bind_arguments(self, fn_var, code, args, kwargs)
        cells = {}
        for name in code.co_cellvars:
            cells[name] = CellBox(f_locals.pop(name) if name in f_locals else None, name, code)
        for name, box in zip(code.co_freevars, fn_var.closure_cells(self)):
            cells[name] = box
        globals_source = _globals_source_of(self, fn_var)
        generator = bool(code.co_flags & 0x20)
        child = InstructionTranslator(self.output, code, f_locals, cells, fn_var.get_globals(), globals_source,
                                      parent=self, generator=generator)
        child.cell_args = {n for n in code.co_cellvars}
        result = child.run()
        if generator:
            # Dynamo-style: the generator body runs to its end while traced; the caller iterates
            # over what it yielded (a generator that never ends exhausts the trace budget: a break)
            return ListIteratorVariable(child.yielded)
        return result

    def iterate(self, v):
        if isinstance(v, ListIteratorVariable):
            return v
        loop = loops.want_loop(self, v)                  # a loop node rather than unrolled
        if loop is not None:
            return loop
        return ListIteratorVariable(v.unpack(self))


def _offset_to_index(instructions) -> dict:
    """Offset -> index. A jump to an EXTENDED_ARG prefix (the back edge of a loop whose body is
    longer than 255 code units targets the prefix of its FOR_ITER) lands on the instruction it
    prefixes: the prefix does nothing here, and loop headers are found by that instruction."""
    out, prefixes = {}, []
    for i, ins in enumerate(instructions):
        if ins.opname == "EXTENDED_ARG":
            prefixes.append(ins.offset)
            continue
        out.update(dict.fromkeys(prefixes, i))
        prefixes = []
        out[ins.offset] = i
    out.update(dict.fromkeys(prefixes, len(instructions) - 1))
    return out


def _region_starts(instructions, code) -> frozenset:
    """Indices where a try/with block begins: a `with` statement, or any instruction inside an
    exception range (the trace meets the first one of a `try` body and splits there)."""
    protected = pyversion.protected_offsets(code)
    return frozenset(i for i, ins in enumerate(instructions)
                     if ins.offset in protected or ins.opname in pyversion.WITH_STARTS)


def _is_sym(value) -> bool:
    from ..shapes import is_symbolic
    return is_symbolic(value)


def fold_quietly(fn, args, kwargs):
    """(fn(*args, **kwargs), whether NumPy reported a floating-point error or warned while
    computing it), whatever the caller's error state and warning filters."""
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="raise"):
        warnings.simplefilter("always")
        try:
            return fn(*args, **kwargs), bool(caught)
        except FloatingPointError:
            return None, True


def _unfoldable(op):
    raise Unsupported(f"operator {op} on constants reports a floating-point error or warns", kind="constant",
                      hints=("it runs in Python, after a graph break, as NumPy reports at each call",))


def _is_number_like(v) -> bool:
    if isinstance(v, SymNumberVariable):
        return True
    if isinstance(v, ConstantVariable):
        return isinstance(v.value, (int, float, bool, complex)) and not isinstance(v.value, np.generic)
    return False


def _globals_source_of(tx, fn_var):
    """Where the entry finds the globals an inlined function reads: `___G` (None) for the frame's
    own module; through the function when it is an input (`L['f'].__globals__`); else the dict of
    the function's module itself, held by the entry. Never the caller's globals unless the
    callee's are the same dict (a method of another module's class reads that module's)."""
    from ..sources import GlobalsOfSource
    fn_globals = fn_var.get_globals()
    if fn_globals is tx.output.root_globals:
        return None
    src = getattr(fn_var, "source", None)
    if src is not None:
        return GlobalsOfSource(src)
    own = getattr(fn_var, "globals_source", None)
    if own is not None:
        return own
    if fn_globals is tx.fn_globals and tx.globals_source is not None:
        return tx.globals_source
    return tx.output.hold_globals(fn_globals)


def bind_arguments(tx, fn_var, code, args, kwargs) -> dict:
    """Bind call arguments to parameter names like CPython does (defaults, *args, **kwargs)."""
    import inspect
    nparams, nkwonly = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    pos_names = names[:nparams]
    kwonly_names = names[nparams:nparams + nkwonly]
    has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
    has_varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    pos_defaults, kw_defaults = fn_var.defaults(tx)
    bound: dict = {}
    args = list(args)
    for name, value in zip(pos_names, args):
        bound[name] = value
    extra = args[nparams:]
    if extra and not has_varargs:
        raise NumpyError(TypeError(f"{code.co_name}() takes {nparams} positional arguments but {len(args)} were given"))
    varkw = {}
    for key, value in kwargs.items():
        if key in pos_names[code.co_posonlyargcount:] or key in kwonly_names:
            if key in bound:
                raise NumpyError(TypeError(f"{code.co_name}() got multiple values for argument {key!r}"))
            bound[key] = value
        elif has_varkw:
            varkw[key] = value
        else:
            raise NumpyError(TypeError(f"{code.co_name}() got an unexpected keyword argument {key!r}"))
    first_default = nparams - len(pos_defaults)
    for i, name in enumerate(pos_names):
        if name not in bound:
            if i >= first_default:
                bound[name] = pos_defaults[i - first_default]
            else:
                raise NumpyError(TypeError(f"{code.co_name}() missing required argument {name!r}"))
    for name in kwonly_names:
        if name not in bound:
            if name in kw_defaults:
                bound[name] = kw_defaults[name]
            else:
                raise NumpyError(TypeError(f"{code.co_name}() missing keyword-only argument {name!r}"))
    i = nparams + nkwonly
    if has_varargs:
        bound[names[i]] = TupleVariable(extra)
        i += 1
    if has_varkw:
        bound[names[i]] = DictVariable(varkw)
    return bound


_ = FakeScalar
