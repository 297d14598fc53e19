"""Instruction counts per CPython version under valgrind's callgrind: the noise-free companion of
bench_pyversions.py (whose wall and CPU times on a shared machine move by more than the 10% they judge).

Two measurements per version, each the difference of a run with the work and one without (so start-up
and imports cancel): a cache hit of `x + 1` (n=8) per call, and the cold seed sweep (sizes 2..99, empty
kernel cache, modules from .pyc). Each is split by where the instructions run: LLVM (llvmlite), CPython
(the interpreter running our Python, sympy's and the loop), NumPy, libc, and the JIT code we generate.
Needs `valgrind` on PATH; takes ~5 minutes a version. Run: python benchmarks/callgrind_pyversions.py [--python X.Y=PATH]
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import textwrap

from bench_pyversions import ROOT, VENVS

HIT = textwrap.dedent("""
    import sys
    import numpy as np
    import frametrace as ft

    def add_one(x):
        return x + 1

    def run(n):
        for _ in range(n):
            g(x)

    g = ft.compile(add_one)
    x = np.arange(8.0)
    run(20000)
    run(int(sys.argv[1]))
""")

SWEEP = textwrap.dedent("""
    import sys
    import numpy as np
    import frametrace as ft

    def sin_ten_times(x):
        for _ in range(10):
            x = np.sin(x)
        return x

    xs = [np.random.default_rng(i).standard_normal(i) for i in range(2, 100)][:int(sys.argv[1])]
    f = ft.compile(sin_ten_times)
    with ft.config.patch(pgo=False):
        for x in xs:
            f(x)
""")

HIT_CALLS, SWEEP_SIZES = 300000, 98


def _where(name: str) -> str:
    """The part of the process a callgrind_annotate function line belongs to."""
    obj = re.search(r"\[([^\]]+)\]\s*$", name)
    obj = obj.group(1) if obj else ""
    if name.startswith("???:0x"):
        return "JIT (ours)"
    if "libllvmlite" in obj:
        return "LLVM"
    if "numpy" in obj or "openblas" in obj:
        return "NumPy"
    if "libc.so" in obj or "ld-linux" in obj or "libm.so" in obj or "libstdc++" in obj or "libgcc" in obj:
        return "libc"
    return "CPython"


def count(python: str, script: str, arg: int, pycache: str) -> collections.Counter:
    with tempfile.TemporaryDirectory(prefix="frametrace-cg-") as tmp:
        env = dict(os.environ, PYTHONPATH=ROOT, PYTHONHASHSEED="0", FRAMETRACE_CACHE_DIR=tmp,
                   PYTHONPYCACHEPREFIX=pycache)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, "-c", script,
                        str(arg)], check=True, env=env, capture_output=True, cwd=tmp)
        text = subprocess.run(["callgrind_annotate", "--threshold=100", out], check=True, capture_output=True,
                              text=True).stdout
    parts = collections.Counter()
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if m and "PROGRAM TOTALS" not in line:
            parts[_where(m.group(2))] += int(m.group(1).replace(",", ""))
    return parts


def measure(python: str, script: str, work: int, pycache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONPYCACHEPREFIX=pycache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="frametrace-cg-") as tmp:     # writes the .pyc files
        subprocess.run([python, "-c", script, str(work)], check=True, env=dict(env, FRAMETRACE_CACHE_DIR=tmp),
                       cwd=tmp)
    base, full = count(python, script, 0, pycache), count(python, script, work, pycache)
    return {k: (full[k] - base[k]) for k in set(base) | set(full)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", action="append", default=[], help="X.Y=PATH (default: the make test-all venvs)")
    opts = ap.parse_args()
    pythons = {v: os.path.join(ROOT, d, "bin", "python") for v, d in VENVS.items()}
    pythons.update(dict(p.split("=", 1) for p in opts.python))
    pythons = {v: p for v, p in pythons.items() if os.path.exists(p)}
    if "3.11" not in pythons:
        sys.exit("need a 3.11 interpreter (make install, or --python 3.11=PATH)")
    rows = {}
    with tempfile.TemporaryDirectory(prefix="frametrace-pyc-") as pyc_root:
        for v, python in pythons.items():
            pycache = os.path.join(pyc_root, v)
            hit = {k: n / HIT_CALLS for k, n in measure(python, HIT, HIT_CALLS, pycache).items()}
            sweep = {k: n / 1e6 for k, n in measure(python, SWEEP, SWEEP_SIZES, pycache).items()}
            rows[v] = hit, sweep
    base_hit, base_sweep = (sum(d.values()) for d in rows["3.11"])
    for v, (hit, sweep) in rows.items():
        h, s = sum(hit.values()), sum(sweep.values())
        print(f"{v}: hit {h:.0f} instructions/call ({h / base_hit - 1:+.1%}) "
              + " ".join(f"{k}={n:.0f}" for k, n in sorted(hit.items(), key=lambda kv: -kv[1]) if abs(n) >= 1))
        print(f"      cold sweep {s:.0f} M instructions ({s / base_sweep - 1:+.1%}) "
              + " ".join(f"{k}={n:.0f}M" for k, n in sorted(sweep.items(), key=lambda kv: -kv[1]) if abs(n) >= 1))


if __name__ == "__main__":
    main()
