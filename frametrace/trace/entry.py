"""The compiled entry of a frame: guards + symbol binding + graph call + output rebuild, as Python source."""
from __future__ import annotations

from ..guards.python_check import guard_code


def build_entry(argnames, guards, symbol_bindings, graph_call, input_codes, return_code, namespace,
                name="entry"):
    """Generate `entry(*frame_values)` (returns MISS if a guard fails) and `check(*frame_values)`.

    guards: guard records (guards/records.py), each generating its Python condition;
    symbol_bindings: [(local name, Source the symbol is read from)]; graph_call: bound
    name of the backend's run function or None when the graph is empty.
    """
    params = ", ".join(argnames)
    guard_codes = [guard_code(g) for g in guards]
    cond = " and\n                ".join(f"({g})" for g in guard_codes) or "True"
    lines = [f"def ___make({', '.join(sorted(namespace))}):",
             f"    def {name}({params}):",
             "        try:",
             f"            if not ({cond}):",
             "                return ___MISS",
             "        except Exception:",
             "            return ___MISS"]
    for local, source in symbol_bindings:
        lines.append(f"        {local} = {source.code}")
    if graph_call is not None:
        ins = ", ".join(input_codes)
        syms = ", ".join(local for local, _ in symbol_bindings)
        lines.append(f"        ___o = {graph_call}([{ins}], [{syms}])")
    lines.append(f"        return {return_code}")
    lines += [f"    def check({params}):",
              "        try:",
              f"            return bool({cond})",
              "        except Exception:",
              "            return False",
              f"    return {name}, check"]
    source = "\n".join(lines) + "\n"
    ns: dict = {}
    exec(compile(source, f"<frametrace {name}>", "exec"), ns)
    entry, check = ns["___make"](**namespace)
    entry.source = source
    return entry, check, source

