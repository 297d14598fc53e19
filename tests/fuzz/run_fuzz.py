"""Run the differential fuzzer for a while: `python tests/fuzz/run_fuzz.py --minutes N`.

Prints how many programs ran and every distinct failure with the program source, its
argument specs and calls (paste them into test_regressions.py).
Options: --seed S (start seed), --shaped P (share of fuzzshapes programs), --modules P (share of
whole programs over two or three modules, fuzzmodules.py; 1 = only those), --backends numpy,llvm,
--quiet, --stop-after K failures.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import frametrace as ft  # noqa: E402

ft.config.strict_backend = True         # a backend's internal error is a failure, as in the tests
import fuzzgen  # noqa: E402
import fuzzmodules  # noqa: E402
import fuzzrun  # noqa: E402
import fuzzshapes  # noqa: E402
import modrun  # noqa: E402


def draw(seed, shaped, modules):
    """The program of `seed`: a multi-module one with probability `modules` (decided by a draw of
    its own, so the other kinds keep the programs their seeds always had), else as gen_any."""
    import random
    if random.Random(seed * 7919 + 17).random() < modules:
        return fuzzmodules.gen_modules(fuzzgen.RandomSource(seed), seed)
    return fuzzshapes.gen_any(fuzzgen.RandomSource(seed), shaped)


def run_any(prog, backends):
    if isinstance(prog, fuzzmodules.ModProgram):
        return modrun.run_program(prog, modrun.modes_for(prog.seed, backends))
    return fuzzrun.run_program(prog, backends=backends)


def source_of(prog):
    return prog.source if hasattr(prog, "source") else "\n".join(prog.modules.values())


def signature(msg: str) -> str:
    """Coarse failure class for de-duplication."""
    first = msg.split("\n")[0]
    first = re.sub(r"\[backend=(\w+) dynamic=\w+ call#\d+\]", r"[\1]", first)
    first = re.sub(r"out(\[\d+\])*", "out", first)
    first = re.sub(r"arg\d", "arg", first)
    first = re.sub(r"-?\d+(\.\d+)?", "#", first)
    return first[:160]


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--backends", default=None)
    p.add_argument("--stop-after", type=int, default=0)
    p.add_argument("--count", type=int, default=0, help="stop after this many programs (and --minutes)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--replay", type=int, default=None, help="re-run the program of one seed")
    p.add_argument("--seeds", action="store_true",
                   help="print each seed to stderr before its program (to find one that kills the process)")
    p.add_argument("--shaped", type=float, default=0.5,
                   help="share of programs from fuzzshapes (the rest: fuzzgen's straight-line ones)")
    p.add_argument("--modules", type=float, default=0.2,
                   help="share of whole programs over two or three modules (fuzzmodules.py)")
    ns = p.parse_args(argv)
    backends = ns.backends.split(",") if ns.backends else fuzzrun.available_backends()
    if ns.replay is not None:
        prog = draw(ns.replay, ns.shaped, ns.modules)
        print(prog.describe())
        fails = run_any(prog, backends)
        print("\n\n".join(fails) or "no failure")
        return 1 if fails else 0
    deadline = time.time() + 60 * ns.minutes
    seen = {}
    n = 0
    seed = ns.seed
    import tempfile
    with ft.config.patch(pgo=False, cache_dir=tempfile.mkdtemp(prefix="ftfuzz")):
        while time.time() < deadline:
            prog = draw(seed, ns.shaped, ns.modules)
            if ns.seeds:
                print(f"seed {seed}", file=sys.stderr, flush=True)
            ft.reset()
            try:
                fails = run_any(prog, backends)
            except Exception as exc:   # noqa: BLE001  (a harness crash is a failure too)
                import traceback
                fails = ["harness crashed: " + "".join(traceback.format_exception(exc)[-8:])]
            n += 1
            for f in fails:
                known = fuzzrun.known_bug(f, source_of(prog))
                sig = f"known:{known}" if known else signature(f)
                seen.setdefault(sig, []).append(seed)
                if len(seen[sig]) == 1 and not known:
                    print(f"\n=== FAILURE seed={seed} ===\n{f}\n--- program ---\n{prog.describe()}\n",
                          flush=True)
                elif len(seen[sig]) == 1:
                    print(f"... known bug at seed {seed}: {known}", flush=True)
                break
            seed += 1
            if not ns.quiet and n % 100 == 0:
                print(f"... {n} programs, {len(seen)} distinct failures", flush=True)
            if ns.stop_after and len(seen) >= ns.stop_after:
                break
            if ns.count and n >= ns.count:
                break
    print(f"\nprograms run: {n}; distinct failures: {len(seen)} "
          f"({sum(k.startswith('known:') for k in seen)} known)")
    for sig, seeds in sorted(seen.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(seeds):4d}x  {sig}   seeds={seeds[:5]}")
    return 1 if any(not k.startswith("known:") for k in seen) else 0


if __name__ == "__main__":
    sys.exit(main())
