"""make bench: the table of every issue-3 target (bench_targets.py), then the detail benchmarks.

    python benchmarks/run_all.py            # targets table + quick detail runs (~4-5 min)
    python benchmarks/run_all.py --targets  # only the targets table
    python benchmarks/run_all.py --all      # every bench_*.py in full (slow)
    python benchmarks/run_all.py --quick    # smaller sizes everywhere (smoke run, ~1 min)

The targets table is printed last as well, so it is the end of the output.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

here = pathlib.Path(__file__).parent
# detail benchmarks run by default, with their quick flags (others only with --all)
DETAIL = {"bench_hook.py": [], "bench_llvm_math.py": ["--quick"], "bench_core.py": [], "bench_callees.py": [],
          "bench_whole_programs.py": [], "bench_numpy_api.py": ["--quick"]}


def run(path, args):
    print(f"\n=== {path.name} {' '.join(args)} ===", flush=True)
    return subprocess.run([sys.executable, str(path), *args]).returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", action="store_true", help="only the targets table")
    ap.add_argument("--all", action="store_true", help="every bench_*.py, full size")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = ap.parse_args()
    failed = []
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    if not run(here / "bench_targets.py", ["--json", out] + (["--quick"] if args.quick else [])):
        failed.append("bench_targets.py")
    if not args.targets:
        for path in sorted(here.glob("bench_*.py")):
            if path.name == "bench_targets.py" or (not args.all and path.name not in DETAIL):
                continue
            extra = [] if args.all else DETAIL[path.name]
            if args.quick and path.name in ("bench_kernels.py", "bench_llvm_math.py", "bench_whole_programs.py",
                                            "bench_numpy_api.py"):
                extra = ["--quick"]
            if not run(path, extra):
                failed.append(path.name)
    try:
        with open(out) as f:
            data = json.load(f)
        sys.path.insert(0, str(here))
        from bench_targets import Table
        table = Table()
        table.rows = data["rows"]
        print(f"\n=== issue 3 targets ({data['machine']}) ===\n{table.text()}")
    except (OSError, ValueError, KeyError):
        pass
    finally:
        os.unlink(out)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
