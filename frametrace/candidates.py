"""Which hooked frames are worth compiling (the global hook and the callees of a compiled frame).

A hooked function is compiled when it does array work: an argument holds arrays (an array, a
list or dict of them, an object with array attributes), or its code uses NumPy whatever its
arguments: a global or closure cell it reads is NumPy (the module, a NumPy function or ufunc, a
NumPy scalar type) or holds arrays (a module-level array, a dict of weights, an object whose
attributes are arrays, `state.FIELD` of a user module it imports). So a `main()` without
arguments that creates arrays and loops, or an animation callback `update(frame)` that works on
module-level arrays, compiles; every other function gets its own code back at its first call
(it then costs nothing). A function chosen for its code whose first graph turns out to hold no
array (`x * np.pi` on a float) gets its code back after that compile (`graph_does_array_work`).

The code test runs once per code object (the answer is kept on its cache); containers are
looked into only a few items deep, so a huge global list costs no more than a small one.
"""
from __future__ import annotations

import types

import numpy as np

_SCAN_ITEMS = 32            # items of a container looked at
_KEY = "uses_numpy"


def has_arrays(values, depth: int = 0) -> bool:
    """Do these values hold arrays (directly, in lists/tuples/dicts, or as an object's attributes)?"""
    for n, v in enumerate(values):
        if n >= _SCAN_ITEMS:
            return False
        if isinstance(v, np.ndarray):
            return True
        if depth < 2 and isinstance(v, (tuple, list)) and has_arrays(v, depth + 1):
            return True
        if depth < 2 and isinstance(v, dict) and has_arrays(list(v.values())[:_SCAN_ITEMS], depth + 1):
            return True
        if depth < 1 and isinstance(d := _own_dict(v), dict) and has_arrays(list(d.values())[:_SCAN_ITEMS], depth + 1):
            return True
    return False


def _own_dict(v):
    """A user object's own `__dict__`, read without its class's `__getattr__`/`__getattribute__`
    (None for classes, modules, functions, methods and objects without one)."""
    if isinstance(v, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        return None
    try:
        return object.__getattribute__(v, "__dict__")
    except Exception:            # noqa: BLE001 - no __dict__, or reading it raises
        return None


def _is_numpy(value) -> bool:
    """NumPy itself: the module or a submodule, a function or ufunc, a scalar type or an array."""
    if isinstance(value, types.ModuleType):
        name = value.__name__
        return name == "numpy" or name.startswith("numpy.")
    if isinstance(value, (np.ndarray, np.generic, np.ufunc)):
        return True
    if isinstance(value, type):
        return issubclass(value, (np.generic, np.ndarray))
    module = getattr(value, "__module__", None)
    return callable(value) and isinstance(module, str) and (module == "numpy" or module.startswith("numpy."))


def _names(code) -> set:
    """The global (and attribute) names `code` and the code objects nested in it read."""
    names, todo = set(), [code]
    while todo:
        c = todo.pop()
        names.update(c.co_names)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return names


def code_uses_numpy(fn) -> bool:
    """Does `fn`'s code name NumPy or a global that holds arrays (or read a closure cell that does)?"""
    fn_globals = getattr(fn, "__globals__", {})
    names = _names(fn.__code__)
    for name in names:
        if name in fn_globals:
            value = fn_globals[name]
            if _is_numpy(value) or has_arrays((value,)):
                return True
            if isinstance(value, types.ModuleType) and _module_holds_arrays(value, names):
                return True
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:          # an empty cell
            continue
        if _is_numpy(value) or has_arrays((value,)):
            return True
    return False


def _module_holds_arrays(module, names) -> bool:
    """A user module the code reads `module.NAME` of, where NAME is an array or holds arrays
    (`state.FIELD`)."""
    attrs = vars(module)
    return any(name in attrs and has_arrays((attrs[name],)) for name in names)


def uses_numpy(cache) -> bool:
    """code_uses_numpy of a hooked frame's function, decided once per cache."""
    known = cache.state.data.get(_KEY)
    if known is None:
        try:
            known = code_uses_numpy(cache.fn)
        except Exception:           # a global whose inspection raises: not a reason to compile
            known = False
        cache.state.data[_KEY] = known
    return known


def worth_compiling(cache, values) -> bool:
    """A hooked frame with no entry yet: compile it (it does array work), or give it its code back."""
    return has_arrays(values) or uses_numpy(cache)


def graph_does_array_work(graph) -> bool:
    """A compiled graph worth its guard check: it reads or makes an array (ndim >= 1) or runs a
    loop node; a graph of scalar arithmetic alone (`x * np.pi` on a float) is not."""
    return any(n.ndim for n in graph.inputs) or any(n.ndim or n.op.startswith("loop") for n in graph.nodes)
