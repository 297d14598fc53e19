"""The NumPy backend: a generated straight-line Python function calling each op's reference.

It is the living definition every other backend is tested against, and its source is what
FRAMETRACE_LOGS=output_code prints for it.
"""
from __future__ import annotations

import numpy as np
import sympy

from ..ir.builder import recorded_fake
from ..ir.fake import FakeScalar
from ..ir.graph import Graph, IndexSlice, Node
from ..ir.ops.elementwise import scalar_operator
from ..ir.ops.mutation import READ_ONLY
from ..ir.registry import get_op


def _arg_code(a, names: dict, sym_names: dict, consts: dict) -> str:
    from ..shapes import pycode
    if isinstance(a, Node):
        return names[a]
    if isinstance(a, tuple):
        inner = ", ".join(_arg_code(x, names, sym_names, consts) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, IndexSlice):
        parts = [_arg_code(p, names, sym_names, consts) for p in (a.start, a.stop, a.step)]
        return f"___IndexSlice({', '.join(parts)})"
    if isinstance(a, sympy.Basic):
        if a.is_Integer:
            return str(int(a))
        return f"({pycode(a, sym_names)})"
    if type(a) in (int, bool, str, type(None)):
        return repr(a)
    name = f"___c{len(consts)}"
    consts[name] = a
    return name


def _out_checks(graph: Graph) -> dict:
    """value node -> destinations of the out= / in-place ufunc writes it feeds: NumPy refuses
    a read-only `out` before computing (`x /= 0` into a read-only x raises ValueError, not a
    divide-by-zero), so their writeable check comes before the value's own op."""
    checks: dict = {}
    for n in graph.nodes:
        if n.op == "assign" and n.attr("writer") == "ufunc" and isinstance(n.args[1], Node):
            checks.setdefault(n.args[1], []).append(n.args[0])
    return checks


def _written_through_out(graph: Graph) -> dict:
    """ufunc node -> the destination of the in-place / out= assignment it alone feeds
    (`x += y`, `np.add(a, b, out=c)`): computed with out=dst, as NumPy eager does, so that
    under np.errstate(raise) the destination holds NumPy's values when the error is raised."""
    users: dict = {}
    for n in graph.nodes:
        for a in n.inputs():
            users.setdefault(a, []).append(n)
    out = {}
    for n in graph.nodes:
        v = n.args[1] if n.op == "assign" and len(n.args) == 2 else None
        if n.attr("writer") != "ufunc" or not isinstance(v, Node) or users.get(v) != [n] or v in graph.outputs:
            continue
        if get_op(v.op).ufunc is not None and not v.call_attrs and scalar_operator(v) is None \
                and tuple(v.shape) == tuple(n.args[0].shape):
            out[v] = n.args[0]
    return out


def _python_float(node: Node) -> bool:
    """`node` is `float(a)` of graph data (trace/variables/builtins.py): its value is a Python
    float, so the arithmetic that follows is Python's (`t * 0.0` of an infinite t is nan without
    a warning; `t / 0.0` raises ZeroDivisionError), as in the program."""
    fake = recorded_fake(node)
    return isinstance(fake, FakeScalar) and fake.pytype is float


def generate_source(graph: Graph, given=(), skip=()):
    """The source of `run(inputs, symbol_values)`. For a re-run after part of the call was
    computed, and reported, elsewhere (the llvm wrapper: backends/llvm/reports.py), the nodes at
    the positions `given` take their values from `run(..., given_values)` (in that order), and
    the nodes at the positions `skip` (a report_if already reported) are left out."""
    names: dict = {}
    consts: dict = {"___IndexSlice": IndexSlice}
    sym_names = {s: f"s_{s}" for s in graph.symbols}
    given = {pos: k for k, pos in enumerate(given)}
    lines = ["def run(inputs, symbol_values, given_values=()):"]
    if graph.inputs:
        lines.append("    " + ", ".join("%s" % f"in_{i}" for i in range(len(graph.inputs)))
                     + (", = inputs" if len(graph.inputs) == 1 else " = inputs"))
    for i, node in enumerate(graph.inputs):
        names[node] = f"in_{i}"
    if graph.symbols:
        lines.append("    " + ", ".join(sym_names[s] for s in graph.symbols)
                     + (", = symbol_values" if len(graph.symbols) == 1 else " = symbol_values"))
    out_checks = _out_checks(graph)
    through_out = _written_through_out(graph)
    done_by_out = set()                            # assigns their ufunc already made
    for i, node in enumerate(graph.nodes):
        if i in skip:
            continue
        if i in given:
            names[node] = f"v{i}"
            lines.append(f"    v{i} = given_values[{given[i]}]    # computed and reported already")
            _bind_unbacked(node, i, names, sym_names, lines)
            continue
        for dst in out_checks.get(node, ()):
            if dst in names:                   # (a destination computed later: checked by assign)
                lines.append(f"    if not {names[dst]}.flags.writeable: raise ValueError({READ_ONLY['ufunc']!r})")
        op = get_op(node.op)
        ref = f"___op_{node.op}"
        consts[ref] = op.ref
        if scalar_operator(node) is not None:      # `a * b` on NumPy scalars: their scalar math
            ref = f"___pyop_{node.op}"
            consts[ref] = scalar_operator(node)
        args = ", ".join(_arg_code(a, names, sym_names, consts) for a in node.args)
        # a gather's `size` is the unbacked symbol its own result defines
        attrs = [(k, v) for k, v in node.call_attrs if not (op.kind == "gather" and k == "size")]
        kwargs = "".join(f", {k}={_arg_code(v, names, sym_names, consts)}" for k, v in attrs)
        if node.op == "loop":                      # a structured loop: its body compiled on its own
            consts[f"___body{i}"] = compile_graph(node.attr("body").graph)
            kwargs += f", runner=___body{i}"
        dst = through_out.get(node)
        if dst is not None and dst in names:       # `x += y`: np.add(x, y, out=x), as NumPy runs it
            ref = f"___uf_{node.op}"
            consts[ref] = op.ufunc
            kwargs += f", out={names[dst]}"
            done_by_out.add(next(n for n in graph.nodes if n.op == "assign" and n.args[1] is node))
        if node in done_by_out:
            continue
        if args == "" and kwargs:
            kwargs = kwargs[2:]
        call = f"{ref}({args}{kwargs})"
        if node.op == "astype" and _python_float(node):
            call = f"float({call})"                # float(a): a Python float, with Python's arithmetic
        pad = "    "
        if node.errstate:                          # a node of a traced `with np.errstate` block
            consts["___errstate"] = np.errstate
            lines.append(f"    with ___errstate(**{node.errstate!r}):")
            pad = "        "
        if node.dtype is None:
            lines.append(f"{pad}{call}")
        else:
            names[node] = f"v{i}"
            lines.append(f"{pad}v{i} = {call}    # {node.type_str()}")
            _bind_unbacked(node, i, names, sym_names, lines)
    for expr, msg in getattr(graph, "runtime_asserts", ()):
        lines.append(f"    if not ({_arg_code(expr, names, sym_names, consts)}):")
        lines.append(f"        raise AssertionError({msg!r})")
    outs = ", ".join(names[o] for o in graph.outputs)
    lines.append(f"    return [{outs}]")
    return "\n".join(lines) + "\n", consts


def _bind_unbacked(node, i, names, sym_names, lines):
    """Unbacked sizes are bound from the results that carry them."""
    for d, dim in enumerate(node.shape or ()):
        if isinstance(dim, sympy.Symbol) and dim not in sym_names:
            sym_names[dim] = f"s_{dim}"
            lines.append(f"    s_{dim} = v{i}.shape[{d}]")


def compile_graph(graph: Graph, given=(), skip=()):
    """The graph as a Python function calling each op's reference; `given`, `skip`: node
    positions (generate_source)."""
    source, namespace = generate_source(graph, given, skip)
    exec(compile(source, "<frametrace numpy backend>", "exec"), namespace)
    run = namespace["run"]
    run.source = source
    run.llvm_ir = ""
    return run
