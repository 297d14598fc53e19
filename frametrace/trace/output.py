"""OutputGraph: everything one trace accumulates (graph, ShapeEnv, guards, inputs), and
reconstruction of the frame's return value from graph outputs, inputs and constants."""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from ..guards.builder import GuardBuilder
from ..ir.builder import GraphBuilder
from ..ir.fake import FakeScalar
from .variables.array import ArrayVariable
from .variables.constant import ConstantVariable, SymNumberVariable
from ..sources import HeldSource
from .side_effects import SideEffects
from .variables.base import CellBox
from .variables.containers import DictVariable, ListVariable, TupleVariable
from .wrap import VariableBuilder


class OutputGraph:
    def __init__(self, shape_env, policy, frame_state, root_globals):
        self.builder = GraphBuilder()
        self.builder.shape_env = shape_env
        self.graph = self.builder.graph
        self.shape_env = shape_env
        self.policy = policy
        self.frame_state = frame_state
        self.root_globals = root_globals
        self.guards = GuardBuilder(self.location)
        self.input_vars: dict = {}        # source name -> VT (each input wrapped once)
        self.graph_inputs: list = []      # (input node, source)
        self.symbol_sources: dict = {}    # sympy.Symbol -> Source that binds it
        self.size_sources: dict = {}      # source name -> Source, of every symbolic size or int input
        self.current_tx = None
        self.steps = 0
        self.array_scalar_args: frozenset = frozenset()   # locals that are graph NumPy scalars (resume)
        self.input_arrays: dict = {}      # input node -> (array, source), for layout questions
        self._layouts: dict = {}
        self.builder.input_layout = self.input_layout
        self._wrap = VariableBuilder(self)
        self.side_effects = SideEffects(self._wrap.guard_not_aliased, self._frozen_store)
        self.loop_plan: dict = {}         # (code, header offset) -> "peel" | "unroll" (trace/loops.py)
        self.loop_stack: list = []        # the loop bodies being traced, innermost last
        self.loop_notes: list = []        # (key, decision, reason) of this trace's loop restarts
        self.carried_sizes: set = set()   # size symbols loop bodies bind from carried arrays (trace/loops.py)
        self.while_entry: dict = {}       # loop key -> type keys of the locals where a decided test entered it
        self.short_unrolled: dict = {}    # (code, offset) of short range loops unrolled -> their exit index
        self.open_blocks: list = []       # keys of the traced `with np.errstate` blocks open (trace/errstate.py)
        self._held: dict = {}             # id(object) -> HeldSource (objects the entry holds itself)
        self._cells: dict = {}            # id(real closure cell) -> (cell, CellBox)

    def wrap(self, value, source):
        return self._wrap(value, source)

    def hold(self, obj, label: str):
        """A Source for `obj` itself, which the entry keeps a reference to (sources.HeldSource):
        one per object per trace; labels are made unique (they key inputs, guards and logs)."""
        held = self._held.get(id(obj))
        if held is None:
            ref = self.guards.bind(obj, "held")
            taken = {h.label for h in self._held.values()}
            unique, n = label, 2
            while unique in taken:
                unique, n = f"{label}#{n}", n + 1
            held = self._held[id(obj)] = HeldSource(ref, unique)
        return held

    def cell_box(self, cell, name: str, contents_source, cell_source, contents=None):
        """The one CellBox of a real closure cell in this trace: its contents wrapped (and
        guarded) through `contents_source` (or given as the VT `contents`), its writes replayed
        into `cell_source`. A cell reached again through another function shares the box, and
        the entry checks that it is still one cell there."""
        known = self._cells.get(id(cell))
        if known is not None:
            box = known[1]
            if cell_source != box.cell_source:
                self.guards.alias(cell_source, box.cell_source, True)
            return box
        if contents is None:
            try:
                value = cell.cell_contents
            except ValueError:
                raise Unsupported(f"closure variable {name!r} is not bound yet", kind="closure") from None
            contents = self.wrap(value, contents_source)
        box = CellBox(contents, name, None, cell_source)
        self._cells[id(cell)] = (cell, box)
        return box

    def hold_globals(self, fn_globals: dict):
        """The Source of another module's globals dict: `fa_losses.__dict__`."""
        module = fn_globals.get("__name__")
        return self.hold(fn_globals, f"{module}.__dict__" if isinstance(module, str) else "<globals>")

    def mutable_input_values(self):
        """(Python object, VariableTracker) of every list, dict and object wrapped as an input."""
        return list(self._wrap.mutable_inputs.values())

    def _frozen_store(self, kind, target, key, value) -> bool:
        from .loop_state import frozen_store
        return self.current_tx is not None and frozen_store(self.current_tx, kind, target, key, value)

    def input_layout(self, node, shape):
        """Byte strides of an input array, asked by layout-dependent calls (ravel, reshape of
        a computed value) and guarded then: a C- or F-contiguous input is guarded on that flag
        and gets strides from its symbolic `shape`; a reversed or stepped view of a dense
        array on its strides as functions of its sizes (layout.stride_formula), which hold
        for every size; any other layout on its exact strides."""
        if node in self._layouts:
            return self._layouts[node]
        entry = self.input_arrays.get(node)
        if entry is None:
            return None
        from ..ir.numpy_api.layout import c_strides, f_strides, stride_formula
        value, source = entry
        itemsize = value.dtype.itemsize
        if value.flags.c_contiguous:
            self.guards.layout(source, "C")
            strides = c_strides(shape, itemsize)
        elif value.flags.f_contiguous:
            self.guards.layout(source, "F")
            strides = f_strides(shape, itemsize)
        elif (formula := stride_formula(value.shape, value.strides, itemsize)) is not None:
            self.guards.stride_formula(source, formula)
            strides = []
            for coef, dims in formula:
                st = coef
                for j in dims:
                    st = st * shape[j]
                strides.append(st)
            strides = tuple(strides)
        else:
            self.guards.strides(source, value.strides)
            strides = tuple(value.strides)
        self._layouts[node] = strides
        return strides

    def bind_symbol(self, sym, source):
        expr = sym.expr if hasattr(sym, "expr") else sym
        self.size_sources[source.name] = source       # shape-env guards name it (duck sizing)
        for s in getattr(expr, "free_symbols", ()):
            if s not in self.symbol_sources:
                self.symbol_sources[s] = source
                self.graph.symbols[s] = source.name

    def location(self):
        tx = self.current_tx
        return tx.location() if tx is not None else None


class Reconstructor:
    """Python code that rebuilds a VariableTracker at run time from graph outputs and inputs."""

    def __init__(self, output: OutputGraph, namespace: dict):
        self.output, self.namespace = output, namespace
        self.outputs: list = []          # graph nodes that leave the graph, in order
        self._index: dict = {}
        self.input_source = {node: src for node, src in output.graph_inputs}
        # a list/dict the frame made, by VT identity: built once (`(___made_0 := [...])` where the
        # expression first meets it, the name after), so `toks` and `toks.append` on the stack
        # of a break stay one object. The expression is evaluated left to right, in the order
        # the pieces are generated.
        self._made: dict = {}

    def out_index(self, node) -> int:
        i = self._index.get(node)
        if i is None:
            i = self._index[node] = len(self.outputs)
            self.outputs.append(node)
        return i

    def symbol_code(self, sym) -> str:
        """Run-time value of a size symbol: the entry binds `___sym_<s>` from an input source;
        an unbacked size (a mask's count) has none, so it is read off the first graph value
        that has it as a dimension, which then leaves the graph."""
        if sym in self.output.symbol_sources:
            return f"___sym_{sym}"
        for node in list(self.output.graph.inputs) + list(self.output.graph.nodes):
            for d, dim in enumerate(node.shape):
                if dim == sym:
                    if node in self.input_source:
                        return f"{self.input_source[node].code}.shape[{d}]"
                    return f"___o[{self.out_index(node)}].shape[{d}]"
        raise Unsupported(f"the data-dependent value {sym} is not a size of any graph value",
                          kind="output")

    def const(self, value) -> str:
        if type(value) in (int, bool, str, type(None)) or (type(value) is float and value == value
                                                          and value not in (float("inf"), float("-inf"))):
            return repr(value)
        # not `___const_N`: guard bindings (GuardBuilder.bind) use that prefix in the same namespace
        name = f"___value_{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def source_code(self, vt) -> str:
        """The caller's own object behind a VT that came from an input or a global."""
        if vt.source is None:
            raise Unsupported(f"{vt.describe()} has no source to write back to", kind="internal")
        return vt.source.code

    def fresh(self, vt) -> str:
        """A new list or dict holding a container VT's current items (what a replay writes)."""
        if isinstance(vt, DictVariable):
            return "{" + ", ".join(f"{self.const(k)}: {self(v)}" for k, v in vt.items.items()) + "}"
        return "[" + ", ".join(self(i) for i in vt.items) + "]"

    def __call__(self, vt) -> str:
        if isinstance(vt, ArrayVariable):
            node = vt.proxy.node
            if node in self.input_source:
                return self.input_source[node].code
            if vt.source is not None and vt.shape_set:
                return vt.source.code         # the caller's object, its shape set by the replay
            code = f"___o[{self.out_index(node)}]"
            if isinstance(vt.proxy.fake, FakeScalar):
                return f"{vt.proxy.fake.pytype.__name__}({code})"
            return code
        if isinstance(vt, SymNumberVariable):
            from ..shapes import SymBool, SymFloat, pycode
            expr = vt.value.expr
            names = {s: self.symbol_code(s) for s in expr.free_symbols}
            conv = "bool" if isinstance(vt.value, SymBool) else "float" if isinstance(vt.value, SymFloat) else "int"
            return f"{conv}({pycode(expr, names)})"
        if isinstance(vt, ConstantVariable):
            if vt.source is not None and getattr(vt, "read", True) is False:
                return vt.source.code         # an input whose value the trace never read (ReadGuardedConstant)
            if vt.source is not None and not isinstance(vt.value, (int, float, bool, str, type(None))):
                return vt.source.code
            return self.const(vt.value)
        if isinstance(vt, TupleVariable):
            inner = ", ".join(self(i) for i in vt.items)
            return f"({inner},)" if len(vt.items) == 1 else f"({inner})"
        if isinstance(vt, (ListVariable, DictVariable)):
            if vt.source is not None:
                return vt.source.code         # the caller's own container (mutations are replayed on it)
            made = self._made.get(id(vt))
            if made is not None:
                return made[0]
            name = f"___made_{len(self._made)}"
            self._made[id(vt)] = (name, vt)
            return f"({name} := {self.fresh(vt)})"
        custom = getattr(vt, "reconstruct", None)
        if custom is not None:
            return custom(self)
        source = getattr(vt, "source", None)
        if source is not None:
            return source.code
        if vt.is_python_constant():
            return self.const(vt.as_python_constant())
        raise Unsupported(f"returning {vt.describe()} from a compiled function", kind="output")


_ = np
