"""Run under `mpiexec -n N`: the same SPMD workload without, then with, compiler collectives.

Rank r sees sizes that differ across ranks (10 + r rows), so without collectives each rank
compiles static and then recompiles; with them every rank compiles dynamic once. `g` sees
equal sizes on all ranks, so it stays static at first either way. Writes
$FT_OUT_DIR/rank<r>.json per rank.
"""
import json
import os
import sys

import numpy as np
from mpi4py import MPI

import frametrace as ft
import frametrace.distributed as ftd

comm = MPI.COMM_WORLD
rank = comm.Get_rank()


def f(x, n):
    return (x * n).sum(axis=0) + x.shape[0]


def g(y):
    return np.sin(y) * y.shape[0]


def workload():
    cf, cg = ft.compile(f), ft.compile(g)
    ok = True
    for step in range(3):
        x = np.arange((10 + rank + step) * 3, dtype=np.float64).reshape(-1, 3)
        n = 2 + rank
        ok &= bool(np.allclose(cf(x, n), f(x, n)))
    for m in (8, 9, 9):                    # equal on every rank: static, then one recompile each
        y = np.linspace(0, 1, m)
        ok &= bool(np.allclose(cg(y), g(y)))
    return ok


def run(collectives: bool) -> dict:
    ft.reset()
    ftd.reset()
    with ft.config.patch(enable_compiler_collectives=collectives):
        ok = workload()
    s = ft.stats()
    return {"ok": ok, "unique_graphs": s.unique_graphs, "recompiles": s.recompiles,
            "frames_compiled": s.frames_compiled, "exchanges": ftd.stats()["exchanges"],
            "made_dynamic": ftd.stats()["made_dynamic"]}


def report(out: dict) -> None:
    with open(os.path.join(os.environ["FT_OUT_DIR"], f"rank{rank}.json"), "w") as f:
        json.dump(out, f)


if "enable_compiler_collectives" not in ft.config.as_dict():
    report({"rank": rank, "error": "ft.config has no enable_compiler_collectives: the distributed wiring "
            "(config settings + the exchange call in convert_frame) is not applied"})
    sys.exit(0)
out = {"rank": rank, "size": comm.Get_size(), "without": run(False), "with": run(True)}
comm.Barrier()
report(out)
