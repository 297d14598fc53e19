"""Find the commit that made a workload slower: `git bisect` over speed-ups measured in old trees.

    python benchmarks/bisect_slowdown.py GOOD BAD softmax              # bisect, print the culprit
    python benchmarks/bisect_slowdown.py GOOD BAD softmax --measure    # only the two figures
    python benchmarks/bisect_slowdown.py e1dbff7 HEAD softmax --clock cpu --threads 1 --repeat 3

Each commit is checked out as a detached `git worktree` in a temporary directory (the
current tree and branch are not touched; bisect state is per worktree) and measured by
running *this* tree's `bench_row_reductions.py` with `PYTHONPATH` set to the old tree, in a
fresh process with a kernel cache of its own: the same workload code, each commit's
frametrace. A measurement is the median speed-up over NumPy of `--repeat` processes
(interleaved with NumPy inside each process, so machine noise hits both alike).

The two ends are measured first; a commit is "good" when its speed-up is at least
`--threshold` (default: the geometric mean of the two ends), else "bad". Then `git bisect
run` walks the history (merges included) and names the first bad commit. On a loaded machine
use `--clock cpu --threads 1`: process CPU time, which waiting for a core does not inflate.
A commit whose tree fails to run the workload is skipped (`git bisect skip`).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "bench_row_reductions.py")


def git(*args, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd or HERE, check=True, capture_output=True, text=True).stdout.strip()


def speedup(tree: str, workload: str, opts, cache: str) -> float:
    """Median speed-up of `workload` over NumPy with the frametrace of `tree`."""
    env = dict(os.environ, PYTHONPATH=tree, FRAMETRACE_CACHE_DIR=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    figures = []
    for _ in range(opts.repeat):
        out = os.path.join(cache, "row.json")
        cmd = [sys.executable, BENCH, "--only", workload, "--clock", opts.clock, "--json", out]
        if opts.threads:
            cmd += ["--threads", str(opts.threads)]
        subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, timeout=opts.timeout)
        with open(out) as f:
            figures.append(json.load(f)[0]["speedup"])
    return statistics.median(figures)


def add_tree(tmp: str, commit: str) -> str:
    path = os.path.join(tmp, git("rev-parse", "--short", commit))
    git("worktree", "add", "--detach", path, commit)
    return path


def judge(opts) -> int:
    """`git bisect run` calls this inside the bisect worktree: exit 0 good, 1 bad, 125 skip."""
    tree = os.getcwd()
    cache = tempfile.mkdtemp(prefix="ft-bisect-cache-")
    try:
        s = speedup(tree, opts.workload, opts, cache)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
        print(f"{git('rev-parse', '--short', 'HEAD', cwd=tree)}: the workload does not run: skip", flush=True)
        return 125
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    verdict = "good" if s >= opts.threshold else "bad"
    print(f"{git('rev-parse', '--short', 'HEAD', cwd=tree)}: {s:.2f}x NumPy -> {verdict}", flush=True)
    return 0 if verdict == "good" else 1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("good", help="a commit where the workload was fast")
    ap.add_argument("bad", help="a later commit where it is slow")
    ap.add_argument("workload", help="a name from bench_row_reductions.py --list")
    ap.add_argument("--threshold", type=float, help="speed-up that counts as good (default: between the ends)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--threads", type=int, help="FRAMETRACE_NUM_THREADS")
    ap.add_argument("--repeat", type=int, default=3, help="processes per measurement (median)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per process")
    ap.add_argument("--measure", action="store_true", help="measure the two ends only")
    ap.add_argument("--judge", action="store_true", help=argparse.SUPPRESS)   # (git bisect run)
    opts = ap.parse_args(argv)
    if opts.judge:
        return judge(opts)
    good, bad = git("rev-parse", opts.good), git("rev-parse", opts.bad)
    tmp = tempfile.mkdtemp(prefix="ft-bisect-")
    trees = []
    try:
        ends = {}
        for label, commit in (("good", good), ("bad", bad)):
            trees.append(add_tree(tmp, commit))
            ends[label] = speedup(trees[-1], opts.workload, opts, tempfile.mkdtemp(dir=tmp))
            print(f"{label} {commit[:9]}: {ends[label]:.2f}x NumPy", flush=True)
        if opts.measure:
            return 0
        threshold = opts.threshold or math.sqrt(ends["good"] * ends["bad"])
        if ends["bad"] >= threshold or ends["good"] < threshold:
            print(f"the ends do not straddle {threshold:.2f}x (noise?): nothing to bisect", flush=True)
            return 1
        print(f"bisecting with threshold {threshold:.2f}x", flush=True)
        work = trees[-1]                          # the bad end's worktree runs the bisection
        git("bisect", "start", bad, good, cwd=work)
        run = [sys.executable, os.path.abspath(__file__), opts.good, opts.bad, opts.workload, "--judge",
               "--threshold", str(threshold), "--clock", opts.clock, "--repeat", str(opts.repeat),
               "--timeout", str(opts.timeout)] + (["--threads", str(opts.threads)] if opts.threads else [])
        out = subprocess.run(["git", "bisect", "run", *run], cwd=work, capture_output=True, text=True)
        print(out.stdout)
        git("bisect", "reset", cwd=work)
        return out.returncode
    finally:
        for t in trees:
            subprocess.run(["git", "worktree", "remove", "--force", t], cwd=HERE, capture_output=True)
        git("worktree", "prune")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
