"""Run every benchmark in this folder (make bench)."""
import pathlib
import subprocess
import sys

here = pathlib.Path(__file__).parent
failed = []
for path in sorted(here.glob("bench_*.py")):
    print(f"\n=== {path.name} ===", flush=True)
    if subprocess.run([sys.executable, str(path)]).returncode != 0:
        failed.append(path.name)
if failed:
    sys.exit(f"failed: {', '.join(failed)}")
