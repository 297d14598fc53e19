"""The registry is complete: every op lowers to a kernel or is an explicit NumPy call, and the
generated list of supported functions (docs/numpy_functions.md) is current."""
import dataclasses
import pathlib

import numpy as np

from frametrace.ir import numpy_api  # noqa: F401  (registers every op)
from frametrace.ir.numpy_api.catalog import render
from frametrace.ir.numpy_api.functions import lookup_function
import pytest

from frametrace.ir.ops.opaque import OPAQUE
from frametrace.ir.registry import (OPS, Creation, Gather, Loop, Matmul, NumpyCall, Reduction, Scan,
                                    Scatter, Sort, View, register)
from frametrace.lower import classify
from frametrace.lower.pointwise import LOOP_OPS
from frametrace.lower.reductions import IDENTITY

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "numpy_functions.md"

# the op kinds (scheduling family) each lowering record may describe
_KINDS_OF = {
    Loop: {"elementwise"}, Reduction: {"reduction"}, Scan: {"scan"}, Sort: {"scan"}, View: {"view"},
    Creation: {"creation", "copy"}, Matmul: {"matmul"}, Gather: {"gather"}, Scatter: {"mutation"},
}


def _problem(name, op) -> str | None:
    """Why op `name` does not state a usable lowering (None: it does)."""
    lw = op.lowering
    if op.cost == "expensive" and not (isinstance(lw, Loop) and "f" in lw.kinds):
        return "an expensive op without a float loop body"
    if isinstance(lw, NumpyCall):
        if not lw.reason:
            return "a NumPy call without a reason"
        if lw.opaque != (name in OPAQUE):
            return "opaque flag disagrees with register_opaque"
        return None
    if type(lw) not in _KINDS_OF:
        return f"no lowering ({lw!r})"
    if op.kind not in _KINDS_OF[type(lw)]:
        return f"a {type(lw).__name__} lowering for a {op.kind} op"
    if isinstance(lw, Loop):
        if not lw.kinds or set(lw.kinds) - set("fiub"):
            return f"loop body kinds {lw.kinds!r}"
        if lw.body is None and op.ufunc is None:
            return "a loop body named after a non-ufunc"
        if lw.math and "f" not in lw.kinds:
            return "a math-library body without a float kind"
    if isinstance(lw, Reduction):
        if (lw.combiner is None) != (lw.identity is None) or (lw.identity and lw.identity not in IDENTITY):
            return f"combiner {lw.combiner!r} / identity {lw.identity!r}"
        if lw.combiner is not None and (lw.combiner, "f") not in LOOP_OPS:
            return f"combiner {lw.combiner!r} is not a loop-IR op"
        for rmw in (lw.rmw, lw.rmw_bool):
            if rmw is not None and lowering_kinds(rmw) != set("fiub"):
                return f"read-modify-write op {rmw!r} has no loop body for every kind"
        if not lw.params or lw.params[0] != "axis":
            return f"parameters {lw.params!r}"
    if isinstance(lw, Scan) and lowering_kinds(lw.combiner) != set("fiub"):
        return f"scan combiner {lw.combiner!r}"
    if isinstance(lw, Sort) and (lw.fallback not in OPAQUE or not {("sort_vec", k) for k in "fiu"} <= set(LOOP_OPS)):
        return f"a sort without the opaque fallback {lw.fallback!r} or the network's loop-IR ops"
    return None


def lowering_kinds(name) -> set:
    return {k for (n, k) in LOOP_OPS if n == name}


def test_every_op_is_lowered_or_an_explicit_numpy_call():
    problems = {n: p for n, op in OPS.items() if (p := _problem(n, op)) is not None}
    assert problems == {}, f"ops without a lowering or an explicit NumPy call: {problems}"


def test_the_walk_flags_missing_or_inconsistent_lowerings():
    assert _problem("sum", dataclasses.replace(OPS["sum"], lowering=None)) is not None
    assert _problem("add", dataclasses.replace(OPS["add"], lowering=Loop(""))) is not None
    assert _problem("sum", dataclasses.replace(OPS["sum"], lowering=Loop("f"))) is not None
    assert _problem("sum", dataclasses.replace(OPS["sum"], lowering=Reduction("red_add", "nil", params=("axis",)))) \
        is not None
    assert _problem("take", dataclasses.replace(OPS["take"], lowering=NumpyCall(""))) is not None
    assert _problem("cos", dataclasses.replace(OPS["cos"], lowering=NumpyCall("x"))) is not None  # expensive


def test_an_op_without_a_lowering_cannot_be_registered():
    with pytest.raises(ValueError, match="lowering"):
        register("catalog_test_op", kind="elementwise", ufunc=np.add)(lambda a, b: None)
    with pytest.raises(ValueError, match="lowering"):
        register("catalog_test_op", kind="reduction", ref=np.sum, lowering="sum")(lambda x: None)
    assert "catalog_test_op" not in OPS


def test_lowering_tables_are_the_registry():
    assert classify.REDUCTIONS == {n for n, op in OPS.items() if isinstance(op.lowering, Reduction)}
    assert classify.SCANS == {"cumsum", "cumprod"} and classify.MATMULS == {"matmul", "dot"}
    for n, op in OPS.items():
        lw = op.lowering
        if isinstance(lw, Loop) and lw.body is None:
            assert lowering_kinds(n) == set(lw.kinds), n
        elif op.ufunc is not None and op.kind == "elementwise":
            assert lowering_kinds(n) == set(), n


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
