"""The registry is complete: every op lowers to a kernel or is an explicit NumPy call, and the
generated list of supported functions (docs/numpy_functions.md) is current."""
import pathlib

import numpy as np

from frametrace.ir import numpy_api  # noqa: F401  (registers every op)
from frametrace.ir.numpy_api.catalog import render
from frametrace.ir.numpy_api.functions import lookup_function
from frametrace.ir.ops.opaque import OPAQUE
from frametrace.ir.registry import OPS
from frametrace.lower import classify
from frametrace.lower.pointwise import LOOP_OPS

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "numpy_functions.md"

# Non-opaque ops that the wrapper runs with NumPy by design (each with the reason).
NUMPY_IN_WRAPPER = {
    "astype": "a cast: lowered as the loop IR's internal `cast`",
    "conjugate": "complex only: kernels have no complex dtype",
    "concatenate": "copies of whole operands: NumPy's memcpy",
    "stack": "copies of whole operands: NumPy's memcpy",
    "argwhere": "data-dependent size",
    "unique": "data-dependent size (sorting)",
    "take": "integer gather along axis 0",
    "index": "advanced indexing (gather)",
    "index_put": "x[idx] = v: NumPy's buffered scatter",
    "ufunc_at": "ufunc.at: NumPy's unbuffered scatter",
}


def _lowered(name, op) -> bool:
    if op.kind == "elementwise":
        return any(k[0] == name for k in LOOP_OPS)
    if op.kind == "reduction":
        return name in classify.REDUCTIONS
    if op.kind == "scan":
        return name in classify.SCANS
    if op.kind in ("creation", "copy"):
        return name in classify.CREATION
    if op.kind == "matmul":
        return name in ("matmul", "dot")
    if op.kind == "mutation":
        return name == "assign"
    if op.kind == "gather":
        return name == "mask_select"
    return op.kind == "view"


def test_every_op_is_lowered_or_an_explicit_numpy_call():
    missing = [n for n, op in OPS.items()     # OPAQUE: registered by register_opaque
               if n not in OPAQUE and not _lowered(n, op) and n not in NUMPY_IN_WRAPPER]
    assert missing == [], f"ops with neither a lowering nor an explicit NumPy fallback: {missing}"
    for name in NUMPY_IN_WRAPPER:
        assert name in OPS, name


def test_opaque_ops_call_numpy_functions():
    for name, op in OPS.items():
        if op.kind == "opaque":
            assert name in OPAQUE and callable(OPAQUE[name]) and op.may_raise is not None, name


def test_supported_function_list_is_current():
    assert DOC.read_text() == render(), (
        "docs/numpy_functions.md is stale: run python -m frametrace.ir.numpy_api.catalog docs/numpy_functions.md")


def test_listed_functions_are_traceable():
    for line in render().splitlines():
        if line.startswith("`np.") and "linalg" not in line:
            for item in line.split(", "):
                name = item.strip("`,")
                if name.startswith("np.") and "." not in name[3:]:
                    assert lookup_function(getattr(np, name[3:])) is not None, name
