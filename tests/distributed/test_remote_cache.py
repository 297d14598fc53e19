"""The Redis remote cache against a real redis-server on loopback: trust, failures, concurrency."""
import json
import logging
import subprocess
import sys
import time

import numpy as np
import pytest

import frametrace as ft
from frametrace import pgo, remote_cache
from frametrace.dynamic_policy import FrameState
from frametrace.remote_cache.entry import seal

from distributed_helpers import CACHE_KEY, PROGS, run_worker, worker_env

REDIS_KEY = remote_cache.KEY_PREFIX + "kernel:abc"


def test_round_trip_and_miss(redis_server, use_remote):
    use_remote(redis_server.url)
    assert remote_cache.enabled()
    assert remote_cache.get("kernel", "abc") is None
    remote_cache.put("kernel", "abc", b"\x7fELF object")
    assert remote_cache.get("kernel", "abc") == b"\x7fELF object"
    assert redis_server.client().get(REDIS_KEY) != b"\x7fELF object"      # stored signed, not raw
    s = remote_cache.stats()
    assert (s["hits"], s["misses"], s["puts"], s["errors"]) == (1, 1, 1, 0)


def test_no_key_means_off_with_one_warning(redis_server, use_remote, caplog):
    use_remote(redis_server.url, key=None)
    with caplog.at_level(logging.WARNING, "frametrace.remote_cache"):
        remote_cache.put("kernel", "abc", b"data")
        assert remote_cache.get("kernel", "abc") is None
        assert not remote_cache.enabled()
    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "FRAMETRACE_CACHE_KEY is not" in caplog.records[0].message
    assert redis_server.client().keys("*") == []


def test_unknown_namespace_is_a_programming_error(redis_server, use_remote):
    use_remote(redis_server.url)
    with pytest.raises(ValueError, match="namespace"):
        remote_cache.put("pickles", "abc", b"")


def _tampered(blob: bytes):
    """(what, stored bytes) for each way an entry can be wrong."""
    flipped = bytearray(blob)
    flipped[len(flipped) // 2] ^= 0xFF
    return [("flipped byte", bytes(flipped)),
            ("wrong key", seal(b"not the key", "kernel", "abc", b"payload")),
            ("truncated", blob[:-3]),
            ("wrong version", seal(CACHE_KEY.encode(), "kernel", "abc", b"payload", version=99)),
            ("unsigned", b"payload"),
            ("other entry", seal(CACHE_KEY.encode(), "kernel", "xyz", b"payload"))]


def test_tampered_entries_are_rejected_and_logged(redis_server, use_remote, caplog):
    use_remote(redis_server.url)
    remote_cache.put("kernel", "abc", b"payload")
    good = redis_server.client().get(REDIS_KEY)
    for what, stored in _tampered(good):
        redis_server.client().set(REDIS_KEY, stored)
        caplog.clear()
        with caplog.at_level(logging.WARNING, "frametrace.remote_cache"):
            assert remote_cache.get("kernel", "abc") is None, what
        assert any("rejected entry kernel:abc" in r.message for r in caplog.records), what
    assert remote_cache.stats()["rejected"] == 6
    redis_server.client().set(REDIS_KEY, good)
    assert remote_cache.get("kernel", "abc") == b"payload"


def test_tampered_pgo_profile_is_not_used(redis_server, use_remote, tmp_path):
    """A profile is data, but a forged one could still force recompiles: it is signed too."""
    use_remote(redis_server.url)

    def f(x):
        return x * 2

    state = FrameState()
    state.observe_array("L['x']", (10,))
    state.observe_array("L['x']", (20,))
    with ft.config.patch(pgo=True):
        pgo.save(f, state)
        key = remote_cache.KEY_PREFIX + "pgo:" + pgo._remote_key(f)
        stored = redis_server.client().get(key)
        redis_server.client().set(key, stored.replace(b"size=[?]", b"size=[7]"))
        with ft.config.patch(cache_dir=str(tmp_path / "fresh")):
            assert pgo.load(f) is None
        redis_server.client().set(key, stored)
        with ft.config.patch(cache_dir=str(tmp_path / "fresh2")):
            assert pgo.load(f).sizes == {"L['x']": (None,)}


def _sweep(fn, sizes):
    cf = ft.compile(fn)
    for n in sizes:
        x = np.linspace(0, 1, n)
        np.testing.assert_allclose(cf(x), fn(x))


def _g(x):
    return np.cos(x) + x.shape[0]


def _h(x):
    return np.sqrt(x) * 3.0


def test_redis_killed_between_two_compiles(redis_server, use_remote, tmp_path, caplog):
    use_remote(redis_server.url, remote_cache_backoff_s=60.0)
    local = tmp_path / "cache"                       # conftest's cache_dir
    with ft.config.patch(pgo=True), caplog.at_level(logging.WARNING, "frametrace.remote_cache"):
        _sweep(_g, (10, 20, 30))                     # compiles, saves PGO local + remote
        assert remote_cache.stats()["puts"] >= 1
        kernels = set((local / "llvm").glob("*.o"))
        redis_server.kill()
        start = time.perf_counter()
        _sweep(_h, (10, 20, 30))                     # PGO load/save and kernel get/put meet a dead server
        _sweep(_g, (40,))
        took = time.perf_counter() - start
    s = remote_cache.stats()
    assert s["errors"] == 1 and s["skipped"] >= 1, s      # one failure, then the backoff skips it
    assert took < 3.0, took
    assert [r.message for r in caplog.records if "unavailable" in r.message][0].endswith("for 60s")
    # the local cache goes on: _h's kernels and profile were written there
    assert set((local / "llvm").glob("*.o")) - kernels
    assert [p for p in (local / "pgo").glob("*._h.*.txt")]


def test_hung_redis_costs_one_timeout(redis_server, use_remote):
    use_remote(redis_server.url, remote_cache_timeout_s=0.2, remote_cache_backoff_s=60.0)
    remote_cache.put("kernel", "abc", b"x")          # connection made while the server is alive
    redis_server.pause()
    start = time.perf_counter()
    assert remote_cache.get("kernel", "abc") is None
    for _ in range(20):
        remote_cache.put("kernel", "abc", b"y")
        assert remote_cache.get("kernel", "abc") is None
    took = time.perf_counter() - start
    assert 0.15 < took < 1.0, took
    assert remote_cache.stats()["errors"] == 1


def test_backoff_ends(redis_server, use_remote):
    use_remote(redis_server.url, remote_cache_timeout_s=0.2, remote_cache_backoff_s=0.3)
    redis_server.pause()
    assert remote_cache.get("kernel", "abc") is None
    redis_server.resume()
    time.sleep(0.35)
    remote_cache.put("kernel", "abc", b"back")
    assert remote_cache.get("kernel", "abc") == b"back"


def test_full_redis_stops_writes_but_still_serves_reads(redis_server, use_remote, caplog):
    use_remote(redis_server.url, remote_cache_backoff_s=60.0)
    remote_cache.put("kernel", "abc", b"old")
    client = redis_server.client()
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "1")             # every write is now refused with OOM
    with caplog.at_level(logging.WARNING, "frametrace.remote_cache"):
        remote_cache.put("kernel", "new", b"new")
    assert any("refused a write" in r.message for r in caplog.records)
    remote_cache.put("kernel", "newer", b"newer")   # skipped: no second round trip
    assert remote_cache.stats()["skipped"] == 1
    assert remote_cache.get("kernel", "abc") == b"old"


def test_eight_processes_write_one_key_at_once(redis_server, tmp_path):
    """Concurrent SETs of 256 KiB entries: every read is one writer's whole, valid entry."""
    procs = [subprocess.Popen([sys.executable, str(PROGS / "cache_worker.py"), "hammer", "abc", str(i), "20",
                               str(tmp_path)], env=worker_env(tmp_path / f"w{i}", redis_server.url),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(8)]
    try:
        deadline = time.monotonic() + 90
        while len(list(tmp_path.glob("ready-*"))) < 8 and time.monotonic() < deadline:
            time.sleep(0.01)
        (tmp_path / "go").touch()
        outs = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=120)
            assert p.returncode == 0, stderr
            outs.append(json.loads(stdout.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert all(o["bad"] == 0 for o in outs), outs
    assert all(o["remote"]["rejected"] == 0 and o["remote"]["errors"] == 0 for o in outs), outs
    assert sum(o["remote"]["puts"] for o in outs) == 8 * 20
    assert max(o["writers_seen"] for o in outs) > 1            # the writes did interleave


def test_processes_merge_one_pgo_profile(redis_server, tmp_path):
    """Four processes learn the same function's profile at once; the remote one stays valid."""
    procs = [subprocess.Popen([sys.executable, str(PROGS / "cache_worker.py"), "compile", f"{8 + i},{20 + i}",
                               "numpy"], env=worker_env(tmp_path / f"w{i}", redis_server.url),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    for p in procs:
        _, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr
        assert "rejected" not in stderr
    out = run_worker("compile", "33,44", "numpy", env=worker_env(tmp_path / "late", redis_server.url))
    assert out["ok"] and out["remote"]["hits"] >= 1 and out["remote"]["rejected"] == 0
    assert (out["frames_compiled"], out["recompiles"]) == (1, 0)       # dynamic from the start
