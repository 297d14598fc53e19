"""`python -m frametrace [options] script.py [args...]` and `-m module`: the program runs as under
plain Python (its output, argv, exit code, traceback, KeyboardInterrupt), compiled, with --report."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

PY = sys.executable


def _env(tmp_path):
    env = dict(os.environ)
    env["FRAMETRACE_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("FRAMETRACE_LOGS", None)
    return env


def run(tmp_path, *args, cwd=None, frametrace=True):
    cmd = [PY, "-m", "frametrace", *args] if frametrace else [PY, *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd or tmp_path, env=_env(tmp_path),
                          timeout=600)


# The README's first example as a script; it checks its own results against NumPy and prints ft.stats().
README_EXAMPLE = """
import sys
import numpy as np
import frametrace as ft

def f(x):
    return x * x.shape[0]

def main(sizes):
    for n in sizes:
        x = np.arange(n, dtype=np.float64)
        assert np.array_equal(f(x), x * n)
    s = ft.stats()
    print("argv", sys.argv)
    print("graphs", s.unique_graphs, "recompiles", s.recompiles)
    code = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if code < 0:
        raise ValueError(f"bad size {code}")
    sys.exit(code)

if __name__ == "__main__":
    main([int(a) for a in sys.argv[1].split(",")])
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(README_EXAMPLE)
    return path


def test_script_arguments_exit_code_and_report(tmp_path, script):
    r = run(tmp_path, "--report", "--backend", "numpy", str(script), "5,10,20,30,40", "3")
    assert r.returncode == 3, r.stderr
    # an unmodified script compiled without a decorator: its first call (5) runs eagerly while the
    # hook finds it, then static for 10, then one dynamic graph
    assert f"argv [{str(script)!r}, '5,10,20,30,40', '3']" in r.stdout
    assert "graphs 2 recompiles 1" in r.stdout
    err = r.stderr
    assert "frametrace report" in err and "time:" in err and "samples]" in err
    assert "frames compiled" in err and "prog.py:6" in err
    assert "top recompile reasons:" in err and "f: L['x'].shape[0] == 10" in err
    assert "hint: To compile these sizes dynamically from the start: ft.mark_dynamic(x, 0)" in err
    assert "largest graphs:" in err and "slowest compiles:" in err


def test_exception_traceback_as_plain_python(tmp_path, script):
    plain = run(tmp_path, str(script), "10", "-1", frametrace=False)
    r = run(tmp_path, "--backend", "numpy", str(script), "10", "-1")
    assert r.returncode == plain.returncode == 1
    assert r.stderr == plain.stderr           # the same traceback: no frametrace or runpy frames
    assert r.stderr.startswith("Traceback (most recent call last):\n  File \"" + str(script))
    assert "ValueError: bad size -1" in r.stderr


def test_keyboard_interrupt_as_plain_python(tmp_path):
    path = tmp_path / "interrupted.py"
    path.write_text("import numpy as np\n\ndef work(x):\n    y = x + 1\n    raise KeyboardInterrupt\n\n"
                    "work(np.ones(3))\n")
    plain = run(tmp_path, str(path), frametrace=False)
    r = run(tmp_path, "--backend", "numpy", str(path))
    assert plain.returncode == -signal.SIGINT
    assert r.returncode == plain.returncode
    assert r.stderr == plain.stderr and r.stderr.rstrip().endswith("KeyboardInterrupt")


def _package(tmp_path):
    """A program in several modules, run with -m: a model class, helpers in another module, a
    graph break (print) in a training step, sizes that change."""
    pkg = tmp_path / "simpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text(textwrap.dedent("""
        import numpy as np

        def smooth(u, alpha):
            out = u.copy()
            out[1:-1] = u[1:-1] + alpha * (u[:-2] - 2 * u[1:-1] + u[2:])
            return out

        def energy(u):
            return float(np.sum(u * u))
    """))
    (pkg / "model.py").write_text(textwrap.dedent("""
        from . import ops

        class Diffusion:
            def __init__(self, alpha):
                self.alpha = alpha

            def __call__(self, u, steps):
                for _ in range(steps):
                    u = ops.smooth(u, self.alpha)
                return u

        def report_step(u):
            e = ops.energy(u)
            print("energy %.6f" % e)
            return u * 0.5
    """))
    (pkg / "__main__.py").write_text(textwrap.dedent("""
        import sys
        import numpy as np
        from .model import Diffusion, report_step

        def main():
            model = Diffusion(0.1)
            print("argv0", sys.argv[0].endswith("__main__.py"), sys.argv[1:])
            for n in (50, 80, 120):
                u = np.sin(np.linspace(0, 3, n))
                u = report_step(model(u, 3))
                want = np.sin(np.linspace(0, 3, n))
                for _ in range(3):
                    w = want.copy(); w[1:-1] = want[1:-1] + 0.1 * (want[:-2] - 2 * want[1:-1] + want[2:]); want = w
                assert np.allclose(u, want * 0.5), n
            print("done", __name__)

        main()
    """))


def test_module_multi_module_package_with_report(tmp_path):
    _package(tmp_path)
    plain = run(tmp_path, "-m", "simpkg", "a", "--flag", frametrace=False)
    assert plain.returncode == 0, plain.stderr
    r = run(tmp_path, "--report", "--backend", "numpy", "--logs", "graph_breaks", "-m", "simpkg", "a", "--flag")
    assert r.returncode == 0, r.stderr
    assert r.stdout == plain.stdout          # same output, argv, __name__ == "__main__"
    assert "argv0 True ['a', '--flag']" in r.stdout and "done __main__" in r.stdout
    err = r.stderr
    assert "Graph break in user code" in err                      # --logs
    report = err[err.index("frametrace report"):]
    # the imported modules' functions are hooked at import (not left to discovery): Diffusion.__call__
    # inlines ops.smooth, report_step breaks at its print
    for name in ("report_step", "__call__"):
        assert name in report, report
    assert os.path.join("simpkg", "model.py") in report
    assert "top graph breaks:" in report and 'print("energy %.6f" % e)' in report


def test_trace_dir_and_dynamic(tmp_path, script):
    trace = tmp_path / "trace"
    r = run(tmp_path, "--trace", str(trace), "--dynamic", "true", "--backend", "numpy", str(script), "10,20,30")
    assert r.returncode == 0, r.stderr
    assert "graphs 1 recompiles 0" in r.stdout           # every size symbolic from the start
    logs = list(trace.iterdir())
    assert logs and any("dynamo_start" in p.read_text() for p in logs)


def test_usage_errors(tmp_path):
    r = run(tmp_path)
    assert r.returncode == 2 and "usage: python -m frametrace" in r.stderr
    r = run(tmp_path, "missing.py")
    assert r.returncode == 2 and "can't open file" in r.stderr
    r = run(tmp_path, "--logs", "nonsense", "x.py")
    assert r.returncode == 2 and "unknown log channel 'nonsense'" in r.stderr


def test_split_argv():
    from frametrace.cli import split_argv
    assert split_argv(["--report", "s.py", "--report", "-m", "x"]) == (["--report"], ["s.py", "--report", "-m", "x"])
    assert split_argv(["--logs", "recompiles", "-m", "pkg", "-v"]) == (["--logs", "recompiles", "-m", "pkg"], ["-v"])
    assert split_argv(["-mpkg", "a"]) == (["-m", "pkg"], ["a"])
    assert split_argv(["--dynamic=true", "--", "-weird.py"]) == (["--dynamic=true"], ["-weird.py"])
