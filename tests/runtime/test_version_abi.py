"""What the runtime assumes about this CPython, checked on each supported version (make test-all).

The native entry relies on the PyArrayObject layout and on the C-API reference-count functions
(Py_IncRef/Py_DecRef, which respect 3.12's immortal objects); the global hook's trampolines
emit the version's call protocol. None of it may be silently switched off on 3.12 or 3.13.
"""
import dis
import sys

import numpy as np
import pytest

import frametrace as ft
from csrc_free_runtime import calls, native
from csrc_free_runtime.global_hook import make_trampoline_code
from frametrace import pyversion


def test_this_python_is_supported_and_native_entries_are_on():
    assert pyversion.SUPPORTED, sys.version
    assert native.AVAILABLE, "the native entry's layout checks failed on this CPython"
    assert set(native.C_ADDRESSES) >= {"Py_IncRef", "Py_DecRef", "PyArray_New", "PyArray_Return"}


def test_runtime_and_compiler_agree_on_the_call_protocol():
    assert calls.CALL_PREFIX == pyversion.CALL_PREFIX
    assert calls.NULL_BELOW_CALLABLE == pyversion.NULL_BELOW_CALLABLE
    assert set(calls.CALL_PREFIX) <= set(dis.opmap)


def test_trampoline_code_calls_dispatch_in_this_versions_order():
    def f(a, b=2, *rest, k, **kw):
        return a
    code = make_trampoline_code(f.__code__, cache=object())
    ops = [ins.opname for ins in dis.get_instructions(code)]
    push = ["PUSH_NULL", "LOAD_CONST"] if pyversion.NULL_BELOW_CALLABLE else ["LOAD_CONST", "PUSH_NULL"]
    assert ops[1:3] == push, ops
    assert ops[-2:] == ["CALL", "RETURN_VALUE"] and ("PRECALL" in ops) == bool(pyversion.CALL_PREFIX)
    assert code.co_varnames[:5] == f.__code__.co_varnames[:5] and code.co_argcount == 2


def _hits(f):
    return sum(e.native.hits for e in f._frametrace_cache.entries if e.native is not None)


@pytest.mark.parametrize("src", [
    "def f(x, flag):\n    return x + 1, None, flag, 7",
    "def f(x, flag):\n    return x.sum(), x.shape[0], flag",
])
def test_native_returns_of_immortal_and_mortal_objects_keep_refcounts(src):
    """3.12+: None, True and small ints are immortal; mortal inputs and results must not drift."""
    g = {"np": np}
    exec(src, g)
    with ft.config.patch(native_dispatch=True):
        f = ft.compile(g["f"])
        x = np.arange(8.0)
        want = g["f"](x, True)
        f(x, True)
        f(x, True)
        assert _hits(f) == 1
        before = sys.getrefcount(x), sys.getrefcount(None), sys.getrefcount(True)
        for _ in range(2000):
            got = f(x, True)
        after = sys.getrefcount(x), sys.getrefcount(None), sys.getrefcount(True)
        assert _hits(f) == 2001
    assert after[0] == before[0]
    if sys.version_info >= (3, 12):
        assert after[1:] == before[1:]                  # immortal: counts never move
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
        assert type(a) is type(b)
