"""Compiler collectives under `mpiexec -n 2` and `-n 4` on this machine."""
import json
import os
import subprocess
import sys

import pytest
from distributed_helpers import PROGS

# 2 and 4 ranks wait at most 1.5-2 s for each other at a compile: they run alone, not beside another
# pytest-xdist worker that compiles (tests/conftest.py)
pytestmark = pytest.mark.serial


def _line_of(name: str) -> int:
    text = (PROGS / "mpi_diverge.py").read_text().splitlines()
    return next(i for i, line in enumerate(text, 1) if line.startswith(f"def {name}("))


def _mpirun(mpiexec, n, tmp_path, *args, timeout_s=2.0) -> list:
    """Run a program of progs/ on `n` ranks; the per-rank JSON reports, rank order."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRAMETRACE_")}
    env.update(FRAMETRACE_PGO="0", FRAMETRACE_COLLECTIVES_TIMEOUT_S=str(timeout_s), FT_OUT_DIR=str(tmp_path),
               FRAMETRACE_CACHE_DIR=str(tmp_path / "cache"))         # not ~/.cache, shared by test processes
    proc = subprocess.run([mpiexec, "-n", str(n), sys.executable, *map(str, args)], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reports = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(n)]
    for rep in reports:
        assert "error" not in rep, rep["error"]
    return reports


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_make_ranks_compile_dynamic_once(mpiexec, tmp_path, n):
    reports = _mpirun(mpiexec, n, tmp_path, PROGS / "mpi_sizes.py")
    for rep in reports:
        assert rep["size"] == n
        without, with_ = rep["without"], rep["with"]
        assert with_["exchanges"], "no exchange: convert_frame does not call frametrace.distributed.exchange"
        assert without["ok"] and with_["ok"]
        # f: sizes differ across ranks -> static + recompile alone, one dynamic graph together;
        # g: sizes equal across ranks -> static, then one recompile, either way
        assert (without["unique_graphs"], without["recompiles"], without["exchanges"]) == (4, 2, 0)
        assert (with_["unique_graphs"], with_["recompiles"]) == (3, 1)
        assert with_["exchanges"] == 3 and with_["made_dynamic"] >= 1
    assert len({json.dumps(rep["with"], sort_keys=True) for rep in reports}) == 1    # same on every rank


def test_rank_missing_from_a_compile_times_out_naming_rank_0(mpiexec, tmp_path):
    """2 ranks: only rank 1 compiles `extra` (as after a graph break on one rank)."""
    reports = _mpirun(mpiexec, 2, tmp_path, PROGS / "mpi_diverge.py", "missing", "1", timeout_s=1.5)
    assert [rep["common"]["error"] for rep in reports] == [None, None]
    assert reports[0]["extra"] is None
    err = reports[1]["extra"]
    assert err["error"] == "CollectiveTimeoutError" and err["ranks"] == [0]
    where = f"mpi_diverge.py:{_line_of('extra')} extra"                  # file:line name of the frame
    assert err["frame"].endswith(where) and where in err["message"]
    assert "rank 0" in err["message"] and "collectives_timeout_s" in err["message"]
    assert 1.4 < err["seconds"] < 10


def test_ranks_missing_from_a_compile_are_named(mpiexec, tmp_path):
    """4 ranks: ranks 0 and 1 compile `extra`, ranks 2 and 3 do not."""
    reports = _mpirun(mpiexec, 4, tmp_path, PROGS / "mpi_diverge.py", "missing", "0,1", timeout_s=1.5)
    assert [rep["common"]["error"] for rep in reports] == [None] * 4
    for rep in reports[:2]:
        err = rep["extra"]
        assert err["error"] == "CollectiveTimeoutError" and err["ranks"] == [2, 3]
        assert "ranks 2, 3 of 4 did not answer" in err["message"] and "extra" in err["frame"]
        assert err["seconds"] < 10
    assert reports[2]["extra"] is None and reports[3]["extra"] is None


def test_ranks_compiling_different_frames_fail_fast(mpiexec, tmp_path):
    reports = _mpirun(mpiexec, 4, tmp_path, PROGS / "mpi_diverge.py", "mismatch", timeout_s=20)
    for rank, rep in enumerate(reports):
        err = rep["extra"]
        assert err["error"] == "CollectiveMismatchError", err
        assert f"mpi_diverge.py:{_line_of('left')} left on ranks 0, 2" in err["message"]
        assert f"mpi_diverge.py:{_line_of('right')} right on ranks 1, 3" in err["message"]
        assert err["ranks"] == ([1, 3] if rank % 2 == 0 else [0, 2])
        assert err["seconds"] < 10                                  # no waiting for the timeout
