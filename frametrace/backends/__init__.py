"""Backends turn a Graph into `run(inputs, symbol_values) -> outputs`.

numpy  runs each op's NumPy reference in a generated straight-line function (the reference)
llvm   fused LLVM kernels with run-time sizes
"""
from __future__ import annotations


def get_backend(name: str):
    if name == "numpy":
        from .numpy_backend import compile_graph
        return compile_graph
    if name == "llvm":
        try:
            from .llvm import compile_graph
        except ImportError as exc:    # the LLVM backend is optional until it lands
            raise ValueError(f"backend 'llvm' is not available: {exc}") from exc
        return compile_graph
    if callable(name):
        return name
    raise ValueError(f"unknown backend {name!r}; use 'llvm' or 'numpy'")
