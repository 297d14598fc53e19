"""A chunked stencil under Dask: NumPy blocks vs frametrace blocks (issue 24).

    python benchmarks/bench_dask_stencil.py [--n 4000] [--chunk 1500] [--steps 8] [--rounds 5]

A LocalCluster of 2 worker processes (1 thread each) runs `map_overlap(jacobi_sweeps, depth=steps)`
over an n x n float64 array in chunk x chunk blocks (uneven at the edges); the array is persisted
on the workers first. One warm-up compute per variant (frametrace compiles there), then
`rounds` computes per variant, interleaved; medians. Results are checked equal.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import stencil_programs as progs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--chunk", type=int, default=1500)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    try:
        import dask.array as da
        import distributed
    except ImportError:
        print("*** SKIPPED: needs the frametrace[dask] extra ***")
        return
    import frametrace as ft
    os.environ.setdefault("FRAMETRACE_CACHE_DIR", tempfile.mkdtemp(prefix="ft_dask_bench_"))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        x = da.random.default_rng(0).random((args.n, args.n), chunks=args.chunk).persist()
        compiled = ft.compile(progs.jacobi_sweeps)
        variants = {"numpy blocks": progs.jacobi_sweeps, "frametrace blocks": compiled}

        def run(fn):
            y = x.map_overlap(fn, depth=args.steps, boundary="none", steps=args.steps, dtype=x.dtype)
            return y.sum().compute()

        first = {}
        for name, fn in variants.items():
            t0 = time.perf_counter()
            first[name] = (run(fn), time.perf_counter() - t0)
        a, b = (v[0] for v in first.values())
        assert abs(a - b) <= 1e-9 * abs(a), (a, b)
        samples = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, fn in variants.items():
                t0 = time.perf_counter()
                run(fn)
                samples[name].append(time.perf_counter() - t0)
        stats = client.run(lambda: (ft.stats().unique_graphs, ft.stats().recompiles))
    print(f"{args.n}x{args.n} float64, chunks {args.chunk} (uneven edges), {args.steps} Jacobi sweeps per block, "
          f"2 workers x 1 thread, {args.rounds} rounds interleaved")
    base = statistics.median(samples["numpy blocks"])
    for name, s in samples.items():
        med = statistics.median(s)
        print(f"  {name:<18} first {first[name][1]:6.2f} s   median {med:6.3f} s   min {min(s):6.3f} s   "
              f"{base / med:5.2f}x numpy")
    print("  graphs, recompiles per worker: " + ", ".join(f"{g}, {r}" for g, r in stats.values()))


if __name__ == "__main__":
    main()
