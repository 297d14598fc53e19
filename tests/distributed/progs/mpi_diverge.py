"""Run under `mpiexec -n N`: ranks that stop compiling in step raise instead of hanging.

usage: mpi_diverge.py missing RANKS   -- only RANKS (comma list) compile an extra frame `extra`
       mpi_diverge.py mismatch        -- even ranks compile `left`, odd ranks compile `right`
Writes $FT_OUT_DIR/rank<r>.json per rank: the error class, its message, frame and ranks, and
the seconds spent in the failing call.
"""
import json
import os
import sys
import time

import numpy as np
from mpi4py import MPI

import frametrace as ft

comm = MPI.COMM_WORLD
rank = comm.Get_rank()


def common(x):
    return x * 2.0


def extra(x):
    return x + x.shape[0]


def left(x):
    return x - 1.0


def right(x):
    return x + 1.0


def call(fn, x):
    start = time.perf_counter()
    try:
        ft.compile(fn)(x)
    except ft.errors.FrametraceError as exc:
        return {"error": type(exc).__name__, "message": str(exc), "frame": getattr(exc, "frame", ""),
                "ranks": list(getattr(exc, "ranks", ())), "seconds": time.perf_counter() - start}
    return {"error": None, "seconds": time.perf_counter() - start}


mode = sys.argv[1]
out = {"rank": rank}
if "enable_compiler_collectives" not in ft.config.as_dict():
    out["error"] = ("ft.config has no enable_compiler_collectives: the distributed wiring (config settings + "
                    "the exchange call in convert_frame) is not applied")
    with open(os.path.join(os.environ["FT_OUT_DIR"], f"rank{rank}.json"), "w") as f:
        json.dump(out, f)
    sys.exit(0)
with ft.config.patch(enable_compiler_collectives=True):
    out["common"] = call(common, np.ones(10 + rank))        # in step: succeeds everywhere
    if mode == "missing":
        chosen = {int(r) for r in sys.argv[2].split(",")}
        out["extra"] = call(extra, np.ones(5)) if rank in chosen else None
    else:
        out["extra"] = call(left if rank % 2 == 0 else right, np.ones(5))
comm.Barrier()                  # the program's own collectives still work after the error
with open(os.path.join(os.environ["FT_OUT_DIR"], f"rank{rank}.json"), "w") as f:
    json.dump(out, f)
