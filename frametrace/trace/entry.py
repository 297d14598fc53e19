"""The compiled entry of a frame: guards + symbol binding + graph call + output rebuild, as Python source."""
from __future__ import annotations

from ..guards.kinds import GuardKind as K
from ..guards.python_check import guard_code


def build_entry(argnames, guards, symbol_bindings, graph_call, input_codes, return_code, namespace,
                name="entry", native_check=None):
    """Generate `entry(*frame_values)` (returns MISS if a guard fails) and `check(*frame_values)`.

    guards: guard records (guards/records.py), each generating its Python condition;
    symbol_bindings: [(local name, Source the symbol is read from)]; graph_call: bound
    name of the backend's run function or None when the graph is empty.
    native_check (backends/llvm/native_check.py): the guards as one builtin; the entry then
    evaluates only the records it left (`rest`) in Python, and takes the graph's inputs and
    symbol values from it when it returns them (`full`). `check` stays the Python condition.
    """
    params = ", ".join(argnames)
    guard_codes = [guard_code(g) for g in guards]
    cond = " and\n                ".join(f"({g})" for g in guard_codes) or "True"
    lines = [f"def ___make({', '.join(sorted(namespace) + (['___ncheck', '___NMISS'] if native_check else []))}):",
             f"    def {name}({params}):",
             "        try:"]
    full = native_check is not None and native_check.full
    ins = ", ".join(input_codes)
    syms = ", ".join(local for local, _ in symbol_bindings)
    if native_check is None:
        lines += [f"            if not ({cond}):", "                return ___MISS"]
    else:
        # the native check is the fast way to the answer, the Python condition the answer: where
        # it misses, the Python condition decides (a helper's code behind its hook trampoline)
        # (asked only when some function's code is not the one the trace saw: a real miss with
        # every code unchanged returns at once)
        rest = " and\n                ".join(f"({guard_code(g)})" for g in native_check.rest) or "True"
        codes = [f"{g.source.code}.__code__ is {g.ref}" for g in guards if g.kind is K.CODE_MATCH]
        lines += [f"            ___r = ___ncheck({params})",
                  "            if ___r is ___NMISS:"]
        if codes:
            lines += [f"                if ({' and '.join(codes)}) or not ({cond}):",
                      "                    return ___MISS",
                      "                ___r = None"]
        else:
            lines += ["                return ___MISS"]
        lines += [f"            elif not ({rest}):", "                return ___MISS"]
    lines += ["        except Exception:",
              "            return ___MISS"]
    python_bindings = [f"{local} = {source.code}" for local, source in symbol_bindings]
    if full:
        lines.append("        if ___r is None:")
        lines += [f"            {b}" for b in python_bindings]
        lines.append(f"            ___ins, ___syms = [{ins}], [{syms}]")
        lines.append("        else:")
        lines.append("            ___ins, ___syms = ___r[0], ___r[1]")
        if symbol_bindings:
            lines.append(f"            {syms}, = ___syms")
    else:
        lines += [f"        {b}" for b in python_bindings]
    if graph_call is not None:
        args = "___ins, ___syms" if full else f"[{ins}], [{syms}]"
        lines.append(f"        ___o = {graph_call}({args})")
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
    if native_check is not None:
        from csrc_free_runtime.native import NATIVE_MISS
        namespace = dict(namespace, ___ncheck=native_check.fn, ___NMISS=NATIVE_MISS)
    entry, check = ns["___make"](**namespace)
    entry.source = source
    entry.native_check = native_check
    return entry, check, source

