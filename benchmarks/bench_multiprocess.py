"""8 worker processes starting cold vs warm against a shared Redis cache (PGO + LLVM kernels).

Run: python benchmarks/bench_multiprocess.py [--workers 8] [--reps 2] [--quick]
Needs redis-server (Debian package) and the redis extra; skips with a message otherwise.

Each worker is a fresh process with an empty local cache dir that runs the same workload (five
functions over a sweep of sizes, LLVM backend) started together with the others. Scenarios:
  local only    no remote cache: every worker learns dynamic sizes and compiles kernels itself
  cold Redis    FRAMETRACE_REMOTE_CACHE set, Redis flushed: same work, plus the uploads
  warm Redis    Redis holds what the cold run uploaded: PGO starts sizes dynamic (no
                recompiles) and kernel objects are downloaded instead of compiled
Per worker: compile time = time spent in the calls that compiled (trace + backend + the one
run), first call = latency of the worker's first call. The table shows medians over workers
and repetitions. The machine has 2 cores, so 8 workers also measure contention.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from workloads import gelu, relu_fma, softmax, layernorm  # noqa: E402

KEY = "bench-cache-key-0123456789abcdef"


# ------------------------------------------------------------------------------------------
# the worker

def scaled(x, y):
    return np.sin(x) * y + x.shape[0]


def worker(sync_dir: str, ident: str) -> dict:
    import frametrace as ft
    from frametrace import remote_cache
    from frametrace.backends.llvm import jit

    rng = np.random.default_rng(0)
    work = []
    for n in (64, 96, 128, 160):
        x = rng.standard_normal((n, 32))
        work += [(gelu, (x,)), (relu_fma, (x, x, x)), (softmax, (x,)), (layernorm, (x,)),
                 (scaled, (x[:, 0], x[:, 1]))]
    compiled = {fn: ft.compile(fn, backend="llvm") for fn in {fn for fn, _ in work}}

    open(os.path.join(sync_dir, f"ready-{ident}"), "w").close()
    while not os.path.exists(os.path.join(sync_dir, "go")):
        time.sleep(0.001)
    compile_s, first_call, ok = 0.0, None, True
    start = time.perf_counter()
    for fn, args in work:
        before = ft.stats().frames_compiled
        t0 = time.perf_counter()
        out = compiled[fn](*args)
        took = time.perf_counter() - t0
        first_call = took if first_call is None else first_call
        if ft.stats().frames_compiled > before:
            compile_s += took
        ok &= bool(np.allclose(out, fn(*args)))
    s = ft.stats()
    return {"ok": ok, "compile_s": compile_s, "first_call_s": first_call, "total_s": time.perf_counter() - start,
            "frames_compiled": s.frames_compiled, "recompiles": s.recompiles, "kernels": dict(jit.stats),
            "remote": remote_cache.stats()}


# ------------------------------------------------------------------------------------------
# the driver

def start_redis(workdir: str):
    binary = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server")
                                              else None)
    if binary is None:
        return None, None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(500):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.01)
    proc.kill()
    return None, None


def flush(port: int):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"FLUSHALL\r\n")
        assert s.recv(16).startswith(b"+OK")


def scenario(workers: int, root: str, url: str | None) -> list:
    sync = tempfile.mkdtemp(dir=root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRAMETRACE_")}
    env.update(FRAMETRACE_PGO="1", FRAMETRACE_CACHE_KEY=KEY)
    if url:
        env["FRAMETRACE_REMOTE_CACHE"] = url
    procs = []
    for i in range(workers):
        wenv = dict(env, FRAMETRACE_CACHE_DIR=tempfile.mkdtemp(dir=root))   # empty local cache
        procs.append(subprocess.Popen([sys.executable, __file__, "--worker", sync, str(i)], env=wenv,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 300
    while len([f for f in os.listdir(sync) if f.startswith("ready-")]) < workers and time.monotonic() < deadline:
        time.sleep(0.01)
    open(os.path.join(sync, "go"), "w").close()
    results = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        if p.returncode != 0:
            raise SystemExit(f"worker failed:\n{stderr}")
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="one repetition")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)), flush=True)
        return
    try:
        import redis  # noqa: F401
    except ImportError:
        print("skipped: the redis package is missing (pip install 'frametrace[redis]')")
        return
    root = tempfile.mkdtemp(prefix="ft-bench-mp-")
    proc, port = start_redis(root)
    if proc is None:
        print("skipped: redis-server not found (apt-get install -y redis-server)")
        return
    url = f"redis://127.0.0.1:{port}/0"
    rows = {"local only": [], "cold Redis": [], "warm Redis": []}
    try:
        for _ in range(1 if args.quick else args.reps):
            rows["local only"] += scenario(args.workers, root, None)
            flush(port)
            rows["cold Redis"] += scenario(args.workers, root, url)
            rows["warm Redis"] += scenario(args.workers, root, url)
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(root, ignore_errors=True)

    med = statistics.median
    print(f"{args.workers} workers at once, {os.cpu_count()} cores; medians over workers x repetitions")
    print(f"{'scenario':<12} {'compile time':>13} {'first call':>11} {'workload':>9} {'compiles':>9} "
          f"{'recompiles':>10} {'kernels built':>13} {'remote hits':>11}")
    for name, rs in rows.items():
        assert all(r["ok"] for r in rs), name
        print(f"{name:<12} {med(r['compile_s'] for r in rs) * 1e3:>10.0f} ms"
              f" {med(r['first_call_s'] for r in rs) * 1e3:>8.0f} ms"
              f" {med(r['total_s'] for r in rs):>7.2f} s {med(r['frames_compiled'] for r in rs):>9.0f}"
              f" {med(r['recompiles'] for r in rs):>10.0f} {med(r['kernels']['misses'] for r in rs):>13.0f}"
              f" {med(r['remote']['hits'] for r in rs):>11.0f}")
    cold, warm = rows["cold Redis"], rows["warm Redis"]
    print(f"warm vs cold: compile time x{med(r['compile_s'] for r in cold) / med(r['compile_s'] for r in warm):.1f} "
          f"lower, first call x{med(r['first_call_s'] for r in cold) / med(r['first_call_s'] for r in warm):.1f} lower")


if __name__ == "__main__":
    main()
