"""A process of a multi-process job, for the remote cache tests. Prints one JSON line.

usage: cache_worker.py compile SIZES BACKEND   -- compile `f` over SIZES (comma list), PGO on
       cache_worker.py hammer KEY ID ROUNDS DIR  -- once DIR/go exists, put then get KEY ROUNDS times
Settings come from the environment (FRAMETRACE_CACHE_DIR, FRAMETRACE_REMOTE_CACHE, ...).
"""
import hashlib
import json
import os
import sys
import time

import numpy as np

import frametrace as ft
from frametrace import remote_cache


def f(x, y):
    return np.sin(x) * y + x.shape[0]


def compile_mode(sizes, backend):
    from frametrace.backends.llvm import jit
    cf = ft.compile(f, backend=backend)
    ok = True
    start = time.perf_counter()
    for n in sizes:
        x, y = np.linspace(0, 1, n), np.full(n, 2.0)
        ok &= bool(np.allclose(cf(x, y), f(x, y)))
    s = ft.stats()
    return {"ok": ok, "seconds": time.perf_counter() - start, "frames_compiled": s.frames_compiled,
            "recompiles": s.recompiles, "remote": remote_cache.stats(), "remote_pgo": remote_cache.stats("pgo"),
            "remote_kernel": remote_cache.stats("kernel"), "kernels": dict(jit.stats)}


def hammer_mode(key, ident, rounds, sync_dir):
    # payloads differ per writer and are large enough (256 KiB) that a torn write would show
    mine = hashlib.sha256(ident.encode()).digest() * (1 << 13)
    seen, bad = set(), 0
    open(os.path.join(sync_dir, f"ready-{ident}"), "w").close()
    while not os.path.exists(os.path.join(sync_dir, "go")):      # every writer starts together
        time.sleep(0.001)
    for _ in range(rounds):
        remote_cache.put("kernel", key, mine)
        data = remote_cache.get("kernel", key)
        if data is None or len(data) != len(mine) or data != data[:32] * (1 << 13):
            bad += 1
        else:
            seen.add(data[:32].hex())
    return {"bad": bad, "writers_seen": len(seen), "remote": remote_cache.stats()}


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "compile":
        out = compile_mode([int(n) for n in sys.argv[2].split(",")], sys.argv[3])
    else:
        out = hammer_mode(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    print(json.dumps(out), flush=True)
