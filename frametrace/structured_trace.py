"""Structured trace (`FRAMETRACE_TRACE=DIR`): TORCH_TRACE-format records that `tlparse` renders.

One file per process, `DIR/dedicated_log_frametrace_trace_<random>.log`, opened on the first
record. Each record is one line

    V1122 03:21:10.819000 <pid> frametrace/convert_frame.py:412] {"dynamo_start": {...}, "frame_id": 0, ...}

optionally followed by payload lines, each starting with a tab, whose MD5 (lines joined with
"\\n", tabs removed) is the record's `has_payload`. The reader's rules (tlparse 0.4.3, checked
with `--strict`) are in ../shared/reference/DYNAMO_NOTES.md §2 and TRACE_FORMAT.md; the ones
that bite: exactly 6 fractional digits, explicit integer frame_id/frame_compile_id/attempt,
stack `filename`s are interned integers (`{"str": [path, id]}` written once), `fail_type` only
together with `fail_reason`, `"restart_reasons": []` for a compile that did not restart.

    cid = (0, 1, 0)                         # (frame_id, frame_compile_id, attempt)
    st.dynamo_start(cid, [(filename, lineno, funcname, source_line), ...])
    st.compilation_metrics(cid, co_name="f", graph_op_count=2, ...)

Writing never raises into user code: an I/O error warns once and turns the trace off.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import sys
import tempfile
import threading
import time
import warnings

ENV_VAR = "FRAMETRACE_TRACE"
_THIS_FILE = os.path.normcase(os.path.abspath(__file__))
_PACKAGE_DIR = os.path.dirname(_THIS_FILE)                 # .../frametrace
_PACKAGE_PARENT = os.path.dirname(_PACKAGE_DIR)
# keys tlparse's Envelope owns; metadata may not use them as event names
_RESERVED = frozenset({"rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt",
                       "has_payload", "stack", "str"})


class _Writer:
    """The process's trace file, its string intern table, and the on/off switches."""

    def __init__(self):
        self.lock = threading.RLock()
        self.forced_dir: str | None = None     # set by enable(dir); wins over the environment
        self.off = False                       # disable() or an I/O error
        self.file = None
        self.path: str | None = None
        self.dir: str | None = None
        self.pid: int | None = None
        self.interned: dict[str, int] = {}

    def target_dir(self) -> str | None:
        if self.off:
            return None
        return self.forced_dir or os.environ.get(ENV_VAR) or None

    def close(self):
        if self.file is not None and self.pid == os.getpid():
            try:
                self.file.close()
            except OSError:
                pass
        self.file, self.path, self.dir, self.pid = None, None, None, None
        self.interned = {}

    def ensure_open(self, directory: str):
        """Open (lazily) the file for `directory` in this process; a new dir or a fork opens a new file."""
        if self.file is not None and self.dir == directory and self.pid == os.getpid():
            return self.file
        if self.pid != os.getpid():
            self.file = None                   # forked child: the parent's handle is not ours to close
        self.close()
        os.makedirs(directory, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix="dedicated_log_frametrace_trace_", suffix=".log", dir=directory)
        self.file = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        self.path, self.dir, self.pid = path, directory, os.getpid()
        return self.file


_W = _Writer()


# ---------------------------------------------------------------------------------------------
# switches

def enabled() -> bool:
    """True when records are written: `enable(dir)` was called or FRAMETRACE_TRACE is set (read now)."""
    return _W.target_dir() is not None


def enable(directory: str | os.PathLike | None) -> None:
    """Write the trace under `directory` (tests); `enable(None)` goes back to FRAMETRACE_TRACE."""
    with _W.lock:
        _W.forced_dir = os.fspath(directory) if directory is not None else None
        _W.off = False


def disable() -> None:
    """Stop writing (until `enable`) and close the file."""
    with _W.lock:
        _W.off = True
        _W.close()


def reset() -> None:
    """Forget `enable`/`disable` and close the file; the next record opens a new one (tests)."""
    with _W.lock:
        _W.close()
        _W.forced_dir, _W.off = None, False


def trace_path() -> str | None:
    """Path of this process's trace file, once a record was written."""
    return _W.path


# ---------------------------------------------------------------------------------------------
# line format

def _caller() -> tuple[str, int]:
    """`frametrace/<module>.py` and line of the first caller outside this file (glog pathname)."""
    f = sys._getframe(1)
    while f is not None and os.path.normcase(os.path.abspath(f.f_code.co_filename)) == _THIS_FILE:
        f = f.f_back
    if f is None:
        return "frametrace/structured_trace.py", 1
    path = os.path.abspath(f.f_code.co_filename)
    if os.path.normcase(path).startswith(os.path.normcase(_PACKAGE_DIR) + os.sep):
        path = os.path.relpath(path, _PACKAGE_PARENT).replace(os.sep, "/")
    else:
        path = os.path.basename(path)
    return path.replace(":", "_") or "unknown", max(int(f.f_lineno or 0), 0)


def _prefix(pathname: str, lineno: int) -> str:
    now = time.time()
    stamp = datetime.datetime.fromtimestamp(now).strftime("%m%d %H:%M:%S.%f")   # %f: 6 digits
    return f"V{stamp} {os.getpid()} {pathname}:{lineno}] "


def format_payload(payload) -> str:
    """Payload text as torch writes it: str as is, list one JSON item a line, else indent=0 JSON."""
    if isinstance(payload, bytes):
        payload = payload.decode("utf-8", "replace")
    if isinstance(payload, str):
        text = payload
    elif isinstance(payload, (list, tuple)):
        text = "[\n" + ",\n".join(_dumps(item) for item in payload) + "\n]" if payload else "[]"
    else:
        text = json.dumps(_clean(payload), indent=0, default=str)
    # tlparse splits on "\n" and drops a trailing "\r" per line: keep only "\n" so the MD5 agrees
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.encode("utf-8", "replace").decode("utf-8")        # lone surrogates -> "?"


def payload_md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def _clean(obj):
    """JSON-safe copy: non-finite floats -> null (serde rejects NaN), tuples -> lists."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _dumps(obj) -> str:
    return json.dumps(_clean(obj), default=str, allow_nan=False)


def _compile_id_fields(compile_id) -> dict:
    if compile_id is None:
        return {}
    if not isinstance(compile_id, (tuple, list)):   # a CompileId-like record
        compile_id = (compile_id.frame_id, compile_id.frame_compile_id, getattr(compile_id, "attempt", 0))
    frame_id, frame_compile_id, *rest = compile_id
    attempt = rest[0] if rest else 0
    return {"frame_id": int(frame_id), "frame_compile_id": int(frame_compile_id),
            "attempt": int(attempt or 0)}


# ---------------------------------------------------------------------------------------------
# writing

_warned_io = False


def _io_failed(exc: BaseException):
    global _warned_io
    _W.off = True
    try:
        _W.close()
    except Exception:
        pass
    if not _warned_io:
        _warned_io = True
        warnings.warn(f"frametrace: structured trace disabled, cannot write it: {exc}", RuntimeWarning,
                      stacklevel=4)


def _emit(directory: str, record: dict, payload_text: str | None, where: tuple[str, int]):
    """Write one record (caller holds the lock)."""
    f = _W.ensure_open(directory)
    line = _prefix(*where) + _dumps(record)
    if payload_text is not None:
        line += "".join("\n\t" + part for part in payload_text.split("\n"))
    f.write(line + "\n")
    f.flush()


def _intern(directory: str, filename: str, where) -> int:
    """Integer id of `filename` in the current file, writing its `{"str": ...}` record the first time."""
    _W.ensure_open(directory)
    idx = _W.interned.get(filename)
    if idx is None:
        idx = len(_W.interned)
        _emit(directory, {"str": [filename, idx]}, None, where)
        _W.interned[filename] = idx
    return idx


def _frame_dict(directory, frame, where) -> dict:
    """One tlparse FrameSummary from a (filename, lineno, name, line) tuple, FrameSummary or dict."""
    if isinstance(frame, dict):
        out = dict(frame)
        filename = out.get("filename")
        if not isinstance(filename, int):
            out["filename"] = _intern(directory, str(filename), where)
        out["line"] = int(out.get("line") or 0)
        out["name"] = str(out.get("name", "?"))
        return out
    if isinstance(frame, (tuple, list)):
        filename, lineno, name, *rest = list(frame) + [None] * (4 - len(frame))
        loc = rest[0] if rest else None
    else:                                       # traceback.FrameSummary and friends
        filename, lineno, name = frame.filename, frame.lineno, frame.name
        loc = getattr(frame, "line", None)
    out = {"line": int(lineno or 0), "name": str(name), "filename": _intern(directory, str(filename), where)}
    if loc:
        out["loc"] = str(loc).strip()
    return out


def _frames(directory, frames, where) -> list:
    return [_frame_dict(directory, fr, where) for fr in (frames or ())]


def user_stack(frames) -> list:
    """Interned stack frames for a `stack`/`user_stack` field (writes `str` records as needed).

    `frames`: (filename, lineno, funcname, source_line) tuples, innermost last (like
    traceback.extract_stack()); FrameSummary objects work too. [] when the trace is off.
    """
    try:
        with _W.lock:
            directory = _W.target_dir()
            if directory is None:
                return []
            return _frames(directory, frames, _caller())
    except OSError as exc:
        with _W.lock:
            _io_failed(exc)
    except Exception as exc:                    # never raise into user code
        warnings.warn(f"frametrace: bad stack for the structured trace: {exc!r}", RuntimeWarning,
                      stacklevel=2)
    return []


def trace_structured(name: str, metadata: dict | None = None, payload=None, compile_id=None) -> None:
    """Write one `{name: metadata, <compile id>, has_payload?}` record and its payload lines.

    `payload`: str as is; list -> "[\\n" + one JSON item a line + "\\n]"; dict -> indent=0 JSON.
    `compile_id`: (frame_id, frame_compile_id, attempt) or None for records outside a compile.
    String `filename`s in `stack`/`user_stack` frames of the metadata are interned here.
    """
    if not enabled():
        return
    try:
        where = _caller()
        if name in _RESERVED:
            raise ValueError(f"{name!r} is a reserved envelope key")
        with _W.lock:
            directory = _W.target_dir()
            if directory is None:
                return
            meta = dict(metadata or {})
            for key in ("stack", "user_stack"):
                if isinstance(meta.get(key), (list, tuple)):
                    meta[key] = _frames(directory, meta[key], where)
            record = {name: meta}
            record.update(_compile_id_fields(compile_id))
            text = None
            if payload is not None:
                text = format_payload(payload)
                record["has_payload"] = payload_md5(text)
            _emit(directory, record, text, where)
    except OSError as exc:
        with _W.lock:
            _io_failed(exc)
    except Exception as exc:                    # a bad record is dropped, the trace goes on
        warnings.warn(f"frametrace: dropped structured trace record {name!r}: {exc!r}", RuntimeWarning,
                      stacklevel=2)


# ---------------------------------------------------------------------------------------------
# the records of one compile, in the order the compiler writes them

def dynamo_start(compile_id, stack_frames) -> None:
    """Start of a compile: the user stack that reached the frame (outermost first), for the stack trie."""
    trace_structured("dynamo_start", {"stack": list(stack_frames or ())}, compile_id=compile_id)


def output_graph(compile_id, graph_text: str) -> None:
    """The printed graph of the compile (`dynamo_output_graph_N.txt`)."""
    trace_structured("dynamo_output_graph", {}, payload=str(graph_text), compile_id=compile_id)


def guards(compile_id, guard_list) -> None:
    """Guards of the compiled entry: [{"code": str, "user_stack"?: frames}, ...] or plain strings."""
    items = []
    for g in guard_list or ():
        if isinstance(g, str):
            items.append({"code": g})
            continue
        item = {"code": str(g.get("code", ""))}
        for key in ("stack", "user_stack"):
            if g.get(key):
                item[key] = user_stack(g[key])      # already-interned frames pass through
        items.append(item)
    trace_structured("dynamo_guards", {}, payload=items, compile_id=compile_id)


def artifact(compile_id, name: str, content, encoding: str = "string") -> None:
    """A named text (`encoding="string"`) or JSON (`"json"`) file: recompile_reasons,
    graph_break_reason, frametrace_llvm_ir, frametrace_wrapper_code, put_local_code_state, ..."""
    if encoding not in ("string", "json"):
        encoding = "string"                     # tlparse rejects other encodings
    if encoding == "string" and not isinstance(content, (str, bytes)):
        content = str(content)
    trace_structured("artifact", {"name": str(name), "encoding": encoding}, payload=content,
                     compile_id=compile_id)


def guard_added_fast(compile_id, expr, user_stack=None) -> None:
    """A guard ShapeEnv added (`Eq(s0, 33)`), with the user frames that asked (innermost last)."""
    meta = {"expr": str(expr)}
    if user_stack:
        meta["user_stack"] = list(user_stack)
    trace_structured("guard_added_fast", meta, compile_id=compile_id)


def specialization(compile_id, symbol, sources, value, reason=None, user_stack=None) -> None:
    """A symbol fixed to a value (`s0 = 33` for L['x'].shape[0]); shown on the compile's metrics page."""
    if isinstance(sources, str):
        sources = [sources]
    meta = {"symbol": str(symbol), "sources": [str(s) for s in (sources or ())], "value": str(value)}
    if reason is not None:
        meta["reason"] = str(reason)
    if user_stack:
        meta["user_stack"] = list(user_stack)
    trace_structured("symbolic_shape_specialization", meta, compile_id=compile_id)


# field -> type tlparse deserialises it as (CompilationMetricsMetadata); a wrong type loses the line
_METRIC_TYPES = {
    "co_name": str, "co_filename": str, "co_firstlineno": int,
    "cache_size": int, "accumulated_cache_size": int, "guard_count": int, "shape_env_guard_count": int,
    "graph_op_count": int, "graph_node_count": int, "graph_input_count": int,
    "start_time": float, "entire_frame_compile_time_s": float, "backend_compile_time_s": float,
    "inductor_compile_time_s": float, "code_gen_time_s": float, "dynamo_time_before_restart_s": float,
    "fail_type": str, "fail_reason": str, "fail_user_frame_filename": str, "fail_user_frame_lineno": int,
    "non_compliant_ops": list, "compliant_custom_ops": list, "restart_reasons": list,
}
_UNSIGNED = {"cache_size", "accumulated_cache_size", "guard_count", "shape_env_guard_count",
             "graph_op_count", "graph_node_count", "graph_input_count", "fail_user_frame_lineno"}


def _coerce(key, value):
    kind = _METRIC_TYPES.get(key)
    if kind is None or value is None:
        return value
    if kind is list:
        values = [value] if isinstance(value, str) else list(value)
        return [str(v) for v in values]
    value = kind(value)
    if key in _UNSIGNED and value < 0:
        value = 0
    return value


def compilation_metrics(compile_id, **fields) -> None:
    """End of a compile: counts and times (`compilation_metrics_N.html`, status colour).

    `restart_reasons` defaults to [] (missing means "break" to tlparse). `fail_type` and
    `fail_reason` are written both or neither (tlparse aborts on a type without a reason).
    """
    meta = {}
    for key, value in fields.items():
        if value is None:
            continue
        try:
            meta[key] = _coerce(key, value)
        except (TypeError, ValueError):
            continue                            # a field tlparse cannot read is left out
    meta.setdefault("restart_reasons", [])
    if "fail_type" in meta and not meta.get("fail_reason"):
        meta["fail_reason"] = meta["fail_type"]
    elif "fail_reason" in meta and not meta.get("fail_type"):
        meta["fail_type"] = "CompileError"
    trace_structured("compilation_metrics", meta, compile_id=compile_id)
