"""Builtins that look at the running frame: locals(), vars() and dir() without arguments, sys._getframe().

In a traced frame `locals()` and `vars()` are a dict of the traced locals, keyed by the user's
names (never the `___stack<i>` parameters of a resume function); in 3.11/3.12 each call refreshes
and returns one dict per frame, as CPython's f_locals does, in 3.13 each call is a new snapshot
(PEP 667: pyversion.LOCALS_SNAPSHOT). `dir()` and `sys._getframe()` need the real frame: at the
root of a trace they keep the frame eager (a break function or resume function would hand the
user a generated frame); inside an inlined callee they break the caller's graph at the call, and
the callee then runs in its own real frame.

Known leaks of generated frames (documented, not hidden): a resume function that runs eagerly
(a break inside a loop) still has its `___stack<i>` parameters, which `locals()` there shows; a
callee run by a break function that looks at `sys._getframe(1)` sees the break function's frame.
"""
from __future__ import annotations

import sys

from .. import pyversion
from ..errors import Unsupported
from ..resume.codegen import STACK_PREFIX
from .variables.base import VariableTracker
from .variables.builtins import BuiltinVariable
from .variables.constant import ConstantVariable
from .variables.containers import DictVariable
from .variables.functions import UserObjectVariable

_LOCALS = (locals, vars)
_NEED_FRAME = {dir: "dir()", sys._getframe: "sys._getframe()"}


def _callee(fn: VariableTracker):
    if isinstance(fn, (BuiltinVariable, ConstantVariable)):     # resolved (and guarded) by name
        try:
            value = fn.as_python_constant()
        except Unsupported:
            return None
        if any(value is f for f in _LOCALS + tuple(_NEED_FRAME)):
            return value
    if isinstance(fn, UserObjectVariable):         # `sys._getframe`: stopping the trace needs no guard
        value = fn.value
        if any(value is f for f in _NEED_FRAME):
            return value
    return None


def call(tx, fn, args, kwargs):
    """The result of a call to one of these builtins, or None for any other call."""
    target = _callee(fn)
    if target is None:
        return None
    if target in _LOCALS:
        if args or kwargs:
            return None                       # vars(obj): an ordinary call
        return _locals_dict(tx)
    if target is dir and (args or kwargs):
        return None
    exc = Unsupported(f"{_NEED_FRAME[target]} needs the real frame", kind="frame",
                      context=_NEED_FRAME[target],
                      hints=("pass what you need from the frame as arguments instead",))
    exc.frame_bound = tx.parent is None       # at the root: no split, the frame runs eagerly
    raise exc


def _user_names(tx):
    code = tx.code
    for name in code.co_varnames + code.co_cellvars + code.co_freevars:
        if not name.startswith(STACK_PREFIX):
            yield name


def _bound(tx, name):
    if name in tx.cells:
        return tx.cells[name].value
    if name not in tx.locals and name in tx.lazy:
        tx.locals[name] = tx.wrap_value(*tx.lazy.pop(name))
    return tx.locals.get(name)


def _locals_dict(tx):
    values = {}
    for name in _user_names(tx):
        if name not in values:
            values[name] = _bound(tx, name)
    previous = getattr(tx, "locals_dict", None)
    if previous is None or pyversion.LOCALS_SNAPSHOT:
        tx.locals_dict = DictVariable({k: v for k, v in values.items() if v is not None})
        return tx.locals_dict
    for name, value in values.items():        # CPython's refresh: bound names set, unbound ones removed
        if value is None:
            previous.items.pop(name, None)
        else:
            previous.items[name] = value
    previous.mutated(tx)
    return previous
