"""PGO profiles: round trip, merge lattice, exact text, cross-process merging under a lock,
untrusted files ignored with one warning and repaired, nothing written when PGO is off."""
from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

from frametrace import config, pgo
from frametrace import structured_trace as st
from frametrace.dynamic_policy import VARYING, FrameState

REPO = Path(__file__).resolve().parents[2]
CODE = ("/abs/path/script.py", 2, "f")          # code_key accepts (filename, firstlineno, name)


@pytest.fixture
def cache(tmp_path):
    d = tmp_path / "cache"
    with config.patch(cache_dir=str(d), pgo=True):
        yield d


def _state(sizes=None, ints=None) -> FrameState:
    s = FrameState()
    s.sizes.update(sizes or {})
    s.ints.update(ints or {})
    return s


@contextlib.contextmanager
def _no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_code_key_and_path(cache):
    def f(x):
        return x
    assert pgo.code_key(f) == f"{os.path.abspath(__file__)}:{f.__code__.co_firstlineno}:f"
    assert pgo.code_key(f.__code__) == pgo.code_key(f)
    assert pgo.code_key(CODE) == "/abs/path/script.py:2:f"
    same_name = ("/other/script.py", 2, "f")
    assert pgo.profile_path(CODE) != pgo.profile_path(same_name)      # path hash keeps them apart
    assert Path(pgo.profile_path(CODE)).parent == cache / "pgo"


def test_render_exact():
    s = _state({"L['x']": (None,)}, {"L['n']": None})
    s.observe_strides("L['x']", (8,))
    assert pgo.render(CODE, s) == ("/abs/path/script.py:2:f:\n"
                                   "  L['x']: array size=[?] stride=[8]\n"
                                   "  L['n']: scalar ?")
    s = _state({"L['a']": (None, 3), "L['b']": VARYING, "L['c']": ()}, {"L['k']": 2})
    assert pgo.render(CODE, s) == textwrap.dedent("""\
        /abs/path/script.py:2:f:
          L['a']: array size=[?, 3]
          L['b']: array size=?
          L['c']: array size=[]
          L['k']: scalar 2""")


def test_advice():
    assert pgo.recompile_advice(CODE, _state({"L['x']": (10,)}, {"L['n']": 3})) is None
    advice = pgo.recompile_advice(CODE, _state({"L['x']": (None, 3), "L['y']": (4,)}, {"L['n']": None}))
    assert advice.endswith('FRAMETRACE_DYNAMIC_SOURCES="L[\'x\'],L[\'n\']"')


def test_round_trip_and_merge(cache):
    assert pgo.load(CODE) is None
    first = FrameState()
    first.observe_array("L['x']", (10, 3))
    first.observe_array("L['z']", (5,))
    first.observe_int("L['n']", 7)
    pgo.save(CODE, first)
    loaded = pgo.load(CODE)
    assert loaded.sizes == {"L['x']": (10, 3), "L['z']": (5,)}
    assert (loaded.ints, loaded.changed) == ({"L['n']": 7}, False)

    second = _state({"L['x']": (20, 3), "L['z']": (5, 5), "L['w']": (1,)}, {"L['n']": 7, "L['m']": 1})
    pgo.save(CODE, second)
    merged = pgo.load(CODE)
    assert merged.sizes == {"L['x']": (None, 3), "L['z']": VARYING, "L['w']": (1,)}
    assert merged.ints == {"L['n']": 7, "L['m']": 1}
    pgo.save(CODE, _state(ints={"L['n']": 8}))
    assert pgo.load(CODE).ints == {"L['n']": None, "L['m']": 1}

    text = Path(pgo.profile_path(CODE)).read_text()
    assert text.startswith("# frametrace pgo v1 sha256=")
    assert "\n/abs/path/script.py:2:f:\n  L['x']: array size=[?, 3]\n" in text


def test_loaded_state_drives_automatic_dynamic(cache):
    pgo.save(CODE, _state({"L['x']": (None,)}))
    state = pgo.load(CODE)
    assert state.observe_array("L['x']", (10,)) == (None,)   # first compile of a new process: dynamic


def test_private_dir_and_atomic_files(cache):
    pgo.save(CODE, _state({"L['x']": (3,)}))
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(cache / "pgo").st_mode) == 0o700
    names = sorted(p.name for p in (cache / "pgo").iterdir())
    assert len(names) == 2 and names[1] == names[0] + ".lock"     # no temp files left behind


def test_pgo_off_writes_nothing(tmp_path):
    with config.patch(cache_dir=str(tmp_path / "cache"), pgo=False):
        pgo.save(CODE, _state({"L['x']": (None,)}))
        assert not (tmp_path / "cache").exists()
        assert pgo.load(CODE) is None


@pytest.mark.parametrize("damage", ["garbage", "truncated", "edited", "foreign", "version", "binary"])
def test_untrusted_file_ignored_then_repaired(cache, damage):
    pgo.save(CODE, _state({"L['x']": (None,)}, {"L['n']": 4}))
    path = Path(pgo.profile_path(CODE))
    good = path.read_text()
    bad = {
        "garbage": "import os; os.system('echo pwned')\n",
        "truncated": good[: len(good) - 9],
        "edited": good.replace("scalar 4", "scalar 5"),
        "foreign": good.replace("/abs/path/script.py:2:f:", "/abs/path/other.py:2:f:"),
        "version": good.replace("pgo v1", "pgo v99"),
        "binary": None,
    }[damage]
    if bad is None:
        path.write_bytes(b"\x80\x04\x95pickle\xff")
    else:
        path.write_text(bad)
    if damage == "foreign":   # valid checksum, wrong owner
        body = bad.partition("\n")[2]
        path.write_text(f"# frametrace pgo v1 sha256={hashlib.sha256(body.encode()).hexdigest()}\n{body}")

    with pytest.warns(RuntimeWarning, match="ignoring profile"):
        assert pgo.load(CODE) is None
    with _no_warnings():
        assert pgo.load(CODE) is None                   # warned once only
    pgo.save(CODE, _state({"L['y']": (2,)}))             # repairs: old contents are gone
    with _no_warnings():
        repaired = pgo.load(CODE)
    assert (repaired.sizes, repaired.ints) == ({"L['y']": (2,)}, {})


def test_unwritable_cache_warns_not_raises(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with config.patch(cache_dir=str(blocker / "cache"), pgo=True):
        with pytest.warns(RuntimeWarning, match="cannot save"):
            pgo.save(CODE, _state({"L['x']": (None,)}))
        with pytest.warns(RuntimeWarning, match="cannot read"):
            assert pgo.load(CODE) is None


WORKER = """
import os, sys, time, warnings
warnings.simplefilter("error")            # a torn or corrupt read would warn: fail loudly
from frametrace import pgo
from frametrace.dynamic_policy import FrameState
tag, rounds, barrier = sys.argv[1], int(sys.argv[2]), sys.argv[3]
open(os.path.join(barrier, "ready_" + tag), "w").close()
while not os.path.exists(os.path.join(barrier, "go")):   # start together so the saves overlap
    time.sleep(0.001)
code = ("/abs/shared/model.py", 1, "f")
for i in range(rounds):
    s = FrameState()
    s.sizes["L['x']"] = (10 if tag == "a" else 20, 3)
    s.sizes[f"L['{tag}{i}']"] = (i,)                # a new key each round: a lost update shows
    s.ints["L['n']"] = 5
    s.ints[f"L['k_{tag}']"] = i
    pgo.save(code, s)
    assert pgo.load(code) is not None
"""


def test_concurrent_processes_merge(cache, tmp_path):
    rounds = 150
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = dict(os.environ, FRAMETRACE_CACHE_DIR=str(cache), FRAMETRACE_PGO="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, tag, str(rounds), str(barrier)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag in ("a", "b")]
    deadline = time.monotonic() + 120
    while not all((barrier / f"ready_{t}").exists() for t in "ab") and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.01)
    (barrier / "go").touch()
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    code = ("/abs/shared/model.py", 1, "f")
    state = pgo.load(code)
    assert state.sizes["L['x']"] == (None, 3)
    for tag in "ab":
        for i in range(rounds):
            assert state.sizes[f"L['{tag}{i}']"] == (i,)
    assert state.ints == {"L['n']": 5, "L['k_a']": None, "L['k_b']": None}


def test_trace_artifacts(cache, tmp_path):
    st.enable(tmp_path / "trace")
    try:
        pgo.save(CODE, _state({"L['x']": (None,)}), compile_id=(0, 1, 0))
        pgo.load(CODE, compile_id=(1, 0, 0))
        log = Path(st.trace_path()).read_text()
    finally:
        st.reset()
    assert '"name": "put_local_code_state"' in log and '"name": "get_local_code_state"' in log
    assert " frametrace/pgo.py:" in log
    assert "\t  L['x']: array size=[?]" in log and 'FRAMETRACE_DYNAMIC_SOURCES="L[\'x\']"' in log
