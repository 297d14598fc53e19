"""`import frametrace` vs `import numpy` in fresh processes (issue 24 target: under 0.15 s).

    python benchmarks/bench_import_time.py [--rounds 15] [--against /path/to/other/checkout]

Each round starts one process per variant, interleaved (machine noise hits each alike); figures
are medians of the in-process wall time of the import. Then `python -X importtime` of one
`import frametrace`: the cumulative time of numpy, of csrc_free_runtime and frametrace, and
which heavy packages the import did not load.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("sympy", "llvmlite", "bytecode", "frametrace.trace", "frametrace.backends")
TIMER = ("import sys, time; sys.path.insert(0, {root!r}); t = time.perf_counter(); import {module}; "
         "dt = time.perf_counter() - t; assert {module}.__file__.startswith({root!r}) or {root!r} == '', "
         "{module}.__file__; print(dt)")


def one(module: str, root: str = "") -> float:
    code = TIMER.format(root=root, module=module)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def importtime() -> dict:
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import frametrace, sys; "
                          f"print([m for m in {HEAVY!r} if m in sys.modules])"],
                         capture_output=True, text=True, check=True)
    cumulative = {}
    for line in err.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "cumulative" in line:
            continue
        _, cum, name = line.split("|")
        cumulative.setdefault(name.strip(), int(cum) / 1e6)      # the first (outermost) import of each
    return {"numpy": cumulative.get("numpy"), "csrc_free_runtime": cumulative.get("csrc_free_runtime"),
            "frametrace": cumulative.get("frametrace"), "heavy_loaded": err.stdout.strip()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--against", help="another checkout (e.g. main before the change) to time too")
    args = ap.parse_args()
    variants = {"numpy": ("numpy", ""), "frametrace": ("frametrace", ROOT)}
    if args.against:
        variants["frametrace @ " + args.against] = ("frametrace", os.path.abspath(args.against))
    samples = {k: [] for k in variants}
    for _ in range(args.rounds):
        for name, (module, root) in variants.items():
            samples[name].append(one(module, root))
    print(f"{'import':<40} {'median':>9} {'min':>9}   ({args.rounds} fresh processes each, interleaved)")
    for name, s in samples.items():
        print(f"{name:<40} {statistics.median(s) * 1e3:>7.0f}ms {min(s) * 1e3:>7.0f}ms")
    base = statistics.median(samples["numpy"])
    print(f"frametrace on top of numpy: {(statistics.median(samples['frametrace']) - base) * 1e3:+.0f} ms (median)")
    it = importtime()
    print("python -X importtime (cumulative): " + ", ".join(
        f"{k} {v * 1e3:.0f} ms" for k, v in it.items() if isinstance(v, float)))
    print(f"heavy packages loaded by `import frametrace`: {it['heavy_loaded']}")


if __name__ == "__main__":
    main()
