"""The compile report: `ft.report()`, `python -m frametrace --report`, `%%frametrace`.

    r = ft.report()        # since the last ft.reset()
    print(r)               # text; r.as_dict() for notebooks and tools

Time split (compiling / compiled code / eager Python) is there when a recording ran:
`python -m frametrace --report`, the cell magic, or `with ft.recording(): ...`.
"""
from __future__ import annotations

import contextlib
import os
from collections import Counter

from . import records
from .sampler import Sampler

TOP = 5

_last: list = [None]         # the newest recording's Sampler (running or stopped)


@contextlib.contextmanager
def recording():
    """Sample where this thread spends its time inside the block, for ft.report()."""
    sampler = Sampler().start()
    _last[0] = sampler
    try:
        yield sampler
    finally:
        sampler.stop()


def forget():
    """ft.reset(): the records go, and the last recording unless it still runs."""
    records.clear()
    if _last[0] is not None and _last[0].stopped is not None:
        _last[0] = None


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:           # another drive
        return path
    return rel if not rel.startswith("..") else path


def _where(location: str) -> str:
    """`/abs/dir/f.py:12 in f` -> `f.py:12 in f` relative to the working directory."""
    path, sep, rest = location.partition(":")
    return _short(path) + sep + rest if sep else location


def _frames(recs) -> list:
    by_frame: dict = {}
    for r in recs:
        key = (r.filename, r.lineno, r.name)
        f = by_frame.setdefault(key, {"function": r.name, "where": f"{_short(r.filename)}:{r.lineno}",
                                      "compiles": 0, "graphs": 0, "graph_breaks": 0, "recompiles": 0,
                                      "eager": False, "compile_s": 0.0})
        f["compiles"] += 1
        f["graphs"] += r.graph_nodes > 0
        f["graph_breaks"] += r.graph_break is not None or r.failure is not None
        f["recompiles"] += r.recompile is not None
        f["eager"] |= r.failure is not None
        f["compile_s"] += r.seconds
    return sorted(by_frame.values(), key=lambda f: (-f["compile_s"], f["where"]))


def _breaks(recs) -> list:
    count: Counter = Counter()
    first: dict = {}
    for r in recs:
        p = r.graph_break or r.failure
        if p is None:
            continue
        key = (p.location, p.explanation)
        count[key] += 1
        first.setdefault(key, (p, r.failure is not None))
    out = []
    for key, n in count.most_common(TOP):
        p, eager = first[key]
        out.append({"count": n, "where": _where(p.location), "source_line": p.source_line,
                    "reason": p.explanation, "hints": list(p.hints), "frame_runs_eagerly": eager})
    return out


def _recompiles(recs) -> list:
    count: Counter = Counter()
    first: dict = {}
    for r in recs:
        rc = r.recompile
        if rc is None:
            continue
        key = (r.name, r.where, rc.guard)
        count[key] += 1
        first.setdefault(key, rc)
    out = []
    for (name, where, guard), n in count.most_common(TOP):
        rc = first[(name, where, guard)]
        out.append({"count": n, "function": name, "failed_guard": guard, "where": _where(rc.location),
                    "source_line": rc.source_line, "hint": rc.advice})
    return out


def _compile(r) -> dict:
    return {"function": r.name, "compile_id": r.compile_id, "where": f"{_short(r.filename)}:{r.lineno}",
            "graph_nodes": r.graph_nodes, "compile_s": r.seconds, "backend_s": r.backend_seconds}


def build(since: int = 0, hits_since: int = 0, sampler=None) -> dict:
    """The report as plain data (see Report): the compiles from record `since` on (a cell's), the
    calls served compiled beyond `hits_since`, the time split of `sampler` (default: the last
    recording's)."""
    from .. import stats
    recs = records.snapshot()[since:]
    s = stats()
    sampler = sampler if sampler is not None else _last[0]
    return {
        "time": sampler.split() if sampler is not None else None,
        "totals": {"frames": len({(r.filename, r.lineno, r.name) for r in recs}), "compiles": len(recs),
                   "graphs": sum(r.graph_nodes > 0 for r in recs),
                   "graph_breaks": sum(r.graph_break is not None or r.failure is not None for r in recs),
                   "recompiles": sum(r.recompile is not None for r in recs),
                   "frames_run_eagerly": sum(r.failure is not None for r in recs),
                   "calls_served_compiled": s.cache_hits - hits_since,
                   "compile_s": sum(r.seconds for r in recs)},
        "frames": _frames(recs),
        "graph_breaks": _breaks(recs),
        "recompiles": _recompiles(recs),
        "largest_graphs": [_compile(r) for r in sorted(recs, key=lambda r: -r.graph_nodes)[:TOP] if r.graph_nodes],
        "slowest_compiles": [_compile(r) for r in sorted(recs, key=lambda r: -r.seconds)[:TOP]],
    }


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole > 0 else "-"


def render(data: dict) -> str:
    """The report as text (what --report prints on stderr)."""
    lines = ["frametrace report"]
    t = data["time"]
    if t is not None:
        w = t["wall_s"]
        lines.append(f"  time: {w:.2f} s = compiling {t['compiling_s']:.2f} s ({_pct(t['compiling_s'], w)}) + "
                     f"running compiled code {t['compiled_s']:.2f} s ({_pct(t['compiled_s'], w)}) + "
                     f"eager Python {t['eager_s']:.2f} s ({_pct(t['eager_s'], w)})  [{t['samples']} samples]")
    tot = data["totals"]
    lines.append(f"  {tot['frames']} frames, {tot['compiles']} compiles ({tot['compile_s']:.2f} s): "
                 f"{tot['graphs']} graphs, {tot['graph_breaks']} with a graph break, {tot['recompiles']} recompiles, "
                 f"{tot['frames_run_eagerly']} frames left eager; {tot['calls_served_compiled']} calls served compiled")
    if t is None:
        lines.append("  (the time split needs a recording: python -m frametrace --report, %%frametrace, "
                     "or `with ft.recording():`)")
    if data["frames"]:
        lines += ["", "  frames compiled (slowest to compile first):",
                  f"    {'function':<28} {'where':<32} {'graphs':>6} {'breaks':>6} {'recompiles':>10} {'compile':>8}"]
        for f in data["frames"][:15]:
            eager = "  runs eagerly" if f["eager"] and not f["graphs"] else ""
            lines.append(f"    {f['function'][:28]:<28} {f['where'][-32:]:<32} {f['graphs']:>6} {f['graph_breaks']:>6} "
                         f"{f['recompiles']:>10} {f['compile_s']:>7.2f}s{eager}")
        if len(data["frames"]) > 15:
            lines.append(f"    ... and {len(data['frames']) - 15} more")
    if data["graph_breaks"]:
        lines += ["", "  top graph breaks:"]
        for b in data["graph_breaks"]:
            what = " (the frame runs eagerly)" if b["frame_runs_eagerly"] else ""
            lines.append(f"    {b['count']}x {b['where']}{what}")
            if b["source_line"]:
                lines.append(f"        {b['source_line']}")
            lines.append(f"        {b['reason']}")
            lines += [f"        hint: {h}" for h in b["hints"]]
    if data["recompiles"]:
        lines += ["", "  top recompile reasons:"]
        for r in data["recompiles"]:
            lines.append(f"    {r['count']}x {r['function']}: {r['failed_guard']}   (guard from {r['where']})")
            if r["source_line"]:
                lines.append(f"        {r['source_line']}")
            if r["hint"]:
                lines.append(f"        hint: {r['hint']}")
    if data["largest_graphs"]:
        lines += ["", "  largest graphs:"]
        lines += [f"    {g['graph_nodes']:>5} nodes  {g['function']} [{g['compile_id']}] {g['where']}"
                  for g in data["largest_graphs"]]
    if data["slowest_compiles"]:
        lines += ["", "  slowest compiles:"]
        lines += [f"    {g['compile_s']:>6.2f} s  {g['function']} [{g['compile_id']}] {g['where']} "
                  f"({g['graph_nodes']} nodes, backend {g['backend_s']:.2f} s)" for g in data["slowest_compiles"]]
    return "\n".join(lines)


class Report:
    """What ft.report() returns: `str(r)` / `print(r)` is the text, `r.as_dict()` the data."""

    def __init__(self, data: dict):
        self._data = data

    def as_dict(self) -> dict:
        return self._data

    def __getitem__(self, key):
        return self._data[key]

    def __str__(self):
        return render(self._data)

    __repr__ = __str__

    def _repr_pretty_(self, p, cycle):      # IPython
        p.text(str(self))


def report() -> Report:
    """The compile report since the last ft.reset(): time compiling vs running compiled code vs
    eager Python (when a recording ran), the frames compiled with their graphs, graph breaks and
    recompiles, the top graph-break and recompile reasons with the user line and a hint, the
    largest graphs and the slowest compiles."""
    return Report(build())
