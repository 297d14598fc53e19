"""Products in native loop nests with and without unroll-and-jam (backends/llvm/loop_jam.py,
issue 23 part 5): polybench's covariance and correlation (one `v @ M` per column), NumPy against
ft.compile with `config.loop_jam` 1 (one pass over the matrix per iteration) and 4, one thread
(BLAS and frametrace), in one process, rounds interleaved, medians.

    python benchmarks/bench_loop_jam.py              # NPBench preset S (M=500, N=600)
    python benchmarks/bench_loop_jam.py --size 1400,1800 --rounds 9
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("FRAMETRACE_NUM_THREADS", "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402

import frametrace as ft  # noqa: E402
from common import timed  # noqa: E402

SOURCE = '''
def covariance(M, float_n, data):
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (float_n - 1.0)
    return cov


def correlation(M, float_n, data):
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data -= mean
    data /= np.sqrt(float_n) * stddev
    corr = np.eye(M, dtype=data.dtype)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr
'''


def fresh(name):
    """The function from its own code object (compiled entries belong to the code object)."""
    ns = {"np": np}
    exec(compile(SOURCE, "<bench_loop_jam>", "exec"), ns)
    return ns[name]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="500,600", help="M,N")
    ap.add_argument("--rounds", type=int, default=21)
    opts = ap.parse_args()
    M, N = map(int, opts.size.split(","))
    data0 = np.random.default_rng(0).random((N, M))
    print(f"M={M} N={N}, one thread, {opts.rounds} interleaved rounds, medians; load {os.getloadavg()[0]:.1f}")
    for name in ("covariance", "correlation"):
        runners = {"numpy": fresh(name)}
        for jam in (1, 4):
            with ft.config.patch(loop_jam=jam):
                f = ft.compile(fresh(name))
                f(M, float(N), data0.copy())                 # compiled with this setting
            runners[f"loop_jam={jam}"] = f
        want = runners["numpy"](M, float(N), data0.copy())
        for label, f in runners.items():
            got = f(M, float(N), data0.copy())
            assert np.allclose(got, want, rtol=1e-10, atol=1e-12), label

        def call(f):
            return lambda: f(M, float(N), data0.copy())
        copy = timed([lambda: data0.copy()], (), 5)[0]
        times = timed([call(f) for f in runners.values()], (), opts.rounds)
        base = times[0] - copy
        print(f"{name:12s} " + "  ".join(f"{label} {(t - copy) * 1e3:6.2f} ms ({base / (t - copy):.2f}x)"
                                         for label, t in zip(runners, times)))
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
