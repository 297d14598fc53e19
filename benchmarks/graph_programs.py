"""Straight-line NumPy programs of a chosen graph size, for bench_compile_time.py: what an
unrolled loop traces to, with no Python loop left to roll up.

    fn, args = program("chain", 1000)     # about 1000 graph nodes
"""
import numpy as np

# name -> (graph nodes per line, line i, what it stresses)
FAMILIES = {
    "chain": (2, lambda i: f"x = x * {1 + (i % 7) * 1e-4!r} + 0.5",
              "one long elementwise chain (fusion depth, kernel expressions)"),
    "kernels": (3, lambda i: "x = x / (x.sum() + 1.0)",
                "a reduction per line, the same kernel each time (kernel sharing, fusion)"),
    "distinct": (3, lambda i: f"x = x / (x.sum() + {1.0 + i!r})",
                 "a reduction per line, each a different kernel (LLVM per kernel)"),
    "slices": (2, lambda i: f"y = y + x[{i % 50}:{i % 50} + 100]",
               "slices at moving offsets summed (views, one wide kernel)"),
    "setitem": (3, lambda i: f"x[{i % 99 + 1}] = x[{i % 99}] * 0.5 + 1.0",
                "element reads and writes into one array (mutation hazards, many small steps)"),
}


def program(family: str, nodes: int):
    """(function, args) of a program whose graph has about `nodes` nodes."""
    per_line, line, _ = FAMILIES[family]
    body = []
    if family == "slices":
        body.append("y = x[:100] * 1.0")
    if family == "setitem":
        body.append("x = x.copy()")
    body += [line(i) for i in range(max(1, nodes // per_line))]
    body.append("return y" if family == "slices" else "return x")
    name = f"{family}_{nodes}"
    ns = {"np": np}
    exec(compile("\n".join([f"def {name}(x):"] + [f"    {s}" for s in body]), f"<{name}>", "exec"), ns)
    return ns[name], (np.linspace(0.0, 1.0, 200),)
