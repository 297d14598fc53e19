"""The structured trace is read by the real `tlparse --strict` and renders compiles, stacks,
specialisations and failures; payload MD5s and line prefixes follow the reader's rules."""
from __future__ import annotations

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

from frametrace import structured_trace as st

USER_FILE = "/app/model.py"
# tlparse 0.4.3's glog regex (DYNAMO_NOTES §2.2)
GLOG = re.compile(r"(?P<level>[VIWEC])\d{4} \d{2}:\d{2}:\d{2}\.\d{6} (?P<thread>\d+)"
                  r"(?P<pathname>[^:]+):(?P<line>\d+)\] (?P<payload>.)")


def _tlparse() -> str:
    exe = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not os.path.exists(exe):
        pytest.skip("tlparse is not installed")
    return exe


@pytest.fixture
def trace_dir(tmp_path):
    d = tmp_path / "trace"
    st.enable(d)
    yield d
    st.reset()


def _run_tlparse(log: str, out: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([_tlparse(), log, "-o", str(out), "--overwrite", "--no-browser", "--strict",
                           "--strict-compile-id"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "fail" not in proc.stderr.split("Stats")[-1], proc.stderr[-3000:]
    return proc


def _records(path: str) -> list[tuple[re.Match, dict, list[str]]]:
    """(prefix match, envelope, payload lines) per record, parsed like tlparse does."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").split("\n"):
        if line.startswith("\t"):
            out[-1][2].append(line[1:])
        elif line:
            m = GLOG.match(line)
            assert m, line
            out.append((m, json.loads(line[m.start("payload"):]), []))
    return out


def _artifact_page(out: Path, compile_label: str, prefix: str) -> str:
    directory = json.loads((out / "compile_directory.json").read_text())
    for art in directory[compile_label]["artifacts"]:
        if art["name"].startswith(prefix):
            return html.unescape((out / art["url"]).read_text())
    raise AssertionError(f"no {prefix} for {compile_label}: {directory[compile_label]}")


def _write_two_frames():
    call_site = (USER_FILE, 10, "<module>", "f(np.ones(n))")
    # [0/0]: graph break
    cid = (0, 0, 0)
    st.dynamo_start(cid, [call_site, (USER_FILE, 3, "f", None)])
    st.artifact(cid, "graph_break_reason", "Unsupported: call to builtin print (graph break)")
    st.output_graph(cid, "def graph(x: f64[10]):\n    y = mul(x, 2)\n    return (y,)")
    st.guards(cid, [{"code": "type(L['x']) is numpy.ndarray"}, "L['x'].shape == (10,)"])
    st.artifact(cid, "frametrace_llvm_ir", "define double @graph(double* %x, i64 %n) {\n  ; ...\n}\n")
    st.compilation_metrics(cid, co_name="f", co_filename=USER_FILE, co_firstlineno=3, cache_size=0,
                           guard_count=2, shape_env_guard_count=0, graph_op_count=1, graph_node_count=3,
                           graph_input_count=1, start_time=1.5, entire_frame_compile_time_s=0.01,
                           backend_compile_time_s=0.005,
                           restart_reasons=["Unsupported: call to builtin print (graph break)"])
    # [1/0]: the resume function
    cid = (1, 0, 0)
    st.dynamo_start(cid, [call_site, (USER_FILE, 7, "frametrace_resume_in_f_at_7", None)])
    st.output_graph(cid, "def graph(y: f64[10]):\n    return (sum(cos(y)),)")
    st.guards(cid, [{"code": "L['y'].shape == (10,)"}])
    st.compilation_metrics(cid, co_name="frametrace_resume_in_f_at_7", co_filename=USER_FILE,
                           co_firstlineno=7, graph_op_count=2, graph_node_count=3, graph_input_count=1)
    # [0/1]: recompile on a new size, specialised to 33
    cid = (0, 1, 0)
    branch = st.user_stack([(USER_FILE, 6, "f", "if x.shape[0] == 33: y = y + 1")])
    st.dynamo_start(cid, [call_site, (USER_FILE, 3, "f", None)])
    st.artifact(cid, "recompile_reasons", ["0/0: L['x'].shape[0] == 10  (expected 10, actual 33)"],
                encoding="json")
    st.guard_added_fast(cid, "Eq(s0, 33)", branch)
    st.specialization(cid, "s0", ["L['x'].shape[0]"], 33, "range_refined_to_singleton", branch)
    st.output_graph(cid, "def graph(x: f64[33]):\n    return (add(mul(x, 2), 1),)")
    st.guards(cid, [{"code": "L['x'].shape[0] == 33", "user_stack": [(USER_FILE, 6, "f", "if ...")]}])
    st.compilation_metrics(cid, co_name="f", co_filename=USER_FILE, co_firstlineno=3, cache_size=1,
                           guard_count=2, shape_env_guard_count=1, graph_op_count=2, graph_node_count=4,
                           graph_input_count=1, entire_frame_compile_time_s=0.02)


def test_tlparse_renders_two_frames(trace_dir, tmp_path):
    assert st.enabled() and st.trace_path() is None            # the file is made lazily
    _write_two_frames()
    log = st.trace_path()
    assert Path(log).parent == trace_dir
    assert Path(log).name.startswith("dedicated_log_frametrace_trace_") and log.endswith(".log")

    out = tmp_path / "tl_out"
    _run_tlparse(log, out)
    index = html.unescape((out / "index.html").read_text())
    for label in ("[0/0]", "[0/1]", "[1/0]"):
        assert label in index
    assert "model.py:3 in f" in index                             # interned filename resolved

    metrics = _artifact_page(out, "[0/1]", "compilation_metrics")
    assert "s0" in metrics and "L['x'].shape[0]" in metrics and "33" in metrics   # specialisation row
    assert "Eq(s0, 33)" in metrics                                              # guards added fast
    assert "if x.shape[0] == 33" in metrics                                     # with its user stack
    assert "L['x'].shape[0] == 33" in _artifact_page(out, "[0/1]", "dynamo_guards")
    assert "expected 10, actual 33" in _artifact_page(out, "[0/1]", "recompile_reasons")
    assert "print" in _artifact_page(out, "[0/0]", "graph_break_reason")
    assert "@graph" in _artifact_page(out, "[0/0]", "frametrace_llvm_ir")
    assert "cos(y)" in _artifact_page(out, "[1/0]", "dynamo_output_graph")


def test_failed_compile_renders(trace_dir, tmp_path):
    st.dynamo_start((0, 0, 0), [(USER_FILE, 3, "f", None)])
    st.compilation_metrics((0, 0, 0), co_name="f", co_filename=USER_FILE, co_firstlineno=3,
                           fail_type="Unsupported", fail_reason="np.frobnicate is not supported",
                           fail_user_frame_filename=USER_FILE, fail_user_frame_lineno=4)
    st.compilation_metrics((1, 0, 0), co_name="g", fail_type="RecompileError")   # reason filled in
    st.compilation_metrics((2, 0, 0), co_name="h", fail_reason="why", fail_type=None)  # type filled in
    recs = {(e["frame_id"]): e["compilation_metrics"] for _, e, _ in _records(st.trace_path())
            if "compilation_metrics" in e}
    assert recs[0]["restart_reasons"] == [] and recs[1]["fail_reason"] and recs[2]["fail_type"]
    out = tmp_path / "tl_out"
    _run_tlparse(st.trace_path(), out)
    failures = html.unescape((out / "failures_and_restarts.html").read_text())
    assert "np.frobnicate is not supported" in failures and "[1/0]" in failures


def test_payload_md5_and_prefix(trace_dir):
    st.artifact((0, 0, 0), "text", "windows\r\nline\rend\n\ttabbed\n")
    st.artifact((0, 0, 0), "obj", {"a": [1, 2], "nan": float("nan")}, encoding="json")
    st.guards((0, 0, 0), [])
    st.trace_structured("my_event", {"k": 1}, payload=["x", {"y": 2}])
    recs = _records(st.trace_path())
    assert len(recs) == 4
    for m, env, lines in recs:
        assert m["level"] == "V" and int(m["thread"]) == os.getpid()
        assert m["pathname"] == " test_structured_trace.py"          # the caller, not this module
        assert hashlib.md5("\n".join(lines).encode()).hexdigest() == env["has_payload"]
    assert recs[0][2] == ["windows", "line", "end", "\ttabbed", ""]
    assert json.loads("\n".join(recs[1][2])) == {"a": [1, 2], "nan": None}
    assert "\n".join(recs[3][2]) == '[\n"x",\n{"y": 2}\n]'
    assert "frame_id" not in recs[3][1]                                # no compile id given
    assert {k: recs[0][1][k] for k in ("frame_id", "frame_compile_id", "attempt")} == \
        {"frame_id": 0, "frame_compile_id": 0, "attempt": 0}


def test_filenames_interned_once(trace_dir):
    st.dynamo_start((0, 0, 0), [(USER_FILE, 1, "<module>", "f()"), ("/app/other.py", 2, "g", "")])
    st.guard_added_fast((0, 0, 0), "Eq(s0, 3)", [(USER_FILE, 5, "f", "x")])
    recs = [env for _, env, _ in _records(st.trace_path())]
    strs = [env["str"] for env in recs if "str" in env]
    assert strs == [[USER_FILE, 0], ["/app/other.py", 1]]
    start = next(env for env in recs if "dynamo_start" in env)["dynamo_start"]["stack"]
    assert start == [{"line": 1, "name": "<module>", "filename": 0, "loc": "f()"},
                     {"line": 2, "name": "g", "filename": 1}]


def test_off_writes_nothing(tmp_path, monkeypatch):
    st.reset()
    monkeypatch.delenv(st.ENV_VAR, raising=False)
    assert not st.enabled()
    st.compilation_metrics((0, 0, 0), co_name="f")
    assert st.user_stack([("/a.py", 1, "f", "")]) == []
    assert st.trace_path() is None


def test_env_var_read_at_call_time(tmp_path, monkeypatch):
    st.reset()
    monkeypatch.setenv(st.ENV_VAR, str(tmp_path / "from_env"))
    try:
        assert st.enabled()
        st.artifact(None, "hello", "world")
        assert Path(st.trace_path()).parent == tmp_path / "from_env"
    finally:
        st.reset()


def test_io_error_warns_once_and_disables(tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    st.enable(blocker / "trace")               # cannot create a directory under a file
    try:
        with pytest.warns(RuntimeWarning, match="structured trace disabled"):
            st.output_graph((0, 0, 0), "g")
        assert not st.enabled()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            st.output_graph((0, 0, 0), "g")    # silent now, never raises
    finally:
        st.reset()


def test_threads_do_not_interleave(trace_dir, tmp_path):
    def work(frame):
        for i in range(30):
            cid = (frame, i, 0)
            st.dynamo_start(cid, [(f"/app/t{frame}.py", i + 1, "f", "f()")])
            st.output_graph(cid, f"def graph():\n    return ({frame}, {i})")
            st.compilation_metrics(cid, co_name="f", graph_op_count=1)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    recs = _records(st.trace_path())
    assert sum("dynamo_output_graph" in env for _, env, _ in recs) == 120
    _run_tlparse(st.trace_path(), tmp_path / "tl_out")
