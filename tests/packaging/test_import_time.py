"""`import frametrace` loads NumPy and the per-call path only: the compiler (tracer, sympy,
llvmlite, bytecode) loads on the first compile, and the public API works from there.
Timings are in benchmarks/bench_import_time.py; this asserts which modules load."""
import json
import subprocess
import sys
import textwrap

HEAVY = ("sympy", "llvmlite", "bytecode", "frametrace.trace", "frametrace.ir", "frametrace.shapes",
         "frametrace.guards", "frametrace.backends", "frametrace.lower", "frametrace.codegen",
         "frametrace.passes", "frametrace.resume", "frametrace.pgo", "frametrace.structured_trace",
         "frametrace.distributed", "frametrace.remote_cache", "IPython")

PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import frametrace as ft
    heavy = %r
    out = {"after_import": sorted(m for m in heavy if m in sys.modules)}
    # the public API, before anything compiles
    names = [n for n in ft.__all__ if not hasattr(ft, n)]
    ft.config.cache_size_limit = 8
    ft.set_stance("default")
    assert ft.stats().frames_compiled == 0
    f = ft.compile(lambda x: np.sin(x) * x.shape[0], backend=sys.argv[1])
    out["before_first_call"] = sorted(m for m in heavy if m in sys.modules)
    x = np.linspace(0, 1, 7)
    assert np.allclose(f(x), np.sin(x) * 7)
    out["after_first_compile"] = sorted(m for m in heavy if m in sys.modules)
    out["missing_names"] = names
    out["stats"] = [ft.stats().frames_compiled, ft.stats().unique_graphs]
    print(json.dumps(out))
""") % (HEAVY,)


def _run(backend, tmp_path):
    r = subprocess.run([sys.executable, "-c", PROGRAM, backend], capture_output=True, text=True, timeout=600,
                       env={"FRAMETRACE_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_import_loads_no_compiler(tmp_path):
    out = _run("llvm", tmp_path)
    assert out["after_import"] == [] and out["before_first_call"] == []
    assert out["missing_names"] == []
    assert out["stats"] == [1, 1]
    loaded = set(out["after_first_compile"])
    assert {"sympy", "frametrace.trace", "frametrace.shapes", "llvmlite", "frametrace.backends"} <= loaded


def test_numpy_backend_never_loads_llvmlite(tmp_path):
    out = _run("numpy", tmp_path)
    assert out["after_import"] == []
    assert "sympy" in out["after_first_compile"]
