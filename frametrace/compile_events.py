"""What each compile reports to the structured trace (FRAMETRACE_TRACE), to PGO and to ft.report()."""
from __future__ import annotations

import time
import traceback

from . import pgo
from . import structured_trace as st
from .reporting import records


def compile_id_tuple(compile_id: str) -> tuple:
    frame, count = compile_id.split("/")
    return int(frame), int(count), 0


def _frames(loc):
    return [(loc.filename, loc.lineno, loc.funcname, getattr(loc, "source_line", ""))] if loc else []


def user_frames(code):
    """The Python stack of the call being compiled, outermost first, ending in the compiled frame."""
    frames = [f for f in traceback.extract_stack()[:-1]
              if "/frametrace/" not in f.filename and "/csrc_free_runtime/" not in f.filename
              and not f.filename.startswith("<frametrace")]
    out = [(f.filename, f.lineno, f.name, f.line or "") for f in frames]
    out.append((code.co_filename, code.co_firstlineno, code.co_name, ""))
    return out


def start(code, compile_id, reasons):
    records.started(code, compile_id, reasons)
    if not st.enabled():
        return
    cid = compile_id_tuple(compile_id)
    st.dynamo_start(cid, user_frames(code))
    if reasons:
        st.artifact(cid, "recompile_reasons", list(reasons), encoding="json")


def success(code, compile_id, info, started, cache_size):
    records.succeeded(code, compile_id, info, time.perf_counter() - started)
    if not st.enabled():
        return
    cid = compile_id_tuple(compile_id)
    env = info.shape_env
    for g in getattr(env, "guards", ()):
        st.guard_added_fast(cid, str(g.expr), st.user_stack(_frames(g.location)))
    for s in getattr(env, "specializations", ()):
        st.specialization(cid, str(s.symbol), list(s.sources), s.value, s.reason, st.user_stack(_frames(s.location)))
    st.output_graph(cid, str(info.graph))
    st.guards(cid, [{"code": g.name} for g in info.guards])
    if info.backend_source:
        st.artifact(cid, "frametrace_wrapper_code", info.backend_source)
    llvm_ir = getattr(info.namespace.get("___graph"), "llvm_ir", "")
    if llvm_ir:
        st.artifact(cid, "frametrace_llvm_ir", llvm_ir)
    st.artifact(cid, "frametrace_entry_code", info.entry_source)
    now = time.perf_counter()
    st.compilation_metrics(
        cid, co_name=code.co_name, co_filename=code.co_filename, co_firstlineno=code.co_firstlineno,
        cache_size=cache_size, guard_count=len(info.guards),
        shape_env_guard_count=sum(1 for g in info.guards if g.kind == "SHAPE_ENV"),
        graph_op_count=info.graph_nodes, graph_node_count=info.graph_nodes + len(info.graph.inputs),
        graph_input_count=len(info.graph.inputs), start_time=time.time() - (now - started),
        entire_frame_compile_time_s=now - started, backend_compile_time_s=info.extra.get("backend_time", 0.0),
        restart_reasons=list(info.extra.get("restart_reasons", [])))


def failure(code, compile_id, exc, started, cache_size):
    records.failed(code, compile_id, exc, time.perf_counter() - started)
    if not st.enabled():
        return
    cid = compile_id_tuple(compile_id)
    st.artifact(cid, "graph_break_reason", f"{exc}")
    loc = getattr(exc, "location", "") or ""
    filename, _, rest = loc.partition(":")
    lineno = rest.split(" ")[0] if rest else ""
    st.compilation_metrics(
        cid, co_name=code.co_name, co_filename=code.co_filename, co_firstlineno=code.co_firstlineno,
        cache_size=cache_size, entire_frame_compile_time_s=time.perf_counter() - started,
        fail_type=type(exc).__name__, fail_reason=str(exc).splitlines()[0],
        fail_user_frame_filename=filename or None, fail_user_frame_lineno=int(lineno) if lineno.isdigit() else None,
        restart_reasons=[])


def load_profile(code):
    return pgo.load(code)


def save_profile(code, state, compile_id):
    """Persist what automatic dynamic learnt; on a recompile, say how to start dynamic next time."""
    if not state.changed:
        return
    pgo.save(code, state, compile_id=compile_id_tuple(compile_id))
    state.changed = False
    if compile_id_tuple(compile_id)[1] > 0:
        advice = pgo.recompile_advice(code, state)
        if advice:
            from .logs import get_logger
            get_logger("recompiles").info(advice)
