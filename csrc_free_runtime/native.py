"""Native entries: a compiled function exposed as a CPython METH_FASTCALL builtin.

The compiler generates (in LLVM IR) one function per cache entry,

    PyObject *entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs)

that checks the entry's guards on the frame values, computes the sizes, allocates the outputs
through NumPy's C API, runs the kernels and builds the return value. When a guard fails (or
anything the native code does not handle, e.g. a kernel big enough for the thread pool) it
returns `self`, which is the sentinel `NATIVE_MISS`, and the caller takes the Python path
(Python guards, Python wrapper, recompiles and their explanations). A NULL return is a real
exception (e.g. MemoryError from the allocation) and propagates.

This module is the ABI half: the addresses of the C functions the IR calls, the PyArrayObject
layout facts it relies on (verified here, not assumed), and `NativeEntry`, which wraps a
machine-code address into a builtin (PyCFunction_NewEx, LLVM_FINDINGS.md §1: ~20 ns a call)
and keeps alive everything the code points at. It never imports the compiler.

Thread safety: the builtin runs with the GIL held (it may release it around a kernel); its
only mutable state is the hit counter, incremented while the GIL is held.
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np

METH_FASTCALL = 0x0080

NATIVE_MISS = type("NativeMiss", (), {"__repr__": lambda self: "NATIVE_MISS", "__slots__": (),
                                      "__reduce__": lambda self: "NATIVE_MISS"})()


class _PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.POINTER(_PyMethodDef), ctypes.py_object, ctypes.py_object]

# C-API functions the generated code calls, by name (their addresses are baked into the IR)
_C_FUNCTIONS = ("Py_IncRef", "Py_DecRef", "PyDict_GetItem", "PyDict_Contains", "PyObject_GetAttr",
                "PyErr_Clear", "PyTuple_New", "PyTuple_SetItem", "PyLong_FromLongLong",
                "PyLong_AsLongLongAndOverflow", "PyFloat_AsDouble", "PyEval_SaveThread",
                "PyEval_RestoreThread", "PyObject_GetItem", "PyDict_Size", "PyDict_Next",
                "PyObject_RichCompareBool", "PyObject_IsTrue", "PyList_New", "PyList_SetItem",
                "PyDict_GetItemWithError", "PyBytes_FromStringAndSize")

# NumPy C-API table indices (numpy/_core/include/numpy/__multiarray_api.h, NumPy 2.x)
_NUMPY_API = {"PyArray_Return": 76, "PyArray_New": 93, "PyArray_NewFromDescr": 94, "PyArray_Transpose": 123,
              "PyArray_Newshape": 135, "PyArray_SetBaseObject": 282}

# PyArrayObject fields (CPython 3.11 / NumPy 2, 64-bit); checked by _verify_layout
ARRAY_FIELDS = {"data": 16, "nd": 24, "dimensions": 32, "strides": 40, "descr": 56, "flags": 64}
NPY_ARRAY_WRITEABLE = 0x0400


def _address(fn) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value


def _numpy_api_table() -> int:
    from numpy._core import _multiarray_umath
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get(_multiarray_umath._ARRAY_API, None)


def _c_addresses() -> dict:
    out = {name: _address(getattr(ctypes.pythonapi, name)) for name in _C_FUNCTIONS}
    table = _numpy_api_table()
    for name, index in _NUMPY_API.items():
        out[name] = ctypes.c_void_p.from_address(table + 8 * index).value
    return out


def _verify_layout(addrs: dict) -> bool:
    """Check every layout fact the generated code relies on, on real objects."""
    if ctypes.sizeof(ctypes.c_void_p) != 8 or np.dtype(np.intp).itemsize != 8:
        return False
    at = ARRAY_FIELDS
    ro = np.arange(6.0)[::2]
    ro.flags.writeable = False
    for a in (np.zeros(3), np.arange(12.0).reshape(3, 4)[1:, ::-2], np.zeros(0, np.float32), np.zeros(()),
              np.ones((2, 3, 4), np.int8).transpose(2, 0, 1), ro):
        nd = ctypes.c_int.from_address(id(a) + at["nd"]).value
        if nd != a.ndim or ctypes.c_void_p.from_address(id(a) + at["descr"]).value != id(a.dtype):
            return False
        if (ctypes.c_void_p.from_address(id(a) + at["data"]).value or 0) != a.ctypes.data:
            return False
        if nd:
            dims = ctypes.c_void_p.from_address(id(a) + at["dimensions"]).value
            strides = ctypes.c_void_p.from_address(id(a) + at["strides"]).value
            if tuple((ctypes.c_int64 * nd).from_address(dims)) != a.shape or \
                    tuple((ctypes.c_int64 * nd).from_address(strides)) != a.strides:
                return False
        flags = ctypes.c_int.from_address(id(a) + at["flags"]).value
        if bool(flags & NPY_ARRAY_WRITEABLE) != a.flags.writeable:
            return False
    # lists and tuples (native checks read and fill items in place): ob_size at 16, a list's
    # ob_item array pointer at 24, a tuple's items inline from 24
    lst, tup = [ro, None, 7], (None, ro)
    if ctypes.c_ssize_t.from_address(id(lst) + 16).value != 3 or \
            ctypes.c_ssize_t.from_address(id(tup) + 16).value != 2:
        return False
    # a dict's number of items (PyDictObject.ma_used) at 16
    if any(ctypes.c_ssize_t.from_address(id(d) + 16).value != len(d) for d in ({}, {"a": 1}, dict.fromkeys(range(9)))):
        return False
    items = ctypes.c_void_p.from_address(id(lst) + 24).value
    if [ctypes.c_void_p.from_address(items + 8 * i).value for i in range(3)] != [id(x) for x in lst] or \
            ctypes.c_void_p.from_address(id(tup) + 32).value != id(ro):
        return False
    # PyArray_New(&PyArray_Type, nd, dims, type_num, NULL, NULL, 0, 0, NULL) must be np.empty
    new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                            ctypes.c_void_p)(addrs["PyArray_New"])
    dims = (ctypes.c_int64 * 2)(3, 5)
    for dt in ("float64", "float32", "int64", "bool", "uint8"):
        a = new(id(np.ndarray), 2, ctypes.addressof(dims), np.dtype(dt).num, None, None, 0, 0, None)
        if type(a) is not np.ndarray or a.shape != (3, 5) or a.dtype != np.dtype(dt) or \
                not a.flags.c_contiguous or not a.flags.writeable or not a.flags.owndata:
            return False
    ret = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p)(addrs["PyArray_Return"])
    z = np.full((), 2.5)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(z))        # PyArray_Return steals a reference
    s = ret(id(z))
    return type(s) is np.float64 and s == 2.5 and _verify_views(addrs)


def _verify_views(addrs: dict) -> bool:
    """Views made by the C API (native_view_objects.py): PyArray_Newshape and PyArray_Transpose
    (a PyArray_Dims {npy_intp *ptr; int len} argument) are ndarray.reshape and .transpose;
    PyArray_NewFromDescr over a parent's memory plus PyArray_SetBaseObject is a view of it."""
    obj = ctypes.py_object
    a = np.arange(24.0).reshape(2, 3, 4).copy()         # owns its data: the views' base

    class Dims(ctypes.Structure):
        _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_int)]
    shape, perm = (ctypes.c_int64 * 2)(4, 6), (ctypes.c_int64 * 3)(2, 0, 1)
    newshape = ctypes.PYFUNCTYPE(obj, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(addrs["PyArray_Newshape"])
    r = newshape(id(a), ctypes.addressof(Dims(ctypes.addressof(shape), 2)), 0)
    transpose = ctypes.PYFUNCTYPE(obj, ctypes.c_void_p, ctypes.c_void_p)(addrs["PyArray_Transpose"])
    t = transpose(id(a), ctypes.addressof(Dims(ctypes.addressof(perm), 3)))
    if r.base is not a or r.shape != (4, 6) or t.base is not a or t.strides != a.transpose(2, 0, 1).strides:
        return False
    new = ctypes.PYFUNCTYPE(obj, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                            ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)(addrs["PyArray_NewFromDescr"])
    dims, strides = (ctypes.c_int64 * 2)(3, 2), (ctypes.c_int64 * 2)(-8, 32)
    ctypes.pythonapi.Py_IncRef(obj(a.dtype))               # NewFromDescr steals the descr
    v = new(id(np.ndarray), id(a.dtype), 2, ctypes.addressof(dims), ctypes.addressof(strides),
            a.ctypes.data + 16, NPY_ARRAY_WRITEABLE, None)
    setbase = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(addrs["PyArray_SetBaseObject"])
    ctypes.pythonapi.Py_IncRef(obj(a))                     # SetBaseObject steals the base
    if setbase(id(v), id(a)) != 0 or v.base is not a or not v.flags.writeable:
        return False
    return np.array_equal(v, np.lib.stride_tricks.as_strided(a.ravel()[2:], (3, 2), (-8, 32)))


def _init():
    try:
        addrs = _c_addresses()
        return addrs, _verify_layout(addrs)
    except Exception:             # another CPython/NumPy: no native entries, the Python path stays
        return {}, False


C_ADDRESSES, AVAILABLE = _init()
AVAILABLE = AVAILABLE and sys.implementation.name == "cpython"


class NativeEntry:
    """A machine-code entry point as a builtin: `fn(*frame_values)` -> result or NATIVE_MISS.

    `counter_address` is an int64 the code increments on every call it serves (cache hits).
    `keepalive` holds what the code points at (execution engine, kernels' module, objects
    whose addresses it compares with). The builtin itself owns all of it (through its
    `m_module` reference), so code that is running, possibly with the GIL released around a
    kernel, stays valid even if the cache drops this entry meanwhile.
    """

    __slots__ = ("fn", "ir", "_counter", "__weakref__")

    def __init__(self):
        self._counter = ctypes.c_int64(0)
        self.fn = None
        self.ir = ""

    @property
    def counter_address(self) -> int:
        return ctypes.addressof(self._counter)

    @property
    def hits(self) -> int:
        return self._counter.value

    def reset_hits(self):
        self._counter.value = 0

    def attach(self, address: int, name: str, keepalive, ir: str = ""):
        """Wrap `address` (the compiled entry) as the builtin `self.fn`."""
        cname = name.encode()
        method_def = _PyMethodDef(cname, address, METH_FASTCALL, None)
        owner = (method_def, cname, self._counter, keepalive)
        # `self` of the builtin is the miss sentinel: the code returns it when a guard fails
        self.fn = _new_cfunction(ctypes.byref(method_def), NATIVE_MISS, owner)
        self.ir = ir
        return self
