"""Each log channel's lines, the constraint error, stances, and a real trace rendered by tlparse."""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import frametrace as ft

SCRIPT = """
import numpy as np, frametrace as ft

@ft.compile
def f(x):
    if x.shape[0] == 33:
        return x * 2
    y = np.sin(x) * x.shape[0]
    print("break")
    return np.cos(y)

for n in (10, 20, 33):
    f(np.ones(n))
"""


def run(tmp_path, env):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    full = dict(os.environ, FRAMETRACE_PGO="0", FRAMETRACE_CACHE_DIR=str(tmp_path / "cache"), **env)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=full, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


@pytest.mark.parametrize("channel,needles", [
    ("+dynamic", ["create_symbol s0 = 20 for L['x'].shape[0] [2, int_oo]", "eval Ne(s0, 33) [guard added]",
                  "eval Eq(s0, 33) [guard added]", "set_replacement s0 = 33", "script.py:6 in f"]),
    ("recompiles", ["Recompiling function f in", "triggered by the following guard failure(s):",
                    "- 0/0: L['x'].shape[0] == 10", "[0/1] [__recompiles]"]),
    ("graph_breaks", ["Graph break in user code at", "script.py:9 in f", "call to builtin print",
                      "Hint: the frame breaks the graph at the call"]),
    ("graph_code", ["TRACED GRAPH f", "= sin(%L_x)", "[0/0] [__graph_code]"]),
    ("guards", ["GUARDS:", "type(L['x']) is numpy.ndarray", "L['x'].shape[0] != 33"]),
    ("output_code", ["entry:", "def run(inputs, symbol_values):"]),
])
def test_log_channels(tmp_path, channel, needles):
    err = run(tmp_path, {"FRAMETRACE_LOGS": channel})
    for needle in needles:
        assert needle in err, (needle, err[-3000:])


def test_real_trace_renders_with_specialisation_and_guards(tmp_path):
    run(tmp_path, {"FRAMETRACE_TRACE": str(tmp_path / "trace")})
    logs = list((tmp_path / "trace").glob("*.log"))
    assert len(logs) == 1
    tlparse = shutil.which("tlparse") or os.path.join(os.path.dirname(sys.executable), "tlparse")
    out = tmp_path / "report"
    proc = subprocess.run([tlparse, str(logs[0]), "-o", str(out), "--overwrite", "--no-browser", "--strict"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    index = (out / "index.html").read_text()
    for cid in ("[0/0]", "[0/1]", "[0/2]", "[1/0]"):
        assert cid in index, cid
    pages = {p.name: p.read_text() for p in out.rglob("*.html")}
    metrics = "".join(text for name, text in pages.items() if name.startswith("compilation_metrics"))
    assert "L[&#39;x&#39;].shape[0]" in metrics or "L['x'].shape[0]" in metrics
    assert "Eq(s0, 33)" in metrics
    assert any(name.startswith("dynamo_guards") for name in pages)


def is_ten(x):
    if x.shape[0] == 10:
        return x + 1
    return x - 1


def test_constraint_violation_names_source_value_line_and_fix():
    f = ft.compile(is_ten)
    x = np.ones(10)
    ft.mark_dynamic(x, 0)
    with pytest.raises(ft.errors.ConstraintViolationError) as info:
        f(x)
    msg = str(info.value)
    assert "L['x'].shape[0]" in msg and "(10)" in msg and "maybe_mark_dynamic" in msg
    assert "if x.shape[0] == 10:" in msg and "test_logs_and_trace.py" in msg


def test_mark_dynamic_bounds_narrowed_by_code_is_a_violation():
    def f(x):
        if x.shape[0] > 5:
            return x * 2
        return x
    c = ft.compile(f)
    x = np.ones(10)
    ft.mark_dynamic(x, 0, min=2, max=64)
    with pytest.raises(ft.errors.ConstraintViolationError):
        c(x)


@pytest.mark.parametrize("stance", ["force_eager", "eager_on_recompile", "fail_on_recompile",
                                    "eager_then_compile"])
def test_stances(stance):
    f = ft.compile(lambda x: x * x.shape[0], dynamic=False)
    f(np.ones(3)) if stance != "eager_then_compile" else None
    before = ft.stats().unique_graphs
    with ft.set_stance(stance):
        if stance == "fail_on_recompile":
            with pytest.raises(ft.errors.RecompileError, match="L\\['x'\\].shape\\[0\\] == 3"):
                f(np.ones(4))
        else:
            np.testing.assert_array_equal(f(np.ones(4)), np.ones(4) * 4)
    after = ft.stats().unique_graphs
    assert after == before         # none of these compiled for the new size (eager_then_compile: first call)
    with pytest.raises(ValueError):
        ft.set_stance("sometimes")


def test_explain_of_a_compiled_function_names_the_annotation_that_avoids_its_recompiles():
    f = ft.compile(lambda x: x * x.shape[0])
    f(np.ones(10))
    f(np.ones(20))
    out = ft.explain(f, np.ones(30))
    assert out.recompiles and "L['x'].shape[0] == 10" in out.recompiles[0][1][0]
    text = str(out)
    assert "ft.mark_dynamic(x, 0)" in text and "FRAMETRACE_DYNAMIC_SOURCES=\"L['x']\"" in text
