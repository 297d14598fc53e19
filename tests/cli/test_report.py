"""ft.report(): the frames compiled, the top graph-break and recompile reasons with the user line
and a hint, largest graphs, slowest compiles, the time split under ft.recording(); long compiles
on the `compile` log."""
import logging
import sys
import threading

import numpy as np
import pytest

import frametrace as ft
from frametrace.reporting import sampler


class Scaler:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return np.tanh(x) * self.k + x.shape[0]


def noisy(x):
    y = x * 2
    print("noisy", y.shape)               # a graph break
    return y + 1


def test_report_contents():
    model = ft.compile(Scaler(3.0), backend="numpy")
    brk = ft.compile(noisy, backend="numpy")
    for n in (8, 16, 24):
        x = np.linspace(0, 1, n)
        np.testing.assert_allclose(model(x), np.tanh(x) * 3.0 + n)
    np.testing.assert_array_equal(brk(np.ones(4)), np.ones(4) * 2 + 1)
    r = ft.report()
    d = r.as_dict()
    assert d["time"] is None
    tot = d["totals"]
    assert tot["compiles"] == len(d["frames"]) + 1 == 4      # Scaler twice, noisy, its resume function
    assert tot["recompiles"] == 1 and tot["graph_breaks"] == 1 and tot["calls_served_compiled"] >= 1
    frames = {f["function"]: f for f in d["frames"]}
    assert frames["__call__"]["graphs"] == 2 and frames["__call__"]["recompiles"] == 1
    assert frames["__call__"]["where"].endswith(f"test_report.py:{Scaler.__call__.__code__.co_firstlineno}")
    assert frames["noisy"]["graph_breaks"] == 1
    (b,) = d["graph_breaks"]
    assert b["source_line"] == 'print("noisy", y.shape)               # a graph break'
    assert b["where"].endswith(f"test_report.py:{noisy.__code__.co_firstlineno + 2} in noisy")
    assert "print" in b["reason"] and b["hints"] and not b["frame_runs_eagerly"]
    (rc,) = d["recompiles"]
    assert rc["function"] == "__call__" and rc["failed_guard"] == "L['x'].shape[0] == 8"
    assert "ft.mark_dynamic(x, 0)" in rc["hint"]
    assert d["largest_graphs"][0]["function"] == "__call__" and d["largest_graphs"][0]["graph_nodes"] >= 3
    assert len(d["slowest_compiles"]) == 4
    text = str(r)
    for piece in ("frames compiled", "top graph breaks:", 'print("noisy", y.shape)', "hint:",
                  "top recompile reasons:", "L['x'].shape[0] == 8", "largest graphs:", "slowest compiles:",
                  "the time split needs a recording"):
        assert piece in text, text
    ft.reset()
    assert ft.report()["totals"]["compiles"] == 0


def test_frame_left_eager_is_reported():
    def uses_object_arrays(x):
        return x + x

    f = ft.compile(uses_object_arrays)
    x = np.array([1, "a"], dtype=object)
    assert list(f(x)) == [2, "aa"]
    d = ft.report().as_dict()
    assert d["totals"]["frames_run_eagerly"] == 1
    assert d["graph_breaks"][0]["frame_runs_eagerly"]


def test_recording_time_split():
    f = ft.compile(lambda x: np.sqrt(x * x + 1.0), backend="numpy")
    with ft.recording():
        for n in (100, 200, 300):
            f(np.ones(n))
        sum(i * i for i in range(20000))          # eager Python
    t = ft.report()["time"]
    assert t["wall_s"] > 0 and t["compiling_s"] > 0
    assert abs(t["compiling_s"] + t["compiled_s"] + t["eager_s"] - t["wall_s"]) < 1e-6
    assert "samples]" in str(ft.report())


def test_sampler_classifies_frames():
    ident = threading.get_ident()
    assert sampler.classify(sys._getframe(), ident) == sampler.EAGER         # this test is user code
    # a thread waiting in the standard library (threading.py), called from generated compiled code:
    # the library frames count for their caller
    ns = {}
    exec(compile("def run(started, stop):\n    started.set()\n    stop.wait()\n", "<frametrace entry run>", "exec"), ns)
    started, stop = threading.Event(), threading.Event()
    t = threading.Thread(target=ns["run"], args=(started, stop))
    t.start()
    try:
        started.wait()
        frame = sys._current_frames()[t.ident]
        assert sampler.classify(frame, t.ident) == sampler.COMPILED
    finally:
        stop.set()
        t.join()


def test_long_compile_announced_while_it_runs(caplog, monkeypatch):
    """A compile past watch.ANNOUNCE_AFTER_S says so while it runs: the frame, its phase."""
    import time

    from frametrace import compile_times
    from frametrace.reporting import watch

    def slow(x):
        return x

    monkeypatch.setattr(watch, "ANNOUNCE_AFTER_S", 0.05)
    with caplog.at_level(logging.INFO, logger="frametrace.compile"):
        with watch.compiling(slow.__code__, "7/0"), compile_times.timing():
            watch.graph_size(12)
            with compile_times.phase("llvm"):
                deadline = time.monotonic() + 30
                while not any("still compiling" in r.getMessage() for r in caplog.records) \
                        and time.monotonic() < deadline:
                    time.sleep(0.01)
    (msg,) = [r.getMessage() for r in caplog.records if "still compiling" in r.getMessage()]
    assert msg.startswith(f"still compiling {compile_times.frame_name(slow.__code__)} [7/0]: in llvm, "
                          "graph of 12 nodes"), msg
    assert watch.total_seconds() > 0


def test_compile_channel_is_known():
    ft.set_logs(compile=True)
    ft.set_logs(compile=False)
    with pytest.raises(ValueError):
        ft.set_logs(compiles=True)
